//! A non-default value of every built-in component type, for the round-trip tests.
//!
//! The round-trip test walks the ECM's registered types and fails for a type that has no
//! sample here, so a component added to the catalogue must be added here too. Floats
//! include -0.0, a NaN with a payload, subnormals and infinities where the type allows, so
//! "bit-identical" is tested, not just "equal".

use plugin_api::components::*;
use plugin_api::math::{Pose, Quat, Vec3};
use plugin_api::{Component, ComponentTypeId, EntityId};

/// A NaN with a payload: survives only a bit-exact path.
pub(super) fn odd_nan() -> f64 {
    f64::from_bits(0x7ff8_dead_beef_0001)
}

fn v(x: f64, y: f64, z: f64) -> Vec3 {
    Vec3::new(x, y, z)
}

fn pose() -> Pose {
    Pose { position: v(1.5, -0.0, odd_nan()), rotation: Quat { w: 0.5, x: -0.5, y: 0.5, z: f64::MIN_POSITIVE / 4.0 } }
}

fn axis() -> AxisData {
    AxisData {
        xyz: v(1.0, 0.0, 0.0),
        lower: -1.25,
        upper: f64::INFINITY,
        effort: 10.0,
        velocity: 2.0,
        damping: 0.125,
        friction: 0.25,
        spring_reference: -0.0,
        spring_stiffness: 3.0,
    }
}

fn wrench() -> Wrench {
    Wrench { force: v(1.0, -2.0, 3.5), torque: v(odd_nan(), 0.0, -0.0) }
}

