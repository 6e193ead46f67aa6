//! A test fixture for plugin authors and Troupe's own tests: load a world, attach
//! in-process callbacks as a system, run N steps, inspect the ECM.
//!
//! ```no_run
//! use troupe::fixture::TestFixture;
//! use plugin_api::{EcmRead, components::Model};
//!
//! let mut models = 0;
//! let mut fixture = TestFixture::from_sdf(r#"<sdf version="1.9"><world name="w">
//!     <model name="m"><link name="l"/></model></world></sdf>"#).unwrap()
//!     .on_post_update(move |_info, ecm| {
//!         models = ecm.entities_with(&[<Model as plugin_api::Component>::ID]).len();
//!         Ok(())
//!     })
//!     .finalize()
//!     .unwrap();
//! fixture.run(10).unwrap();
//! assert_eq!(fixture.ecm().entity_count(), 3);
//! ```

use crate::ecm::Ecm;
use crate::runner::{RunError, WorldRunner};
use crate::server::{Server, ServerError, ServerOptions};
use plugin_api::{ConfigureContext, Ecm as EcmMut, EcmView, System, UpdateInfo};
use std::path::Path;
use std::time::Duration;

type ConfigureHook = Box<dyn FnMut(&mut ConfigureContext<'_>) -> plugin_api::Result + Send>;
type MutHook = Box<dyn FnMut(&UpdateInfo, &mut EcmMut<'_>) -> plugin_api::Result + Send>;
type ViewHook = Box<dyn FnMut(&UpdateInfo, &EcmView<'_>) -> plugin_api::Result + Send>;

#[derive(Default)]
struct Callbacks {
    configure: Option<ConfigureHook>,
    pre: Option<MutHook>,
    update: Option<MutHook>,
    post: Option<ViewHook>,
}

impl System for Callbacks {
    fn configure(&mut self, mut ctx: ConfigureContext<'_>) -> plugin_api::Result {
        match &mut self.configure {
            Some(f) => f(&mut ctx),
            None => Ok(()),
        }
    }
    fn pre_update(&mut self, info: &UpdateInfo, ecm: &mut EcmMut<'_>) -> plugin_api::Result {
        match &mut self.pre {
            Some(f) => f(info, ecm),
            None => Ok(()),
        }
    }
    fn update(&mut self, info: &UpdateInfo, ecm: &mut EcmMut<'_>) -> plugin_api::Result {
        match &mut self.update {
            Some(f) => f(info, ecm),
            None => Ok(()),
        }
    }
    fn post_update(&mut self, info: &UpdateInfo, ecm: &EcmView<'_>) -> plugin_api::Result {
        match &mut self.post {
            Some(f) => f(info, ecm),
            None => Ok(()),
        }
    }
}

/// A loaded world with optional in-process callbacks; [`TestFixture::finalize`] attaches
/// them and makes it runnable.
pub struct TestFixture {
    server: Server,
    callbacks: Option<Callbacks>,
}

impl TestFixture {
    /// Loads a world file, running (not paused), with the default config set.
    pub fn from_file(path: impl AsRef<Path>) -> Result<TestFixture, ServerError> {
        Self::with_options(ServerOptions {
            world_file: Some(path.as_ref().to_path_buf()),
            run: true,
            ..Default::default()
        })
    }

    /// Loads SDF text.
    pub fn from_sdf(text: &str) -> Result<TestFixture, ServerError> {
        Self::with_options(ServerOptions {
            world_text: Some((text.to_string(), "<fixture>".into())),
            run: true,
            ..Default::default()
        })
    }

    /// Plays a state log back (see [`crate::state::playback`]): each step applies the log's
    /// next step; [`TestFixture::seek`] jumps. Callbacks see the played-back world.
    pub fn playback(log: impl AsRef<Path>) -> Result<TestFixture, ServerError> {
        Self::with_options(ServerOptions {
            playback: Some(log.as_ref().to_path_buf()),
            run: true,
            ..Default::default()
        })
    }

    /// Playback: puts the world in the state the log has at `iteration`.
    pub fn seek(&mut self, iteration: u64) -> Result<(), RunError> {
        self.server.runners_mut()[0].seek(iteration)
    }

    /// Loads with explicit options.
    pub fn with_options(opts: ServerOptions) -> Result<TestFixture, ServerError> {
        Ok(TestFixture { server: Server::load(&opts)?, callbacks: Some(Callbacks::default()) })
    }

    fn callbacks(&mut self) -> &mut Callbacks {
        self.callbacks.get_or_insert_with(Callbacks::default)
    }

    /// Called when the callback system is configured.
    pub fn on_configure(
        mut self,
        f: impl FnMut(&mut ConfigureContext<'_>) -> plugin_api::Result + Send + 'static,
    ) -> Self {
        self.callbacks().configure = Some(Box::new(f));
        self
    }
    /// Called in pre_update (read/write).
    pub fn on_pre_update(
        mut self,
        f: impl FnMut(&UpdateInfo, &mut EcmMut<'_>) -> plugin_api::Result + Send + 'static,
    ) -> Self {
        self.callbacks().pre = Some(Box::new(f));
        self
    }
    /// Called in update (read/write).
    pub fn on_update(
        mut self,
        f: impl FnMut(&UpdateInfo, &mut EcmMut<'_>) -> plugin_api::Result + Send + 'static,
    ) -> Self {
        self.callbacks().update = Some(Box::new(f));
        self
    }
    /// Called in post_update (read-only).
    pub fn on_post_update(
        mut self,
        f: impl FnMut(&UpdateInfo, &EcmView<'_>) -> plugin_api::Result + Send + 'static,
    ) -> Self {
        self.callbacks().post = Some(Box::new(f));
        self
    }

    /// Attaches the callbacks to the first world as an in-process system (configured now,
    /// after the world's own systems, so it runs last among equal priorities).
    pub fn finalize(mut self) -> Result<TestFixture, RunError> {
        if let Some(cb) = self.callbacks.take() {
            let runner = &mut self.server.runners_mut()[0];
            runner.add_in_process("test fixture callbacks", plugin_api::into_ffi(cb))?;
            runner.finish_load();
        }
        Ok(self)
    }

    /// Runs `iterations` steps of every world as fast as possible (paused worlds iterate
    /// without advancing).
    pub fn run(&mut self, iterations: u64) -> Result<(), RunError> {
        for _ in 0..iterations {
            self.server.step_once(Duration::ZERO)?;
        }
        Ok(())
    }

    /// The first world's ECM.
    pub fn ecm(&self) -> &Ecm {
        &self.server.runners()[0].ecm
    }
    /// The first world's runner.
    pub fn runner(&self) -> &WorldRunner {
        &self.server.runners()[0]
    }
    /// The first world's runner, mutably (pause, reset...).
    pub fn runner_mut(&mut self) -> &mut WorldRunner {
        &mut self.server.runners_mut()[0]
    }
    /// The whole server.
    pub fn server(&mut self) -> &mut Server {
        &mut self.server
    }
}

/// Lines logged at info level or above since [`capture_log`], as `[LEVEL] target: text`.
static CAPTURED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::Level::Info
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            CAPTURED.lock().unwrap_or_else(|e| e.into_inner()).push(format!(
                "[{}] {}: {}",
                r.level(),
                r.target(),
                r.args()
            ));
        }
    }
    fn flush(&self) {}
}

/// Makes this process keep what the host and its plugins log at info level or above, for
/// [`captured_log`]. For test binaries that check messages (a warning a system logs); the
/// first call installs the process's logger, later calls do nothing.
///
/// # Panics
/// When another logger is already installed in this process.
pub fn capture_log() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        log::set_boxed_logger(Box::new(Capture)).expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Info);
    });
}

/// The lines logged since [`capture_log`] in this process (nextest runs each test in a
/// process of its own), as `[LEVEL] target: text`.
pub fn captured_log() -> Vec<String> {
    CAPTURED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}
