//! Unit tests of the server-configuration module.

mod names_tests;
mod parse_tests;
mod roles_tests;
mod select_tests;
mod source_tests;
