//! # troupe_diff_drive — gz-sim's DiffDrive system
//!
//! Drives a model with left and right wheels from velocity commands: a `gz.msgs.Twist` on
//! the command topic sets the wanted forward speed (`linear.x`) and turn rate
//! (`angular.z`); after the speed limits, each left wheel joint gets the joint velocity
//! command `(v − ω·s/2)/r` and each right one `(v + ω·s/2)/r` (s the wheel separation, r the
//! wheel radius), which physics holds until the next command. From the first left and right
//! wheels' joint positions the system integrates wheel odometry, starting at zero where the
//! model is when it starts, and publishes it with its transform at a fixed rate of sim time.
//!
//! Attach it to a model. In a distributed run it acts only in the process that simulates
//! the model ([`plugin_api::Host::owns_entity`]); a hand-over re-creates the model and
//! configures a fresh instance there, odometry starting again from zero.
//!
//! ## Parameters
//!
//! | element | type | default | unit | meaning |
//! |---|---|---|---|---|
//! | `<left_joint>` | string, repeated, at least one | — | | a left wheel joint of the model (`nested::joint` for a nested model's) |
//! | `<right_joint>` | string, repeated, at least one | — | | a right wheel joint |
//! | `<wheel_separation>` | number > 0 | 1.0 | m | distance between the left and right wheels |
//! | `<wheel_radius>` | number > 0 | 0.2 | m | wheel radius |
//! | `<odom_publish_frequency>` | number ≥ 0 | 50 | Hz | odometry and transform rate in sim time; 0 publishes every step |
//! | `<max_linear_velocity>` / `<min_linear_velocity>` | number | none / −max | m/s | forward speed bounds |
//! | `<max_angular_velocity>` / `<min_angular_velocity>` | number | none / −max | rad/s | turn rate bounds |
//! | `<max_linear_acceleration>` / `<min_linear_acceleration>` | number | none / −max | m/s² | |
//! | `<max_angular_acceleration>` / `<min_angular_acceleration>` | number | none / −max | rad/s² | |
//! | `<max_linear_jerk>` / `<min_linear_jerk>` | number | none / −max | m/s³ | |
//! | `<max_angular_jerk>` / `<min_angular_jerk>` | number | none / −max | rad/s³ | |
//! | `<max_velocity>` / `<min_velocity>`, `<max_acceleration>` / `<min_acceleration>`, `<max_jerk>` / `<min_jerk>` | number | | | gz-sim's older names of the linear bounds |
//! | `<topic>` | topic | `/model/<model>/cmd_vel` | | command topic |
//! | `<odom_topic>` | topic | `/model/<model>/odometry` | | odometry topic |
//! | `<tf_topic>` | topic | `/model/<model>/tf` | | transform topic |
//! | `<frame_id>` | string | `<model>/odom` | | odometry frame (header `frame_id`) |
//! | `<child_frame_id>` | string | `<model>/<canonical link>` | | vehicle frame (header `child_frame_id`) |
//!
//! A `<min_*>` bound left out is the negative of its `<max_*>`. Relative topic names get a
//! leading `/` (gz-transport's scoping). Every problem in the element (a missing or unknown
//! joint, a number that does not parse, a non-positive radius...) is reported at once when
//! the system is configured, naming the element, and the system does not start.
//!
//! ## Topics and services
//!
//! | topic | message | direction |
//! |---|---|---|
//! | `/model/<model>/cmd_vel` | `gz.msgs.Twist` | in: `linear.x` (m/s), `angular.z` (rad/s) |
//! | `/model/<model>/odometry` | `gz.msgs.Odometry` | out: pose (x, y, yaw) in the odometry frame, twist in the vehicle frame; header `frame_id`, `child_frame_id` |
//! | `/model/<model>/tf` | `gz.msgs.Pose_V` | out: the same pose, its header carrying `frame_id` and `child_frame_id` |
//!
//! ## Example
//!
//! `worlds/diff_drive.sdf` (loaded by the tests in `tests/model_systems/`) uses:
//!
//! ```xml
//! <plugin filename="gz-sim-diff-drive-system" name="gz::sim::systems::DiffDrive">
//!   <left_joint>left_wheel_joint</left_joint>
//!   <right_joint>right_wheel_joint</right_joint>
//!   <wheel_separation>1.25</wheel_separation>
//!   <wheel_radius>0.3</wheel_radius>
//!   <odom_publish_frequency>50</odom_publish_frequency>
//!   <max_linear_acceleration>2</max_linear_acceleration>
//! </plugin>
//! ```

mod limiter;
mod odometry;

pub use limiter::SpeedLimiter;
pub use odometry::Odometry;

use model_common::{find_joint, header, model_params, name_of, pose_msg, vec3_msg, Params};
use plugin_api::components::{CanonicalLink, JointPosition, JointVelocityCmd};
use plugin_api::math::{Pose, Quat, Vec3};
use plugin_api::msgs;
use plugin_api::{
    Change, ConfigureContext, Ecm, EcmRead, EcmView, EntityId, Error, Hooks, Host, Publisher, Subscriber, System,
    SystemInfo, TopicOptions, UpdateInfo,
};

