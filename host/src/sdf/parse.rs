//! The document, `<world>`, `<model>` and `<link>`.

use super::ctx::{Ctx, Result};
use super::dom::{FrameSdf, LightSdf, LinkSdf, ModelSdf, SdfDocument, WorldSdf};
use super::entities::{joint, light, plugin, sensor};
use super::environment::{atmosphere, scene, spherical_coordinates, wind, MAGNETIC_FIELD};
use super::geometry::{inertial, shape};
use super::include::{include, Included};
use super::levels::{self, Problems};
use crate::xml::{elements, qname};
use plugin_api::components::{Inertial, Physics};
use plugin_api::math::Vec3;
use xmltree::Element;

/// World children SDFormat defines that no Troupe component holds; accepted silently.
const WORLD_TOLERATED: &[&str] = &["audio", "population", "road", "state"];

const MODEL_TOLERATED: &[&str] = &["allow_auto_disable", "gripper"];

const LINK_TOLERATED: &[&str] = &[
    "must_be_base_link",
    "velocity_decay",
    "enable_wind",
    "audio_source",
    "audio_sink",
    "battery",
    "particle_emitter",
    "projector",
];

/// Plugin names that carry levels and performers rather than naming a system.
const LEVELS_PLUGIN_NAMES: &[&str] = &["gz::sim", "ignition::gazebo"];

/// Reads the whole document from its root element.
pub(crate) fn document(ctx: &mut Ctx<'_>, root: &Element) -> Result<SdfDocument> {
    let mut doc = SdfDocument {
        version: String::new(),
        worlds: Vec::new(),
        models: Vec::new(),
        lights: Vec::new(),
        entity_count: 0,
        warnings: Vec::new(),
    };
    match (root.prefix.as_deref(), root.name.as_str()) {
        (None, "sdf") => {
            doc.version = root.attributes.get("version").map(|v| v.trim().to_string()).unwrap_or_default();
            check_version(ctx, root, &doc.version);
            for child in elements(root) {
                match child.name.as_str() {
                    _ if child.prefix.is_some() => {}
                    "world" => doc.worlds.push(world(ctx, child)?),
                    "model" => doc.models.push(model(ctx, child)?),
                    "light" => doc.lights.push(light(ctx, child)?),
                    "actor" => ctx.unsupported(child),
                    _ => ctx.unknown(child, root),
                }
            }
        }
        (None, "model") => doc.models.push(model(ctx, root)?),
        (None, "light") => doc.lights.push(light(ctx, root)?),
        _ => return Err(ctx.error(root, format!("expected the root element <sdf>, found <{}>", qname(root)))),
    }
    doc.entity_count = ctx.last_ordinal;
    doc.warnings = std::mem::take(&mut ctx.warnings);
    Ok(doc)
}

/// The content of an included file: its one `<model>` or `<light>` (in `<sdf>` or bare).
pub(crate) fn included(ctx: &mut Ctx<'_>, root: &Element) -> Result<Included> {
    let candidates: Vec<&Element> = match (root.prefix.as_deref(), root.name.as_str()) {
        (None, "sdf") => {
            let version = root.attributes.get("version").map(|v| v.trim()).unwrap_or_default();
            check_version(ctx, root, version);
            elements(root).filter(|c| c.prefix.is_none()).collect()
        }
        _ => vec![root],
    };
    let mut found = None;
    for el in candidates {
        let what = match el.name.as_str() {
            "model" | "light" if found.is_none() => el,
            "model" | "light" => {
                ctx.warn(el, format!("an included file holds one model or light; this <{}> is ignored", el.name));
                continue;
            }
            "actor" | "world" => {
                return Err(ctx.error(el, format!("<{}> cannot be included (only a <model> or <light>)", el.name)))
            }
            _ => {
                ctx.unknown(el, root);
                continue;
            }
        };
        found = Some(if what.name == "model" {
            Included::Model(model(ctx, what)?)
        } else {
            Included::Light(light(ctx, what)?)
        });
    }
    found.ok_or_else(|| ctx.error(root, "the file holds no <model> or <light> to include"))
}

/// `<frame name attached_to>`: a named pose; not an entity.
fn frame(ctx: &mut Ctx<'_>, el: &Element) -> Result<FrameSdf> {
    let name = ctx.attr(el, "name")?;
    let attached_to = el.attributes.get("attached_to").map(|a| a.trim().to_string());
    let raw_pose = ctx.child_pose_sdf(el)?;
    ctx.check_children(el, &["pose"]);
    Ok(FrameSdf {
        name,
        attached_to: attached_to.unwrap_or_default(),
        pose: raw_pose.value,
        raw_pose,
        origin: ctx.origin(el),
    })
}

fn check_version(ctx: &mut Ctx<'_>, root: &Element, version: &str) {
    let minor = version.strip_prefix("1.").and_then(|m| m.parse::<u32>().ok());
    match minor {
        Some(6..=12) => {}
        _ if version.is_empty() => ctx.warn(root, "<sdf> has no version attribute; read as SDFormat 1.11"),
        _ => ctx.warn(root, format!("SDFormat version \"{version}\" is outside 1.6-1.12; read as SDFormat 1.11")),
    }
}

