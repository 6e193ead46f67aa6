//! Force-torque: the wrench a joint transmits, in the frame and measure direction the SDF
//! asks for, from the `JointTransmittedWrench` physics writes.
//!
//! Physics writes the wrench the parent applies on the child, in the joint frame, at the
//! joint origin. A backend that does not write it is noticed (the component keeps the NaN
//! value the sensor put there), warned about once, and the sensor reports nothing.

use crate::config::{child_text, Common, ConfigError};
use crate::imu::axis_noises;
use crate::noise::Noise;
use crate::system::{Sample, Setup};
use plugin_api::components::{ChildLinkName, JointTransmittedWrench, Link, Name, ParentLinkName, Wrench};
use plugin_api::math::{Pose, Quat, Vec3};
use plugin_api::msgs::{Vector3d, Wrench as WrenchMsg};
use plugin_api::{log, Change, EcmRead, EntityId, Publisher, TopicOptions};

/// In which frame the wrench is expressed (`<force_torque><frame>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// The child link's frame (the default).
    Child,
    /// The parent link's frame.
    Parent,
    /// The sensor's own frame; the torque is taken about the sensor's origin.
    Sensor,
}

/// A force-torque sensor.
pub struct ForceTorque {
    joint: EntityId,
    frame: Frame,
    /// `child_to_parent` (the default): the wrench the child applies on the parent.
    child_to_parent: bool,
    sensor_pose: Pose,
    force_noise: [Noise; 3],
    torque_noise: [Noise; 3],
    what: String,
    warned: bool,
    publisher: Publisher<WrenchMsg>,
}

fn v3(v: Vec3, n: &[Noise; 3], rng: &mut crate::noise::Rng) -> Vector3d {
    Vector3d { x: n[0].apply(v.x, rng), y: n[1].apply(v.y, rng), z: n[2].apply(v.z, rng), ..Default::default() }
}

/// The link named `name` beside `joint` in its model.
fn sibling_link(ecm: &impl EcmRead, joint: EntityId, name: &str) -> Option<EntityId> {
    let model = ecm.parent(joint)?;
    ecm.children(model).into_iter().find(|c| ecm.has::<Link>(*c) && ecm.get::<Name>(*c).is_some_and(|n| n.0 == name))
}

impl ForceTorque {
    /// Reads `<force_torque>` (`<frame>`, `<measure_direction>`, `<force|torque><x|y|z><noise>`)
    /// and asks physics for the joint's wrench.
    pub fn new(common: &Common, topic: &str, s: &mut Setup<'_, '_>) -> Result<ForceTorque, ConfigError> {
        let what = common.what();
        let block = common.block(&["force_torque"]);
        let frame = match block.and_then(|b| child_text(b, "frame")).as_deref() {
            None | Some("child") => Frame::Child,
            Some("parent") => Frame::Parent,
            Some("sensor") => Frame::Sensor,
            Some(other) => {
                return Err(ConfigError(format!(
                    "<force_torque><frame> must be child, parent or sensor, found {other:?}"
                )))
            }
        };
        let child_to_parent = match block.and_then(|b| child_text(b, "measure_direction")).as_deref() {
            None | Some("child_to_parent") => true,
            Some("parent_to_child") => false,
            Some(other) => {
                return Err(ConfigError(format!(
                    "<force_torque><measure_direction> must be child_to_parent or parent_to_child, found {other:?}"
                )))
            }
        };
        let mut force_noise = axis_noises(block, "force", &what)?;
        let mut torque_noise = axis_noises(block, "torque", &what)?;
        force_noise.iter_mut().chain(torque_noise.iter_mut()).for_each(|n| n.start(s.rng));
        let joint = s.ecm.parent(s.entity).filter(|j| s.ecm.has::<plugin_api::components::Joint>(*j));
        let joint = joint.ok_or_else(|| ConfigError("a force_torque sensor must be inside a <joint>".into()))?;
        let sensor_pose = s.ecm.get::<Pose>(s.entity).unwrap_or(Pose::IDENTITY);
        // NaN marks "not written by physics yet".
        let nan = Vec3::new(f64::NAN, f64::NAN, f64::NAN);
        s.ecm
            .set(joint, &JointTransmittedWrench(Wrench { force: nan, torque: nan }), Change::OneTime)
            .map_err(|e| ConfigError(e.to_string()))?;
        let publisher = s.host.advertise(topic, TopicOptions::default()).map_err(|e| ConfigError(e.0))?;
        Ok(ForceTorque {
            joint,
            frame,
            child_to_parent,
            sensor_pose,
            force_noise,
            torque_noise,
            what,
            warned: false,
            publisher,
        })
    }

    /// The wrench as the sensor reports it, before noise; `None` when physics provides none.
    pub fn truth(&self, ecm: &impl EcmRead) -> Option<(Vec3, Vec3)> {
        let w = ecm.get::<JointTransmittedWrench>(self.joint)?.0;
        if !(w.force.x.is_finite() && w.torque.x.is_finite()) {
            return None;
        }
        let (f, t) = (w.force, w.torque);
        let (f, t) = match self.frame {
            Frame::Sensor => {
                let r = self.sensor_pose.rotation.inverse();
                (r.rotate(f), r.rotate(t - self.sensor_pose.position.cross(f)))
            }
            Frame::Child => {
                let r = ecm.get::<Pose>(self.joint).unwrap_or(Pose::IDENTITY).rotation;
                (r.rotate(f), r.rotate(t))
            }
            Frame::Parent => {
                let r = self.parent_from_joint(ecm);
                (r.rotate(f), r.rotate(t))
            }
        };
        Some(if self.child_to_parent { (-f, -t) } else { (f, t) })
    }

    /// The joint frame's orientation in the parent link's frame (world for `world`).
    fn parent_from_joint(&self, ecm: &impl EcmRead) -> Quat {
        let model = |name: Option<String>| name.and_then(|n| sibling_link(ecm, self.joint, &n));
        let child = model(ecm.get::<ChildLinkName>(self.joint).map(|n| n.0));
        let parent = model(ecm.get::<ParentLinkName>(self.joint).map(|n| n.0));
        let joint_world = match child {
            Some(c) => crate::frames::world_pose(ecm, c) * ecm.get::<Pose>(self.joint).unwrap_or(Pose::IDENTITY),
            None => Pose::IDENTITY,
        };
        let parent_world = parent.map(|p| crate::frames::world_pose(ecm, p)).unwrap_or(Pose::IDENTITY);
        parent_world.rotation.inverse() * joint_world.rotation
    }

    /// Publishes one sample (nothing, with one warning, when physics gives no wrench).
    pub fn sample(&mut self, _: EntityId, s: &mut Sample<'_, '_>) -> plugin_api::Result {
        let Some((f, t)) = self.truth(s.ecm) else {
            if !self.warned {
                self.warned = true;
                log::warn!(
                    "{}: the physics backend does not report joint wrenches; this sensor publishes nothing",
                    self.what
                );
            }
            return Ok(());
        };
        let msg = WrenchMsg {
            header: Some(s.header.clone()),
            force: Some(v3(f, &self.force_noise, s.rng)),
            torque: Some(v3(t, &self.torque_noise, s.rng)),
            ..Default::default()
        };
        self.publisher.publish(&msg)?;
        Ok(())
    }
}
