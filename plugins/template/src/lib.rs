//! # troupe_template — a system plugin to copy
//!
//! Counts the steps it has seen into a component of its own, and every `every` steps logs
//! how many models the world has and where the highest one is. Copy this crate, rename it,
//! and replace the logic (see `docs/plugin-authors.md`).
//!
//! ## Parameters
//!
//! | element | type | default | meaning |
//! |---|---|---|---|
//! | `<every>` | integer | 1000 | log every this many (unpaused) iterations |
//! | `<label>` | string | `template` | prefix of the log lines |
//! | `<gz:system_priority>` | integer | 0 | read by the host: lower runs first |
//!
//! ## Components
//!
//! `troupe_template.StepCount` (u64, little-endian) on the entity it is attached to: the
//! number of unpaused steps seen.
//!
//! ## Example
//!
//! ```xml
//! <plugin filename="troupe_template" name="troupe::Template">
//!   <every>500</every>
//!   <label>demo</label>
//! </plugin>
//! ```

use plugin_api::components::{Model, Name};
use plugin_api::math::Pose;
use plugin_api::xml::PluginXml;
use plugin_api::{
    log, Change, Component, ConfigureContext, DecodeError, Ecm, EcmRead, EntityId, Error, Reader, System, UpdateInfo,
    Writer,
};

/// A third-party component: steps seen by the system.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepCount(pub u64);

impl Component for StepCount {
    const NAME: &'static str = "troupe_template.StepCount";
    const FIXED_SIZE: Option<usize> = Some(8);
    fn encode(&self, w: &mut Writer<'_>) {
        w.u64(self.0)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(StepCount(r.u64()?))
    }
}

/// The system.
pub struct Template {
    every: u64,
    label: String,
    entity: EntityId,
}

impl Default for Template {
    fn default() -> Self {
        Template { every: 1000, label: "template".into(), entity: EntityId::NULL }
    }
}

impl System for Template {
    fn configure(&mut self, mut ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let xml = PluginXml::parse(ctx.xml)?;
        self.every = xml.value::<u64>("every")?.unwrap_or(self.every);
        if self.every == 0 {
            return Err(Error::msg("<every> must be at least 1"));
        }
        self.label = xml.text("label").unwrap_or(self.label.clone());
        self.entity = ctx.entity;
        ctx.ecm.register_component::<StepCount>()?;
        ctx.ecm.set(self.entity, &StepCount(0), Change::OneTime)?;
        log::info!("{}: attached to entity {} of world {:?}", self.label, self.entity, ctx.host.world_name());
        Ok(())
    }

    fn update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        if info.paused {
            return Ok(());
        }
        let seen = ecm.get::<StepCount>(self.entity).unwrap_or_default().0 + 1;
        ecm.set(self.entity, &StepCount(seen), Change::Periodic)?;
        if info.iterations % self.every == 0 {
            let models = ecm.each::<Pose>(&[Model::ID])?;
            let highest = models
                .iter()
                .max_by(|a, b| a.1.position.z.total_cmp(&b.1.position.z))
                .and_then(|(e, p)| ecm.get::<Name>(*e).map(|n| (n.0, p.position.z)));
            log::info!("{}: t = {:.3} s, {} models, highest {:?}", self.label, info.sim_time(), models.len(), highest);
        }
        Ok(())
    }
}

plugin_api::export_plugin! {
    library: "troupe_template",
    systems: {
        "troupe::Template" | "template" => Template::default(),
    }
}
