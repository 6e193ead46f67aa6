//! Lidar (`gpu_lidar`, `lidar`, `ray`, `gpu_ray`) on the CPU: a grid of rays cast against the
//! world's collision shapes, published as `gz.msgs.LaserScan` on the topic and as
//! `gz.msgs.PointCloudPacked` on `<topic>/points`.
//!
//! The rays of a scan go in one batch through the world's ray-cast service when the physics
//! backend offers one ([`plugin_api::Host::cast_rays`]), else against the sensors system's
//! own geometry ([`Scene`]); `<ray_casts>` of the sensors system chooses ([`RayCasts`]).

mod scene;

pub use scene::{intersect, Scene};

use crate::config::{child_f64, child_text, required_f64, Common, ConfigError};
use crate::noise::Noise;
use crate::system::{Sample, Setup};
use plugin_api::math::{Pose, Vec3};
use plugin_api::msgs::{point_cloud_packed, LaserScan, PointCloudPacked, Pose as PoseMsg, Quaternion, Vector3d};
use plugin_api::{log, EcmRead, EntityId, Host, Publisher, Ray, TopicOptions};

/// Where lidars cast their rays (`<ray_casts>` of the sensors system).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RayCasts {
    /// Through the physics backend's ray caster when the world has one, else against the
    /// sensors system's own geometry (`auto`, the default).
    #[default]
    Auto,
    /// Through the physics backend's ray caster; without one, a warning and own geometry
    /// (`physics`).
    Physics,
    /// Always against the sensors system's own geometry (`own`).
    Own,
}

impl RayCasts {
    /// Reads `auto`, `physics` or `own`.
    pub fn parse(text: &str) -> Option<RayCasts> {
        match text.trim() {
            "auto" => Some(RayCasts::Auto),
            "physics" => Some(RayCasts::Physics),
            "own" => Some(RayCasts::Own),
            _ => None,
        }
    }
}

/// Which geometry a scan was cast against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    Physics,
    Own,
}

/// One scan axis (`<horizontal>` or `<vertical>`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axis {
    /// `<samples>` (default 1).
    pub samples: u32,
    /// `<min_angle>`, rad (default 0).
    pub min_angle: f64,
    /// `<max_angle>`, rad (default 0).
    pub max_angle: f64,
}

impl Axis {
    fn parse(el: Option<&xmltree::Element>, what: &str) -> Result<Axis, ConfigError> {
        let Some(el) = el else { return Ok(Axis { samples: 1, min_angle: 0.0, max_angle: 0.0 }) };
        let samples = match child_text(el, "samples") {
            None => 1,
            Some(t) => t
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| ConfigError(format!("{what}<samples> must be a whole number > 0, found {t:?}")))?,
        };
        let min_angle = child_f64(el, "min_angle", 0.0, what)?;
        let max_angle = child_f64(el, "max_angle", 0.0, what)?;
        if max_angle < min_angle {
            return Err(ConfigError(format!("{what}: <max_angle> {max_angle} is below <min_angle> {min_angle}")));
        }
        Ok(Axis { samples, min_angle, max_angle })
    }
    /// The angle step between samples (0 for one sample).
    pub fn step(&self) -> f64 {
        if self.samples > 1 {
            (self.max_angle - self.min_angle) / (self.samples - 1) as f64
        } else {
            0.0
        }
    }
    /// The angle of sample `i`.
    pub fn angle(&self, i: u32) -> f64 {
        self.min_angle + i as f64 * self.step()
    }
}

/// A lidar's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct LidarConfig {
    /// Horizontal sweep.
    pub horizontal: Axis,
    /// Vertical sweep.
    pub vertical: Axis,
    /// `<range><min>`, m (required).
    pub min_range: f64,
    /// `<range><max>`, m (required).
    pub max_range: f64,
    /// `<range><resolution>`, m (informative).
    pub resolution: f64,
    /// `<noise>` on every range.
    pub noise: Noise,
}

