//! Sensor noise as SDFormat's `<noise>` describes it, drawn from a seeded generator so runs
//! repeat: gaussian with mean, standard deviation, a bias drawn once, and quantization.

use crate::config::{child_f64, ConfigError};
use xmltree::Element;

/// A small deterministic random generator (SplitMix64), one per sensor, seeded from the
/// world seed and the sensor's entity id.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `stream` (the sensor entity) of the run seeded `seed`.
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut r = Rng(seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        r.next_u64();
        r
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1].
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
    /// A standard normal sample (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// One `<noise>` block, with its bias already drawn.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Noise {
    /// `<mean>` of the gaussian, added to every sample.
    pub mean: f64,
    /// `<stddev>` of the gaussian.
    pub stddev: f64,
    /// `<bias_mean>`: the bias is drawn once from N(bias_mean, bias_stddev) with a random sign.
    pub bias_mean: f64,
    /// `<bias_stddev>`.
    pub bias_stddev: f64,
    /// `<precision>` (type `gaussian_quantized`): samples are rounded to a multiple of it.
    pub precision: f64,
    /// The bias drawn for this sensor.
    bias: f64,
}

impl Noise {
    /// No noise.
    pub const NONE: Noise =
        Noise { mean: 0.0, stddev: 0.0, bias_mean: 0.0, bias_stddev: 0.0, precision: 0.0, bias: 0.0 };

    /// Reads a `<noise>` element: `type` as a child (SDFormat 1.5+) or attribute (older),
    /// `none`, `gaussian` or `gaussian_quantized`. `what` names it in errors.
    pub fn parse(el: &Element, what: &str) -> Result<Noise, ConfigError> {
        let kind = el
            .get_child("type")
            .and_then(|t| t.get_text())
            .map(|t| t.trim().to_string())
            .or_else(|| el.attributes.get("type").cloned())
            .unwrap_or_else(|| "none".into());
        let mut n = Noise::NONE;
        match kind.as_str() {
            "none" => return Ok(n),
            "gaussian" | "gaussian_quantized" => {}
            other => {
                return Err(ConfigError(format!(
                    "{what}: unknown noise type {other:?} (none, gaussian, gaussian_quantized)"
                )))
            }
        }
        n.mean = child_f64(el, "mean", 0.0, what)?;
        n.stddev = child_f64(el, "stddev", 0.0, what)?;
        n.bias_mean = child_f64(el, "bias_mean", 0.0, what)?;
        n.bias_stddev = child_f64(el, "bias_stddev", 0.0, what)?;
        if kind == "gaussian_quantized" {
            n.precision = child_f64(el, "precision", 0.0, what)?;
        }
        if n.stddev < 0.0 || n.bias_stddev < 0.0 || n.precision < 0.0 {
            return Err(ConfigError(format!("{what}: stddev, bias_stddev and precision must not be negative")));
        }
        Ok(n)
    }

    /// The `<noise>` under the path of child elements from `el`, or none when absent.
    pub fn at(el: Option<&Element>, path: &[&str], what: &str) -> Result<Noise, ConfigError> {
        let mut cur = el;
        for p in path {
            cur = cur.and_then(|e| e.get_child(*p));
        }
        match cur.and_then(|e| e.get_child("noise")) {
            Some(n) => Noise::parse(n, &format!("{what} <{}>", path.join("><"))),
            None => Ok(Noise::NONE),
        }
    }

    /// Draws the bias (once, when the sensor starts).
    pub fn start(&mut self, rng: &mut Rng) {
        if self.bias_mean != 0.0 || self.bias_stddev != 0.0 {
            let b = self.bias_mean + self.bias_stddev * rng.normal();
            self.bias = if rng.uniform() < 0.5 { -b } else { b };
        }
    }

    /// Whether it changes values at all.
    pub fn is_none(&self) -> bool {
        self.mean == 0.0 && self.stddev == 0.0 && self.bias == 0.0 && self.precision == 0.0
    }

    /// `value` with noise added (and quantized).
    pub fn apply(&self, value: f64, rng: &mut Rng) -> f64 {
        if self.is_none() || !value.is_finite() {
            return value;
        }
        let mut v = value + self.mean + self.bias;
        if self.stddev > 0.0 {
            v += self.stddev * rng.normal();
        }
        if self.precision > 0.0 {
            v = (v / self.precision).round() * self.precision;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(xml: &str) -> Element {
        Element::parse(xml.as_bytes()).unwrap()
    }

    #[test]
    fn gaussian_noise_has_its_mean_and_stddev_and_repeats_with_the_seed() {
        let n = Noise::parse(&el("<noise type='gaussian'><mean>0.5</mean><stddev>2</stddev></noise>"), "t").unwrap();
        let draw = |seed| {
            let mut rng = Rng::new(seed, 7);
            (0..20000).map(|_| n.apply(1.0, &mut rng)).collect::<Vec<_>>()
        };
        let a = draw(3);
        assert_eq!(a, draw(3), "same seed, same samples");
        assert_ne!(a, draw(4), "another seed, other samples");
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        let var = a.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / a.len() as f64;
        assert!((mean - 1.5).abs() < 0.05, "mean {mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.05, "stddev {}", var.sqrt());
    }

    #[test]
    fn quantized_noise_rounds_to_the_precision_and_bias_is_drawn_once() {
        let mut n = Noise::parse(
            &el("<noise><type>gaussian_quantized</type><bias_mean>1</bias_mean><precision>0.25</precision></noise>"),
            "t",
        )
        .unwrap();
        let mut rng = Rng::new(1, 1);
        n.start(&mut rng);
        let v = n.apply(0.1, &mut rng);
        assert!(v == 1.0 || v == -1.0, "0.1 with a bias of ±1 rounded to 0.25: {v}");
        assert_eq!(n.apply(0.1, &mut rng), v, "the bias stays");
    }

    #[test]
    fn bad_noise_is_an_error_naming_it() {
        let e = Noise::parse(&el("<noise type='pink'/>"), "sensor s").unwrap_err();
        assert!(e.0.contains("sensor s") && e.0.contains("pink"), "{}", e.0);
        let e = Noise::parse(&el("<noise type='gaussian'><stddev>x</stddev></noise>"), "sensor s").unwrap_err();
        assert!(e.0.contains("stddev"), "{}", e.0);
    }
}
