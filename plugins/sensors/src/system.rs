//! The sensors system: finds sensor entities, sets each up once (typed config, the
//! components physics must fill, its topic), and samples the due ones after every step.

use crate::config::{self, Common, ConfigError, Kind, Parsed};
use crate::noise::Rng;
use crate::{air_pressure, altimeter, contact, force_torque, imu, lidar, logical_camera, magnetometer, navsat};
use plugin_api::components::{Name, Sensor, SensorSdf, SensorTopic, World};
use plugin_api::msgs::{header::Map, Header, Time};
use plugin_api::xml::PluginXml;
use plugin_api::{
    log, Change, Component, ConfigureContext, Ecm, EcmRead, EcmView, EntityId, Hooks, Host, ResetOutcome, System,
    SystemInfo, UpdateInfo,
};
use std::collections::{BTreeMap, BTreeSet};

/// When a sensor samples: at the steps whose sim time reaches the next multiple of its
/// period (the first at one period), every step for rate 0, never while paused.
#[derive(Clone, Debug)]
pub struct Schedule {
    rate: f64,
    /// Multiples of the period already sampled.
    k: u64,
}

impl Schedule {
    /// A schedule for `rate` Hz of a sensor that exists from the step ending at
    /// `sim_time_ns`: the multiples of its period before that time count as sampled, so a
    /// sensor that appears in a step whose time is a multiple samples in that step, as
    /// every sensor present does. A performer's sensor taken over by another secondary
    /// carries on from where its old owner stopped (which no longer samples in that step).
    pub fn new(rate: f64, sim_time_ns: i64) -> Schedule {
        let k =
            if rate > 0.0 { ((sim_time_ns.max(0) as f64 * rate / 1e9 - 1e-9).ceil() - 1.0).max(0.0) as u64 } else { 0 };
        Schedule { rate, k }
    }
    /// Whether the sensor samples in the step that ended at `info`'s sim time.
    pub fn due(&mut self, info: &UpdateInfo) -> bool {
        if info.paused || info.dt_ns == 0 {
            return false;
        }
        if self.rate <= 0.0 {
            return true;
        }
        let next_ns = ((self.k + 1) as f64 * 1e9 / self.rate).round() as i64;
        if info.sim_time_ns < next_ns {
            return false;
        }
        // One sample per step even if the step spans several periods.
        self.k = ((info.sim_time_ns as f64 * self.rate / 1e9) + 1e-9).floor() as u64;
        true
    }
}

/// What every sensor kind gets when it is set up (in a read/write phase).
pub struct Setup<'a, 'e> {
    /// The ECM: create the components physics fills here.
    pub ecm: &'a mut Ecm<'e>,
    /// Host services (advertise topics).
    pub host: &'a Host,
    /// The sensor entity.
    pub entity: EntityId,
    /// The sensor's random generator (draw noise biases from it).
    pub rng: &'a mut Rng,
    /// The world entity.
    pub world: EntityId,
}

/// What a sensor reads when it samples.
pub struct Sample<'a, 'e> {
    /// The ECM after the step, read-only.
    pub ecm: &'a EcmView<'e>,
    /// The step.
    pub info: &'a UpdateInfo,
    /// A header stamped with the sim time, the sensor's frame and sample number.
    pub header: Header,
    /// The sensor's random generator.
    pub rng: &'a mut Rng,
    /// Host services (the ray-cast service).
    pub host: &'a Host,
    /// Where lidars cast their rays.
    pub ray_casts: lidar::RayCasts,
}

/// One sensor's simulation, by kind.
enum Model {
    Imu(imu::Imu),
    Altimeter(altimeter::Altimeter),
    AirPressure(air_pressure::AirPressure),
    Magnetometer(magnetometer::Magnetometer),
    NavSat(navsat::NavSat),
    Contact(contact::Contact),
    ForceTorque(force_torque::ForceTorque),
    LogicalCamera(logical_camera::LogicalCamera),
    Lidar(Box<lidar::Lidar>),
}

struct Active {
    schedule: Schedule,
    rng: Rng,
    frame: String,
    samples: u64,
    model: Model,
}

/// Troupe's sensors system: one instance per world serves every enabled sensor type.
#[derive(Default)]
pub struct Sensors {
    enabled: BTreeSet<Kind>,
    host: Option<Host>,
    world: EntityId,
    active: BTreeMap<EntityId, Active>,
    seen: BTreeSet<EntityId>,
    disabled_warned: BTreeSet<Kind>,
    ray_casts: lidar::RayCasts,
}

impl Sensors {
    /// A system enabling `kinds` (more come from `<enable>` elements of its XML).
    pub fn enabling(kinds: &[Kind]) -> Sensors {
        Sensors { enabled: kinds.iter().copied().collect(), ..Default::default() }
    }

