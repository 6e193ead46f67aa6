//! World services.
