//! `<include>`: finding the included file (`model://` through the model paths, a path
//! relative to the including file, `file://`), reading it with its own positions, and the
//! overrides the `<include>` element carries (`<name>`, `<pose>`, `<static>`, `<plugin>`).
//!
//! The included model's entities are numbered where the `<include>` is written, so ids stay
//! a pure function of the files. Fuel (`http://`, `https://`) URIs are refused: Troupe does
//! not download.

use super::ctx::{text, Ctx, Result};
use super::dom::{LightSdf, ModelSdf};
use super::entities::plugin;
use super::SdfError;
use crate::xml::{elements, qname};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use xmltree::Element;

/// The folders `model://NAME` is looked up in, each holding model folders: the entries of
/// `GZ_SIM_RESOURCE_PATH`, then those of `SDF_PATH` (both `:`-separated).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelPaths {
    dirs: Vec<(PathBuf, &'static str)>,
}

impl ModelPaths {
    /// The paths from the two variables' values (`None` when unset).
    pub fn new(gz_sim_resource_path: Option<&str>, sdf_path: Option<&str>) -> ModelPaths {
        let mut dirs: Vec<(PathBuf, &'static str)> = Vec::new();
        for (value, var) in [(gz_sim_resource_path, "GZ_SIM_RESOURCE_PATH"), (sdf_path, "SDF_PATH")] {
            for entry in value.unwrap_or_default().split(':').filter(|e| !e.trim().is_empty()) {
                let dir = PathBuf::from(entry.trim());
                if !dirs.iter().any(|(d, _)| *d == dir) {
                    dirs.push((dir, var));
                }
            }
        }
        ModelPaths { dirs }
    }

    /// The paths from the environment of this process.
    pub fn from_env() -> ModelPaths {
        let var = |k| std::env::var(k).ok();
        ModelPaths::new(var("GZ_SIM_RESOURCE_PATH").as_deref(), var("SDF_PATH").as_deref())
    }

    /// The folders in search order.
    pub fn dirs(&self) -> impl Iterator<Item = &Path> {
        self.dirs.iter().map(|(d, _)| d.as_path())
    }
}

/// What an included file holds.
pub(crate) enum Included {
    Model(ModelSdf),
    Light(LightSdf),
}

/// Reads `<include>` at `el`: the included file's model or light with the overrides applied.
pub(crate) fn include(ctx: &mut Ctx<'_>, el: &Element) -> Result<Included> {
    let (mut uri, mut name, mut pose, mut is_static) = (None, None, None, None);
    let mut plugins = Vec::new();
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "uri" if uri.is_none() => uri = Some(text(child)),
            "name" if name.is_none() => name = Some(text(child)),
            "pose" if pose.is_none() => pose = Some(ctx.pose_sdf(child)?),
            "static" if is_static.is_none() => is_static = Some(ctx.bool(child)?),
            "plugin" => plugins.push(plugin(ctx, child)?),
            "placement_frame" => {
                ctx.warn(child, "<include><placement_frame> is not supported yet; the pose places the model frame")
            }
            "namespace" => ctx.unsupported(child),
            "uri" | "name" | "pose" | "static" => {
                ctx.warn(child, format!("a second <{}> in <include> is ignored", child.name))
            }
            _ => ctx.unknown(child, el),
        }
    }
    if el.attributes.get("merge").is_some_and(|m| matches!(m.trim(), "true" | "1")) {
        ctx.warn(el, "<include merge> is not supported yet; the model is included as a nested model");
    }
    let uri = uri.filter(|u| !u.is_empty()).ok_or_else(|| ctx.error(el, "<include> needs a <uri>"))?;
    let file = resolve(ctx, el, &uri)?;
    let mut included = read_included(ctx, el, &uri, &file)?;
    match &mut included {
        Included::Model(m) => {
            if let Some(n) = name {
                m.name = n;
            }
            if let Some(p) = pose {
                m.pose = p.value;
                m.raw_pose = p;
            }
            if let Some(s) = is_static {
                m.is_static = s;
            }
            m.plugins.extend(plugins);
        }
        Included::Light(l) => {
            if let Some(n) = name {
                l.name = n;
            }
            if let Some(p) = pose {
                l.pose = p.value;
                l.raw_pose = p;
            }
            if is_static.is_some() || !plugins.is_empty() {
                ctx.warn(el, format!("{uri} is a light: <static> and <plugin> in its <include> are ignored"));
            }
        }
    }
    Ok(included)
}