/// (type, encoded sample) pairs; a type may have several (each Geometry kind).
pub(super) fn samples() -> Vec<(ComponentTypeId, Vec<u8>)> {
    macro_rules! table {
        ($($ty:ty => $value:expr,)*) => {
            vec![$((<$ty as Component>::ID, <$ty as Component>::to_bytes(&$value)),)*]
        };
    }
    table! {
        World => World,
        Model => Model,
        Link => Link,
        CanonicalLink => CanonicalLink,
        Collision => Collision,
        Visual => Visual,
        Joint => Joint,
        Sensor => Sensor,
        Name => Name("box ü 1".into()),
        Pose => pose(),
        ParentEntity => ParentEntity(EntityId(u64::MAX - 1)),
        Static => Static(true),
        LinearVelocity => LinearVelocity(v(0.1, -0.2, 0.3)),
        AngularVelocity => AngularVelocity(v(-0.0, 1e-310, 7.0)),
        Gravity => Gravity(v(0.0, 0.0, -1.62)),
        ParentLinkName => ParentLinkName("world".into()),
        ChildLinkName => ChildLinkName("link_1".into()),
        Inertial => Inertial { mass: 2.5, pose: pose(), inertia: [0.1, -0.0, 0.2, 0.3, odd_nan(), 0.4] },
        Geometry => Geometry::Box { size: v(1.0, 2.0, 3.0) },
        Geometry => Geometry::Sphere { radius: 0.5 },
        Geometry => Geometry::Cylinder { radius: 0.5, length: 2.0 },
        Geometry => Geometry::Capsule { radius: 0.25, length: 1.0 },
        Geometry => Geometry::Ellipsoid { radii: v(1.0, 0.5, 0.25) },
        Geometry => Geometry::Plane { normal: v(0.0, 0.0, 1.0), size: [100.0, -0.0] },
        Geometry => Geometry::Mesh { uri: "model://m/meshes/a.dae".into(), scale: v(1.0, 1.0, 2.0), submesh: "arm".into() },
        Geometry => Geometry::Empty,
        Light => Light {
            kind: LightKind::Spot,
            cast_shadows: true,
            diffuse: [0.5, 0.25, 0.125, 1.0],
            specular: [0.0, -0.0, 1.0, 0.5],
            direction: v(0.1, 0.2, -0.9),
            range: 20.0,
            attenuation: [0.9, 0.01, 0.001],
            intensity: 2.0,
            spot: [0.1, 0.5, 1.0],
            on: false,
            visualize: false,
        },
        JointType => JointType::Revolute2,
        JointAxis => JointAxis(axis()),
        JointAxis2 => JointAxis2(AxisData { xyz: v(0.0, 1.0, 0.0), ..axis() }),
        Physics => Physics { name: "fast".into(), engine: "rapier".into(), max_step_size: 0.004, real_time_factor: 0.0, max_contacts: 7 },
        WorldPoseCmd => WorldPoseCmd(pose()),
        LinearVelocityCmd => LinearVelocityCmd(v(1.0, 0.0, -0.0)),
        AngularVelocityCmd => AngularVelocityCmd(v(0.0, 0.0, 0.5)),
        ExternalWorldWrenchCmd => ExternalWorldWrenchCmd(wrench()),
        JointForceCmd => JointForceCmd(vec![1.0, -2.0]),
        JointVelocityCmd => JointVelocityCmd(vec![odd_nan()]),
        JointPositionReset => JointPositionReset(vec![0.5, 0.25, -0.0]),
        WorldLinearVelocity => WorldLinearVelocity(v(3.0, 2.0, 1.0)),
        WorldAngularVelocity => WorldAngularVelocity(v(-3.0, -2.0, -1.0)),
        WorldLinearAcceleration => WorldLinearAcceleration(v(0.0, 0.0, -9.8)),
        WorldAngularAcceleration => WorldAngularAcceleration(v(f64::NEG_INFINITY, 0.0, 1.0)),
        JointPosition => JointPosition(vec![0.1, 0.2, 0.3]),
        JointVelocity => JointVelocity(vec![-0.1]),
        JointTransmittedWrench => JointTransmittedWrench(wrench()),
        ContactSensorData => ContactSensorData(vec![
            Contact {
                collision1: EntityId(4),
                collision2: EntityId(9),
                positions: vec![v(1.0, 2.0, 3.0), v(-1.0, 0.5, 0.0)],
                normals: vec![v(0.0, 0.0, 1.0); 2],
                depths: vec![0.001, -0.0],
                forces: vec![v(0.0, 0.0, 9.8), v(odd_nan(), 0.0, 0.0)],
            },
            Contact { collision1: EntityId(5), collision2: EntityId(6), ..Default::default() },
        ]),
        WatchContacts => WatchContacts,
        Surface => Surface { mu: 0.5, mu2: 0.25, restitution: 0.75, bounce_threshold: 2.0, collide_bitmask: 3 },
        SelfCollide => SelfCollide(true),
        Kinematic => Kinematic(true),
        GravityEnabled => GravityEnabled(true),
        WindMode => WindMode(true),
        Material => Material {
            ambient: [0.1, 0.2, 0.3, 0.4],
            diffuse: [0.5, 0.6, 0.7, 0.8],
            specular: [0.9, 1.0, -0.0, 0.0],
            emissive: [odd_nan(), 0.0, 0.0, 1.0],
            lighting: false,
            double_sided: true,
        },
        SphericalCoordinates => SphericalCoordinates {
            surface_model: "MOON_SCS".into(),
            world_frame_orientation: "NED".into(),
            latitude_deg: -22.986687,
            longitude_deg: -67.856167,
            elevation: 5000.5,
            heading_deg: 90.0,
        },
        MagneticField => MagneticField(v(6e-6, 2.3e-5, -4.2e-5)),
        Atmosphere => Atmosphere { kind: "isothermal".into(), temperature: 250.0, temperature_gradient: -0.0, pressure: 90_000.0 },
        WindVelocity => WindVelocity(v(5.0, -1.0, 0.0)),
        Scene => Scene {
            ambient: [0.2, 0.2, 0.2, 1.0],
            background: [0.0, 0.0, 0.0, 0.5],
            shadows: false,
            grid: false,
            origin_visual: false,
        },
        Level => Level,
        DefaultLevel => DefaultLevel,
        LevelBuffer => LevelBuffer(2.5),
        LevelEntityNames => LevelEntityNames(vec!["tile_1".into(), "".into(), "tile ü".into()]),
        Performer => Performer,
        PerformerRef => PerformerRef("vehicle".into()),
        PerformerLevels => PerformerLevels(vec![EntityId(3), EntityId(1)]),
        PerformerAffinity => PerformerAffinity("secondary_2".into()),
        SensorSdf => SensorSdf {
            kind: "imu".into(),
            update_rate: 100.0,
            always_on: true,
            topic: "imu".into(),
            xml: "<sensor name=\"imu\" type=\"imu\"/>".into(),
        },
        SensorTopic => SensorTopic("/world/w/imu".into()),
        LevelLoaded => LevelLoaded(true),
        LevelAssigned => LevelAssigned(false),
    }
}
