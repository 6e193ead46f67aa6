//! The built-in component catalogue.
//!
//! Names follow gz-sim's registered names (`gz_sim_components.<Name>`) where gz-sim has the
//! component, so type ids match gz-sim's; Troupe's own are `troupe.<Name>`. Everything here is
//! in one flat namespace; the submodules only group the source:
//!
//! * the entity graph and SDF description: markers, [`Name`], [`Pose`](crate::math::Pose),
//!   [`Inertial`], [`Geometry`], [`Light`], [`JointType`], [`JointAxis`], [`Physics`]...
//! * commands physics consumes: [`WorldPoseCmd`], [`LinearVelocityCmd`],
//!   [`ExternalWorldWrenchCmd`], [`JointForceCmd`]...
//! * state physics writes: [`WorldLinearAcceleration`], [`JointPosition`],
//!   [`JointTransmittedWrench`], [`ContactSensorData`]...
//! * surfaces and materials: [`Surface`], [`SelfCollide`], [`Material`]...
//! * the environment: [`SphericalCoordinates`], [`MagneticField`], [`Atmosphere`],
//!   [`WindVelocity`], [`Scene`]
//! * levels and performers: [`Level`], [`LevelBuffer`], [`Performer`], [`PerformerLevels`]...
//! * sensors: [`SensorSdf`], [`SensorTopic`]
//!
//! Fixed-size plain values (vectors, poses, wrenches, scalars) are written as little-endian
//! fields in declaration order; a variable-length list is a `u32` count followed by its
//! items. New components are appended to [`for_each_builtin_component!`]; an existing
//! encoding only ever grows at its end.

mod commands;
mod dynamics;
mod environment;
mod levels;
mod model;
mod sensors;
mod surface;

pub use commands::*;
pub use dynamics::*;
pub use environment::*;
pub use levels::*;
pub use model::*;
pub use sensors::*;
pub use surface::*;

use crate::component::{DecodeError, Reader, Writer};
use crate::entity::EntityId;
use crate::math::{Pose, Vec3};

