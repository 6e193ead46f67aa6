//! # troupe_physics_rapier — gz-sim's Physics system on rapier3d
//!
//! Keeps a [rapier3d](https://rapier.rs) world in step with the ECM and advances it by the
//! world's step size every unpaused iteration. The host maps gz-sim's
//! `gz-sim-physics-system` / `gz::sim::systems::Physics` to this library, so every world
//! gets it through the default server config. See `docs/physics.md` for what it simulates,
//! what it writes and the measured behaviour.
//!
//! ## f64, not f32
//!
//! This build uses `rapier3d-f64`. Everything around physics is f64: SDF poses, the ECM's
//! components, the state log and the wire. With f32 a pose would lose its low bits on every
//! round trip through the engine (at 10 km from the origin f32 resolves about 1 mm), a
//! teleport would not land exactly where it was asked to, and at 100 m up f32 resolves
//! 7.6e-6 m, too coarse for the 1e-5 m a 1 s free fall is checked to. f64 halves rapier's
//! SIMD width; the benchmark's bare-rapier baseline uses f64 too, so its ratio measures
//! Troupe's overhead, not the precision.
//!
//! ## Parameters
//!
//! | element | type | default | meaning |
//! |---|---|---|---|
//! | `<sleep>` | bool | true | let resting bodies sleep (rapier's islands); false keeps every body awake |
//!
//! gz-sim's `<engine><filename>` and `<contacts>` elements are accepted and ignored.
//!
//! ## Ray casts
//!
//! The system offers the world's ray-cast service ([`plugin_api::Host::offer_ray_caster`]):
//! rays cast by later systems (the sensors' lidar) go through rapier's query pipeline over
//! its collision shapes, meshes included, as they stand after the step.
//!
//! ## Example
//!
//! ```xml
//! <plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics">
//!   <sleep>false</sleep>
//! </plugin>
//! ```

mod convert;
mod engine;
pub mod mesh;
mod shapes;

use engine::{Options, World};
use plugin_api::components::Physics as PhysicsParams;
use plugin_api::xml::PluginXml;
use plugin_api::{
    log, ConfigureContext, Ecm, EcmRead, EntityId, Hooks, Host, Ray, RayCaster, System, SystemInfo, UpdateInfo,
};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError, Weak};

/// The physics system.
pub struct Physics {
    opts: Options,
    /// Shared with the ray caster offered to the host. Systems run one after another on
    /// the simulation thread, so the lock is never contended: physics holds it through its
    /// update, sensors take it in post_update.
    world: Option<Arc<Mutex<World>>>,
    /// Kept: the host withdraws the ray caster when the system lets go of its host.
    host: Option<Host>,
}

/// The world's ray-cast service on rapier's query pipeline (the broad phase's BVH, up to
/// date with the poses of the step just taken).
struct Caster(Weak<Mutex<World>>);

impl RayCaster for Caster {
    fn cast_rays(&mut self, rays: &[Ray], max_range: f64, exclude: EntityId, out: &mut [f64]) -> bool {
        let Some(world) = self.0.upgrade() else { return false };
        let world = match world.try_lock() {
            Ok(w) => w,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            // Asked from within physics' own update: not now.
            Err(TryLockError::WouldBlock) => return false,
        };
        world.cast_rays(rays, max_range, exclude, out);
        true
    }
}

fn locked(world: &Mutex<World>) -> MutexGuard<'_, World> {
    world.lock().unwrap_or_else(|p| p.into_inner())
}

impl Default for Physics {
    fn default() -> Self {
        Physics { opts: Options { sleep: true }, world: None, host: None }
    }
}

impl System for Physics {
    fn info() -> SystemInfo {
        SystemInfo::PHYSICS
    }

    /// gz-sim's Physics runs at priority -64, before the systems that read its results.
    fn priority(&self) -> Option<i32> {
        Some(-64)
    }

    fn hooks(&self) -> Hooks {
        Hooks::UPDATE
    }

    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let xml = PluginXml::parse(ctx.xml)?;
        self.opts.sleep = xml.value::<bool>("sleep")?.unwrap_or(true);
        let params = ctx.ecm.get::<PhysicsParams>(ctx.entity).unwrap_or_default();
        if !(params.max_step_size.is_finite() && params.max_step_size > 0.0) {
            return Err(plugin_api::Error::msg(format!(
                "world <physics><max_step_size> must be positive, not {}",
                params.max_step_size
            )));
        }
        log::debug!("rapier physics (f64), step {} s, sleep {}", params.max_step_size, self.opts.sleep);
        let world = Arc::new(Mutex::new(World::new(ctx.entity, params.max_step_size, self.opts.clone())));
        if let Err(e) = ctx.host.offer_ray_caster(Caster(Arc::downgrade(&world))) {
            // Another backend in this world offers one already; sensors cast through it.
            log::warn!("rapier physics: not offering ray casts: {e}");
        }
        self.world = Some(world);
        self.host = Some(ctx.host);
        Ok(())
    }

    fn update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let Some(world) = self.world.as_mut() else {
            return Err(plugin_api::Error::msg("physics updated before it was configured"));
        };
        locked(world).update(ecm, info.dt(), info.paused)
    }
}

plugin_api::export_plugin! {
    library: "troupe_physics_rapier",
    systems: {
        "gz::sim::systems::Physics" | "troupe::Physics" | "physics" => Physics::default(),
    }
}
