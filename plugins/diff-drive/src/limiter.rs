//! Velocity, acceleration and jerk limits on a commanded speed.

/// Bounds on one speed (linear or angular): each pair is `[min, max]`, infinite when not
/// set. gz-sim's `<min_*>` / `<max_*>` parameters fill them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpeedLimiter {
    /// Velocity bounds, m/s or rad/s.
    pub velocity: (f64, f64),
    /// Acceleration bounds, m/s² or rad/s².
    pub acceleration: (f64, f64),
    /// Jerk bounds, m/s³ or rad/s³.
    pub jerk: (f64, f64),
}

impl Default for SpeedLimiter {
    fn default() -> Self {
        let all = (f64::NEG_INFINITY, f64::INFINITY);
        SpeedLimiter { velocity: all, acceleration: all, jerk: all }
    }
}

impl SpeedLimiter {
    /// The speed to command now, given the wanted one `v`, the previous two commanded
    /// speeds `v0` (last step) and `v1` (the step before), and the step `dt` (s): jerk
    /// limited first, then acceleration, then velocity.
    pub fn limit(&self, v: f64, v0: f64, v1: f64, dt: f64) -> f64 {
        let mut v = v;
        if dt > 0.0 {
            // Jerk: the change of acceleration between the last step and this one.
            let a0 = (v0 - v1) / dt;
            let a = (v - v0) / dt;
            let j = ((a - a0) / dt).clamp(self.jerk.0, self.jerk.1);
            v = v0 + (a0 + j * dt) * dt;
            let a = ((v - v0) / dt).clamp(self.acceleration.0, self.acceleration.1);
            v = v0 + a * dt;
        }
        v.clamp(self.velocity.0, self.velocity.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acceleration_ramps_and_velocity_saturates() {
        let l = SpeedLimiter { velocity: (-1.0, 1.0), acceleration: (-2.0, 2.0), ..Default::default() };
        let (mut v0, mut v1) = (0.0, 0.0);
        let mut seen = Vec::new();
        for _ in 0..10 {
            let v = l.limit(5.0, v0, v1, 0.1);
            seen.push(v);
            (v1, v0) = (v0, v);
        }
        assert!((seen[0] - 0.2).abs() < 1e-12 && (seen[3] - 0.8).abs() < 1e-12, "{seen:?}");
        assert_eq!(seen[9], 1.0);
        assert_eq!(l.limit(-5.0, 0.0, 0.0, 0.0), -1.0, "paused: velocity bound only");
    }

    #[test]
    fn jerk_limits_the_change_of_acceleration() {
        let l = SpeedLimiter { jerk: (-10.0, 10.0), ..Default::default() };
        // From rest, the acceleration may grow by 10·0.1 = 1 m/s² per step.
        let v = l.limit(5.0, 0.0, 0.0, 0.1);
        assert!((v - 0.1).abs() < 1e-12, "{v}");
        let v2 = l.limit(5.0, v, 0.0, 0.1);
        // Acceleration 1 m/s² last step, 2 m/s² now: 0.1 + 2·0.1.
        assert!((v2 - 0.3).abs() < 1e-12, "{v2}");
    }
}
