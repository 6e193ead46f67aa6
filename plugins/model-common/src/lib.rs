//! # troupe_model_common — helpers shared by Troupe's model systems
//!
//! Not a plugin: an rlib each model system (diff-drive, joint controllers, wrenches...)
//! links in. It holds what several of them need and nothing else:
//!
//! * [`Params`]: reads a `<plugin>` element's parameters and collects every problem, so a
//!   system fails once with all of them, each naming its element; [`model_params`] for a
//!   system that must be attached to a model.
//! * [`Pid`]: gz-math's PID (gains, integral and command clamps, offset).
//! * [`topic_name`]: a topic as gz-transport would scope it.
//! * [`find_joint`], [`find_path`], [`world_pose`], [`scoped_name`]: entity lookups.
//! * [`header`], [`vec3_msg`], [`pose_msg`]: message building blocks.

mod params;
mod pid;

pub use params::Params;
pub use pid::Pid;

use plugin_api::components::{Joint, Link, Model, Name, World};
use plugin_api::math::{Pose, Vec3};
use plugin_api::msgs;
use plugin_api::{EcmRead, EntityId, UpdateInfo};

/// The `<plugin>` parameters of model system `system` (its gz name, for messages) attached
/// to `model`, and the model's name. An element that does not parse, or an entity that is
/// not a model, is an error naming the system and the entity.
pub fn model_params(
    xml: &str,
    ecm: &impl EcmRead,
    model: EntityId,
    system: &str,
) -> Result<(Params, String), plugin_api::Error> {
    let model_name = name_of(ecm, model);
    let params = Params::parse(xml, format!("{system} on model {model_name:?}"))?;
    if !ecm.has::<Model>(model) {
        return Err(plugin_api::Error(format!(
            "{system} must be attached to a model; entity {model} ({model_name:?}) is not one"
        )));
    }
    Ok((params, model_name))
}

/// A topic name as gz-transport makes it from what the XML says: surrounding spaces
/// dropped, a leading `/` added to a relative name. Names with spaces inside, `//`, `~`,
/// `@` or `:=`, and empty names, are refused with the reason.
pub fn topic_name(raw: &str) -> Result<String, String> {
    let t = raw.trim();
    if t.is_empty() {
        return Err("the topic name is empty".into());
    }
    if t.contains(char::is_whitespace) || t.contains("//") || t.contains('~') || t.contains('@') || t.contains(":=") {
        return Err(format!("{t:?} is not a valid topic name (no spaces, \"//\", '~', '@' or \":=\")"));
    }
    let t = t.trim_end_matches('/');
    Ok(if t.starts_with('/') { t.to_string() } else { format!("/{t}") })
}

/// The name of an entity, or "" if it has none.
pub fn name_of(ecm: &impl EcmRead, e: EntityId) -> String {
    ecm.get::<Name>(e).map(|n| n.0).unwrap_or_default()
}

/// The joint of `model` named `name`: a direct child, or with a scoped name
/// (`nested::joint`) one of a nested model.
pub fn find_joint(ecm: &impl EcmRead, model: EntityId, name: &str) -> Option<EntityId> {
    find_path(ecm, model, name).filter(|j| ecm.has::<Joint>(*j))
}

/// The entity below `from` at the scoped name `a::b::c`, each part but the last naming a
/// model.
pub fn find_path(ecm: &impl EcmRead, from: EntityId, scoped: &str) -> Option<EntityId> {
    let mut parent = from;
    let mut parts = scoped.split("::").peekable();
    while let Some(part) = parts.next() {
        let child = ecm.child_by_name(parent, part)?;
        if parts.peek().is_none() {
            return Some(child);
        }
        if !ecm.has::<Model>(child) {
            return None;
        }
        parent = child;
    }
    None
}

/// The joints of `model` (not of its nested models), ascending by id.
pub fn joints_of(ecm: &impl EcmRead, model: EntityId) -> Vec<EntityId> {
    ecm.children(model).into_iter().filter(|c| ecm.has::<Joint>(*c)).collect()
}

/// The links of `model` (not of its nested models), ascending by id.
pub fn links_of(ecm: &impl EcmRead, model: EntityId) -> Vec<EntityId> {
    ecm.children(model).into_iter().filter(|c| ecm.has::<Link>(*c)).collect()
}

/// The entity's pose in the world: its `Pose` composed with its ancestors' up to the world.
pub fn world_pose(ecm: &impl EcmRead, e: EntityId) -> Pose {
    let mut pose = Pose::IDENTITY;
    let mut cur = Some(e);
    while let Some(c) = cur {
        if ecm.has::<World>(c) {
            break;
        }
        pose = ecm.get::<Pose>(c).unwrap_or(Pose::IDENTITY) * pose;
        cur = ecm.parent(c);
    }
    pose
}

/// The entity's name scoped by its ancestors below the world (`model::nested::link`).
pub fn scoped_name(ecm: &impl EcmRead, e: EntityId) -> String {
    let mut parts = Vec::new();
    let mut cur = Some(e);
    while let Some(c) = cur {
        if ecm.has::<World>(c) {
            break;
        }
        parts.push(name_of(ecm, c));
        cur = ecm.parent(c);
    }
    parts.reverse();
    parts.join("::")
}

/// A header stamped with the sim time of `info`, with `frame_id` / `child_frame_id` data
/// when given (gz-sim's odometry and TF messages carry them so).
pub fn header(info: &UpdateInfo, frames: &[(&str, &str)]) -> msgs::Header {
    msgs::Header {
        stamp: Some(msgs::Time {
            sec: info.sim_time_ns.div_euclid(1_000_000_000),
            nsec: info.sim_time_ns.rem_euclid(1_000_000_000) as i32,
        }),
        data: frames
            .iter()
            .map(|(k, v)| msgs::header::Map { key: k.to_string(), value: vec![v.to_string()] })
            .collect(),
    }
}

/// A `Vector3d` message.
pub fn vec3_msg(v: Vec3) -> msgs::Vector3d {
    msgs::Vector3d { x: v.x, y: v.y, z: v.z, ..Default::default() }
}

/// A `Vector3d` message as a [`Vec3`] (absent: zero).
pub fn vec3_from(v: Option<&msgs::Vector3d>) -> Vec3 {
    v.map_or(Vec3::ZERO, |v| Vec3::new(v.x, v.y, v.z))
}

/// A named `Pose` message.
pub fn pose_msg(name: &str, id: EntityId, p: &Pose) -> msgs::Pose {
    msgs::Pose {
        name: name.to_string(),
        id: id.0 as u32,
        position: Some(vec3_msg(p.position)),
        orientation: Some(msgs::Quaternion {
            x: p.rotation.x,
            y: p.rotation.y,
            z: p.rotation.z,
            w: p.rotation.w,
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names_are_scoped_like_gz_transport() {
        assert_eq!(topic_name("cmd_vel").unwrap(), "/cmd_vel");
        assert_eq!(topic_name(" /model/m/cmd_vel/ ").unwrap(), "/model/m/cmd_vel");
        assert!(topic_name("").unwrap_err().contains("empty"));
        assert!(topic_name("a b").unwrap_err().contains("not a valid topic"));
        assert!(topic_name("/a//b").is_err());
    }
}