    /// Sets up every sensor entity not seen yet.
    fn discover(&mut self, ecm: &mut Ecm<'_>, sim_time_ns: i64) {
        let Some(host) = self.host.clone() else { return };
        for e in ecm.entities_with(&[Sensor::ID, SensorSdf::ID]) {
            if !self.seen.insert(e) {
                continue;
            }
            let Some(sdf) = ecm.get::<SensorSdf>(e) else { continue };
            let name = ecm.get::<Name>(e).map(|n| n.0).unwrap_or_default();
            let common = match config::parse_common(&name, &sdf) {
                Parsed::Sensor(c) => *c,
                Parsed::Skip(warning) => {
                    log::warn!("{warning}");
                    continue;
                }
            };
            if !self.enabled.contains(&common.kind) {
                if self.disabled_warned.insert(common.kind) {
                    log::info!(
                        "{}: no gz-sim-{}-system loaded in this world, so {} sensors are not simulated",
                        common.what(),
                        common.kind.system_class().to_ascii_lowercase(),
                        common.sdf_type
                    );
                }
                continue;
            }
            let mut rng = Rng::new(host.seed(), e.0);
            let topic = resolve_topic(ecm, e, &sdf, &common);
            let frame = crate::frames::scoped_name(ecm, e);
            let mut setup = Setup { ecm, host: &host, entity: e, rng: &mut rng, world: self.world };
            let model = match build(&common, &topic, &mut setup) {
                Ok(m) => m,
                Err(err) => {
                    log::warn!("{}: {}; skipped", common.what(), err.0);
                    continue;
                }
            };
            if let Err(err) = ecm.set(e, &SensorTopic(topic.clone()), Change::OneTime) {
                log::warn!("{}: cannot record its topic: {err}", common.what());
            }
            log::debug!("{} publishes on {topic}", common.what());
            self.active
                .insert(e, Active { schedule: Schedule::new(common.rate, sim_time_ns), rng, frame, samples: 0, model });
        }
        // Sensors removed from the world stop.
        self.active.retain(|e, _| ecm.has::<Sensor>(*e));
    }
}

fn resolve_topic(ecm: &Ecm<'_>, e: EntityId, sdf: &SensorSdf, common: &Common) -> String {
    let contact_topic = (common.kind == Kind::Contact)
        .then(|| common.xml.get_child("contact").and_then(|c| config::child_text(c, "topic")))
        .flatten()
        .filter(|t| !t.is_empty());
    let topic = contact_topic.or_else(|| Some(sdf.topic.trim().to_string()).filter(|t| !t.is_empty()));
    match topic {
        Some(t) if t.starts_with('/') => t,
        Some(t) => format!("/{t}"),
        None => crate::frames::default_topic(ecm, e, common.kind.topic_suffix()),
    }
}

fn build(common: &Common, topic: &str, s: &mut Setup<'_, '_>) -> Result<Model, ConfigError> {
    Ok(match common.kind {
        Kind::Imu => Model::Imu(imu::Imu::new(common, topic, s)?),
        Kind::Altimeter => Model::Altimeter(altimeter::Altimeter::new(common, topic, s)?),
        Kind::AirPressure => Model::AirPressure(air_pressure::AirPressure::new(common, topic, s)?),
        Kind::Magnetometer => Model::Magnetometer(magnetometer::Magnetometer::new(common, topic, s)?),
        Kind::NavSat => Model::NavSat(navsat::NavSat::new(common, topic, s)?),
        Kind::Contact => Model::Contact(contact::Contact::new(common, topic, s)?),
        Kind::ForceTorque => Model::ForceTorque(force_torque::ForceTorque::new(common, topic, s)?),
        Kind::LogicalCamera => Model::LogicalCamera(logical_camera::LogicalCamera::new(common, topic, s)?),
        Kind::Lidar => Model::Lidar(Box::new(lidar::Lidar::new(common, topic, s)?)),
    })
}

/// A header stamped with `sim_time_ns`, naming the frame and the sample's sequence number.
pub fn header(sim_time_ns: i64, frame: &str, seq: u64) -> Header {
    Header {
        stamp: Some(Time {
            sec: sim_time_ns.div_euclid(1_000_000_000),
            nsec: sim_time_ns.rem_euclid(1_000_000_000) as i32,
        }),
        data: vec![
            Map { key: "frame_id".into(), value: vec![frame.to_string()] },
            Map { key: "seq".into(), value: vec![seq.to_string()] },
        ],
    }
}

