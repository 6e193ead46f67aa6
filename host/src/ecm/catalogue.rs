//! Registers plugin-api's built-in components with an ECM, as typed specs storages.

use super::store::TypedStore;
use super::Ecm;
use plugin_api::components::*;
use plugin_api::math::Pose;
use plugin_api::Component;

macro_rules! builtins {
    ($ecm:expr; $($ty:ty),* $(,)?) => {
        $( $ecm.add_column(<$ty>::ID, <$ty>::NAME, <$ty>::FIXED_SIZE, Box::new(TypedStore::<$ty>::new())); )*
    };
}

/// Adds every built-in component type. New catalogue entries are appended here too.
pub(super) fn register_builtins(ecm: &mut Ecm) {
    builtins!(ecm;
        World, Model, Link, CanonicalLink, Collision, Visual, Joint, Sensor,
        Name, Pose, ParentEntity, Static, LinearVelocity, AngularVelocity, Gravity,
        ParentLinkName, ChildLinkName, Inertial, Geometry, Light, JointType, JointAxis,
        JointAxis2, Physics,
    );
}
