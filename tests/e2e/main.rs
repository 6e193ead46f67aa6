//! End-to-end tests: the real `troupe` binary loading real plugin libraries.