impl System for Sensors {
    fn info() -> SystemInfo {
        SystemInfo::SENSORS
    }

    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let xml = PluginXml::parse(ctx.xml)?;
        for class in xml.texts("enable") {
            let kinds = Kind::enabled_by(&class);
            if kinds.is_empty() {
                log::warn!("<enable>{class}</enable>: not a sensor system of Troupe; ignored");
            }
            self.enabled.extend(kinds);
        }
        if let Some(text) = xml.text("ray_casts") {
            match lidar::RayCasts::parse(&text) {
                Some(mode) => self.ray_casts = mode,
                None => {
                    log::warn!("sensors system: <ray_casts> must be auto, physics or own, not {text:?}; using auto")
                }
            }
        }
        let mut ecm = ctx.ecm;
        self.world = ecm.entities_with(&[World::ID]).into_iter().next().unwrap_or(ctx.entity);
        self.host = Some(ctx.host);
        self.discover(&mut ecm, 0);
        Ok(())
    }

    fn hooks(&self) -> Hooks {
        Hooks::PRE_UPDATE | Hooks::POST_UPDATE
    }

    fn reset(&mut self, _: &UpdateInfo, _: &mut Ecm<'_>) -> plugin_api::Result<ResetOutcome> {
        // Publishers, noise and references start over with a fresh instance.
        Ok(ResetOutcome::RECONFIGURE)
    }

    fn pre_update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        if !ecm.new_entities_with(&[Sensor::ID]).is_empty() || !ecm.removed_entities_with(&[Sensor::ID]).is_empty() {
            self.discover(ecm, info.sim_time_ns);
        }
        Ok(())
    }

    fn update(&mut self, _: &UpdateInfo, _: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }

    fn post_update(&mut self, info: &UpdateInfo, ecm: &EcmView<'_>) -> plugin_api::Result {
        let Some(host) = self.host.clone() else { return Ok(()) };
        for (&e, a) in self.active.iter_mut() {
            // In a distributed run a sensor samples only where its model is simulated (a
            // performer handed over stops here at once, while its removal is pending).
            if !a.schedule.due(info) || !host.owns_entity(e) {
                continue;
            }
            a.samples += 1;
            let mut s = Sample {
                ecm,
                info,
                header: header(info.sim_time_ns, &a.frame, a.samples),
                rng: &mut a.rng,
                host: &host,
                ray_casts: self.ray_casts,
            };
            let r = match &mut a.model {
                Model::Imu(m) => m.sample(e, &mut s),
                Model::Altimeter(m) => m.sample(e, &mut s),
                Model::AirPressure(m) => m.sample(e, &mut s),
                Model::Magnetometer(m) => m.sample(e, &mut s),
                Model::NavSat(m) => m.sample(e, &mut s),
                Model::Contact(m) => m.sample(e, &mut s),
                Model::ForceTorque(m) => m.sample(e, &mut s),
                Model::LogicalCamera(m) => m.sample(e, &mut s),
                Model::Lidar(m) => m.sample(e, &mut s),
            };
            r?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(t_ns: i64) -> UpdateInfo {
        UpdateInfo { sim_time_ns: t_ns, dt_ns: 1_000_000, ..Default::default() }
    }

    #[test]
    fn a_schedule_samples_at_multiples_of_its_period_first_at_one_period() {
        for rate in [1.0, 10.0, 30.0, 60.0, 250.0, 1000.0] {
            let mut s = Schedule::new(rate, 0);
            let times: Vec<i64> = (1..=10_000).map(|i| i * 1_000_000).filter(|&t| s.due(&step(t))).collect();
            assert_eq!(times.len() as f64, rate * 10.0, "rate {rate}");
            assert!(times[0] as f64 >= 1e9 / rate - 1e6, "rate {rate}: first at {}", times[0]);
        }
        let mut s = Schedule::new(10.0, 0);
        let paused = UpdateInfo { sim_time_ns: 100_000_000, paused: true, ..Default::default() };
        assert!(!s.due(&paused), "never while paused");
        assert!(s.due(&step(100_000_000)));
        let mut every = Schedule::new(0.0, 0);
        assert!(every.due(&step(1_000_000)) && every.due(&step(2_000_000)), "rate 0: every step");
    }

    #[test]
    fn a_sensor_appearing_in_a_step_samples_the_multiples_from_that_step_on() {
        // 100 Hz, 1 ms steps. Appearing in the step ending at 670 ms (a multiple): it
        // samples there, as a sensor present all along does (a hand-over there lost it).
        let mut s = Schedule::new(100.0, 670_000_000);
        let times: Vec<i64> = (670..=700).map(|ms| ms * 1_000_000).filter(|&t| s.due(&step(t))).collect();
        assert_eq!(times, [670_000_000, 680_000_000, 690_000_000, 700_000_000]);
        // Between multiples: the next one.
        let mut s = Schedule::new(100.0, 675_000_000);
        let times: Vec<i64> = (675..=690).map(|ms| ms * 1_000_000).filter(|&t| s.due(&step(t))).collect();
        assert_eq!(times, [680_000_000, 690_000_000]);
    }
}
