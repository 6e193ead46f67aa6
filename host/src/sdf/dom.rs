//! The parsed SDFormat document: what the loader reads, before any entity exists.
//!
//! Every element that becomes an entity carries its `ordinal`: its 1-based position in a
//! depth-first, document-order walk over entity elements of the parsed document (world,
//! model, link, collision, visual, joint, light, sensor, level, performer), with each
//! `<include>`d file's elements counted where the `<include>` is written. The entity
//! factory turns ordinals into entity ids (`id = base + ordinal`, base 0 for the world file),
//! which makes ids a pure function of the file.

use plugin_api::components::{
    Atmosphere, AxisData, Geometry, Inertial, JointType, Light, Material, Physics, Scene, SphericalCoordinates, Surface,
};
use plugin_api::math::{Pose, Vec3};
use std::path::PathBuf;
use std::sync::Arc;

/// Where an element was written: file (or a description such as `<string>`) and 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The file, or a label for SDF given as a string.
    pub file: Arc<PathBuf>,
    /// 1-based line of the element's start tag.
    pub line: u32,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// A `<pose>` as written: its value and the frame it is relative to. Entities keep it next to
/// their resolved `pose`.
#[derive(Clone, Debug, PartialEq)]
pub struct PoseSdf {
    /// The six (or seven) numbers.
    pub value: Pose,
    /// The `relative_to` attribute; empty for the element's default frame.
    pub relative_to: String,
    /// Where the `<pose>` was written (the element's own start tag when it has no `<pose>`).
    pub origin: Origin,
}

/// `<frame>` in a model or world: not an entity, a named pose other poses can be relative to.
#[derive(Clone, Debug)]
pub struct FrameSdf {
    /// `name` attribute.
    pub name: String,
    /// `attached_to` attribute; empty for the model frame (in a model) or the world.
    pub attached_to: String,
    /// `<pose>` as written (relative to `attached_to` unless it says otherwise).
    pub raw_pose: PoseSdf,
    /// The pose resolved relative to the enclosing model frame (or the world).
    pub pose: Pose,
    /// Where `<frame>` was written.
    pub origin: Origin,
}

/// A whole parsed document.
#[derive(Clone, Debug)]
pub struct SdfDocument {
    /// The `<sdf version>` attribute.
    pub version: String,
    /// Worlds in document order.
    pub worlds: Vec<WorldSdf>,
    /// Top-level models of a document without a world (a snippet for the entity factory).
    pub models: Vec<ModelSdf>,
    /// Top-level lights of a document without a world.
    pub lights: Vec<LightSdf>,
    /// Number of entity elements in the document (the largest ordinal).
    pub entity_count: u64,
    /// Non-fatal findings (unknown elements, ignored attributes), each naming file and line.
    pub warnings: Vec<String>,
}

/// A `<plugin>` element, kept as XML for its system.
#[derive(Clone, Debug)]
pub struct PluginSdf {
    /// The `name` attribute (class name, e.g. `gz::sim::systems::Physics`).
    pub name: String,
    /// The `filename` attribute (library, e.g. `gz-sim-physics-system`).
    pub filename: String,
    /// The whole `<plugin ...>...</plugin>` element as XML text.
    pub xml: String,
    /// Where it was written.
    pub origin: Origin,
    /// Its `<troupe:roles>`: the roles of a distributed run it runs in (`None`: the default
    /// of its kind; see [`crate::config::roles`]).
    pub roles: Option<crate::config::RoleSet>,
}

