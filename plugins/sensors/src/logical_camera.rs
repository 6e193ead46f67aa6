//! Logical camera: the models whose origin lies inside its frustum, with their poses
//! relative to the camera. The camera looks along its +x axis.

use crate::config::{required_f64, Common, ConfigError};
use crate::system::{Sample, Setup};
use plugin_api::components::{Model, Name};
use plugin_api::math::{Pose, Vec3};
use plugin_api::msgs::{logical_camera_image, LogicalCameraImage, Pose as PoseMsg, Quaternion, Vector3d};
use plugin_api::{Component, EcmRead, EntityId, Publisher, TopicOptions};

/// The view volume of a logical camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frustum {
    /// `<near>`, m.
    pub near: f64,
    /// `<far>`, m.
    pub far: f64,
    /// `<horizontal_fov>`, rad.
    pub horizontal_fov: f64,
    /// `<aspect_ratio>`: width over height.
    pub aspect_ratio: f64,
}

impl Frustum {
    /// Whether point `p`, in the camera frame, is inside.
    pub fn contains(&self, p: Vec3) -> bool {
        let th = (self.horizontal_fov / 2.0).tan();
        let tv = th / self.aspect_ratio;
        p.x >= self.near && p.x <= self.far && p.y.abs() <= p.x * th && p.z.abs() <= p.x * tv
    }
}

/// A logical camera.
pub struct LogicalCamera {
    link: EntityId,
    offset: Pose,
    frustum: Frustum,
    own_model: Option<EntityId>,
    publisher: Publisher<LogicalCameraImage>,
}

fn pose_msg(name: &str, p: Pose) -> PoseMsg {
    PoseMsg {
        name: name.to_string(),
        position: Some(Vector3d { x: p.position.x, y: p.position.y, z: p.position.z, ..Default::default() }),
        orientation: Some(Quaternion {
            w: p.rotation.w,
            x: p.rotation.x,
            y: p.rotation.y,
            z: p.rotation.z,
            ..Default::default()
        }),
        ..Default::default()
    }
}

impl LogicalCamera {
    /// Reads `<logical_camera>` (`<near>`, `<far>`, `<horizontal_fov>`, `<aspect_ratio>`, all
    /// required as SDFormat says).
    pub fn new(common: &Common, topic: &str, s: &mut Setup<'_, '_>) -> Result<LogicalCamera, ConfigError> {
        let what = "<logical_camera>";
        let block = common
            .block(&["logical_camera"])
            .ok_or_else(|| ConfigError("missing required <logical_camera> block".into()))?;
        let frustum = Frustum {
            near: required_f64(block, "near", what)?,
            far: required_f64(block, "far", what)?,
            horizontal_fov: required_f64(block, "horizontal_fov", what)?,
            aspect_ratio: required_f64(block, "aspect_ratio", what)?,
        };
        if !(frustum.near >= 0.0
            && frustum.far > frustum.near
            && frustum.horizontal_fov > 0.0
            && frustum.aspect_ratio > 0.0)
        {
            return Err(ConfigError(format!(
                "{what}: needs 0 <= near < far, horizontal_fov > 0 and aspect_ratio > 0, found {frustum:?}"
            )));
        }
        let link = s.ecm.parent(s.entity).ok_or_else(|| ConfigError("has no parent link".into()))?;
        let offset = s.ecm.get::<Pose>(s.entity).unwrap_or(Pose::IDENTITY);
        let own_model = crate::frames::model_of(s.ecm, link);
        let publisher = s.host.advertise(topic, TopicOptions::default()).map_err(|e| ConfigError(e.0))?;
        Ok(LogicalCamera { link, offset, frustum, own_model, publisher })
    }

    /// The names and camera-relative poses of the models in view, in id order.
    pub fn seen(&self, ecm: &impl EcmRead, world: EntityId) -> (Pose, Vec<(String, Pose)>) {
        let camera = crate::frames::world_pose(ecm, self.link) * self.offset;
        let inv = camera.inverse();
        let mut out = Vec::new();
        for m in ecm.children(world) {
            if !ecm.has::<Model>(m) || Some(m) == self.own_model {
                continue;
            }
            let rel = inv * crate::frames::world_pose(ecm, m);
            if self.frustum.contains(rel.position) {
                out.push((ecm.get::<Name>(m).map(|n| n.0).unwrap_or_default(), rel));
            }
        }
        (camera, out)
    }

    /// Publishes one sample.
    pub fn sample(&mut self, _: EntityId, s: &mut Sample<'_, '_>) -> plugin_api::Result {
        let world = s.ecm.entities_with(&[plugin_api::components::World::ID]).into_iter().next().unwrap_or_default();
        let (camera, seen) = self.seen(s.ecm, world);
        let msg = LogicalCameraImage {
            header: Some(s.header.clone()),
            pose: Some(pose_msg("", camera)),
            model: seen
                .iter()
                .map(|(n, p)| logical_camera_image::Model { name: n.clone(), pose: Some(pose_msg(n, *p)) })
                .collect(),
        };
        self.publisher.publish(&msg)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frustum_holds_what_is_between_near_and_far_within_the_angles() {
        let f = Frustum { near: 0.5, far: 5.0, horizontal_fov: std::f64::consts::FRAC_PI_2, aspect_ratio: 2.0 };
        assert!(f.contains(Vec3::new(1.0, 0.0, 0.0)));
        assert!(f.contains(Vec3::new(2.0, 1.9, 0.9)));
        assert!(!f.contains(Vec3::new(2.0, 2.1, 0.0)), "outside the horizontal fov");
        assert!(!f.contains(Vec3::new(2.0, 0.0, 1.1)), "outside the vertical fov (aspect 2)");
        assert!(!f.contains(Vec3::new(0.4, 0.0, 0.0)) && !f.contains(Vec3::new(5.1, 0.0, 0.0)), "near and far");
        assert!(!f.contains(Vec3::new(-1.0, 0.0, 0.0)), "behind");
    }
}
