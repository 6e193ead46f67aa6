//! A third party's physics system, as far as the host can tell: a library named in none of
//! the host's tables that declares itself a physics system ([`SystemInfo::PHYSICS`]). Tests
//! check that this alone makes `--physics-engine troupe_testing_physics` swap it in for the
//! world's physics and keep it off a distributed run's primary, as the built-in backends are.
//!
//! It simulates nothing: it counts the steps it takes in the world's
//! `troupe_testing_physics.Steps` component, which is enough to see where it ran.

use plugin_api::{
    Change, Component, ConfigureContext, DecodeError, Ecm, EcmRead, EntityId, Reader, System, SystemInfo, UpdateInfo,
    Writer,
};

/// Steps this system took (a component of the world entity).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Steps(pub u64);

impl Component for Steps {
    const NAME: &'static str = "troupe_testing_physics.Steps";
    const FIXED_SIZE: Option<usize> = Some(8);
    fn encode(&self, w: &mut Writer<'_>) {
        w.u64(self.0)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Steps(r.u64()?))
    }
}

/// The system: counts the unpaused steps it is called for.
pub struct CountingPhysics {
    world: EntityId,
}

impl Default for CountingPhysics {
    fn default() -> Self {
        CountingPhysics { world: EntityId::NULL }
    }
}

impl System for CountingPhysics {
    fn info() -> SystemInfo {
        SystemInfo::PHYSICS
    }

    fn configure(&mut self, mut ctx: ConfigureContext<'_>) -> plugin_api::Result {
        self.world = ctx.entity;
        ctx.ecm.register_component::<Steps>()?;
        ctx.ecm.set(self.world, &Steps(0), Change::OneTime)?;
        Ok(())
    }

    fn update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        if !info.paused {
            let steps = ecm.get::<Steps>(self.world).unwrap_or_default().0 + 1;
            ecm.set(self.world, &Steps(steps), Change::Periodic)?;
        }
        Ok(())
    }
}

plugin_api::export_plugin! {
    library: "troupe_testing_physics",
    systems: { "testing::CountingPhysics" => CountingPhysics::default() }
}