/// Parses `file` with a context of its own that continues this one's ordinals.
fn read_included(ctx: &mut Ctx<'_>, el: &Element, uri: &str, file: &Path) -> Result<Included> {
    let key = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    if let Some(at) = ctx.stack.iter().position(|f| *f == key) {
        let chain: Vec<String> = ctx.stack[at..].iter().chain([&key]).map(|f| f.display().to_string()).collect();
        return Err(ctx.error(el, format!("<include> of {uri} is a cycle: {}", chain.join(" includes "))));
    }
    let included_from = ctx.origin(el);
    let text = plugin_api::files::read(file, plugin_api::files::TEXT_LIMIT)
        .map_err(|e| ctx.error(el, format!("<include> of {uri}: cannot read {}: {e}", file.display())))
        .and_then(|bytes| {
            String::from_utf8(bytes)
                .map_err(|_| ctx.error(el, format!("<include> of {uri}: {} is not valid UTF-8", file.display())))
        })?;
    let within = |e: SdfError| match e {
        SdfError::Invalid { file, line, message } => {
            SdfError::Invalid { file, line, message: format!("{message} (included from {included_from})") }
        }
        SdfError::Xml { file, line, column, message } => {
            SdfError::Xml { file, line, column, message: format!("{message} (included from {included_from})") }
        }
        io @ SdfError::Io { .. } => io,
    };
    let xml = crate::xml::read(&text).map_err(|f| {
        within(SdfError::Xml { file: file.to_path_buf(), line: f.pos.line, column: f.pos.column, message: f.message })
    })?;
    let mut sub = Ctx::new(Arc::new(file.to_path_buf()), &xml, ctx.paths.clone());
    sub.last_ordinal = ctx.last_ordinal;
    sub.stack = std::mem::take(&mut ctx.stack);
    sub.stack.push(key);
    let result = super::parse::included(&mut sub, &xml.root);
    sub.stack.pop();
    ctx.stack = std::mem::take(&mut sub.stack);
    ctx.last_ordinal = sub.last_ordinal;
    ctx.warnings.append(&mut sub.warnings);
    result.map_err(within)
}

/// The SDF file `uri` names: a file, or a model folder's file (see [`model_file`]).
fn resolve(ctx: &Ctx<'_>, el: &Element, uri: &str) -> Result<PathBuf> {
    if uri.starts_with("http://") || uri.starts_with("https://") {
        return Err(ctx.error(
            el,
            format!(
                "<include> of {uri}: Fuel downloads are not supported (Troupe does not use the \
                 network); download the model and add its parent folder to GZ_SIM_RESOURCE_PATH"
            ),
        ));
    }
    let mut searched = Vec::new();
    if let Some(rest) = uri.strip_prefix("model://") {
        let (name, sub) = rest.split_once('/').unwrap_or((rest, ""));
        if name.is_empty() {
            return Err(ctx.error(el, format!("<include> of {uri}: the URI names no model")));
        }
        for (dir, var) in &ctx.paths.dirs {
            let folder = dir.join(name);
            if folder.exists() {
                let target = if sub.is_empty() { folder } else { folder.join(sub) };
                return model_file(ctx, el, uri, &target);
            }
            searched.push(format!("{} ({var})", dir.display()));
        }
        let searched = if searched.is_empty() {
            "nothing: GZ_SIM_RESOURCE_PATH and SDF_PATH are both unset or empty".to_string()
        } else {
            searched.join(", ")
        };
        return Err(ctx.error(el, format!("<include>: model \"{name}\" of {uri} not found; searched {searched}")));
    }
    if let Some((scheme, _)) = uri.split_once("://").filter(|(s, _)| *s != "file") {
        return Err(ctx.error(
            el,
            format!("<include> of {uri}: unsupported URI scheme \"{scheme}://\" (use model://, file:// or a path)"),
        ));
    }
    let path = Path::new(uri.strip_prefix("file://").unwrap_or(uri));
    let mut candidates = Vec::new();
    if path.is_absolute() {
        candidates.push((path.to_path_buf(), "absolute path"));
    } else {
        // Relative to the including file's folder (the working directory for SDF given as
        // text), then to each model path, as SDFormat's findFile does.
        let base = match ctx.stack.last() {
            Some(_) => ctx.file.parent().map(Path::to_path_buf).unwrap_or_default(),
            None => PathBuf::new(),
        };
        candidates.push((base.join(path), "relative to the including file"));
        candidates.extend(ctx.paths.dirs.iter().map(|(d, var)| (d.join(path), *var)));
    }
    for (candidate, _) in &candidates {
        if candidate.exists() {
            return model_file(ctx, el, uri, candidate);
        }
    }
    let searched: Vec<String> = candidates.iter().map(|(c, why)| format!("{} ({why})", c.display())).collect();
    Err(ctx.error(el, format!("<include>: {uri} not found; tried {}", searched.join(", "))))
}

