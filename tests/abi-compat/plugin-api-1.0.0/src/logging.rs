//! Plugin-side forwarding of `log` records to the host.
//!
//! Each plugin library has its own copy of the `log` crate and so its own global logger;
//! without this, `log::info!` inside a plugin would print nothing.

use crate::module::HostLogger;
use abi_stable::std_types::RStr;

struct Forwarder {
    host: HostLogger,
    library: &'static str,
}

fn level_number(level: log::Level) -> u8 {
    level as u8
}

impl log::Log for Forwarder {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        level_number(metadata.level()) <= self.host.max_level
    }
    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let message = record.args().to_string();
        (self.host.log)(
            RStr::from_str(self.library),
            level_number(record.level()),
            RStr::from_str(record.target()),
            RStr::from_str(&message),
        );
    }
    fn flush(&self) {}
}

/// Installs the host's logger as this library's `log` logger (first call wins).
pub fn install(host: HostLogger, library: &'static str) {
    if log::set_boxed_logger(Box::new(Forwarder { host, library })).is_ok() {
        let max = match host.max_level {
            0 => log::LevelFilter::Off,
            1 => log::LevelFilter::Error,
            2 => log::LevelFilter::Warn,
            3 => log::LevelFilter::Info,
            4 => log::LevelFilter::Debug,
            _ => log::LevelFilter::Trace,
        };
        log::set_max_level(max);
    }
}