/// What the `<plugin>` element says.
#[derive(Clone, Debug)]
pub struct Config {
    /// Left wheel joints.
    pub left: Vec<EntityId>,
    /// Right wheel joints.
    pub right: Vec<EntityId>,
    /// Wheel separation, m.
    pub separation: f64,
    /// Wheel radius, m.
    pub radius: f64,
    /// Odometry period of sim time, s (0: every step).
    pub odom_period: f64,
    /// Forward speed limits.
    pub linear: SpeedLimiter,
    /// Turn rate limits.
    pub angular: SpeedLimiter,
    /// Command topic.
    pub topic: String,
    /// Odometry topic.
    pub odom_topic: String,
    /// Transform topic.
    pub tf_topic: String,
    /// Odometry frame.
    pub frame_id: String,
    /// Vehicle frame.
    pub child_frame_id: String,
}

impl Config {
    /// Reads the element for `model`, checking every joint exists.
    pub fn parse(xml: &str, ecm: &impl EcmRead, model: EntityId) -> Result<Config, Error> {
        let (mut p, model_name) = model_params(xml, ecm, model, "DiffDrive")?;
        let joints = |p: &mut Params, tag: &str| -> Vec<EntityId> {
            let names = p.texts(tag);
            if names.is_empty() {
                p.problem(format!("at least one <{tag}> is required"));
            }
            names
                .iter()
                .filter_map(|n| {
                    let j = find_joint(ecm, model, n);
                    if j.is_none() {
                        p.problem(format!("<{tag}> {n:?}: the model has no joint of that name"));
                    }
                    j
                })
                .collect()
        };
        let left = joints(&mut p, "left_joint");
        let right = joints(&mut p, "right_joint");
        let separation = p.positive("wheel_separation", 1.0);
        let radius = p.positive("wheel_radius", 0.2);
        let freq = p.number("odom_publish_frequency", 50.0);
        if freq < 0.0 {
            p.problem(format!("<odom_publish_frequency> must be 0 or more, found {freq}"));
        }
        let linear = SpeedLimiter {
            velocity: bounds(&mut p, "linear_velocity", Some("velocity")),
            acceleration: bounds(&mut p, "linear_acceleration", Some("acceleration")),
            jerk: bounds(&mut p, "linear_jerk", Some("jerk")),
        };
        let angular = SpeedLimiter {
            velocity: bounds(&mut p, "angular_velocity", None),
            acceleration: bounds(&mut p, "angular_acceleration", None),
            jerk: bounds(&mut p, "angular_jerk", None),
        };
        let base = format!("/model/{model_name}");
        let topic = p.topic("topic", &format!("{base}/cmd_vel"));
        let odom_topic = p.topic("odom_topic", &format!("{base}/odometry"));
        let tf_topic = p.topic("tf_topic", &format!("{base}/tf"));
        let canonical = ecm.children(model).into_iter().find(|c| ecm.has::<CanonicalLink>(*c));
        let frame_id = p.text("frame_id").unwrap_or_else(|| format!("{model_name}/odom"));
        let child_frame_id = p
            .text("child_frame_id")
            .unwrap_or_else(|| format!("{model_name}/{}", canonical.map(|c| name_of(ecm, c)).unwrap_or_default()));
        p.finish()?;
        Ok(Config {
            left,
            right,
            separation,
            radius,
            odom_period: if freq > 0.0 { 1.0 / freq } else { 0.0 },
            linear,
            angular,
            topic,
            odom_topic,
            tf_topic,
            frame_id,
            child_frame_id,
        })
    }
}

