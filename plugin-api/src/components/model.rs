//! The entity graph and what SDFormat says about models, links, joints and lights.

use super::{marker_components, value_component};
use crate::component::{Component, DecodeError, Reader, Writer};
use crate::entity::EntityId;
use crate::math::{Pose, Vec3};

marker_components! {
    /// Marks the world entity.
    World = "gz_sim_components.World";
    /// Marks a model.
    Model = "gz_sim_components.Model";
    /// Marks a link.
    Link = "gz_sim_components.Link";
    /// Marks a model's canonical link (its first link, which carries the model frame).
    CanonicalLink = "gz_sim_components.CanonicalLink";
    /// Marks a collision.
    Collision = "gz_sim_components.Collision";
    /// Marks a visual.
    Visual = "gz_sim_components.Visual";
    /// Marks a joint.
    Joint = "gz_sim_components.Joint";
    /// Marks a sensor (its configuration stays in its SDF for the sensors system).
    Sensor = "gz_sim_components.Sensor";
}

value_component!(
    /// The entity's name, unique among its siblings.
    Name(String) = "gz_sim_components.Name");
value_component!(
    /// The parent in the entity graph.
    ParentEntity(EntityId) = "gz_sim_components.ParentEntity");
value_component!(
    /// Whether a model is static (immovable, infinite mass).
    Static(bool) = "gz_sim_components.Static");
value_component!(
    /// Linear velocity of a link or model in its own frame, m/s.
    LinearVelocity(Vec3) = "gz_sim_components.LinearVelocity");
value_component!(
    /// Angular velocity of a link or model in its own frame, rad/s.
    AngularVelocity(Vec3) = "gz_sim_components.AngularVelocity");
value_component!(
    /// The world's gravity, m/s² (SDFormat default 0 0 -9.8).
    Gravity(Vec3) = "gz_sim_components.Gravity");
value_component!(
    /// Name of a joint's parent link (`world` for the world frame).
    ParentLinkName(String) = "gz_sim_components.ParentLinkName");
value_component!(
    /// Name of a joint's child link.
    ChildLinkName(String) = "gz_sim_components.ChildLinkName");

/// Pose relative to the parent entity's frame (the world for top-level models) is the
/// component `gz_sim_components.Pose`.
impl Component for Pose {
    const NAME: &'static str = "gz_sim_components.Pose";
    const FIXED_SIZE: Option<usize> = Some(56);
    fn encode(&self, w: &mut Writer<'_>) {
        w.pose(*self)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.pose()
    }
}

/// Mass properties of a link (SDFormat `<inertial>`).
#[derive(Clone, Debug, PartialEq)]
pub struct Inertial {
    /// Mass, kg (SDFormat default 1).
    pub mass: f64,
    /// Pose of the centre of mass and inertia frame relative to the link.
    pub pose: Pose,
    /// Inertia tensor entries about the centre of mass, kg·m²: ixx, ixy, ixz, iyy, iyz, izz.
    pub inertia: [f64; 6],
}

impl Default for Inertial {
    fn default() -> Self {
        Inertial { mass: 1.0, pose: Pose::IDENTITY, inertia: [1.0, 0.0, 0.0, 1.0, 0.0, 1.0] }
    }
}

impl Component for Inertial {
    const NAME: &'static str = "gz_sim_components.Inertial";
    const FIXED_SIZE: Option<usize> = Some(8 + 56 + 48);
    fn encode(&self, w: &mut Writer<'_>) {
        w.f64(self.mass);
        w.pose(self.pose);
        self.inertia.iter().for_each(|v| w.f64(*v));
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mass = r.f64()?;
        let pose = r.pose()?;
        let mut inertia = [0.0; 6];
        for v in &mut inertia {
            *v = r.f64()?;
        }
        Ok(Inertial { mass, pose, inertia })
    }
}

/// A shape (SDFormat `<geometry>`), for collisions and visuals.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub enum Geometry {
    /// `<empty/>` or no geometry.
    #[default]
    Empty,
    /// A box of the given full size, m.
    Box {
        /// Edge lengths x, y, z.
        size: Vec3,
    },
    /// A sphere.
    Sphere {
        /// Radius, m.
        radius: f64,
    },
    /// A cylinder along z.
    Cylinder {
        /// Radius, m.
        radius: f64,
        /// Length along z, m.
        length: f64,
    },
    /// A capsule along z: a cylinder of `length` with hemispherical caps.
    Capsule {
        /// Radius, m.
        radius: f64,
        /// Length of the cylindrical part, m.
        length: f64,
    },
    /// An ellipsoid with the given semi-axes.
    Ellipsoid {
        /// Radii along x, y, z, m.
        radii: Vec3,
    },
    /// A plane through the origin.
    Plane {
        /// Normal direction.
        normal: Vec3,
        /// Extent along the plane's two axes, m.
        size: [f64; 2],
    },
    /// A mesh file reference.
    Mesh {
        /// The mesh URI as written in the SDF.
        uri: String,
        /// Scale applied to the mesh.
        scale: Vec3,
        /// Name of a submesh to use, empty for the whole mesh.
        submesh: String,
    },
}

