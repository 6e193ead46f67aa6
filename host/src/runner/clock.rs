//! Simulation time with gz-sim's semantics: sim time is the time reached after the step,
//! dt is 0 while paused, iterations count only unpaused steps.

use plugin_api::UpdateInfo;
use std::time::Duration;

/// The clock of one world.
#[derive(Clone, Debug)]
pub struct Clock {
    /// Step size, ns.
    pub step_ns: i64,
    /// Target real-time factor (0: as fast as possible).
    pub real_time_factor: f64,
    /// Whether paused.
    pub paused: bool,
    sim_time_ns: i64,
    real_time_ns: i64,
    iterations: u64,
    dt_ns: i64,
}

impl Clock {
    /// A clock at time zero.
    pub fn new(step_seconds: f64, real_time_factor: f64, paused: bool) -> Clock {
        Clock {
            step_ns: (step_seconds * 1e9).round() as i64,
            real_time_factor,
            paused,
            sim_time_ns: 0,
            real_time_ns: 0,
            iterations: 0,
            dt_ns: 0,
        }
    }

    /// Advances for one iteration that took `wall` of real time since the previous one.
    /// Answers false, changing nothing, when the step would carry sim time past the end of
    /// the clock (`i64` nanoseconds: about 292 years), which the runner treats as the end of
    /// the run rather than overflowing.
    #[must_use]
    pub fn advance(&mut self, wall: Duration) -> bool {
        if self.paused {
            self.dt_ns = 0;
            return true;
        }
        let Some(sim_time_ns) = self.sim_time_ns.checked_add(self.step_ns) else {
            return false;
        };
        self.dt_ns = self.step_ns;
        self.sim_time_ns = sim_time_ns;
        self.iterations += 1;
        self.real_time_ns = self.real_time_ns.saturating_add(nanos(wall));
        true
    }

    /// Jumps to a recorded instant (playback): dt is the sim time covered by the jump, 0
    /// when time did not move forward.
    pub fn jump_to(&mut self, sim_time_ns: i64, iterations: u64, wall: Duration) {
        self.dt_ns = sim_time_ns.saturating_sub(self.sim_time_ns).max(0);
        self.sim_time_ns = sim_time_ns;
        self.iterations = iterations;
        self.real_time_ns = self.real_time_ns.saturating_add(nanos(wall));
    }

    /// Rewinds to time zero (world reset).
    pub fn rewind(&mut self) {
        self.sim_time_ns = 0;
        self.real_time_ns = 0;
        self.iterations = 0;
        self.dt_ns = 0;
    }

    /// What systems see this iteration.
    pub fn info(&self) -> UpdateInfo {
        UpdateInfo {
            sim_time_ns: self.sim_time_ns,
            real_time_ns: self.real_time_ns,
            dt_ns: self.dt_ns,
            iterations: self.iterations,
            paused: self.paused,
        }
    }

    /// Steps simulated so far.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// Wall time one iteration should take: step / real-time factor (zero: free-running).
    pub fn update_period(&self) -> Duration {
        if self.real_time_factor < 1e-9 {
            Duration::ZERO
        } else {
            Duration::from_nanos((self.step_ns as f64 / self.real_time_factor) as u64)
        }
    }
}

/// `d` in nanoseconds, saturating (an `i64` holds 292 years).
fn nanos(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paused_iterations_do_not_advance() {
        let mut c = Clock::new(0.001, 0.0, true);
        assert!(c.advance(Duration::from_millis(1)));
        assert_eq!(c.info(), UpdateInfo { paused: true, ..Default::default() });
        c.paused = false;
        for _ in 0..100 {
            assert!(c.advance(Duration::ZERO));
        }
        let i = c.info();
        assert_eq!((i.iterations, i.sim_time_ns, i.dt_ns), (100, 100_000_000, 1_000_000));
        c.step_ns = 2_000_000;
        for _ in 0..100 {
            assert!(c.advance(Duration::ZERO));
        }
        assert_eq!((c.info().iterations, c.info().sim_time_ns), (200, 300_000_000), "gz-sim's Time test");
        c.paused = true;
        assert!(c.advance(Duration::ZERO));
        assert_eq!((c.info().iterations, c.info().dt_ns), (200, 0));
    }

    #[test]
    fn update_period_is_step_over_rtf() {
        assert_eq!(Clock::new(0.001, 1.0, false).update_period(), Duration::from_millis(1));
        assert_eq!(Clock::new(0.001, 2.0, false).update_period(), Duration::from_micros(500));
        assert_eq!(Clock::new(0.001, 0.0, false).update_period(), Duration::ZERO);
    }

    /// The largest step the loader accepts, run until the clock's end: the step that would
    /// pass it is refused, time stays where it was, and nothing overflows (1e300 s used to
    /// panic on the first step).
    #[test]
    fn the_clock_ends_instead_of_overflowing() {
        let mut c = Clock::new(plugin_api::components::Physics::MAX_STEP_SIZE, 0.0, false);
        let steps = i64::MAX / c.step_ns;
        c.sim_time_ns = (steps - 1) * c.step_ns;
        assert!(c.advance(Duration::MAX), "the last step that fits");
        let end = c.info();
        assert_eq!(end.sim_time_ns, steps * c.step_ns);
        assert!(!c.advance(Duration::ZERO), "a step past i64::MAX ns");
        assert_eq!(c.info(), end);
        // Saturated as-casts make even 1e300 s a clock that ends rather than panics.
        let mut c = Clock::new(1e300, 1.0, false);
        assert!(c.advance(Duration::ZERO));
        assert!(!c.advance(Duration::ZERO));
        assert!(c.update_period() > Duration::from_secs(200 * 365 * 86_400), "{:?}", c.update_period());
    }
}
