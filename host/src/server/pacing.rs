//! Pacing: what `-z HZ` means as a time between steps, and the wait for the next step, which
//! a stop request (Ctrl-C, SIGTERM, `/server_control`) cuts short.

use std::time::{Duration, Instant};

/// The longest time between two steps `-z` may ask for: one day (a rate of about 1.16e-5 Hz).
/// A slower rate is refused at start rather than clamped: clamping would run at a rate nobody
/// asked for, and a rate that low is almost surely a slip (`-z 1e-12` for `-z 1e12`); its
/// period can also be too long for a `Duration` (`-z 1e-300` panicked). A paused world
/// stepped through `/world/<w>/control` is the way to go slower.
pub(crate) const LONGEST_PERIOD: Duration = Duration::from_secs(86_400);

/// The longest single sleep while waiting for the next step: how late a stop request may be
/// seen (one 10-second sleep at `-z 0.1` made SIGTERM wait for it).
const SLICE: Duration = Duration::from_millis(10);

/// The fixed time between steps that `-z HZ` asks for, read as gz-sim's
/// `ServerConfig::SetUpdateRate` does: a rate > 0 sets the period to 1/HZ (infinity: zero,
/// as fast as possible); a rate that is not > 0 (0, negative, NaN) is ignored, with one
/// warning, and the worlds' step size and real-time factor pace the run. `None` when `-z`
/// sets no period; an error when the period would pass [`LONGEST_PERIOD`].
pub(crate) fn update_period(rate: Option<f64>) -> Result<Option<Duration>, String> {
    let Some(hz) = rate else { return Ok(None) };
    if hz.is_nan() || hz <= 0.0 {
        log::warn!(
            "-z {hz:?}: an update rate must be > 0 Hz; ignored (as gz-sim does): the worlds' step size and real-time factor pace the run"
        );
        return Ok(None);
    }
    let seconds = 1.0 / hz;
    if seconds > LONGEST_PERIOD.as_secs_f64() {
        return Err(format!(
            "-z {hz:?}: an update rate below {:.3e} Hz (one step a day) is refused: it would wait {seconds:.3e} s between steps",
            1.0 / LONGEST_PERIOD.as_secs_f64()
        ));
    }
    Ok(Some(Duration::from_secs_f64(seconds)))
}

/// When the step after one due at `last` falls due: a `period` later, or `now` when that has
/// passed already (a late step does not make the next ones hurry).
pub(crate) fn next_due(last: Instant, period: Duration, now: Instant) -> Instant {
    // An `Instant` holds centuries past any period a clock can ask for; if it ever could not,
    // stepping now is better than a panic.
    last.checked_add(period).filter(|due| *due > now).unwrap_or(now)
}

/// Sleeps until `due` in slices of at most [`SLICE`], returning early as soon as `stop`
/// answers true. Answers whether `due` was reached (false: stopped first).
pub(crate) fn sleep_until(due: Instant, stop: impl Fn() -> bool) -> bool {
    loop {
        if stop() {
            return false;
        }
        let now = Instant::now();
        if now >= due {
            return true;
        }
        std::thread::sleep((due - now).min(SLICE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn update_rates_as_gz_sim_reads_them() {
        assert_eq!(update_period(None), Ok(None));
        assert_eq!(update_period(Some(1000.0)), Ok(Some(Duration::from_millis(1))));
        assert_eq!(update_period(Some(0.1)), Ok(Some(Duration::from_secs(10))));
        assert_eq!(update_period(Some(f64::INFINITY)), Ok(Some(Duration::ZERO)), "as fast as possible");
        assert_eq!(update_period(Some(1e300)), Ok(Some(Duration::ZERO)));
        for ignored in [0.0, -5.0, f64::NAN, f64::NEG_INFINITY] {
            assert_eq!(update_period(Some(ignored)), Ok(None), "{ignored}");
        }
        assert_eq!(update_period(Some(2e-5)), Ok(Some(Duration::from_secs(50_000))), "slow, but under a day");
    }

    /// `-z 1e-300` panicked in `Duration::from_secs_f64`; `-z 1e-12` slept for 31,700 years.
    #[test]
    fn rates_slower_than_one_step_a_day_are_refused() {
        for slow in [1e-300, 1e-12, 1e-5, f64::MIN_POSITIVE] {
            let why = update_period(Some(slow)).err().unwrap_or_default();
            assert!(why.starts_with(&format!("-z {slow:?}: an update rate below 1.157e-5 Hz")), "{why}");
        }
    }

    #[test]
    fn a_late_step_is_due_now_and_an_early_one_a_period_on() {
        let t0 = Instant::now();
        let ms = Duration::from_millis(1);
        assert_eq!(next_due(t0, ms, t0), t0 + ms);
        assert_eq!(next_due(t0, ms, t0 + 5 * ms), t0 + 5 * ms);
        assert_eq!(next_due(t0, Duration::MAX, t0), t0, "no Instant that far: now");
    }

    /// A stop request ends a wait of a day within a slice or so (the bound here is loose: the
    /// machine may be busy).
    #[test]
    fn a_stop_request_cuts_the_wait_short() {
        let stop = AtomicBool::new(false);
        let started = Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(50));
                stop.store(true, Ordering::SeqCst);
            });
            assert!(!sleep_until(started + LONGEST_PERIOD, || stop.load(Ordering::SeqCst)));
        });
        assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
        assert!(sleep_until(Instant::now(), || false), "a wait already due ends at once");
    }
}