/// `path` itself if it is a file; for a model folder, the file its `model.config` names
/// (the highest `<sdf version>`), else its `model.sdf`.
fn model_file(ctx: &Ctx<'_>, el: &Element, uri: &str, path: &Path) -> Result<PathBuf> {
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    let config = path.join("model.config");
    if config.is_file() {
        if let Some(file) = config_sdf(&config)? {
            return Ok(file);
        }
    }
    let fallback = path.join("model.sdf");
    if fallback.is_file() {
        return Ok(fallback);
    }
    let has_config = if config.is_file() { "model.config names no <sdf> file" } else { "no model.config" };
    Err(ctx.error(
        el,
        format!("<include> of {uri}: the model folder {} has {has_config} and no model.sdf", path.display()),
    ))
}

/// The SDF file of highest `<sdf version>` that `model.config` names, if it names any.
fn config_sdf(config: &Path) -> Result<Option<PathBuf>> {
    let invalid = |line: u32, message: String| SdfError::Invalid { file: config.to_path_buf(), line, message };
    let source = plugin_api::files::read_to_string(config, plugin_api::files::TEXT_LIMIT)
        .map_err(|source| SdfError::Io { path: config.to_path_buf(), source })?;
    let xml = crate::xml::read(&source).map_err(|f| SdfError::Xml {
        file: config.to_path_buf(),
        line: f.pos.line,
        column: f.pos.column,
        message: f.message,
    })?;
    if xml.root.name != "model" {
        let found = qname(&xml.root);
        return Err(invalid(xml.pos(&xml.root).line, format!("expected the root element <model>, found <{found}>")));
    }
    let mut best: Option<(Vec<u32>, &Element)> = None;
    for sdf in elements(&xml.root).filter(|c| c.prefix.is_none() && c.name == "sdf") {
        let written = sdf.attributes.get("version").map(|v| v.trim()).unwrap_or_default();
        // An unversioned entry ranks lowest; "1.10" ranks above "1.9".
        let version: Vec<u32> = written.split('.').map(|p| p.parse().unwrap_or(0)).collect();
        if text(sdf).is_empty() {
            return Err(invalid(xml.pos(sdf).line, "<sdf> in model.config names no file".into()));
        }
        if best.as_ref().is_none_or(|(v, _)| version > *v) {
            best = Some((version, sdf));
        }
    }
    let Some((_, sdf)) = best else { return Ok(None) };
    let file = config.parent().unwrap_or(Path::new("")).join(text(sdf));
    if !file.is_file() {
        return Err(invalid(xml.pos(sdf).line, format!("model.config names {}, which is not a file", file.display())));
    }
    Ok(Some(file))
}