fn world(ctx: &mut Ctx<'_>, el: &Element) -> Result<WorldSdf> {
    let ordinal = ctx.ordinal();
    let mut w = WorldSdf {
        ordinal,
        name: ctx.attr(el, "name")?,
        physics: Physics::default(),
        gravity: Vec3::new(0.0, 0.0, -9.8),
        magnetic_field: MAGNETIC_FIELD,
        atmosphere: Default::default(),
        wind: Vec3::ZERO,
        spherical_coordinates: Default::default(),
        scene: Default::default(),
        models: Vec::new(),
        lights: Vec::new(),
        joints: Vec::new(),
        frames: Vec::new(),
        plugins: Vec::new(),
        levels_plugin: None,
        levels: Vec::new(),
        performers: Vec::new(),
        include_server_config_plugins: true,
        origin: ctx.origin(el),
    };
    let mut seen = std::collections::HashSet::new();
    let (mut levels_el, mut problems) = (None, Problems::default());
    for child in elements(el) {
        // Elements SDFormat allows once: the first counts, as in libsdformat.
        let first = child.prefix.is_none() && seen.insert(child.name.as_str());
        match (child.prefix.as_deref(), child.name.as_str()) {
            (Some("gz"), "policies") => policies(ctx, child, &mut w)?,
            (Some(_), _) => {}
            (None, "physics") if first => w.physics = physics(ctx, child)?,
            (None, "gravity") if first => w.gravity = ctx.finite_vec3(child)?,
            (None, "magnetic_field") if first => w.magnetic_field = ctx.vec3(child)?,
            (None, "atmosphere") if first => w.atmosphere = atmosphere(ctx, child)?,
            (None, "wind") if first => w.wind = wind(ctx, child)?,
            (None, "scene") if first => w.scene = scene(ctx, child)?,
            (None, "spherical_coordinates") if first => w.spherical_coordinates = spherical_coordinates(ctx, child)?,
            (None, "physics" | "gui") => {}
            (None, n @ ("gravity" | "magnetic_field" | "atmosphere" | "wind" | "scene" | "spherical_coordinates")) => {
                ctx.warn(child, format!("a second <{n}> in <world> is ignored"))
            }
            (None, "light") => w.lights.push(light(ctx, child)?),
            (None, "model") => w.models.push(model(ctx, child)?),
            (None, "joint") => w.joints.push(joint(ctx, child)?),
            (None, "frame") => w.frames.push(frame(ctx, child)?),
            (None, "plugin") => {
                if world_plugin(ctx, child, &mut w, &mut problems)? {
                    levels_el = Some(child);
                }
            }
            (None, "include") => match include(ctx, child)? {
                Included::Model(m) => w.models.push(m),
                Included::Light(l) => w.lights.push(l),
            },
            (None, "actor") => ctx.unsupported(child),
            (None, n) if WORLD_TOLERATED.contains(&n) => {}
            (None, _) => ctx.unknown(child, el),
        }
    }
    match levels_el {
        Some(levels_el) => levels::check_world(ctx, levels_el, &mut w, problems)?,
        None => problems.into_result(ctx)?,
    }
    Ok(w)
}

fn physics(ctx: &mut Ctx<'_>, el: &Element) -> Result<Physics> {
    let mut p = Physics::default();
    if let Some(n) = el.attributes.get("name") {
        p.name = n.clone();
    }
    if let Some(t) = el.attributes.get("type") {
        p.engine = t.trim().to_string();
    }
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            // The clock steps by these: out of range, it would overflow or stand still.
            "max_step_size" => {
                p.max_step_size = ctx.f64(child)?;
                if let Some(why) = Physics::step_size_problem(p.max_step_size) {
                    return Err(ctx.error(child, format!("<max_step_size>: {why}")));
                }
            }
            "real_time_factor" => {
                p.real_time_factor = ctx.f64(child)?;
                if let Some(why) = Physics::real_time_factor_problem(p.real_time_factor) {
                    return Err(ctx.error(child, format!("<real_time_factor>: {why}")));
                }
            }
            "max_contacts" => p.max_contacts = ctx.u32(child)?,
            // Engine blocks and rates SDFormat defines; read by the physics system if at all.
            "real_time_update_rate" | "ode" | "bullet" | "simbody" | "dart" | "dartsim" => {}
            _ => ctx.unknown(child, el),
        }
    }
    Ok(p)
}

fn policies(ctx: &mut Ctx<'_>, el: &Element, w: &mut WorldSdf) -> Result<()> {
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "include_server_config_plugins" => w.include_server_config_plugins = ctx.bool(child)?,
            _ => ctx.unknown(child, el),
        }
    }
    Ok(())
}

