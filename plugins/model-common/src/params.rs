//! Reading a system's parameters with every problem collected.

use plugin_api::xml::PluginXml;
use plugin_api::Error;
use std::str::FromStr;

/// A `<plugin>` element's parameters. Each read that fails records a problem naming the
/// element and the text; [`Params::finish`] answers them all at once ("fail fast and say
/// everything"), prefixed with the system's name and the entity it is attached to.
pub struct Params {
    xml: PluginXml,
    system: String,
    problems: Vec<String>,
}

impl Params {
    /// Parses the plugin XML. `system` names the system and where it is attached
    /// (`DiffDrive on model "vehicle"`), for the messages.
    pub fn parse(xml: &str, system: impl Into<String>) -> Result<Params, Error> {
        let system = system.into();
        let xml = PluginXml::parse(xml).map_err(|e| Error(format!("{system}: {e}")))?;
        Ok(Params { xml, system, problems: Vec::new() })
    }

    /// Records a problem found outside the reads (an unknown joint...).
    pub fn problem(&mut self, message: impl Into<String>) {
        self.problems.push(message.into());
    }

    /// Whether a problem was recorded.
    pub fn has_problems(&self) -> bool {
        !self.problems.is_empty()
    }

    /// The trimmed text of `<tag>`, if present.
    pub fn text(&self, tag: &str) -> Option<String> {
        self.xml.text(tag)
    }

    /// Reads every `<tag>` block with `read`, in order; problems found inside one are
    /// reported as `<tag> #n: ...` (n from 1).
    pub fn blocks<R>(&mut self, tag: &str, mut read: impl FnMut(&mut Params) -> R) -> Vec<R> {
        let mut out = Vec::new();
        for (i, xml) in self.xml.elements(tag).into_iter().enumerate() {
            let mut inner = Params { xml, system: String::new(), problems: Vec::new() };
            out.push(read(&mut inner));
            self.problems.extend(inner.problems.into_iter().map(|p| format!("<{tag}> #{}: {p}", i + 1)));
        }
        out
    }

    /// Non-empty texts of every `<tag>`, in order.
    pub fn texts(&self, tag: &str) -> Vec<String> {
        self.xml.texts(tag).into_iter().filter(|t| !t.is_empty()).collect()
    }

    /// `<tag>` parsed as `T`, or `default` when absent; unparsable text is a problem.
    pub fn value<T: FromStr>(&mut self, tag: &str, default: T) -> T {
        self.optional(tag).unwrap_or(default)
    }

    /// `<tag>` parsed as `T` when present; unparsable text is a problem.
    pub fn optional<T: FromStr>(&mut self, tag: &str) -> Option<T> {
        let text = self.xml.text(tag)?;
        match text.parse() {
            Ok(v) => Some(v),
            Err(_) => {
                let kind = std::any::type_name::<T>().rsplit("::").next().unwrap_or("value");
                self.problems.push(format!("<{tag}> must be a {}, found {text:?}", describe(kind)));
                None
            }
        }
    }

    /// A finite number `<tag>` (or `default`): NaN and infinities are problems.
    pub fn number(&mut self, tag: &str, default: f64) -> f64 {
        self.optional_number(tag).unwrap_or(default)
    }

    /// A finite number `<tag>` when present.
    pub fn optional_number(&mut self, tag: &str) -> Option<f64> {
        let v: f64 = self.optional(tag)?;
        if v.is_finite() {
            Some(v)
        } else {
            self.problems.push(format!("<{tag}> must be a finite number, found {v}"));
            None
        }
    }

    /// A number `<tag>` (or `default`) that must be greater than zero.
    pub fn positive(&mut self, tag: &str, default: f64) -> f64 {
        let v = self.number(tag, default);
        if v > 0.0 {
            v
        } else {
            self.problems.push(format!("<{tag}> must be greater than 0, found {v}"));
            default
        }
    }

    /// Three finite numbers `x y z` in `<tag>`.
    pub fn vec3(&mut self, tag: &str) -> Option<plugin_api::math::Vec3> {
        let text = self.xml.text(tag)?;
        let parsed = parse_vec3(&text);
        if parsed.is_none() {
            self.problems.push(format!("<{tag}> must be three finite numbers \"x y z\", found {text:?}"));
        }
        parsed
    }

    /// A topic `<tag>` as gz-transport scopes it, or `default` when absent.
    pub fn topic(&mut self, tag: &str, default: &str) -> String {
        match self.xml.text(tag) {
            None => default.to_string(),
            Some(raw) => match crate::topic_name(&raw) {
                Ok(t) => t,
                Err(e) => {
                    self.problems.push(format!("<{tag}>: {e}"));
                    default.to_string()
                }
            },
        }
    }

    /// Done reading: `Ok` if nothing was wrong, else one error listing every problem.
    pub fn finish(self) -> Result<(), Error> {
        if self.problems.is_empty() {
            return Ok(());
        }
        Err(Error(format!("{}: {}", self.system, self.problems.join("; "))))
    }
}

/// `x y z`, three finite numbers separated by spaces.
pub fn parse_vec3(text: &str) -> Option<plugin_api::math::Vec3> {
    let v: Vec<f64> = text.split_whitespace().map(str::parse).collect::<Result<_, _>>().ok()?;
    match v[..] {
        [x, y, z] if v.iter().all(|a| a.is_finite()) => Some(plugin_api::math::Vec3::new(x, y, z)),
        _ => None,
    }
}

fn describe(kind: &str) -> &str {
    match kind {
        "f64" | "f32" => "number",
        "bool" => "boolean (true/false/1/0)",
        "u32" | "u64" | "usize" => "non-negative integer",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_problem_is_reported_with_its_element() {
        let mut p = Params::parse(
            "<plugin><wheel_radius>-1</wheel_radius><wheel_separation>wide</wheel_separation><x>nan</x></plugin>",
            "DiffDrive on model \"v\"",
        )
        .unwrap();
        assert_eq!(p.positive("wheel_radius", 0.2), 0.2);
        assert_eq!(p.number("wheel_separation", 1.0), 1.0);
        assert!(p.texts("left_joint").is_empty());
        assert_eq!(p.number("x", 3.0), 3.0);
        assert_eq!(p.number("absent", 4.0), 4.0);
        let e = p.finish().unwrap_err().0;
        for part in [
            "DiffDrive on model \"v\"",
            "<wheel_radius> must be greater than 0",
            "<wheel_separation> must be a number, found \"wide\"",
            "<x> must be a finite number",
        ] {
            assert!(e.contains(part), "{e:?} lacks {part:?}");
        }
    }

    #[test]
    fn problems_inside_blocks_say_which_block() {
        let mut p = Params::parse("<plugin><persistent><force>1 2 3</force></persistent><persistent><force>1 x 3</force></persistent></plugin>", "S").unwrap();
        let forces = p.blocks("persistent", |b| b.vec3("force"));
        assert_eq!(forces.len(), 2);
        assert!(forces[0].is_some() && forces[1].is_none());
        let e = p.finish().unwrap_err().0;
        assert!(e.contains("<persistent> #2: <force> must be three finite numbers"), "{e}");
    }

    #[test]
    fn good_parameters_pass() {
        let mut p = Params::parse("<plugin><topic>cmd</topic><v>1 2 3</v><b>true</b></plugin>", "S").unwrap();
        assert_eq!(p.topic("topic", "/d"), "/cmd");
        assert_eq!(p.vec3("v"), Some(plugin_api::math::Vec3::new(1.0, 2.0, 3.0)));
        assert!(p.value("b", false));
        assert!(p.finish().is_ok());
    }
}