impl Component for Geometry {
    const NAME: &'static str = "gz_sim_components.Geometry";
    const FIXED_SIZE: Option<usize> = None;
    fn encode(&self, w: &mut Writer<'_>) {
        match self {
            Geometry::Empty => w.u8(0),
            Geometry::Box { size } => {
                w.u8(1);
                w.vec3(*size);
            }
            Geometry::Sphere { radius } => {
                w.u8(2);
                w.f64(*radius);
            }
            Geometry::Cylinder { radius, length } => {
                w.u8(3);
                w.f64(*radius);
                w.f64(*length);
            }
            Geometry::Capsule { radius, length } => {
                w.u8(4);
                w.f64(*radius);
                w.f64(*length);
            }
            Geometry::Ellipsoid { radii } => {
                w.u8(5);
                w.vec3(*radii);
            }
            Geometry::Plane { normal, size } => {
                w.u8(6);
                w.vec3(*normal);
                w.f64(size[0]);
                w.f64(size[1]);
            }
            Geometry::Mesh { uri, scale, submesh } => {
                w.u8(7);
                w.str(uri);
                w.vec3(*scale);
                w.str(submesh);
            }
        }
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(match r.u8()? {
            0 => Geometry::Empty,
            1 => Geometry::Box { size: r.vec3()? },
            2 => Geometry::Sphere { radius: r.f64()? },
            3 => Geometry::Cylinder { radius: r.f64()?, length: r.f64()? },
            4 => Geometry::Capsule { radius: r.f64()?, length: r.f64()? },
            5 => Geometry::Ellipsoid { radii: r.vec3()? },
            6 => Geometry::Plane { normal: r.vec3()?, size: [r.f64()?, r.f64()?] },
            7 => Geometry::Mesh { uri: r.string()?, scale: r.vec3()?, submesh: r.string()? },
            tag => return Err(r.error(format!("unknown geometry kind {tag}"))),
        })
    }
}

/// The kind of a light (SDFormat `<light type>`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum LightKind {
    /// Emits in all directions from a point.
    #[default]
    Point,
    /// Parallel rays along `direction` (the sun).
    Directional,
    /// A cone along `direction`.
    Spot,
}

/// A light source (SDFormat `<light>`); its pose is in [`Pose`].
#[derive(Clone, Debug, PartialEq)]
pub struct Light {
    /// Point, directional or spot.
    pub kind: LightKind,
    /// Whether it casts shadows.
    pub cast_shadows: bool,
    /// Diffuse colour, RGBA 0..1.
    pub diffuse: [f64; 4],
    /// Specular colour, RGBA 0..1.
    pub specular: [f64; 4],
    /// Direction in the light frame (directional and spot).
    pub direction: Vec3,
    /// Attenuation range, m.
    pub range: f64,
    /// Constant, linear and quadratic attenuation factors.
    pub attenuation: [f64; 3],
    /// Intensity scale.
    pub intensity: f64,
    /// Spot inner angle, outer angle (rad) and falloff.
    pub spot: [f64; 3],
    /// Whether the light is on (`<light_on>`, default true).
    pub on: bool,
    /// Whether a GUI draws the light's visual (`<visualize>`, default true).
    pub visualize: bool,
}

impl Default for Light {
    fn default() -> Self {
        Light {
            kind: LightKind::Point,
            cast_shadows: false,
            diffuse: [1.0, 1.0, 1.0, 1.0],
            specular: [0.1, 0.1, 0.1, 1.0],
            direction: Vec3::new(0.0, 0.0, -1.0),
            range: 10.0,
            attenuation: [1.0, 0.0, 0.0],
            intensity: 1.0,
            spot: [0.0, 0.0, 0.0],
            on: true,
            visualize: true,
        }
    }
}