/// A `<plugin>` under `<world>`: a system, or the levels-and-performers element (answers
/// true for the one that is read).
fn world_plugin(ctx: &mut Ctx<'_>, el: &Element, w: &mut WorldSdf, problems: &mut Problems) -> Result<bool> {
    let p = plugin(ctx, el)?;
    if !LEVELS_PLUGIN_NAMES.contains(&p.name.as_str()) {
        w.plugins.push(p);
        return Ok(false);
    }
    if w.levels_plugin.is_some() {
        ctx.warn(el, format!("a second <plugin name=\"{}\"> is ignored", p.name));
        return Ok(false);
    }
    levels::read_plugin(ctx, el, w, problems)?;
    w.levels_plugin = Some(p);
    Ok(true)
}

fn model(ctx: &mut Ctx<'_>, el: &Element) -> Result<ModelSdf> {
    let ordinal = ctx.ordinal();
    let mut m = ModelSdf {
        ordinal,
        name: ctx.attr(el, "name")?,
        pose: Default::default(),
        raw_pose: ctx.default_pose(el),
        is_static: false,
        self_collide: false,
        enable_wind: false,
        links: Vec::new(),
        joints: Vec::new(),
        models: Vec::new(),
        frames: Vec::new(),
        plugins: Vec::new(),
        origin: ctx.origin(el),
    };
    if el.attributes.contains_key("placement_frame") {
        ctx.warn(el, "<model placement_frame> is not supported yet; the pose places the model frame");
    }
    let (mut seen_pose, mut seen_static) = (false, false);
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "pose" if !seen_pose => {
                seen_pose = true;
                m.raw_pose = ctx.pose_sdf(child)?;
                m.pose = m.raw_pose.value;
            }
            "static" if !seen_static => {
                seen_static = true;
                m.is_static = ctx.bool(child)?;
            }
            "self_collide" => m.self_collide = ctx.bool(child)?,
            "enable_wind" => m.enable_wind = ctx.bool(child)?,
            "kinematic" => ctx.warn(child, "<kinematic> is a <link> element in SDFormat; ignored on a <model>"),
            "pose" | "static" => {}
            "link" => m.links.push(link(ctx, child)?),
            "joint" => m.joints.push(joint(ctx, child)?),
            "model" => m.models.push(model(ctx, child)?),
            "frame" => m.frames.push(frame(ctx, child)?),
            "plugin" => m.plugins.push(plugin(ctx, child)?),
            "include" => match include(ctx, child)? {
                Included::Model(nested) => m.models.push(nested),
                Included::Light(LightSdf { origin, .. }) => {
                    return Err(ctx.error(
                        child,
                        format!(
                            "<include> in <model name=\"{}\"> brings a light ({origin}); \
                                 lights can be included in a world only",
                            m.name
                        ),
                    ))
                }
            },
            "placement_frame" => {
                ctx.warn(child, "<placement_frame> is not supported yet; the pose places the model frame")
            }
            n if MODEL_TOLERATED.contains(&n) => {}
            _ => ctx.unknown(child, el),
        }
    }
    if let Some(canonical) = el.attributes.get("canonical_link") {
        if m.links.first().is_some_and(|l| &l.name != canonical) {
            ctx.warn(
                el,
                format!(
                    "<model canonical_link=\"{canonical}\"> is not supported yet; \
                     the first link is the canonical link"
                ),
            );
        }
    }
    Ok(m)
}

fn link(ctx: &mut Ctx<'_>, el: &Element) -> Result<LinkSdf> {
    let ordinal = ctx.ordinal();
    let mut l = LinkSdf {
        ordinal,
        name: ctx.attr(el, "name")?,
        pose: Default::default(),
        raw_pose: ctx.default_pose(el),
        inertial: Inertial::default(),
        gravity: true,
        kinematic: false,
        self_collide: None,
        enable_wind: None,
        collisions: Vec::new(),
        visuals: Vec::new(),
        lights: Vec::new(),
        sensors: Vec::new(),
        origin: ctx.origin(el),
    };
    let (mut seen_pose, mut seen_inertial) = (false, false);
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "pose" if !seen_pose => {
                seen_pose = true;
                l.raw_pose = ctx.pose_sdf(child)?;
                l.pose = l.raw_pose.value;
            }
            "inertial" if !seen_inertial => {
                seen_inertial = true;
                l.inertial = inertial(ctx, child)?;
            }
            "pose" | "inertial" => {}
            "gravity" => l.gravity = ctx.bool(child)?,
            "kinematic" => l.kinematic = ctx.bool(child)?,
            "self_collide" => l.self_collide = Some(ctx.bool(child)?),
            "enable_wind" => l.enable_wind = Some(ctx.bool(child)?),
            "collision" => l.collisions.push(shape(ctx, child)?),
            "visual" => l.visuals.push(shape(ctx, child)?),
            "light" => l.lights.push(light(ctx, child)?),
            "sensor" => l.sensors.push(sensor(ctx, child)?),
            n if LINK_TOLERATED.contains(&n) => {}
            _ => ctx.unknown(child, el),
        }
    }
    Ok(l)
}
