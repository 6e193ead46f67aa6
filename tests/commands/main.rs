//! The user-commands system (plugins/user-commands) loaded as a real plugin by the real
//! host, driven through the server's in-process transport node while the fixture steps.

mod create;
mod pose;
mod support;
mod world;
