//! A system built against plugin-api 1.0.0: it counts updates into a third-party component.

use plugin_api::{Change, Component, ConfigureContext, DecodeError, Ecm, EcmRead, EntityId, Reader, System, UpdateInfo, Writer};

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Updates(u64);

impl Component for Updates {
    const NAME: &'static str = "compat.Updates";
    const FIXED_SIZE: Option<usize> = Some(8);
    fn encode(&self, w: &mut Writer<'_>) {
        w.u64(self.0)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Updates(r.u64()?))
    }
}

#[derive(Default)]
struct Old {
    entity: EntityId,
}

impl System for Old {
    fn configure(&mut self, mut ctx: ConfigureContext<'_>) -> plugin_api::Result {
        self.entity = ctx.entity;
        ctx.ecm.register_component::<Updates>()?;
        Ok(())
    }
    fn update(&mut self, _: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let n = ecm.get::<Updates>(self.entity).unwrap_or_default().0;
        ecm.set(self.entity, &Updates(n + 1), Change::Periodic)?;
        Ok(())
    }
}

plugin_api::export_plugin! {
    library: "troupe_compat_old",
    systems: { "compat::Old" => Old::default() }
}