impl Component for Light {
    const NAME: &'static str = "gz_sim_components.Light";
    const FIXED_SIZE: Option<usize> = Some(1 + 1 + 64 + 24 + 8 + 24 + 8 + 24 + 2);
    fn encode(&self, w: &mut Writer<'_>) {
        w.u8(match self.kind {
            LightKind::Point => 0,
            LightKind::Directional => 1,
            LightKind::Spot => 2,
        });
        w.bool(self.cast_shadows);
        self.diffuse.iter().chain(&self.specular).for_each(|v| w.f64(*v));
        w.vec3(self.direction);
        w.f64(self.range);
        self.attenuation.iter().for_each(|v| w.f64(*v));
        w.f64(self.intensity);
        self.spot.iter().for_each(|v| w.f64(*v));
        w.bool(self.on);
        w.bool(self.visualize);
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let kind = match r.u8()? {
            0 => LightKind::Point,
            1 => LightKind::Directional,
            2 => LightKind::Spot,
            k => return Err(r.error(format!("unknown light kind {k}"))),
        };
        let cast_shadows = r.bool()?;
        let mut f = [0.0; 8];
        for v in &mut f {
            *v = r.f64()?;
        }
        let direction = r.vec3()?;
        let range = r.f64()?;
        let attenuation = [r.f64()?, r.f64()?, r.f64()?];
        let intensity = r.f64()?;
        let spot = [r.f64()?, r.f64()?, r.f64()?];
        let on = r.bool()?;
        let visualize = r.bool()?;
        Ok(Light {
            kind,
            cast_shadows,
            diffuse: [f[0], f[1], f[2], f[3]],
            specular: [f[4], f[5], f[6], f[7]],
            direction,
            range,
            attenuation,
            intensity,
            spot,
            on,
            visualize,
        })
    }
}

/// The kind of a joint (SDFormat `<joint type>`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum JointType {
    /// No relative motion.
    #[default]
    Fixed,
    /// One rotational degree of freedom about `axis`.
    Revolute,
    /// One translational degree of freedom along `axis`.
    Prismatic,
    /// Three rotational degrees of freedom.
    Ball,
    /// Two rotational degrees of freedom about `axis` and `axis2`.
    Universal,
    /// Two rotational degrees of freedom, `axis` then `axis2`.
    Revolute2,
    /// Rotation coupled to translation along `axis` (thread pitch).
    Screw,
    /// Rotation about `axis` with coupling to another joint.
    Gearbox,
    /// A revolute joint without limits.
    Continuous,
}

impl JointType {
    const ALL: [JointType; 9] = [
        JointType::Fixed,
        JointType::Revolute,
        JointType::Prismatic,
        JointType::Ball,
        JointType::Universal,
        JointType::Revolute2,
        JointType::Screw,
        JointType::Gearbox,
        JointType::Continuous,
    ];

    /// SDFormat's spelling of this joint type.
    pub fn sdf_name(self) -> &'static str {
        match self {
            JointType::Fixed => "fixed",
            JointType::Revolute => "revolute",
            JointType::Prismatic => "prismatic",
            JointType::Ball => "ball",
            JointType::Universal => "universal",
            JointType::Revolute2 => "revolute2",
            JointType::Screw => "screw",
            JointType::Gearbox => "gearbox",
            JointType::Continuous => "continuous",
        }
    }

    /// The joint type SDFormat calls `name`.
    pub fn from_sdf_name(name: &str) -> Option<JointType> {
        JointType::ALL.into_iter().find(|t| t.sdf_name() == name)
    }
}

impl Component for JointType {
    const NAME: &'static str = "gz_sim_components.JointType";
    const FIXED_SIZE: Option<usize> = Some(1);
    fn encode(&self, w: &mut Writer<'_>) {
        w.u8(JointType::ALL.iter().position(|t| t == self).unwrap_or(0) as u8);
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let i = r.u8()? as usize;
        JointType::ALL.get(i).copied().ok_or_else(|| r.error(format!("unknown joint type {i}")))
    }
}

/// One joint axis (SDFormat `<axis>`), always in the joint frame: the loader turns an axis
/// written with `<xyz expressed_in>` or SDFormat 1.6's `<use_parent_model_frame>` into it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AxisData {
    /// Unit direction.
    pub xyz: Vec3,
    /// Lower limit, rad or m (SDFormat default -1e16).
    pub lower: f64,
    /// Upper limit, rad or m (default 1e16).
    pub upper: f64,
    /// Effort limit, N or N·m (default -1: none).
    pub effort: f64,
    /// Velocity limit, rad/s or m/s (default -1: none).
    pub velocity: f64,
    /// Viscous damping coefficient.
    pub damping: f64,
    /// Static friction.
    pub friction: f64,
    /// Spring reference position.
    pub spring_reference: f64,
    /// Spring stiffness.
    pub spring_stiffness: f64,
}

impl Default for AxisData {
    fn default() -> Self {
        AxisData {
            xyz: Vec3::new(0.0, 0.0, 1.0),
            lower: -1e16,
            upper: 1e16,
            effort: -1.0,
            velocity: -1.0,
            damping: 0.0,
            friction: 0.0,
            spring_reference: 0.0,
            spring_stiffness: 0.0,
        }
    }
}

