//! IMU: orientation, angular velocity and specific force in the sensor frame.
//!
//! The specific force is the link acceleration physics writes minus gravity: zero in free
//! fall, `-g` at rest. Nothing is differentiated here.

use crate::config::{Common, ConfigError};
use crate::motion::{self, ensure};
use crate::noise::Noise;
use crate::system::{Sample, Setup};
use plugin_api::components::{
    WorldAngularAcceleration, WorldAngularVelocity, WorldLinearAcceleration, WorldLinearVelocity,
};
use plugin_api::math::{Pose, Vec3};
use plugin_api::msgs::{Imu as ImuMsg, Quaternion, Vector3d};
use plugin_api::{EcmRead, EntityId, Publisher, TopicOptions};

/// An IMU sensor.
pub struct Imu {
    link: EntityId,
    offset: Pose,
    world: EntityId,
    /// `<angular_velocity><x|y|z><noise>`.
    gyro_noise: [Noise; 3],
    /// `<linear_acceleration><x|y|z><noise>`.
    accel_noise: [Noise; 3],
    orientation: bool,
    name: String,
    publisher: Publisher<ImuMsg>,
}

/// Reads `<block><x|y|z><noise>` for the three axes.
pub fn axis_noises(block: Option<&xmltree::Element>, group: &str, what: &str) -> Result<[Noise; 3], ConfigError> {
    Ok([
        Noise::at(block, &[group, "x"], what)?,
        Noise::at(block, &[group, "y"], what)?,
        Noise::at(block, &[group, "z"], what)?,
    ])
}

impl Imu {
    /// Reads the `<imu>` block and asks physics for the link's motion.
    pub fn new(common: &Common, topic: &str, s: &mut Setup<'_, '_>) -> Result<Imu, ConfigError> {
        let what = common.what();
        let block = common.block(&["imu"]);
        let mut gyro_noise = axis_noises(block, "angular_velocity", &what)?;
        let mut accel_noise = axis_noises(block, "linear_acceleration", &what)?;
        gyro_noise.iter_mut().chain(accel_noise.iter_mut()).for_each(|n| n.start(s.rng));
        let orientation = match block.and_then(|b| crate::config::child_text(b, "enable_orientation")) {
            None => true,
            Some(t) => matches!(t.as_str(), "true" | "1"),
        };
        let link = s.ecm.parent(s.entity).ok_or_else(|| ConfigError("has no parent link".into()))?;
        let offset = s.ecm.get::<Pose>(s.entity).unwrap_or(Pose::IDENTITY);
        for r in [
            ensure::<WorldLinearAcceleration>(s.ecm, link),
            ensure::<WorldAngularAcceleration>(s.ecm, link),
            ensure::<WorldAngularVelocity>(s.ecm, link),
            ensure::<WorldLinearVelocity>(s.ecm, link),
        ] {
            r.map_err(|e| ConfigError(e.to_string()))?;
        }
        let publisher = s.host.advertise(topic, TopicOptions::default()).map_err(|e| ConfigError(e.0))?;
        Ok(Imu {
            link,
            offset,
            world: s.world,
            gyro_noise,
            accel_noise,
            orientation,
            name: crate::frames::scoped_name(s.ecm, s.entity),
            publisher,
        })
    }

    /// The reading now, before noise: (orientation, angular velocity, specific force), the
    /// vectors in the sensor frame.
    pub fn truth(&self, ecm: &impl EcmRead) -> (plugin_api::math::Quat, Vec3, Vec3) {
        let m = motion::of_sensor(ecm, self.link, self.offset);
        let g = motion::gravity(ecm, self.world);
        let q = m.pose.rotation;
        let w = crate::frames::to_frame(q, m.angular_velocity);
        let f = crate::frames::to_frame(q, m.acceleration - g);
        (q, w, f)
    }

    /// Publishes one sample.
    pub fn sample(&mut self, _: EntityId, s: &mut Sample<'_, '_>) -> plugin_api::Result {
        let (q, w, f) = self.truth(s.ecm);
        let noisy = |v: Vec3, n: &[Noise; 3], rng: &mut crate::noise::Rng| Vector3d {
            x: n[0].apply(v.x, rng),
            y: n[1].apply(v.y, rng),
            z: n[2].apply(v.z, rng),
            ..Default::default()
        };
        let msg = ImuMsg {
            header: Some(s.header.clone()),
            entity_name: self.name.clone(),
            orientation: self.orientation.then(|| Quaternion { w: q.w, x: q.x, y: q.y, z: q.z, ..Default::default() }),
            angular_velocity: Some(noisy(w, &self.gyro_noise, s.rng)),
            linear_acceleration: Some(noisy(f, &self.accel_noise, s.rng)),
            ..Default::default()
        };
        self.publisher.publish(&msg)?;
        Ok(())
    }
}
