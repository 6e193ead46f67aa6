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
    pub fn advance(&mut self, wall: Duration) {
        if self.paused {
            self.dt_ns = 0;
        } else {
            self.dt_ns = self.step_ns;
            self.sim_time_ns += self.step_ns;
            self.iterations += 1;
            self.real_time_ns += wall.as_nanos() as i64;
        }
    }

    /// Jumps to a recorded instant (playback): dt is the sim time covered by the jump, 0
    /// when time did not move forward.
    pub fn jump_to(&mut self, sim_time_ns: i64, iterations: u64, wall: Duration) {
        self.dt_ns = (sim_time_ns - self.sim_time_ns).max(0);
        self.sim_time_ns = sim_time_ns;
        self.iterations = iterations;
        self.real_time_ns += wall.as_nanos() as i64;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paused_iterations_do_not_advance() {
        let mut c = Clock::new(0.001, 0.0, true);
        c.advance(Duration::from_millis(1));
        assert_eq!(c.info(), UpdateInfo { paused: true, ..Default::default() });
        c.paused = false;
        for _ in 0..100 {
            c.advance(Duration::ZERO);
        }
        let i = c.info();
        assert_eq!((i.iterations, i.sim_time_ns, i.dt_ns), (100, 100_000_000, 1_000_000));
        c.step_ns = 2_000_000;
        for _ in 0..100 {
            c.advance(Duration::ZERO);
        }
        assert_eq!((c.info().iterations, c.info().sim_time_ns), (200, 300_000_000), "gz-sim's Time test");
        c.paused = true;
        c.advance(Duration::ZERO);
        assert_eq!((c.info().iterations, c.info().dt_ns), (200, 0));
    }

    #[test]
    fn update_period_is_step_over_rtf() {
        assert_eq!(Clock::new(0.001, 1.0, false).update_period(), Duration::from_millis(1));
        assert_eq!(Clock::new(0.001, 2.0, false).update_period(), Duration::from_micros(500));
        assert_eq!(Clock::new(0.001, 0.0, false).update_period(), Duration::ZERO);
    }
}
