//! # troupe_testing — systems for Troupe's own tests
//!
//! * `testing::Noop`: does nothing (benchmarks).
//! * `testing::Panic` / `testing::Fail`: panic / return an error in `<phase>` (configure,
//!   reset, pre_update, update, post_update) at iteration `<at>` (default 1).
//! * `testing::Recorder`: writes what it saw to `<output>` when the run stops: the world
//!   name, iterations, sim time, and every entity as `id name`.
//! * `testing::Spawner`: at iteration `<at>` creates `<sdf>` under the world; removes it at
//!   iteration `<remove_at>` (if given).
//! * `testing::Stopper`: emits `troupe.stop` at iteration `<at>`.
//! * `testing::Order`: in pre_update appends `<label>` and a space to the world's
//!   `testing.Order` component (a string), so tests can see the order systems ran in.
//! * `testing::Echo`: offers `<service>` (StringMsg -> StringMsg, answers the request's
//!   text upper-cased, false for an empty one) and republishes every StringMsg of
//!   `<input>` on `<output>`, in pre_update: the transport as a plugin uses it.

use plugin_api::components::Name;
use plugin_api::msgs::StringMsg;
use plugin_api::xml::PluginXml;
use plugin_api::{
    events, log, ConfigureContext, Ecm, EcmRead, EcmView, EntityId, Error, Host, ResetOutcome, System, UpdateInfo,
};
use std::sync::{Arc, Mutex};

/// Does nothing in every phase. It implements `update` only and says so (`hooks`), as
/// gz-sim's default systems each implement one or two of the update interfaces.
#[derive(Default)]
pub struct Noop;

impl System for Noop {
    fn hooks(&self) -> plugin_api::ffi::Hooks {
        plugin_api::ffi::Hooks::UPDATE
    }
    fn update(&mut self, _: &UpdateInfo, _: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }
}

/// Misbehaves in one phase: panics or fails.
pub struct Misbehave {
    panic: bool,
    phase: String,
    at: u64,
}

impl Misbehave {
    fn new(panic: bool) -> Self {
        Misbehave { panic, phase: "update".into(), at: 1 }
    }
    fn hit(&self, phase: &str, info: Option<&UpdateInfo>) -> plugin_api::Result {
        if phase != self.phase || info.is_some_and(|i| i.iterations != self.at) {
            return Ok(());
        }
        if self.panic {
            panic!("deliberate panic in {phase}");
        }
        Err(Error::msg(format!("deliberate failure in {phase}")))
    }
}

impl System for Misbehave {
    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let xml = PluginXml::parse(ctx.xml)?;
        self.phase = xml.text("phase").unwrap_or(self.phase.clone());
        self.at = xml.value("at")?.unwrap_or(self.at);
        self.hit("configure", None)
    }
    fn reset(&mut self, _: &UpdateInfo, _: &mut Ecm<'_>) -> plugin_api::Result<ResetOutcome> {
        self.hit("reset", None).map(|_| ResetOutcome::DONE)
    }
    fn pre_update(&mut self, info: &UpdateInfo, _: &mut Ecm<'_>) -> plugin_api::Result {
        self.hit("pre_update", Some(info))
    }
    fn update(&mut self, info: &UpdateInfo, _: &mut Ecm<'_>) -> plugin_api::Result {
        self.hit("update", Some(info))
    }
    fn post_update(&mut self, info: &UpdateInfo, _: &EcmView<'_>) -> plugin_api::Result {
        self.hit("post_update", Some(info))
    }
}

#[derive(Default)]
struct Seen {
    iterations: u64,
    sim_time: f64,
    entities: Vec<(EntityId, String)>,
}

/// Writes what it saw when the run stops.
#[derive(Default)]
pub struct Recorder {
    seen: Arc<Mutex<Seen>>,
}

impl System for Recorder {
    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let xml = PluginXml::parse(ctx.xml)?;
        let output = xml.text("output").ok_or_else(|| Error::msg("testing::Recorder needs <output>"))?;
        let world = ctx.host.world_name();
        let seen = self.seen.clone();
        ctx.host.subscribe(events::STOP, move |_, _| {
            let s = seen.lock().map_err(|_| Error::msg("poisoned"))?;
            let mut text = format!("world {world}\niterations {}\nsim_time {:.6}\n", s.iterations, s.sim_time);
            for (id, name) in &s.entities {
                text.push_str(&format!("entity {id} {name}\n"));
            }
            std::fs::write(&output, text).map_err(|e| Error::msg(format!("{output}: {e}")))
        });
        Ok(())
    }
    fn update(&mut self, _: &UpdateInfo, _: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }
    fn post_update(&mut self, info: &UpdateInfo, ecm: &EcmView<'_>) -> plugin_api::Result {
        let mut s = self.seen.lock().map_err(|_| Error::msg("poisoned"))?;
        s.iterations = info.iterations;
        s.sim_time = info.sim_time();
        s.entities = ecm
            .entities_with(&[])
            .into_iter()
            .map(|e| (e, ecm.get::<Name>(e).map(|n| n.0).unwrap_or_default()))
            .collect();
        Ok(())
    }
}

