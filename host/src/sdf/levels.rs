//! `<level>` and `<performer>` inside the world's `<plugin name="gz::sim">` (or
//! `ignition::gazebo`) element, and the checks that need the whole world: refs to names the
//! world lacks, two performers on one model, a performer with no volume.
//!
//! Problems are collected and reported together, each with its file and line.

use super::ctx::{text, Ctx, Result};
use super::dom::{LevelSdf, ModelSdf, PerformerSdf, WorldSdf};
use super::SdfError;
use crate::xml::elements;
use plugin_api::components::Geometry;
use plugin_api::math::Vec3;
use std::collections::{BTreeMap, HashSet};
use xmltree::Element;

/// Problems found so far; each is `file:line: message`.
#[derive(Default)]
pub(crate) struct Problems {
    first: Option<(u32, String)>,
    all: Vec<String>,
}

impl Problems {
    fn add(&mut self, ctx: &Ctx<'_>, el: &Element, message: impl Into<String>) {
        let message = message.into();
        if self.first.is_none() {
            self.first = Some((ctx.line(el), message.clone()));
        }
        self.all.push(format!("{}: {message}", ctx.origin(el)));
    }

    fn take_error(&mut self, error: SdfError) {
        let message = error.to_string();
        if let SdfError::Invalid { line, message: m, .. } = &error {
            if self.first.is_none() {
                self.first = Some((*line, m.clone()));
            }
        }
        self.all.push(message);
    }

    /// One error listing every problem (the first gives the line), or `Ok`.
    pub(crate) fn into_result(self, ctx: &Ctx<'_>) -> Result<()> {
        let Some((line, first)) = self.first else { return Ok(()) };
        let message = if self.all.len() == 1 {
            first
        } else {
            format!("{first}\n  and {} more:\n  {}", self.all.len() - 1, self.all[1..].join("\n  "))
        };
        Err(SdfError::Invalid { file: (*ctx.file).clone(), line, message })
    }
}

