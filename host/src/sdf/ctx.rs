//! Parsing context (file, positions, ordinals, warnings) and value readers: numbers,
//! vectors, booleans, colours and poses, each failing with file, line and the text.

use super::dom::{Origin, PoseSdf};
use super::include::ModelPaths;
use super::SdfError;
use crate::xml::{elements, qname, XmlDoc};
use plugin_api::math::{Pose, Quat, Vec3};
use std::path::PathBuf;
use std::sync::Arc;
use xmltree::Element;

pub(crate) type Result<T> = std::result::Result<T, SdfError>;

/// What the walk over one document carries. An `<include>` walks the included file with a
/// context of its own that continues the ordinals, warnings and include stack of this one.
pub(crate) struct Ctx<'a> {
    pub file: Arc<PathBuf>,
    pub doc: &'a XmlDoc,
    /// The last ordinal handed out.
    pub last_ordinal: u64,
    pub warnings: Vec<String>,
    /// Where `model://` URIs are looked up.
    pub paths: Arc<ModelPaths>,
    /// The files being read, outermost first (this one last when it is a file): an include
    /// of one of them is a cycle.
    pub stack: Vec<PathBuf>,
}

impl<'a> Ctx<'a> {
    pub fn new(file: Arc<PathBuf>, doc: &'a XmlDoc, paths: Arc<ModelPaths>) -> Self {
        Ctx { file, doc, last_ordinal: 0, warnings: Vec::new(), paths, stack: Vec::new() }
    }

    /// The next entity ordinal (1-based).
    pub fn ordinal(&mut self) -> u64 {
        self.last_ordinal += 1;
        self.last_ordinal
    }

    pub fn line(&self, el: &Element) -> u32 {
        self.doc.pos(el).line
    }

    pub fn origin(&self, el: &Element) -> Origin {
        Origin { file: self.file.clone(), line: self.line(el) }
    }

    /// Records a warning `file:line: message` about `el`.
    pub fn warn(&mut self, el: &Element, message: impl std::fmt::Display) {
        let w = format!("{}: {message}", self.origin(el));
        self.warnings.push(w);
    }

    /// An error `file:line: message` about `el`.
    pub fn error(&self, el: &Element, message: impl Into<String>) -> SdfError {
        SdfError::Invalid { file: (*self.file).clone(), line: self.line(el), message: message.into() }
    }

    /// Warns that `child` of `parent` is not part of SDFormat as Troupe reads it.
    pub fn unknown(&mut self, child: &Element, parent: &Element) {
        let m = format!("unknown element <{}> in <{}>, ignored", qname(child), qname(parent));
        self.warn(child, m);
    }

    /// Warns that `el` is valid SDFormat that Troupe does not support yet.
    pub fn unsupported(&mut self, el: &Element) {
        let m = format!("<{}> is not supported yet, ignored", qname(el));
        self.warn(el, m);
    }

    /// A required attribute.
    pub fn attr(&self, el: &Element, name: &str) -> Result<String> {
        el.attributes
            .get(name)
            .cloned()
            .ok_or_else(|| self.error(el, format!("<{}> needs a `{name}` attribute", qname(el))))
    }

    /// A number in the text of `el`.
    pub fn f64(&self, el: &Element) -> Result<f64> {
        let [v] = self.numbers::<1>(el, "a number")?;
        Ok(v)
    }

    /// A non-negative integer in the text of `el`.
    pub fn u32(&self, el: &Element) -> Result<u32> {
        let t = text(el);
        t.parse().map_err(|_| self.error(el, format!("<{}> needs a non-negative integer, found \"{t}\"", qname(el))))
    }

    /// Exactly `N` whitespace-separated numbers in the text of `el`.
    pub fn numbers<const N: usize>(&self, el: &Element, what: &str) -> Result<[f64; N]> {
        let t = text(el);
        let v = self.number_list(el, &t)?;
        v.try_into().map_err(|_| self.error(el, format!("<{}> needs {what}, found \"{t}\"", qname(el))))
    }

    /// Exactly `N` finite numbers (no NaN, no infinity) in the text of `el`: for values that
    /// flow into the physics, where one NaN spreads to everything it touches.
    pub fn finite_numbers<const N: usize>(&self, el: &Element, what: &str) -> Result<[f64; N]> {
        let v = self.numbers::<N>(el, what)?;
        match v.iter().position(|x| !x.is_finite()) {
            None => Ok(v),
            Some(i) => {
                let t = text(el);
                let tok = t.split_whitespace().nth(i).unwrap_or_default();
                Err(self.error(el, format!("<{}>: \"{tok}\" is not a finite number (in \"{t}\")", qname(el))))
            }
        }
    }

    fn number_list(&self, el: &Element, t: &str) -> Result<Vec<f64>> {
        t.split_whitespace()
            .map(|tok| {
                tok.parse::<f64>()
                    .map_err(|_| self.error(el, format!("<{}>: \"{tok}\" is not a number (in \"{t}\")", qname(el))))
            })
            .collect()
    }

    pub fn vec3(&self, el: &Element) -> Result<Vec3> {
        let [x, y, z] = self.numbers::<3>(el, "three numbers")?;
        Ok(Vec3::new(x, y, z))
    }

