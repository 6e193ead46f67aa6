//! gz-math's PID controller, as gz-sim's joint controllers use it.

/// A PID on an error `state - target`: `cmd = -(p·e + I + d·de/dt) + offset`, where the
/// integral `I` accumulates `i·e·dt` clamped to `[i_min, i_max]` and the command is clamped
/// to `[cmd_min, cmd_max]` when `cmd_max >= cmd_min` (gz-math's convention: a controller
/// given the error of where it is minus where it should be).
#[derive(Clone, Debug, PartialEq)]
pub struct Pid {
    /// Proportional gain.
    pub p: f64,
    /// Integral gain.
    pub i: f64,
    /// Derivative gain.
    pub d: f64,
    /// Upper clamp of the integral term.
    pub i_max: f64,
    /// Lower clamp of the integral term.
    pub i_min: f64,
    /// Upper clamp of the command.
    pub cmd_max: f64,
    /// Lower clamp of the command.
    pub cmd_min: f64,
    /// Added to the command.
    pub cmd_offset: f64,
    integral: f64,
    last_error: Option<f64>,
}

impl Pid {
    /// A controller with these gains and clamps, integral and history zero.
    #[allow(clippy::too_many_arguments, reason = "gz's eight PID parameters, each named at the call")]
    pub fn new(p: f64, i: f64, d: f64, i_max: f64, i_min: f64, cmd_max: f64, cmd_min: f64, cmd_offset: f64) -> Pid {
        Pid { p, i, d, i_max, i_min, cmd_max, cmd_min, cmd_offset, integral: 0.0, last_error: None }
    }

    /// Reads gz's eight PID elements (`<p_gain>`, `<i_gain>`, `<d_gain>` with these
    /// defaults; `<i_max>`/`<i_min>` ±1, `<cmd_max>`/`<cmd_min>` ±1000, `<cmd_offset>` 0),
    /// noting inverted bounds as problems.
    pub fn from_params(params: &mut crate::Params, p: f64, i: f64, d: f64) -> Pid {
        let pid = Pid::new(
            params.number("p_gain", p),
            params.number("i_gain", i),
            params.number("d_gain", d),
            params.number("i_max", 1.0),
            params.number("i_min", -1.0),
            params.number("cmd_max", 1000.0),
            params.number("cmd_min", -1000.0),
            params.number("cmd_offset", 0.0),
        );
        if pid.i_min > pid.i_max {
            params.problem(format!("<i_min> {} is above <i_max> {}", pid.i_min, pid.i_max));
        }
        if pid.cmd_min > pid.cmd_max {
            params.problem(format!("<cmd_min> {} is above <cmd_max> {}", pid.cmd_min, pid.cmd_max));
        }
        pid
    }

    /// The command for `error` (state − target) after a step of `dt` seconds. A step of
    /// zero (paused) answers the proportional and integral terms without accumulating.
    pub fn update(&mut self, error: f64, dt: f64) -> f64 {
        if dt > 0.0 {
            self.integral =
                (self.integral + self.i * dt * error).clamp(self.i_min.min(self.i_max), self.i_max.max(self.i_min));
        }
        let derivative = match self.last_error {
            Some(last) if dt > 0.0 => (error - last) / dt,
            _ => 0.0,
        };
        if dt > 0.0 {
            self.last_error = Some(error);
        }
        let cmd = -(self.p * error + self.integral + self.d * derivative) + self.cmd_offset;
        if self.cmd_max >= self.cmd_min {
            cmd.clamp(self.cmd_min, self.cmd_max)
        } else {
            cmd
        }
    }

    /// Forgets the integral and the last error.
    pub fn reset(&mut self) {
        self.integral = 0.0;
        self.last_error = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_integral_derivative_and_clamps() {
        let mut pid = Pid::new(2.0, 1.0, 0.5, 0.3, -0.3, 10.0, -10.0, 0.0);
        // First step: no derivative yet; integral 1·0.1·1 = 0.1.
        assert!((pid.update(1.0, 0.1) - -(2.0 + 0.1)).abs() < 1e-12);
        // Second: integral 0.2, derivative (0.5 − 1)/0.1 = −5.
        assert!((pid.update(0.5, 0.1) - -(1.0 + 0.15 + 0.5 * -5.0)).abs() < 1e-12);
        // The integral saturates at i_max, the command at cmd_max.
        for _ in 0..100 {
            pid.update(-100.0, 0.1);
        }
        assert_eq!(pid.update(-100.0, 0.1), 10.0);
        pid.reset();
        assert!((pid.update(-1.0, 0.1) - (2.0 + 0.1)).abs() < 1e-12);
    }
}
