//! `<joint>`, `<light>`, `<sensor>` and `<plugin>`.

use super::ctx::{text, Ctx, Result};
use super::dom::{AxisFrame, JointSdf, LightSdf, PluginSdf, SensorSdf};
use crate::xml::{elements, to_string};
use plugin_api::components::{AxisData, JointType, Light, LightKind};
use xmltree::Element;

/// A `<plugin>`: `name` and `filename` are required.
pub(crate) fn plugin(ctx: &mut Ctx<'_>, el: &Element) -> Result<PluginSdf> {
    let roles = crate::config::roles::roles_of_plugin(el).map_err(|(at, message)| ctx.error(at, message))?;
    Ok(PluginSdf {
        name: ctx.attr(el, "name")?,
        filename: ctx.attr(el, "filename")?,
        xml: to_string(el),
        origin: ctx.origin(el),
        roles,
    })
}

/// A `<sensor>`: kept whole as XML; its children are the sensors system's business.
pub(crate) fn sensor(ctx: &mut Ctx<'_>, el: &Element) -> Result<SensorSdf> {
    let ordinal = ctx.ordinal();
    let name = ctx.attr(el, "name")?;
    let kind = ctx.attr(el, "type")?;
    let raw_pose = ctx.child_pose_sdf(el)?;
    let plugins = elements(el)
        .filter(|c| c.prefix.is_none() && c.name == "plugin")
        .map(|c| plugin(ctx, c))
        .collect::<Result<Vec<_>>>()?;
    let update_rate = ctx.child_f64(el, "update_rate", 0.0)?;
    let always_on = el.get_child("always_on").map_or(Ok(false), |c| ctx.bool(c))?;
    let topic = el.get_child("topic").map(text).unwrap_or_default();
    Ok(SensorSdf {
        ordinal,
        name,
        kind,
        update_rate,
        always_on,
        topic,
        pose: raw_pose.value,
        raw_pose,
        xml: sensor_xml(el, &ctx.origin(el)),
        plugins,
        origin: ctx.origin(el),
    })
}

/// The `<sensor>` element as XML text for the sensors system, with where it was written in
/// a `troupe_origin="file:line"` attribute so its warnings can say where.
fn sensor_xml(el: &Element, origin: &super::dom::Origin) -> String {
    let mut el = el.clone();
    el.attributes.insert("troupe_origin".into(), origin.to_string());
    to_string(&el)
}

const JOINT_TOLERATED: &[&str] =
    &["physics", "thread_pitch", "gearbox_ratio", "gearbox_reference_body", "screw_thread_pitch"];

/// A `<joint>`; sensors inside it are numbered in document order after it.
pub(crate) fn joint(ctx: &mut Ctx<'_>, el: &Element) -> Result<JointSdf> {
    let ordinal = ctx.ordinal();
    let name = ctx.attr(el, "name")?;
    let type_name = ctx.attr(el, "type")?;
    let kind = JointType::from_sdf_name(type_name.trim()).ok_or_else(|| {
        ctx.error(
            el,
            format!(
                "unknown joint type \"{type_name}\" for <joint name=\"{name}\"> (expected one of \
                 fixed, revolute, prismatic, ball, universal, revolute2, screw, gearbox, continuous)"
            ),
        )
    })?;
    let (mut parent, mut child_name, mut pose) = (None, None, None);
    let (mut axis, mut axis2, mut sensors) = (None, None, Vec::new());
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "parent" if parent.is_none() => parent = Some(text(child)),
            "child" if child_name.is_none() => child_name = Some(text(child)),
            "pose" if pose.is_none() => pose = Some(ctx.pose_sdf(child)?),
            "axis" if axis.is_none() => axis = Some(axis_data(ctx, child)?),
            "axis2" if axis2.is_none() => axis2 = Some(axis_data(ctx, child)?),
            "sensor" => sensors.push(sensor(ctx, child)?),
            "parent" | "child" | "pose" | "axis" | "axis2" => {}
            n if JOINT_TOLERATED.contains(&n) => {}
            _ => ctx.unknown(child, el),
        }
    }
    let need = |v: Option<String>, what: &str| {
        v.filter(|s| !s.is_empty()).ok_or_else(|| ctx.error(el, format!("<joint name=\"{name}\"> needs a <{what}>")))
    };
    let parent = need(parent, "parent")?;
    let child = need(child_name, "child")?;
    let raw_pose = pose.unwrap_or_else(|| ctx.default_pose(el));
    Ok(JointSdf {
        ordinal,
        name,
        kind,
        parent,
        child,
        pose: raw_pose.value,
        raw_pose,
        axis: axis.as_ref().map(|(a, _)| *a),
        axis2: axis2.as_ref().map(|(a, _)| *a),
        axis_frames: [axis.and_then(|(_, f)| f), axis2.and_then(|(_, f)| f)],
        sensors,
        origin: ctx.origin(el),
    })
}