impl AxisData {
    fn encode_into(&self, w: &mut Writer<'_>) {
        w.vec3(self.xyz);
        for v in [
            self.lower,
            self.upper,
            self.effort,
            self.velocity,
            self.damping,
            self.friction,
            self.spring_reference,
            self.spring_stiffness,
        ] {
            w.f64(v);
        }
    }
    fn decode_from(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(AxisData {
            xyz: r.vec3()?,
            lower: r.f64()?,
            upper: r.f64()?,
            effort: r.f64()?,
            velocity: r.f64()?,
            damping: r.f64()?,
            friction: r.f64()?,
            spring_reference: r.f64()?,
            spring_stiffness: r.f64()?,
        })
    }
}

/// A joint's first axis.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointAxis(pub AxisData);
/// A joint's second axis (universal, revolute2).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointAxis2(pub AxisData);

impl Component for JointAxis {
    const NAME: &'static str = "gz_sim_components.JointAxis";
    const FIXED_SIZE: Option<usize> = Some(88);
    fn encode(&self, w: &mut Writer<'_>) {
        self.0.encode_into(w)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(JointAxis(AxisData::decode_from(r)?))
    }
}

impl Component for JointAxis2 {
    const NAME: &'static str = "gz_sim_components.JointAxis2";
    const FIXED_SIZE: Option<usize> = Some(88);
    fn encode(&self, w: &mut Writer<'_>) {
        self.0.encode_into(w)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(JointAxis2(AxisData::decode_from(r)?))
    }
}

/// The world's physics parameters (SDFormat `<physics>`).
#[derive(Clone, Debug, PartialEq)]
pub struct Physics {
    /// Name of the physics profile.
    pub name: String,
    /// The engine type the SDF asked for (`ode`, `bullet`...); informational.
    pub engine: String,
    /// Step size, s (SDFormat default 0.001).
    pub max_step_size: f64,
    /// Target real-time factor; 0 runs as fast as possible (default 1).
    pub real_time_factor: f64,
    /// Maximum contacts between two entities (default 20).
    pub max_contacts: u32,
}

impl Default for Physics {
    fn default() -> Self {
        Physics {
            name: "default_physics".into(),
            engine: "ode".into(),
            max_step_size: 0.001,
            real_time_factor: 1.0,
            max_contacts: 20,
        }
    }
}

impl Physics {
    /// The smallest step size the host's clock takes, s: one nanosecond, its resolution
    /// (a smaller step would round to zero and time would stand still).
    pub const MIN_STEP_SIZE: f64 = 1e-9;
    /// The largest step size the host accepts, s: one day. The clock counts sim time in
    /// `i64` nanoseconds (about 292 years), so a step must at least fit in it; a day is far
    /// past any physics engine's useful step and still leaves room for 100,000 steps
    /// (1e300 used to overflow the clock on the first step).
    pub const MAX_STEP_SIZE: f64 = 86_400.0;

    /// Why `step` (s) cannot be a world's step size, or `None` when it can: it must be a
    /// finite number from [`Physics::MIN_STEP_SIZE`] to [`Physics::MAX_STEP_SIZE`].
    pub fn step_size_problem(step: f64) -> Option<String> {
        let fits = step.is_finite() && (Self::MIN_STEP_SIZE..=Self::MAX_STEP_SIZE).contains(&step);
        (!fits).then(|| {
            format!(
                "max_step_size {step:?} s is out of range: a step size is a finite number of seconds from {:?} (1 ns) to {:?} (one day)",
                Self::MIN_STEP_SIZE,
                Self::MAX_STEP_SIZE
            )
        })
    }

    /// Why `factor` cannot be a world's real-time factor, or `None` when it can: it must be
    /// a finite number >= 0 (0: as fast as possible).
    pub fn real_time_factor_problem(factor: f64) -> Option<String> {
        let fits = factor.is_finite() && factor >= 0.0;
        (!fits).then(|| format!("real_time_factor {factor:?} is out of range: it must be a finite number >= 0"))
    }
}

impl Component for Physics {
    const NAME: &'static str = "gz_sim_components.Physics";
    const FIXED_SIZE: Option<usize> = None;
    fn encode(&self, w: &mut Writer<'_>) {
        w.str(&self.name);
        w.str(&self.engine);
        w.f64(self.max_step_size);
        w.f64(self.real_time_factor);
        w.u32(self.max_contacts);
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Physics {
            name: r.string()?,
            engine: r.string()?,
            max_step_size: r.f64()?,
            real_time_factor: r.f64()?,
            max_contacts: r.u32()?,
        })
    }
}