/// `[min_<name>, max_<name>]`, falling back to gz-sim's older `<max_velocity>`-style names;
/// a missing min is −max; min above max is a problem.
fn bounds(p: &mut Params, name: &str, old: Option<&str>) -> (f64, f64) {
    let read = |p: &mut Params, side: &str| {
        p.optional_number(&format!("{side}_{name}"))
            .or_else(|| old.and_then(|o| p.optional_number(&format!("{side}_{o}"))))
    };
    let max = read(p, "max");
    let min = read(p, "min");
    let (lo, hi) = match (min, max) {
        (Some(lo), Some(hi)) => (lo, hi),
        (None, Some(hi)) => (-hi.abs(), hi),
        (Some(lo), None) => (lo, f64::INFINITY),
        (None, None) => (f64::NEG_INFINITY, f64::INFINITY),
    };
    if lo > hi {
        p.problem(format!("<min_{name}> {lo} is above <max_{name}> {hi}"));
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    (lo, hi)
}

struct Io {
    commands: Subscriber<msgs::Twist>,
    odometry: Publisher<msgs::Odometry>,
    tf: Publisher<msgs::PoseV>,
}

/// The system.
#[derive(Default)]
pub struct DiffDrive {
    model: EntityId,
    host: Option<Host>,
    config: Option<Config>,
    io: Option<Io>,
    /// The wanted (forward, turn) speeds from the last command.
    target: (f64, f64),
    /// The last two commanded (forward, turn) speeds, newest first.
    history: [(f64, f64); 2],
    odometry: Odometry,
    /// Sim time of the last publication, and the odometry travel since it.
    last_publish: Option<f64>,
    travel: (f64, f64),
}

impl DiffDrive {
    fn owned(&self) -> bool {
        self.host.as_ref().is_some_and(|h| h.owns_entity(self.model))
    }
}

impl System for DiffDrive {
    /// It commands wheel joints: skipped in playback.
    fn info() -> SystemInfo {
        SystemInfo::OTHER.simulating()
    }

    fn hooks(&self) -> Hooks {
        Hooks::PRE_UPDATE | Hooks::POST_UPDATE
    }

    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let config = Config::parse(ctx.xml, &ctx.ecm, ctx.entity)?;
        let quiet = TopicOptions { reliable: false, max_rate_hz: 0.0 };
        self.io = Some(Io {
            commands: ctx.host.subscribe_topic(&config.topic)?,
            odometry: ctx.host.advertise(&config.odom_topic, quiet)?,
            tf: ctx.host.advertise(&config.tf_topic, quiet)?,
        });
        self.model = ctx.entity;
        self.config = Some(config);
        self.host = Some(ctx.host);
        Ok(())
    }

    fn pre_update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let (Some(config), Some(io)) = (&self.config, &self.io) else { return Ok(()) };
        for cmd in io.commands.take() {
            let lin = cmd.linear.as_ref().map_or(0.0, |v| v.x);
            let ang = cmd.angular.as_ref().map_or(0.0, |v| v.z);
            if lin.is_finite() && ang.is_finite() {
                self.target = (lin, ang);
            } else {
                plugin_api::log::warn!(
                    "{}: a command with a speed that is not finite ({lin}, {ang}) was ignored",
                    config.topic
                );
            }
        }
        if info.paused || !self.owned() {
            return Ok(());
        }
        let dt = info.dt();
        let [(v0, w0), (v1, w1)] = self.history;
        let v = config.linear.limit(self.target.0, v0, v1, dt);
        let w = config.angular.limit(self.target.1, w0, w1, dt);
        self.history = [(v, w), (v0, w0)];
        let half = w * config.separation / 2.0;
        let (left, right) = ((v - half) / config.radius, (v + half) / config.radius);
        for (joints, speed) in [(&config.left, left), (&config.right, right)] {
            for &j in joints {
                ecm.set(j, &JointVelocityCmd(vec![speed]), Change::Periodic)?;
            }
        }
        Ok(())
    }

    fn update(&mut self, _info: &UpdateInfo, _ecm: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }

    fn post_update(&mut self, info: &UpdateInfo, ecm: &EcmView<'_>) -> plugin_api::Result {
        let (Some(config), Some(io)) = (&self.config, &self.io) else { return Ok(()) };
        if info.paused || !self.owned() {
            return Ok(());
        }
        let position = |j: EntityId| ecm.get::<JointPosition>(j).and_then(|p| p.0.first().copied());
        let (Some(l), Some(r)) = (position(config.left[0]), position(config.right[0])) else { return Ok(()) };
        let (ds, dth) = self.odometry.update(l, r, config.radius, config.separation);
        self.travel.0 += ds;
        self.travel.1 += dth;
        let now = info.sim_time();
        let last = *self.last_publish.get_or_insert(now - info.dt());
        let elapsed = now - last;
        if elapsed + 1e-9 < config.odom_period || elapsed <= 0.0 {
            return Ok(());
        }
        let (v, w) = (self.travel.0 / elapsed, self.travel.1 / elapsed);
        self.travel = (0.0, 0.0);
        self.last_publish = Some(now);
        let o = &self.odometry;
        let pose = Pose { position: Vec3::new(o.x, o.y, 0.0), rotation: Quat::from_rpy(0.0, 0.0, o.heading) };
        let frames = [("frame_id", config.frame_id.as_str()), ("child_frame_id", config.child_frame_id.as_str())];
        let mut pose_msg = pose_msg("", self.model, &pose);
        pose_msg.id = 0;
        pose_msg.header = Some(header(info, &frames));
        let odom = msgs::Odometry {
            header: Some(header(info, &frames)),
            pose: Some(pose_msg.clone()),
            twist: Some(msgs::Twist {
                header: None,
                linear: Some(vec3_msg(Vec3::new(v, 0.0, 0.0))),
                angular: Some(vec3_msg(Vec3::new(0.0, 0.0, w))),
            }),
        };
        io.odometry.publish(&odom)?;
        io.tf.publish(&msgs::PoseV { header: Some(header(info, &[])), pose: vec![pose_msg] })?;
        Ok(())
    }
}

plugin_api::export_plugin! {
    library: "troupe_diff_drive",
    systems: { "troupe::DiffDrive" | "gz::sim::systems::DiffDrive" | "diff_drive" => DiffDrive::default() }
}
