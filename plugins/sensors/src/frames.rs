//! Where things are: world poses from the entity graph, and gz-sim's scoped topic names.

use plugin_api::components::{Joint, Link, Model, Name, Sensor, World};
use plugin_api::math::{Pose, Quat, Vec3};
use plugin_api::{EcmRead, EntityId};

/// The world pose of `entity`: its `Pose` composed with its parents' up to the world (a
/// link's pose is relative to its model, a model's to its parent model or the world).
pub fn world_pose(ecm: &impl EcmRead, entity: EntityId) -> Pose {
    let mut pose = ecm.get::<Pose>(entity).unwrap_or(Pose::IDENTITY);
    let mut cur = entity;
    while let Some(p) = ecm.parent(cur) {
        if ecm.has::<World>(p) {
            break;
        }
        if let Some(pp) = ecm.get::<Pose>(p) {
            pose = pp * pose;
        }
        cur = p;
    }
    pose
}

/// The model that holds `entity` (nearest ancestor model).
pub fn model_of(ecm: &impl EcmRead, entity: EntityId) -> Option<EntityId> {
    let mut cur = entity;
    while let Some(p) = ecm.parent(cur) {
        if ecm.has::<Model>(p) {
            return Some(p);
        }
        cur = p;
    }
    None
}

/// gz-sim's default topic of a sensor: its scoped name with a type prefix per level
/// (`/world/w/model/m/link/l/sensor/s/<suffix>`).
pub fn default_topic(ecm: &impl EcmRead, sensor: EntityId, suffix: &str) -> String {
    let mut parts = Vec::new();
    let mut cur = Some(sensor);
    while let Some(e) = cur {
        let name = ecm.get::<Name>(e).map(|n| n.0).unwrap_or_default();
        let prefix = if ecm.has::<World>(e) {
            "world"
        } else if ecm.has::<Model>(e) {
            "model"
        } else if ecm.has::<Link>(e) {
            "link"
        } else if ecm.has::<Joint>(e) {
            "joint"
        } else if ecm.has::<Sensor>(e) {
            "sensor"
        } else {
            "entity"
        };
        parts.push(format!("{prefix}/{name}"));
        cur = ecm.parent(e);
    }
    parts.reverse();
    format!("/{}/{suffix}", parts.join("/"))
}

/// The scoped name `model::link::collision` of an entity (up to, not including, the world).
pub fn scoped_name(ecm: &impl EcmRead, entity: EntityId) -> String {
    let mut parts = Vec::new();
    let mut cur = Some(entity);
    while let Some(e) = cur {
        if ecm.has::<World>(e) {
            break;
        }
        parts.push(ecm.get::<Name>(e).map(|n| n.0).unwrap_or_default());
        cur = ecm.parent(e);
    }
    parts.reverse();
    parts.join("::")
}

/// `v` rotated into the frame whose orientation is `q` (the inverse rotation).
pub fn to_frame(q: Quat, v: Vec3) -> Vec3 {
    q.inverse().rotate(v)
}
