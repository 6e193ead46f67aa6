//! Wheel odometry: where the vehicle is relative to where it started, from wheel angles.

/// Planar pose and speeds integrated from the left and right wheel joint positions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Odometry {
    /// Position along the start heading, m.
    pub x: f64,
    /// Position to the left of the start heading, m.
    pub y: f64,
    /// Heading relative to the start, rad, in (−π, π].
    pub heading: f64,
    last: Option<(f64, f64)>,
}

impl Odometry {
    /// Updates from the wheels' joint positions (rad); answers the distance travelled and
    /// the heading change since the last update. The first update only records the wheels.
    pub fn update(&mut self, left: f64, right: f64, radius: f64, separation: f64) -> (f64, f64) {
        let Some((l0, r0)) = self.last.replace((left, right)) else { return (0.0, 0.0) };
        // Physics reports revolute angles accumulated over whole turns, so the difference
        // is the wheel's turn since the last update.
        let (dl, dr) = ((left - l0) * radius, (right - r0) * radius);
        let ds = (dl + dr) / 2.0;
        let dth = (dr - dl) / separation;
        if dth.abs() < 1e-9 {
            // Straight: second-order (midpoint) integration.
            let mid = self.heading + dth / 2.0;
            self.x += ds * mid.cos();
            self.y += ds * mid.sin();
        } else {
            // Exactly along the arc of radius ds/dth.
            let r = ds / dth;
            let h1 = self.heading + dth;
            self.x += r * (h1.sin() - self.heading.sin());
            self.y -= r * (h1.cos() - self.heading.cos());
        }
        self.heading = wrap(self.heading + dth);
        (ds, dth)
    }
}

fn wrap(a: f64) -> f64 {
    use std::f64::consts::PI;
    let w = (a + PI).rem_euclid(2.0 * PI) - PI;
    if w == -PI {
        PI
    } else {
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    #[test]
    fn wheel_angles_past_pi_count_as_turned() {
        let mut o = Odometry::default();
        o.update(3.1, 3.1, 1.0, 1.0);
        // Both wheels went on by 0.1 rad past π (physics accumulates the angle).
        o.update(3.2, 3.2, 1.0, 1.0);
        assert!((o.x - 0.1).abs() < 1e-12, "{o:?}");
    }

    #[test]
    fn straight_and_arc() {
        let mut o = Odometry::default();
        o.update(0.0, 0.0, 0.5, 1.0);
        o.update(2.0, 2.0, 0.5, 1.0);
        assert!((o.x - 1.0).abs() < 1e-12 && o.y.abs() < 1e-12);
        // Spinning in place a quarter turn: left back, right forward.
        let mut o = Odometry::default();
        o.update(0.0, 0.0, 0.5, 1.0);
        let q = PI / 4.0 / 0.5; // each wheel rolls s = θ·sep/2 = π/4
        o.update(-q, q, 0.5, 1.0);
        assert!((o.heading - PI / 2.0).abs() < 1e-12 && o.x.abs() < 1e-12);
        // A half circle of radius 1 in 1000 steps ends at (0, 2), heading π.
        let mut o = Odometry::default();
        let (sep, r) = (1.0, 0.1);
        for k in 0..=1000 {
            let s = PI * k as f64 / 1000.0; // arc length of the centre
            let (sl, sr) = (s * (1.0 - sep / 2.0), s * (1.0 + sep / 2.0));
            o.update(sl / r, sr / r, r, sep);
        }
        assert!(o.x.abs() < 1e-9 && (o.y - 2.0).abs() < 1e-9 && (o.heading.abs() - PI).abs() < 1e-9, "{o:?}");
    }
}