fn axis_data(ctx: &mut Ctx<'_>, el: &Element) -> Result<(AxisData, Option<AxisFrame>)> {
    let mut a = AxisData::default();
    let (mut expressed_in, mut parent_model_frame) = (None, None);
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "xyz" => {
                a.xyz = ctx.vec3(child)?;
                let frame = child.attributes.get("expressed_in").map(|f| f.trim().to_string());
                if let Some(frame) = frame.filter(|f| !f.is_empty()) {
                    expressed_in = Some(AxisFrame { frame, origin: ctx.origin(child) });
                }
            }
            "use_parent_model_frame" => {
                if ctx.bool(child)? {
                    parent_model_frame = Some(AxisFrame { frame: String::new(), origin: ctx.origin(child) });
                }
            }
            "limit" => {
                a.lower = ctx.child_f64(child, "lower", a.lower)?;
                a.upper = ctx.child_f64(child, "upper", a.upper)?;
                a.effort = ctx.child_f64(child, "effort", a.effort)?;
                a.velocity = ctx.child_f64(child, "velocity", a.velocity)?;
                ctx.check_children(child, &["lower", "upper", "effort", "velocity", "stiffness", "dissipation"]);
            }
            "dynamics" => {
                a.damping = ctx.child_f64(child, "damping", a.damping)?;
                a.friction = ctx.child_f64(child, "friction", a.friction)?;
                a.spring_reference = ctx.child_f64(child, "spring_reference", a.spring_reference)?;
                a.spring_stiffness = ctx.child_f64(child, "spring_stiffness", a.spring_stiffness)?;
                ctx.check_children(child, &["damping", "friction", "spring_reference", "spring_stiffness"]);
            }
            "initial_position" | "mimic" => {}
            _ => ctx.unknown(child, el),
        }
    }
    if let (Some(_), Some(_)) = (&expressed_in, &parent_model_frame) {
        ctx.warn(el, "<xyz expressed_in> and <use_parent_model_frame> both given; expressed_in is used");
    }
    Ok((a, expressed_in.or(parent_model_frame)))
}

/// A `<light>`, SDFormat defaults (linear attenuation 1 as in SDFormat).
pub(crate) fn light(ctx: &mut Ctx<'_>, el: &Element) -> Result<LightSdf> {
    let ordinal = ctx.ordinal();
    let name = el.attributes.get("name").cloned().unwrap_or_default();
    let type_name = el.attributes.get("type").map_or("point", |t| t.trim());
    let kind = match type_name {
        "point" => LightKind::Point,
        "directional" => LightKind::Directional,
        "spot" => LightKind::Spot,
        other => {
            return Err(ctx.error(
                el,
                format!(
                    "unknown light type \"{other}\" for <light name=\"{name}\"> \
                     (expected point, directional or spot)"
                ),
            ))
        }
    };
    let mut light = Light { kind, ..Light::default() };
    light.attenuation[1] = 1.0;
    let mut pose = None;
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "pose" if pose.is_none() => pose = Some(ctx.pose_sdf(child)?),
            "cast_shadows" => light.cast_shadows = ctx.bool(child)?,
            "diffuse" => light.diffuse = ctx.color(child)?,
            "specular" => light.specular = ctx.color(child)?,
            "direction" => light.direction = ctx.vec3(child)?,
            "intensity" => light.intensity = ctx.f64(child)?,
            "attenuation" => {
                light.range = ctx.child_f64(child, "range", light.range)?;
                for (i, n) in ["constant", "linear", "quadratic"].iter().enumerate() {
                    light.attenuation[i] = ctx.child_f64(child, n, light.attenuation[i])?;
                }
                ctx.check_children(child, &["range", "constant", "linear", "quadratic"]);
            }
            "spot" => {
                for (i, n) in ["inner_angle", "outer_angle", "falloff"].iter().enumerate() {
                    light.spot[i] = ctx.child_f64(child, n, light.spot[i])?;
                }
                ctx.check_children(child, &["inner_angle", "outer_angle", "falloff"]);
            }
            "light_on" => light.on = ctx.bool(child)?,
            "visualize" => light.visualize = ctx.bool(child)?,
            "pose" => {}
            _ => ctx.unknown(child, el),
        }
    }
    let raw_pose = pose.unwrap_or_else(|| ctx.default_pose(el));
    Ok(LightSdf { ordinal, name, pose: raw_pose.value, raw_pose, light, origin: ctx.origin(el) })
}