    /// Three finite numbers (see [`Ctx::finite_numbers`]).
    pub fn finite_vec3(&self, el: &Element) -> Result<Vec3> {
        let [x, y, z] = self.finite_numbers::<3>(el, "three numbers")?;
        Ok(Vec3::new(x, y, z))
    }

    /// An RGBA colour; three numbers mean alpha 1.
    pub fn color(&self, el: &Element) -> Result<[f64; 4]> {
        let t = text(el);
        match self.number_list(el, &t)?[..] {
            [r, g, b] => Ok([r, g, b, 1.0]),
            [r, g, b, a] => Ok([r, g, b, a]),
            _ => {
                Err(self.error(el, format!("<{}> needs three or four numbers (RGB or RGBA), found \"{t}\"", qname(el))))
            }
        }
    }

    /// `true`/`false`/`1`/`0` (case-insensitive).
    pub fn bool(&self, el: &Element) -> Result<bool> {
        let t = text(el);
        match t.to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            _ => Err(self.error(el, format!("<{}> needs true or false, found \"{t}\"", qname(el)))),
        }
    }

    /// The number in child `name` of `parent`, or `default` if there is none.
    pub fn child_f64(&self, parent: &Element, name: &str, default: f64) -> Result<f64> {
        parent.get_child(name).map_or(Ok(default), |c| self.f64(c))
    }

    /// A `<pose>`: `x y z roll pitch yaw` (radians, or degrees with `degrees="true"`), or
    /// `x y z qx qy qz qw` with `rotation_format="quat_xyzw"`; empty means identity.
    /// `relative_to` is not read here: see [`Ctx::pose_sdf`].
    pub fn pose(&mut self, el: &Element) -> Result<Pose> {
        if el.attributes.get("frame").is_some_and(|f| !f.trim().is_empty()) {
            self.warn(
                el,
                "<pose frame> (SDFormat 1.5/1.6) is not supported; \
                 the pose is taken relative to the default frame (use relative_to)",
            );
        }
        let t = text(el);
        if t.is_empty() {
            return Ok(Pose::IDENTITY);
        }
        let format = el.attributes.get("rotation_format").map_or("euler_rpy", |s| s.trim());
        match format {
            "euler_rpy" => {
                let [x, y, z, r, p, yaw] = self.finite_numbers::<6>(el, "six numbers `x y z roll pitch yaw`")?;
                let degrees = match el.attributes.get("degrees").map(|d| d.trim()) {
                    None | Some("false") | Some("0") => false,
                    Some("true") | Some("1") => true,
                    Some(d) => {
                        return Err(self.error(el, format!("<pose degrees> must be true or false, found \"{d}\"")))
                    }
                };
                let k = if degrees { std::f64::consts::PI / 180.0 } else { 1.0 };
                Ok(Pose::from_xyz_rpy(x, y, z, r * k, p * k, yaw * k))
            }
            "quat_xyzw" => {
                let [x, y, z, qx, qy, qz, qw] = self.finite_numbers::<7>(el, "seven numbers `x y z qx qy qz qw`")?;
                let n = (qx * qx + qy * qy + qz * qz + qw * qw).sqrt();
                if n == 0.0 || !n.is_finite() {
                    return Err(self.error(el, format!("<pose> has an invalid quaternion in \"{t}\"")));
                }
                let rotation = Quat { w: qw, x: qx, y: qy, z: qz }.normalized();
                Ok(Pose { position: Vec3::new(x, y, z), rotation })
            }
            other => {
                Err(self.error(el, format!("<pose rotation_format> must be euler_rpy or quat_xyzw, found \"{other}\"")))
            }
        }
    }

    /// A `<pose>` with its `relative_to` frame, as written.
    pub fn pose_sdf(&mut self, el: &Element) -> Result<PoseSdf> {
        let relative_to = el.attributes.get("relative_to").map(|r| r.trim().to_string());
        Ok(PoseSdf { value: self.pose(el)?, relative_to: relative_to.unwrap_or_default(), origin: self.origin(el) })
    }

    /// The identity pose in the default frame of `owner` (an element without `<pose>`).
    pub fn default_pose(&self, owner: &Element) -> PoseSdf {
        PoseSdf { value: Pose::IDENTITY, relative_to: String::new(), origin: self.origin(owner) }
    }

    /// The first child `<pose>` of `parent` as written (identity if none).
    pub fn child_pose_sdf(&mut self, parent: &Element) -> Result<PoseSdf> {
        match parent.get_child("pose") {
            Some(p) => self.pose_sdf(p),
            None => Ok(self.default_pose(parent)),
        }
    }

    /// Warns about each child of `el` not named in `known` (prefixed custom elements are
    /// SDFormat extensions and pass silently).
    pub fn check_children(&mut self, el: &Element, known: &[&str]) {
        for child in elements(el) {
            if child.prefix.is_none() && !known.contains(&child.name.as_str()) {
                self.unknown(child, el);
            }
        }
    }
}

/// The trimmed text content of `el`.
pub(crate) fn text(el: &Element) -> String {
    el.get_text().map(|t| t.trim().to_string()).unwrap_or_default()
}