/// Creates an SDF snippet at one iteration and removes it at another.
#[derive(Default)]
pub struct Spawner {
    sdf: String,
    at: u64,
    remove_at: Option<u64>,
    world: EntityId,
    spawned: Option<EntityId>,
}

impl System for Spawner {
    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let xml = PluginXml::parse(ctx.xml)?;
        self.sdf = xml.text("sdf").ok_or_else(|| Error::msg("testing::Spawner needs <sdf>"))?;
        self.at = xml.value("at")?.unwrap_or(1);
        self.remove_at = xml.value("remove_at")?;
        self.world = ctx.entity;
        Ok(())
    }
    fn pre_update(&mut self, info: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        if info.iterations == self.at && self.spawned.is_none() {
            let id = ecm.create_from_sdf(&self.sdf, self.world)?;
            log::info!("spawned entity {id}");
            self.spawned = Some(id);
        }
        if Some(info.iterations) == self.remove_at {
            if let Some(id) = self.spawned {
                ecm.request_remove(id);
            }
        }
        Ok(())
    }
    fn update(&mut self, _: &UpdateInfo, _: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }
}

/// Stops the run at an iteration through the stop event.
pub struct Stopper {
    at: u64,
    host: Option<Host>,
}

impl System for Stopper {
    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        self.at = PluginXml::parse(ctx.xml)?.value("at")?.unwrap_or(10);
        self.host = Some(ctx.host);
        Ok(())
    }
    fn update(&mut self, info: &UpdateInfo, _: &mut Ecm<'_>) -> plugin_api::Result {
        if info.iterations == self.at {
            if let Some(host) = &self.host {
                host.emit(events::STOP, &[]);
            }
        }
        Ok(())
    }
}

/// The world's record of which systems ran, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OrderLog(pub String);

impl plugin_api::Component for OrderLog {
    const NAME: &'static str = "testing.Order";
    const FIXED_SIZE: Option<usize> = None;
    fn encode(&self, w: &mut plugin_api::Writer<'_>) {
        w.str(&self.0)
    }
    fn decode(r: &mut plugin_api::Reader<'_>) -> Result<Self, plugin_api::DecodeError> {
        Ok(OrderLog(r.string()?))
    }
}

/// Appends its label to the world's [`OrderLog`] in pre_update.
#[derive(Default)]
pub struct Order {
    label: String,
    world: EntityId,
}

impl System for Order {
    fn configure(&mut self, mut ctx: ConfigureContext<'_>) -> plugin_api::Result {
        self.label = PluginXml::parse(ctx.xml)?.text("label").unwrap_or_default();
        self.world = ctx.entity;
        ctx.ecm.register_component::<OrderLog>()?;
        Ok(())
    }
    fn pre_update(&mut self, _: &UpdateInfo, ecm: &mut Ecm<'_>) -> plugin_api::Result {
        let mut log = ecm.get::<OrderLog>(self.world).unwrap_or_default();
        log.0.push_str(&self.label);
        log.0.push(' ');
        ecm.set(self.world, &log, plugin_api::Change::OneTime)?;
        Ok(())
    }
    fn update(&mut self, _: &UpdateInfo, _: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }
}

/// Serves a service and relays a topic through the plugin-api transport.
#[derive(Default)]
pub struct Echo {
    service: Option<plugin_api::ServiceServer<StringMsg, StringMsg>>,
    input: Option<plugin_api::Subscriber<StringMsg>>,
    output: Option<plugin_api::Publisher<StringMsg>>,
}

impl System for Echo {
    fn configure(&mut self, ctx: ConfigureContext<'_>) -> plugin_api::Result {
        let xml = PluginXml::parse(ctx.xml)?;
        let need = |tag: &str| xml.text(tag).ok_or_else(|| Error::msg(format!("testing::Echo needs <{tag}>")));
        self.service = Some(ctx.host.offer_service(&need("service")?)?);
        self.input = Some(ctx.host.subscribe_topic(&need("input")?)?);
        self.output = Some(ctx.host.advertise(&need("output")?, plugin_api::TopicOptions::default())?);
        Ok(())
    }
    fn pre_update(&mut self, _: &UpdateInfo, _: &mut Ecm<'_>) -> plugin_api::Result {
        if let (Some(input), Some(output)) = (&self.input, &self.output) {
            for msg in input.take() {
                output.publish(&msg)?;
            }
        }
        if let Some(service) = &self.service {
            for req in service.take() {
                let text = req.message.data.to_uppercase();
                service.reply(&req, !text.is_empty(), &StringMsg { data: text, ..Default::default() });
            }
        }
        Ok(())
    }
    fn update(&mut self, _: &UpdateInfo, _: &mut Ecm<'_>) -> plugin_api::Result {
        Ok(())
    }
}

plugin_api::export_plugin! {
    library: "troupe_testing",
    systems: {
        "testing::Noop" => Noop,
        "testing::Panic" => Misbehave::new(true),
        "testing::Fail" => Misbehave::new(false),
        "testing::Recorder" => Recorder::default(),
        "testing::Spawner" => Spawner::default(),
        "testing::Stopper" => Stopper { at: 10, host: None },
        "testing::Order" => Order::default(),
        "testing::Echo" => Echo::default(),
    }
}