impl LidarConfig {
    /// Reads the `<lidar>` (or older `<ray>`) block.
    pub fn parse(common: &Common) -> Result<LidarConfig, ConfigError> {
        let block = common
            .block(&["lidar", "ray"])
            .ok_or_else(|| ConfigError("missing required <lidar> (or <ray>) block".into()))?;
        let scan = block.get_child("scan");
        let horizontal = Axis::parse(scan.and_then(|s| s.get_child("horizontal")), "<scan><horizontal>")?;
        let vertical = Axis::parse(scan.and_then(|s| s.get_child("vertical")), "<scan><vertical>")?;
        let range =
            block.get_child("range").ok_or_else(|| ConfigError("missing required <range> in <lidar>".into()))?;
        let min_range = required_f64(range, "min", "<range>")?;
        let max_range = required_f64(range, "max", "<range>")?;
        let resolution = child_f64(range, "resolution", 0.0, "<range>")?;
        if !(min_range >= 0.0 && max_range > min_range) {
            return Err(ConfigError(format!("<range> needs 0 <= min < max, found min {min_range}, max {max_range}")));
        }
        let noise = match block.get_child("noise") {
            Some(n) => Noise::parse(n, "<lidar><noise>")?,
            None => Noise::NONE,
        };
        Ok(LidarConfig { horizontal, vertical, min_range, max_range, resolution, noise })
    }

    /// Unit ray directions in the sensor frame, vertical index outer, horizontal inner.
    pub fn directions(&self) -> Vec<Vec3> {
        let mut out = Vec::with_capacity((self.horizontal.samples * self.vertical.samples) as usize);
        for v in 0..self.vertical.samples {
            let (sv, cv) = self.vertical.angle(v).sin_cos();
            for h in 0..self.horizontal.samples {
                let (sh, ch) = self.horizontal.angle(h).sin_cos();
                out.push(Vec3::new(cv * ch, cv * sh, sv));
            }
        }
        out
    }

    /// A hit distance as the scan reports it: +inf beyond max (or no hit), -inf below min.
    pub fn reported(&self, hit: Option<f64>) -> f64 {
        match hit {
            Some(d) if d < self.min_range => f64::NEG_INFINITY,
            Some(d) if d <= self.max_range => d,
            _ => f64::INFINITY,
        }
    }
}

/// A lidar sensor.
pub struct Lidar {
    link: EntityId,
    offset: Pose,
    config: LidarConfig,
    directions: Vec<Vec3>,
    frame: String,
    what: String,
    mesh_warned: bool,
    no_caster_warned: bool,
    /// The path of the last scan (a change is logged).
    path: Option<Path>,
    /// The scan's rays in world frame and their hit distances, reused between scans.
    rays: Vec<Ray>,
    hits: Vec<f64>,
    scan: Publisher<LaserScan>,
    points: Publisher<PointCloudPacked>,
}

