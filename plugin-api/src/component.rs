//! Component identity and the binary form every component crosses the plugin boundary in.
//!
//! A component type is known by a name (`gz_sim_components.Pose` for gz-sim's own types,
//! `troupe.<Name>` for Troupe's, anything namespaced for third parties) and by the 64-bit
//! FNV-1a hash of that name, [`ComponentTypeId`]. Its value travels between host and plugin
//! — and later over the network and into logs — as a little-endian byte string written by
//! [`Component::encode`]. The byte form, not the Rust layout, is the contract: a plugin
//! built against an older `plugin-api` reads and writes the same bytes, and a component type
//! may gain fields only by appending them to its encoding (older readers ignore the tail).

use crate::entity::EntityId;
use crate::math::{Pose, Quat, Vec3};
use abi_stable::StableAbi;
use std::fmt;

/// The 64-bit id of a component type: FNV-1a of its registered name, as gz-sim computes it.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComponentTypeId(pub u64);

impl ComponentTypeId {
    /// FNV-1a (64-bit) of `name`: offset basis 0xcbf29ce484222325, prime 0x100000001b3.
    pub const fn of_name(name: &str) -> ComponentTypeId {
        let bytes = name.as_bytes();
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let mut i = 0;
        while i < bytes.len() {
            hash ^= bytes[i] as u64;
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            i += 1;
        }
        ComponentTypeId(hash)
    }
}

impl fmt::Display for ComponentTypeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#018x}", self.0)
    }
}

/// How a component change must be delivered to observers (scene broadcaster, network, logs).
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Change {
    /// Do not flag the change.
    None = 0,
    /// A frequent change that observers may throttle or drop (a pose written every step).
    Periodic = 1,
    /// A change that must be delivered (a new geometry, a teleport).
    OneTime = 2,
}

/// Why bytes could not be read back as a component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// What was being read.
    pub what: &'static str,
    /// What went wrong.
    pub reason: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot decode {}: {}", self.what, self.reason)
    }
}

impl std::error::Error for DecodeError {}

/// Appends little-endian values to a byte buffer.
pub struct Writer<'a>(pub &'a mut Vec<u8>);

#[allow(missing_docs, reason = "one obvious method per primitive")]
impl Writer<'_> {
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub fn bool(&mut self, v: bool) {
        self.0.push(v as u8);
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn str(&mut self, v: &str) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v.as_bytes());
    }
    pub fn vec3(&mut self, v: Vec3) {
        self.f64(v.x);
        self.f64(v.y);
        self.f64(v.z);
    }
    pub fn quat(&mut self, q: Quat) {
        self.f64(q.w);
        self.f64(q.x);
        self.f64(q.y);
        self.f64(q.z);
    }
    pub fn pose(&mut self, p: Pose) {
        self.vec3(p.position);
        self.quat(p.rotation);
    }
    pub fn entity(&mut self, e: EntityId) {
        self.u64(e.0);
    }
}

/// Reads little-endian values back, failing cleanly on short or malformed input.
pub struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

#[allow(missing_docs, reason = "one obvious method per primitive")]
impl<'a> Reader<'a> {
    /// A reader over `bytes`, naming `what` it reads in its errors.
    pub fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Reader { bytes, what }
    }
    pub fn error(&self, reason: impl Into<String>) -> DecodeError {
        DecodeError { what: self.what, reason: reason.into() }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.bytes.len() < n {
            return Err(self.error(format!("needs {n} more bytes, {} left", self.bytes.len())));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        match self.bytes.split_first_chunk::<N>() {
            Some((head, tail)) => {
                self.bytes = tail;
                Ok(*head)
            }
            None => Err(self.error(format!("needs {N} more bytes, {} left", self.bytes.len()))),
        }
    }
    /// Bytes not read yet (newer writers may append fields that older readers skip).
    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(self.error(format!("bool byte {other}"))),
        }
    }
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_le_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub fn f64(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_le_bytes(self.array()?))
    }
    pub fn string(&mut self) -> Result<String, DecodeError> {
        let len = self.u32()? as usize;
        let raw = self.take(len)?;
        String::from_utf8(raw.to_vec()).map_err(|_| self.error("string is not UTF-8"))
    }
    pub fn vec3(&mut self) -> Result<Vec3, DecodeError> {
        Ok(Vec3::new(self.f64()?, self.f64()?, self.f64()?))
    }
    pub fn quat(&mut self) -> Result<Quat, DecodeError> {
        Ok(Quat { w: self.f64()?, x: self.f64()?, y: self.f64()?, z: self.f64()? })
    }
    pub fn pose(&mut self) -> Result<Pose, DecodeError> {
        Ok(Pose { position: self.vec3()?, rotation: self.quat()? })
    }
    pub fn entity(&mut self) -> Result<EntityId, DecodeError> {
        Ok(EntityId(self.u64()?))
    }
}

/// A component type: its registered name, its id and its byte form.
///
/// Implement it for a third-party component, register the name with
/// [`crate::Ecm::register_component`] during `configure`, and read and write it with
/// [`crate::EcmRead::get`] / [`crate::Ecm::set`] like a built-in one.
pub trait Component: Clone + Send + Sync + 'static {
    /// The registered name, e.g. `gz_sim_components.Pose`.
    const NAME: &'static str;
    /// FNV-1a of [`Component::NAME`].
    const ID: ComponentTypeId = ComponentTypeId::of_name(Self::NAME);
    /// The size of the byte form when every value has the same size (enables bulk reads).
    const FIXED_SIZE: Option<usize>;
    /// Appends the little-endian byte form of `self`.
    fn encode(&self, w: &mut Writer<'_>);
    /// Reads a value back from its byte form; trailing bytes (fields appended by a newer
    /// writer) are ignored.
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError>;

    /// `self` encoded into a fresh buffer.
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::FIXED_SIZE.unwrap_or(16));
        self.encode(&mut Writer(&mut out));
        out
    }
    /// A value decoded from `bytes`.
    fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::decode(&mut Reader::new(bytes, Self::NAME))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_reference_values() {
        // Reference values of 64-bit FNV-1a.
        assert_eq!(ComponentTypeId::of_name("").0, 0xcbf29ce484222325);
        assert_eq!(ComponentTypeId::of_name("a").0, 0xaf63dc4c8601ec8c);
        assert_eq!(ComponentTypeId::of_name("foobar").0, 0x85944171f73967e8);
    }

    #[test]
    fn short_input_is_an_error_not_a_panic() {
        let mut r = Reader::new(&[1, 2, 3], "test");
        let err = r.f64().unwrap_err();
        assert!(err.reason.contains("needs 8 more bytes, 3 left"), "{err}");
    }
}