/// A value that can be a component's payload: its little-endian form and whether that form
/// has a fixed size.
pub(crate) trait Field: Sized {
    const SIZE: Option<usize>;
    fn write(&self, w: &mut Writer<'_>);
    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError>;
}

macro_rules! plain_field {
    ($($ty:ty: $size:expr, $w:ident, $r:ident;)*) => {$(
        impl Field for $ty {
            const SIZE: Option<usize> = Some($size);
            fn write(&self, w: &mut Writer<'_>) { w.$w(*self) }
            fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> { r.$r() }
        }
    )*};
}

plain_field! {
    bool: 1, bool, bool;
    u32: 4, u32, u32;
    f64: 8, f64, f64;
    Vec3: 24, vec3, vec3;
    Pose: 56, pose, pose;
    EntityId: 8, entity, entity;
}

impl Field for String {
    const SIZE: Option<usize> = None;
    fn write(&self, w: &mut Writer<'_>) {
        w.str(self)
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.string()
    }
}

impl<T: Field> Field for Vec<T> {
    const SIZE: Option<usize> = None;
    fn write(&self, w: &mut Writer<'_>) {
        w.u32(self.len() as u32);
        self.iter().for_each(|item| item.write(w));
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let len = r.u32()? as usize;
        // Every item takes at least one byte, so a count beyond the input is malformed
        // rather than a reason to reserve gigabytes.
        if len > r.remaining() {
            return Err(r.error(format!("list of {len} items in {} bytes", r.remaining())));
        }
        (0..len).map(|_| T::read(r)).collect()
    }
}

impl<const N: usize> Field for [f64; N] {
    const SIZE: Option<usize> = Some(8 * N);
    fn write(&self, w: &mut Writer<'_>) {
        self.iter().for_each(|v| w.f64(*v));
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut out = [0.0; N];
        for v in &mut out {
            *v = r.f64()?;
        }
        Ok(out)
    }
}

/// Declares zero-sized marker components.
macro_rules! marker_components {
    ($($(#[$doc:meta])* $ty:ident = $name:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $ty;
        impl $crate::component::Component for $ty {
            const NAME: &'static str = $name;
            const FIXED_SIZE: Option<usize> = Some(0);
            fn encode(&self, _: &mut $crate::component::Writer<'_>) {}
            fn decode(_: &mut $crate::component::Reader<'_>)
                -> Result<Self, $crate::component::DecodeError> { Ok($ty) }
        }
    )*};
}

/// Declares a newtype component over one [`Field`] value.
macro_rules! value_component {
    ($(#[$doc:meta])* $ty:ident($inner:ty) = $name:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct $ty(pub $inner);
        impl $crate::component::Component for $ty {
            const NAME: &'static str = $name;
            const FIXED_SIZE: Option<usize> = <$inner as $crate::components::Field>::SIZE;
            fn encode(&self, w: &mut $crate::component::Writer<'_>) {
                $crate::components::Field::write(&self.0, w)
            }
            fn decode(r: &mut $crate::component::Reader<'_>)
                -> Result<Self, $crate::component::DecodeError> {
                Ok($ty(<$inner as $crate::components::Field>::read(r)?))
            }
        }
    };
}

/// Declares a plain record: a struct with defaults whose encoding is its fields in order.
macro_rules! record {
    (
        $(#[$doc:meta])* $ty:ident {
            $($(#[$fdoc:meta])* $field:ident: $fty:ty = $default:expr,)*
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $ty {
            $($(#[$fdoc])* pub $field: $fty,)*
        }
        impl Default for $ty {
            fn default() -> Self {
                $ty { $($field: $default,)* }
            }
        }
        impl $crate::components::Field for $ty {
            const SIZE: Option<usize> = {
                let mut total = Some(0usize);
                $(
                    total = match (total, <$fty as $crate::components::Field>::SIZE) {
                        (Some(a), Some(b)) => Some(a + b),
                        _ => None,
                    };
                )*
                total
            };
            fn write(&self, w: &mut $crate::component::Writer<'_>) {
                $( $crate::components::Field::write(&self.$field, w); )*
            }
            fn read(r: &mut $crate::component::Reader<'_>)
                -> Result<Self, $crate::component::DecodeError> {
                Ok($ty { $($field: <$fty as $crate::components::Field>::read(r)?,)* })
            }
        }
    };
}

/// Declares a [`record!`] that is itself a component.
macro_rules! record_component {
    ($(#[$doc:meta])* $ty:ident = $name:literal { $($body:tt)* }) => {
        $crate::components::record! { $(#[$doc])* $ty { $($body)* } }
        impl $crate::component::Component for $ty {
            const NAME: &'static str = $name;
            const FIXED_SIZE: Option<usize> = <$ty as $crate::components::Field>::SIZE;
            fn encode(&self, w: &mut $crate::component::Writer<'_>) {
                $crate::components::Field::write(self, w)
            }
            fn decode(r: &mut $crate::component::Reader<'_>)
                -> Result<Self, $crate::component::DecodeError> {
                <$ty as $crate::components::Field>::read(r)
            }
        }
    };
}

pub(crate) use {marker_components, record, record_component, value_component};

/// Calls `$callback!` with the path of every built-in component type, in catalogue order.
///
/// The host registers exactly this list, so a type added here is stored, serialised and
/// round-trip tested without a second list to keep in step.
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_builtin_component {
    ($callback:ident) => {
        $callback!(
            // The entity graph and the SDF description (1.0).
            $crate::components::World,
            $crate::components::Model,
            $crate::components::Link,
            $crate::components::CanonicalLink,
            $crate::components::Collision,
            $crate::components::Visual,
            $crate::components::Joint,
            $crate::components::Sensor,
            $crate::components::Name,
            $crate::math::Pose,
            $crate::components::ParentEntity,
            $crate::components::Static,
            $crate::components::LinearVelocity,
            $crate::components::AngularVelocity,
            $crate::components::Gravity,
            $crate::components::ParentLinkName,
            $crate::components::ChildLinkName,
            $crate::components::Inertial,
            $crate::components::Geometry,
            $crate::components::Light,
            $crate::components::JointType,
            $crate::components::JointAxis,
            $crate::components::JointAxis2,
            $crate::components::Physics,
            // Commands (1.2).
            $crate::components::WorldPoseCmd,
            $crate::components::LinearVelocityCmd,
            $crate::components::AngularVelocityCmd,
            $crate::components::ExternalWorldWrenchCmd,
            $crate::components::JointForceCmd,
            $crate::components::JointVelocityCmd,
            $crate::components::JointPositionReset,
            // State physics writes (1.2).
            $crate::components::WorldLinearVelocity,
            $crate::components::WorldAngularVelocity,
            $crate::components::WorldLinearAcceleration,
            $crate::components::WorldAngularAcceleration,
            $crate::components::JointPosition,
            $crate::components::JointVelocity,
            $crate::components::JointTransmittedWrench,
            $crate::components::ContactSensorData,
            $crate::components::WatchContacts,
            // Surfaces and materials (1.2).
            $crate::components::Surface,
            $crate::components::SelfCollide,
            $crate::components::Kinematic,
            $crate::components::GravityEnabled,
            $crate::components::WindMode,
            $crate::components::Material,
            // The environment (1.2).
            $crate::components::SphericalCoordinates,
            $crate::components::MagneticField,
            $crate::components::Atmosphere,
            $crate::components::WindVelocity,
            $crate::components::Scene,
            // Levels and performers (1.2).
            $crate::components::Level,
            $crate::components::DefaultLevel,
            $crate::components::LevelBuffer,
            $crate::components::LevelEntityNames,
            $crate::components::Performer,
            $crate::components::PerformerRef,
            $crate::components::PerformerLevels,
            $crate::components::PerformerAffinity,
            // Sensors (1.2).
            $crate::components::SensorSdf,
            $crate::components::SensorTopic,
            // Levels (1.4).
            $crate::components::LevelLoaded,
            // Levels of a distributed run (1.6).
            $crate::components::LevelAssigned,
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::{Component, ComponentTypeId};

    macro_rules! names_and_ids {
        ($($ty:ty),* $(,)?) => { vec![$((<$ty>::NAME, <$ty>::ID, <$ty>::FIXED_SIZE)),*] };
    }

    #[test]
    fn catalogue_names_are_namespaced_and_ids_unique() {
        let all: Vec<(&str, ComponentTypeId, Option<usize>)> = for_each_builtin_component!(names_and_ids);
        let mut ids: Vec<_> = all.iter().map(|(_, id, _)| *id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), all.len(), "two built-in components share a type id");
        for (name, id, _) in &all {
            assert!(name.starts_with("gz_sim_components.") || name.starts_with("troupe."), "{name}");
            assert_eq!(*id, ComponentTypeId::of_name(name));
        }
    }

    #[test]
    fn physics_step_size_and_factor_bounds() {
        for ok in [Physics::MIN_STEP_SIZE, 0.001, 1.0, Physics::MAX_STEP_SIZE] {
            assert_eq!(Physics::step_size_problem(ok), None, "{ok}");
        }
        for bad in [0.0, -0.001, 1e-12, 1e300, f64::NAN, f64::INFINITY] {
            let why = Physics::step_size_problem(bad).unwrap_or_default();
            assert!(why.contains("max_step_size") && why.contains(&format!("{bad:?}")), "{bad}: {why:?}");
        }
        assert_eq!(Physics::real_time_factor_problem(0.0), None);
        assert_eq!(Physics::real_time_factor_problem(2.5), None);
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(Physics::real_time_factor_problem(bad).is_some(), "{bad}");
        }
    }

    /// docs/components.md lists the catalogue; `TROUPE_BLESS=1` rewrites its table.
    #[test]
    fn components_doc_lists_the_catalogue() {
        let all: Vec<(&str, ComponentTypeId, Option<usize>)> = for_each_builtin_component!(names_and_ids);
        let mut table = String::from("| Registered name | Type id | Encoded size |\n|---|---|---|\n");
        for (name, id, size) in &all {
            let size = size.map_or("variable".to_string(), |n| format!("{n} bytes"));
            table += &format!("| `{name}` | `{id}` | {size} |\n");
        }
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/components.md");
        let doc = std::fs::read_to_string(path).unwrap_or_default();
        let (begin, end) = ("<!-- catalogue:begin -->\n", "<!-- catalogue:end -->");
        let current = doc.split_once(begin).and_then(|(_, rest)| rest.split_once(end)).map(|(t, _)| t);
        if current == Some(table.as_str()) {
            return;
        }
        if std::env::var_os("TROUPE_BLESS").is_some() {
            let (head, tail) = match (doc.split_once(begin), doc.split_once(end)) {
                (Some((head, _)), Some((_, tail))) => (head.to_string(), tail.to_string()),
                _ => (doc.clone(), String::from("\n")),
            };
            std::fs::write(path, format!("{head}{begin}{table}{end}{tail}")).unwrap();
            return;
        }
        panic!("docs/components.md is out of date; run with TROUPE_BLESS=1 to rewrite its table:\n{table}");
    }

    #[test]
    fn fixed_sizes_match_the_encoding() {
        assert_eq!(Wrench::SIZE, Some(48));
        assert_eq!(ExternalWorldWrenchCmd::FIXED_SIZE, Some(48));
        assert_eq!(Surface::FIXED_SIZE, Some(4 * 8 + 4));
        assert_eq!(Material::FIXED_SIZE, Some(16 * 8 + 2));
        assert_eq!(JointPosition::FIXED_SIZE, None);
        let surface = Surface { mu: 0.5, mu2: 0.25, restitution: 0.75, bounce_threshold: 2.0, collide_bitmask: 3 };
        assert_eq!(surface.to_bytes().len(), Surface::FIXED_SIZE.unwrap());
        assert_eq!(Surface::from_bytes(&surface.to_bytes()).unwrap(), surface);
    }

    #[test]
    fn lists_round_trip_and_reject_impossible_lengths() {
        let contacts = ContactSensorData(vec![Contact {
            collision1: EntityId(4),
            collision2: EntityId(9),
            positions: vec![Vec3::new(1.0, 2.0, 3.0), Vec3::new(-1.0, 0.5, 0.0)],
            normals: vec![Vec3::new(0.0, 0.0, 1.0); 2],
            depths: vec![0.001, 0.002],
            forces: vec![Vec3::new(0.0, 0.0, 9.8); 2],
        }]);
        assert_eq!(ContactSensorData::from_bytes(&contacts.to_bytes()).unwrap(), contacts);

        let names = LevelEntityNames(vec!["a".into(), "b".into()]);
        assert_eq!(LevelEntityNames::from_bytes(&names.to_bytes()).unwrap(), names);

        // A count of u32::MAX items in 4 bytes is malformed, not an allocation request.
        let err = JointPosition::from_bytes(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]).unwrap_err();
        assert!(err.reason.contains("4294967295 items"), "{err}");
        let err = JointPosition::from_bytes(&[1, 0, 0, 0, 0, 0]).unwrap_err();
        assert!(err.reason.contains("needs 8 more bytes"), "{err}");
    }
}
