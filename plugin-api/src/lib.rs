//! # Troupe plugin API
//!
//! The only crate a Troupe system plugin links against. A plugin is a `cdylib` that
//! implements [`System`] for one or more types and exports them with [`export_plugin!`];
//! the host finds it by file name, checks its ABI, and drives it through the lifecycle that
//! the [`System`] trait documents.
//!
//! * [`Ecm`] / [`EcmView`] with [`EcmRead`]: typed access to entities and components.
//! * [`components`]: the built-in component catalogue (gz-sim names and type ids).
//! * [`Host`]: events ([`events`]), network role, entity ownership, the world's ray-cast
//!   service ([`RayCaster`]).
//! * [`xml`]: reading parameters from the plugin's `<plugin>` element.
//! * [`files`]: reading a file a user names (a mesh, a model) with a bound.
//! * [`msgs`]: gz-msgs protobuf messages (`gz.msgs`), e.g. the `SerializedStateMap` of logs.
//!
//! The boundary is [abi_stable]: the root module and the trait vtables are prefix types that
//! only ever grow at the end, so a host built with `plugin-api 1.y` loads a plugin built
//! with any `1.x`. Component values cross as their little-endian byte form
//! ([`Component::encode`]), the same bytes that go over the network and into logs.
#![allow(non_local_definitions, reason = "emitted by abi_stable's sabi_trait macro on Rust 1.95")]

mod component;
pub mod components;
mod ecm;
mod entity;
pub mod ffi;
pub mod files;
mod host;
mod logging;
pub mod math;
#[doc(hidden)]
pub mod module;
pub mod msgs;
mod system;
mod system_info;
pub mod transport;
pub mod xml;

pub use component::{Change, Component, ComponentTypeId, DecodeError, Reader, Writer};
pub use ecm::{Ecm, EcmRead, EcmView, QueryCache};
pub use entity::EntityId;
pub use ffi::{
    EcmError, Hooks, NetworkRole, Ray, ResetOutcome, ServiceReply, ServiceRequest, TopicOptions, UpdateInfo, Which,
};
pub use host::{events, Host, RayCaster};
pub use module::{HostLogger, PluginMod, PluginModRef};
pub use system::{into_ffi, panic_message, ConfigureContext, Error, Result, System, SystemAdapter};
pub use system_info::{RoleSet, SystemInfo, SystemKind};
pub use transport::{Publisher, Request, ServiceServer, Subscriber};

/// Re-exported for [`Ecm::for_each_mut`] / [`EcmRead::for_each`]: a plugin's own plain-data
/// component derives `bytemuck::Pod` through this to be lent in place.
pub use bytemuck;
/// Re-exported so plugins need no direct `log` dependency of their own to log.
pub use log;
/// Re-exported so plugins encode and decode [`msgs`] with the same prost the API uses.
pub use prost;