fn pose_msg(p: Pose) -> PoseMsg {
    PoseMsg {
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

impl Lidar {
    /// Reads the lidar block and advertises its two topics.
    pub fn new(common: &Common, topic: &str, s: &mut Setup<'_, '_>) -> Result<Lidar, ConfigError> {
        let mut config = LidarConfig::parse(common)?;
        config.noise.start(s.rng);
        let link = s.ecm.parent(s.entity).ok_or_else(|| ConfigError("has no parent link".into()))?;
        let offset = s.ecm.get::<Pose>(s.entity).unwrap_or(Pose::IDENTITY);
        let scan = s.host.advertise(topic, TopicOptions::default()).map_err(|e| ConfigError(e.0))?;
        let points =
            s.host.advertise(&format!("{topic}/points"), TopicOptions::default()).map_err(|e| ConfigError(e.0))?;
        let directions = config.directions();
        Ok(Lidar {
            link,
            offset,
            config,
            directions,
            frame: crate::frames::scoped_name(s.ecm, s.entity),
            what: common.what(),
            mesh_warned: false,
            no_caster_warned: false,
            path: None,
            rays: Vec::new(),
            hits: Vec::new(),
            scan,
            points,
        })
    }

    /// The ranges now, before noise: vertical index outer, horizontal inner. Cast through
    /// the world's ray caster unless `mode` says otherwise or there is none, else against
    /// the ECM's own geometry.
    pub fn ranges(&mut self, ecm: &impl EcmRead, host: &Host, mode: RayCasts) -> (Pose, Vec<f64>) {
        let pose = crate::frames::world_pose(ecm, self.link) * self.offset;
        self.rays.clear();
        self.rays
            .extend(self.directions.iter().map(|d| Ray { origin: pose.position, direction: pose.rotation.rotate(*d) }));
        self.hits.clear();
        self.hits.resize(self.rays.len(), f64::INFINITY);
        let max = self.config.max_range;
        let through_physics = mode != RayCasts::Own && host.cast_rays(&self.rays, max, self.link, &mut self.hits);
        if !through_physics {
            if mode == RayCasts::Physics && !self.no_caster_warned {
                self.no_caster_warned = true;
                log::warn!("{}: <ray_casts>physics</ray_casts>, but the physics backend offers no ray caster; casting against the sensors system's own geometry", self.what);
            }
            let scene = Scene::build(ecm, Some(self.link));
            if scene.skipped_meshes > 0 && !self.mesh_warned {
                self.mesh_warned = true;
                log::warn!(
                    "{}: {} mesh collision(s) are invisible to the CPU lidar's own geometry",
                    self.what,
                    scene.skipped_meshes
                );
            }
            for (r, h) in self.rays.iter().zip(self.hits.iter_mut()) {
                *h = scene.cast(r.origin, r.direction, max).unwrap_or(f64::INFINITY);
            }
        }
        let path = if through_physics { Path::Physics } else { Path::Own };
        if self.path != Some(path) {
            self.path = Some(path);
            match path {
                Path::Physics => log::info!("{}: casting rays through the physics backend's ray caster", self.what),
                Path::Own => log::info!("{}: casting rays against the sensors system's own geometry", self.what),
            }
        }
        let ranges = self.hits.iter().map(|&h| self.config.reported(h.is_finite().then_some(h))).collect();
        (pose, ranges)
    }

    /// Publishes one scan and its point cloud.
    pub fn sample(&mut self, _: EntityId, s: &mut Sample<'_, '_>) -> plugin_api::Result {
        let (pose, mut ranges) = self.ranges(s.ecm, s.host, s.ray_casts);
        for r in ranges.iter_mut() {
            *r = self.config.noise.apply(*r, s.rng);
        }
        let (h, v) = (self.config.horizontal, self.config.vertical);
        let scan = LaserScan {
            header: Some(s.header.clone()),
            frame: self.frame.clone(),
            world_pose: Some(pose_msg(pose)),
            angle_min: h.min_angle,
            angle_max: h.max_angle,
            angle_step: h.step(),
            range_min: self.config.min_range,
            range_max: self.config.max_range,
            count: h.samples,
            vertical_angle_min: v.min_angle,
            vertical_angle_max: v.max_angle,
            vertical_angle_step: v.step(),
            vertical_count: v.samples,
            intensities: vec![0.0; ranges.len()],
            ranges,
        };
        self.scan.publish(&scan)?;
        self.points.publish(&self.cloud(&scan))?;
        Ok(())
    }

    /// The scan as points in the sensor frame: x, y, z, intensity as little-endian f32.
    fn cloud(&self, scan: &LaserScan) -> PointCloudPacked {
        let field = |name: &str, offset: u32| point_cloud_packed::Field {
            name: name.into(),
            offset,
            datatype: point_cloud_packed::field::DataType::Float32 as i32,
            count: 1,
        };
        let mut data = Vec::with_capacity(scan.ranges.len() * 16);
        for (d, r) in self.directions.iter().zip(&scan.ranges) {
            let p = d.scale(*r);
            for x in [p.x as f32, p.y as f32, p.z as f32, 0.0f32] {
                data.extend_from_slice(&x.to_le_bytes());
            }
        }
        PointCloudPacked {
            header: scan.header.clone(),
            field: vec![field("x", 0), field("y", 4), field("z", 8), field("intensity", 12)],
            height: scan.vertical_count,
            width: scan.count,
            is_bigendian: false,
            point_step: 16,
            row_step: 16 * scan.count,
            data,
            is_dense: scan.ranges.iter().all(|r| r.is_finite()),
        }
    }
}