/// `<world>`.
#[derive(Clone, Debug)]
pub struct WorldSdf {
    /// Entity ordinal.
    pub ordinal: u64,
    /// `name` attribute.
    pub name: String,
    /// First `<physics>` (defaults if absent).
    pub physics: Physics,
    /// `<gravity>` (default 0 0 -9.8).
    pub gravity: Vec3,
    /// `<magnetic_field>`, tesla (default 5.5645e-6 22.8758e-6 -42.3884e-6).
    pub magnetic_field: Vec3,
    /// `<atmosphere>` (defaults if absent).
    pub atmosphere: Atmosphere,
    /// `<wind><linear_velocity>`, m/s (default zero).
    pub wind: Vec3,
    /// `<spherical_coordinates>` (EARTH_WGS84 at 0, 0 if absent).
    pub spherical_coordinates: SphericalCoordinates,
    /// `<scene>` (defaults if absent).
    pub scene: Scene,
    /// Models in document order.
    pub models: Vec<ModelSdf>,
    /// World-level lights.
    pub lights: Vec<LightSdf>,
    /// World-level joints.
    pub joints: Vec<JointSdf>,
    /// World-level `<frame>`s.
    pub frames: Vec<FrameSdf>,
    /// System plugins directly under `<world>`, excluding the `gz::sim` /
    /// `ignition::gazebo` level-and-performer element, which is in `levels_plugin`.
    pub plugins: Vec<PluginSdf>,
    /// The `<plugin name="gz::sim">` (or `ignition::gazebo`) element, if any: levels and
    /// performers, never loaded as a system.
    pub levels_plugin: Option<PluginSdf>,
    /// `<level>` elements of `levels_plugin`, in document order.
    pub levels: Vec<LevelSdf>,
    /// `<performer>` elements of `levels_plugin`, in document order (a performer whose
    /// `<ref>` names nothing is dropped with a warning).
    pub performers: Vec<PerformerSdf>,
    /// `<gz:policies><include_server_config_plugins>` (default true).
    pub include_server_config_plugins: bool,
    /// Where `<world>` was written.
    pub origin: Origin,
}

/// `<model>` (possibly nested).
#[derive(Clone, Debug)]
pub struct ModelSdf {
    /// Entity ordinal.
    pub ordinal: u64,
    /// `name` attribute.
    pub name: String,
    /// The pose relative to the parent model or the world (resolved from `raw_pose`).
    pub pose: Pose,
    /// `<pose>` as written (or as an `<include>` overrides it).
    pub raw_pose: PoseSdf,
    /// `<static>`.
    pub is_static: bool,
    /// `<self_collide>` (default false); links that do not say inherit it.
    pub self_collide: bool,
    /// `<enable_wind>` (default false); links that do not say inherit it.
    pub enable_wind: bool,
    /// Links in document order.
    pub links: Vec<LinkSdf>,
    /// Joints in document order.
    pub joints: Vec<JointSdf>,
    /// Nested models in document order (included ones in place).
    pub models: Vec<ModelSdf>,
    /// `<frame>`s.
    pub frames: Vec<FrameSdf>,
    /// Model plugins.
    pub plugins: Vec<PluginSdf>,
    /// Where `<model>` was written.
    pub origin: Origin,
}

/// `<link>`.
#[derive(Clone, Debug)]
pub struct LinkSdf {
    /// Entity ordinal.
    pub ordinal: u64,
    /// `name` attribute.
    pub name: String,
    /// The pose relative to the model (resolved from `raw_pose`).
    pub pose: Pose,
    /// `<pose>` as written.
    pub raw_pose: PoseSdf,
    /// `<inertial>` (defaults: mass 1, identity inertia).
    pub inertial: Inertial,
    /// `<gravity>`: whether gravity acts on the link (default true).
    pub gravity: bool,
    /// `<kinematic>` (default false).
    pub kinematic: bool,
    /// `<self_collide>` as written; `None` takes the model's.
    pub self_collide: Option<bool>,
    /// `<enable_wind>` as written; `None` takes the model's.
    pub enable_wind: Option<bool>,
    /// Collisions in document order.
    pub collisions: Vec<ShapeSdf>,
    /// Visuals in document order.
    pub visuals: Vec<ShapeSdf>,
    /// Lights attached to the link.
    pub lights: Vec<LightSdf>,
    /// Sensors attached to the link.
    pub sensors: Vec<SensorSdf>,
    /// Where `<link>` was written.
    pub origin: Origin,
}

/// `<collision>` or `<visual>`.
#[derive(Clone, Debug)]
pub struct ShapeSdf {
    /// Entity ordinal.
    pub ordinal: u64,
    /// `name` attribute.
    pub name: String,
    /// The pose relative to the link (resolved from `raw_pose`).
    pub pose: Pose,
    /// `<pose>` as written.
    pub raw_pose: PoseSdf,
    /// `<geometry>`.
    pub geometry: Geometry,
    /// `<surface>` of a collision (SDFormat defaults when absent); `None` for a visual.
    pub surface: Option<Surface>,
    /// `<material>` of a visual, if written; always `None` for a collision.
    pub material: Option<Material>,
    /// Where the element was written.
    pub origin: Origin,
}