/// Reads the `<level>`s and `<performer>`s of the levels plugin element into `w`, numbering
/// each (their ordinals are their entity ids).
pub(crate) fn read_plugin(ctx: &mut Ctx<'_>, el: &Element, w: &mut WorldSdf, problems: &mut Problems) -> Result<()> {
    for child in elements(el) {
        match (child.prefix.as_deref(), child.name.as_str()) {
            (None, "level") => {
                let ordinal = ctx.ordinal();
                match level(ctx, child, ordinal, problems) {
                    Ok(Some(l)) => w.levels.push(l),
                    Ok(None) => {}
                    Err(e) => problems.take_error(e),
                }
            }
            (None, "performer") => {
                let ordinal = ctx.ordinal();
                match performer(ctx, child, ordinal, problems) {
                    Ok(Some(p)) => w.performers.push(p),
                    Ok(None) => {}
                    Err(e) => problems.take_error(e),
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// `<geometry><box><size>`: `Ok(None)` (with a problem recorded) when it is not a box.
fn box_size(ctx: &mut Ctx<'_>, geometry: &Element, owner: &str, problems: &mut Problems) -> Result<Option<Vec3>> {
    let mut found = None;
    for shape in elements(geometry) {
        match (shape.prefix.as_deref(), shape.name.as_str()) {
            (Some(_), _) => {}
            (None, "box") if found.is_none() => {
                let size = match shape.get_child("size") {
                    Some(s) => ctx.vec3(s)?,
                    None => Vec3::new(1.0, 1.0, 1.0),
                };
                if size.x < 0.0 || size.y < 0.0 || size.z < 0.0 {
                    problems.add(
                        ctx,
                        shape,
                        format!("{owner}: <box><size> must not be negative, found {} {} {}", size.x, size.y, size.z),
                    );
                    return Ok(None);
                }
                found = Some(size);
            }
            // gz-sim's own levels.sdf puts a <buffer> inside a performer's <geometry>.
            (None, "buffer") => ctx.warn(shape, format!("{owner}: <buffer> inside <geometry> is ignored")),
            (None, other) => {
                problems.add(ctx, shape, format!("{owner}: only <box> geometry is supported, found <{other}>"));
                return Ok(None);
            }
        }
    }
    if found.is_none() {
        problems.add(ctx, geometry, format!("{owner}: <geometry> needs a <box>"));
    }
    Ok(found)
}

fn level(ctx: &mut Ctx<'_>, el: &Element, ordinal: u64, problems: &mut Problems) -> Result<Option<LevelSdf>> {
    let name = ctx.attr(el, "name")?;
    let owner = format!("<level name=\"{name}\">");
    let origin = ctx.origin(el);
    let mut level =
        LevelSdf { ordinal, name, pose: Default::default(), size: Vec3::ZERO, buffer: 0.0, refs: Vec::new(), origin };
    let (mut geometry, mut ok) = (None, true);
    for child in elements(el) {
        match (child.prefix.as_deref(), child.name.as_str()) {
            (Some(_), _) => {}
            (None, "pose") => level.pose = ctx.pose(child)?,
            (None, "geometry") if geometry.is_none() => {
                geometry = Some(child);
                match box_size(ctx, child, &owner, problems)? {
                    Some(size) => level.size = size,
                    None => ok = false,
                }
            }
            (None, "buffer") => match text(child).parse::<f64>() {
                Ok(b) if b.is_finite() && b >= 0.0 => level.buffer = b,
                Ok(b) if b < 0.0 => {
                    ctx.warn(child, format!("{owner}: negative <buffer> {b} is read as 0"));
                    level.buffer = 0.0;
                }
                _ => {
                    problems.add(
                        ctx,
                        child,
                        format!("{owner}: <buffer> needs a number of metres, found \"{}\"", text(child)),
                    );
                    ok = false;
                }
            },
            (None, "ref") => {
                let r = text(child);
                if r.is_empty() {
                    ctx.warn(child, format!("{owner}: an empty <ref> is ignored"));
                } else if level.refs.contains(&r) {
                    ctx.warn(child, format!("{owner}: <ref>{r}</ref> is listed twice"));
                } else {
                    level.refs.push(r);
                }
            }
            (None, _) => ctx.unknown(child, el),
        }
    }
    if geometry.is_none() {
        problems.add(ctx, el, format!("{owner} has no <geometry><box>: a level is a box"));
        ok = false;
    }
    Ok(ok.then_some(level))
}

fn performer(ctx: &mut Ctx<'_>, el: &Element, ordinal: u64, problems: &mut Problems) -> Result<Option<PerformerSdf>> {
    let name = ctx.attr(el, "name")?;
    let owner = format!("<performer name=\"{name}\">");
    let origin = ctx.origin(el);
    let (mut refs, mut size, mut ok) = (Vec::new(), None, true);
    for child in elements(el) {
        match (child.prefix.as_deref(), child.name.as_str()) {
            (Some(_), _) => {}
            (None, "ref") => refs.push(text(child)),
            (None, "geometry") if size.is_none() => match box_size(ctx, child, &owner, problems)? {
                Some(s) => size = Some(s),
                None => ok = false,
            },
            (None, _) => ctx.unknown(child, el),
        }
    }
    match refs.as_slice() {
        [one] if !one.is_empty() => {}
        [] => {
            problems.add(ctx, el, format!("{owner} has no <ref>: name the model it is"));
            ok = false;
        }
        [_] => {
            problems.add(ctx, el, format!("{owner} has an empty <ref>"));
            ok = false;
        }
        many => {
            problems.add(
                ctx,
                el,
                format!("{owner} has {} <ref>s ({}); a performer is one model", many.len(), many.join(", ")),
            );
            ok = false;
        }
    }
    Ok(ok.then(|| PerformerSdf { ordinal, name, model: refs.remove(0), size, origin }))
}

/// The checks that need the whole world, once it is read. `el` is the levels plugin element
/// (its children give the lines).
pub(crate) fn check_world(ctx: &mut Ctx<'_>, el: &Element, w: &mut WorldSdf, mut problems: Problems) -> Result<()> {
    let line_of = |kind: &str, name: &str| -> &Element {
        elements(el)
            .find(|c| c.name == kind && c.attributes.get("name").map(String::as_str) == Some(name))
            .unwrap_or(el)
    };
    let mut top: HashSet<&str> = w.models.iter().map(|m| m.name.as_str()).collect();
    top.extend(w.lights.iter().map(|l| l.name.as_str()));
    top.extend(w.joints.iter().map(|j| j.name.as_str()));

    // Performers: a model of the world, one performer each, with a volume.
    let mut by_model: BTreeMap<String, String> = BTreeMap::new();
    let mut kept = Vec::new();
    for p in std::mem::take(&mut w.performers) {
        let at = line_of("performer", &p.name);
        let Some(model) = w.models.iter().find(|m| m.name == p.model) else {
            let what = if top.contains(p.model.as_str()) { "is not a model" } else { "names nothing in the world" };
            ctx.warn(
                at,
                format!("<performer name=\"{}\">: <ref>{}</ref> {what}; the performer is dropped", p.name, p.model),
            );
            continue;
        };
        if let Some(first) = by_model.get(&p.model) {
            problems.add(ctx, at, format!(
                "<performer name=\"{}\"> refers to model {:?}, which performer {first:?} already is; one performer per model",
                p.name, p.model
            ));
            continue;
        }
        if p.size.is_none() && !has_collision(model) {
            problems.add(
                ctx,
                at,
                format!(
                    "<performer name=\"{}\"> gives no <geometry> and its model {:?} has no <collision> to size it by \
                 (a box, sphere, cylinder, capsule or ellipsoid; meshes and planes do not count)",
                    p.name, p.model
                ),
            );
            continue;
        }
        by_model.insert(p.model.clone(), p.name.clone());
        kept.push(p);
    }
    w.performers = kept;

    // Level refs: names of top-level entities; a performer's model is always loaded.
    for level in &mut w.levels {
        let at = line_of("level", &level.name);
        let mut refs = Vec::new();
        for r in std::mem::take(&mut level.refs) {
            if !top.contains(r.as_str()) {
                ctx.warn(
                    at,
                    format!("<level name=\"{}\">: <ref>{r}</ref> names nothing in the world; ignored", level.name),
                );
            } else if let Some(perf) = by_model.get(&r) {
                ctx.warn(at, format!(
                    "<level name=\"{}\">: <ref>{r}</ref> is performer {perf:?}'s model, which is always loaded; ignored",
                    level.name
                ));
            } else {
                refs.push(r);
            }
        }
        level.refs = refs;
    }
    let mut names = HashSet::new();
    for level in &w.levels {
        if !names.insert(level.name.as_str()) {
            ctx.warn(line_of("level", &level.name), format!("two levels are named {:?}", level.name));
        }
    }
    problems.into_result(ctx)
}

/// Whether the model or a nested model has a collision whose extent is known without
/// reading files (meshes) and is finite (planes).
fn has_collision(m: &ModelSdf) -> bool {
    m.links
        .iter()
        .flat_map(|l| &l.collisions)
        .any(|c| !matches!(c.geometry, Geometry::Empty | Geometry::Mesh { .. } | Geometry::Plane { .. }))
        || m.models.iter().any(has_collision)
}