/// `<joint>`.
#[derive(Clone, Debug)]
pub struct JointSdf {
    /// Entity ordinal.
    pub ordinal: u64,
    /// `name` attribute.
    pub name: String,
    /// `type` attribute.
    pub kind: JointType,
    /// `<parent>` link name (`world` allowed).
    pub parent: String,
    /// `<child>` link name.
    pub child: String,
    /// The pose relative to the child link, or whatever frame `child` names (resolved from
    /// `raw_pose`; gz-sim keeps a joint's pose in its child frame too).
    pub pose: Pose,
    /// `<pose>` as written.
    pub raw_pose: PoseSdf,
    /// `<axis>`; its `xyz` is in the joint frame whatever frame it was written in.
    pub axis: Option<AxisData>,
    /// `<axis2>`, likewise.
    pub axis2: Option<AxisData>,
    /// The frame each axis' `<xyz>` was written in, when not the joint frame.
    pub axis_frames: [Option<AxisFrame>; 2],
    /// Sensors attached to the joint.
    pub sensors: Vec<SensorSdf>,
    /// Where `<joint>` was written.
    pub origin: Origin,
}

/// The frame a joint axis' `<xyz>` was written in: `<xyz expressed_in="F">`, or the
/// enclosing model frame for SDFormat 1.6's `<use_parent_model_frame>true`.
#[derive(Clone, Debug, PartialEq)]
pub struct AxisFrame {
    /// The frame's name; empty for the enclosing model frame (the world for a world joint).
    pub frame: String,
    /// Where `<xyz>` (or `<use_parent_model_frame>`) was written.
    pub origin: Origin,
}

/// `<light>`.
#[derive(Clone, Debug)]
pub struct LightSdf {
    /// Entity ordinal.
    pub ordinal: u64,
    /// `name` attribute.
    pub name: String,
    /// The pose relative to the parent entity (resolved from `raw_pose`).
    pub pose: Pose,
    /// `<pose>` as written.
    pub raw_pose: PoseSdf,
    /// Light properties.
    pub light: Light,
    /// Where `<light>` was written.
    pub origin: Origin,
}

/// `<sensor>`: an entity whose XML is kept for the sensors system.
#[derive(Clone, Debug)]
pub struct SensorSdf {
    /// Entity ordinal.
    pub ordinal: u64,
    /// `name` attribute.
    pub name: String,
    /// `type` attribute.
    pub kind: String,
    /// `<update_rate>`, Hz (default 0: every step).
    pub update_rate: f64,
    /// `<always_on>` (default false).
    pub always_on: bool,
    /// `<topic>` as written (empty: the sensor type's default).
    pub topic: String,
    /// The pose relative to the parent link or joint (resolved from `raw_pose`).
    pub pose: Pose,
    /// `<pose>` as written.
    pub raw_pose: PoseSdf,
    /// The whole `<sensor>` element as XML.
    pub xml: String,
    /// Sensor plugins.
    pub plugins: Vec<PluginSdf>,
    /// Where `<sensor>` was written.
    pub origin: Origin,
}

/// A `<level>` (docs/levels.md): an axis-aligned box in the world frame, inflated by a buffer,
/// and the names of the top-level entities it holds.
#[derive(Clone, Debug)]
pub struct LevelSdf {
    /// Entity ordinal.
    pub ordinal: u64,
    /// `name` attribute.
    pub name: String,
    /// `<pose>`: only the position counts (the box is axis-aligned).
    pub pose: Pose,
    /// `<geometry><box><size>`, m.
    pub size: Vec3,
    /// `<buffer>`, m (default 0; a negative value is read as 0 with a warning).
    pub buffer: f64,
    /// `<ref>` names, in document order, duplicates and names the world lacks removed.
    pub refs: Vec<String>,
    /// Where `<level>` was written.
    pub origin: Origin,
}

/// A `<performer>`: a top-level model whose volume loads the levels it touches.
#[derive(Clone, Debug)]
pub struct PerformerSdf {
    /// Entity ordinal.
    pub ordinal: u64,
    /// `name` attribute.
    pub name: String,
    /// `<ref>`: the name of the model.
    pub model: String,
    /// `<geometry><box><size>`, m; `None`: the box enclosing the model's collisions.
    pub size: Option<Vec3>,
    /// Where `<performer>` was written.
    pub origin: Origin,
}
