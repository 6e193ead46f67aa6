//! SDFormat (1.6–1.11) parser: world files and model snippets into an [`SdfDocument`].
//!
//! Errors name the file, the 1-based line (and column for malformed XML) and the problem;
//! non-fatal findings (unknown elements, unsupported features) are collected in
//! [`SdfDocument::warnings`], each starting with `file:line:`. No input makes it panic.
//!
//! Reading is two passes: the XML walk builds the DOM (including `<include>`d files, numbered
//! in place), then [`frames`] resolves every `<pose relative_to>` and `<frame>` into poses
//! relative to each entity's parent entity.

mod ctx;
mod dom;
mod entities;
mod environment;
mod frames;
mod geometry;
mod include;
mod levels;
mod parse;
mod surface;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_files;
#[cfg(test)]
mod tests_frames;
#[cfg(test)]
mod tests_include;

pub use dom::*;
pub use include::ModelPaths;

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a document could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SdfError {
    /// The file could not be read.
    #[error("{}: cannot read the file: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The text is not well-formed XML.
    #[error("{}:{line}:{column}: malformed XML: {message}", .file.display())]
    Xml {
        /// The file (or the label given to [`parse_str`]).
        file: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What the XML parser found.
        message: String,
    },
    /// Well-formed XML that is not valid SDFormat (bad number, unknown joint type...).
    #[error("{}:{line}: {message}", .file.display())]
    Invalid {
        /// The file (or the label given to [`parse_str`]).
        file: PathBuf,
        /// 1-based line of the offending element.
        line: u32,
        /// What is wrong.
        message: String,
    },
}

impl SdfError {
    /// The 1-based line the error is about, if it is about a place in the text.
    pub fn line(&self) -> Option<u32> {
        match self {
            SdfError::Io { .. } => None,
            SdfError::Xml { line, .. } | SdfError::Invalid { line, .. } => Some(*line),
        }
    }
}

/// Reads and parses the SDFormat file at `path`; errors and warnings name it as given.
/// `model://` URIs are looked up in `GZ_SIM_RESOURCE_PATH` then `SDF_PATH`.
pub fn parse_file(path: &Path) -> Result<SdfDocument, SdfError> {
    parse_file_with(path, &ModelPaths::from_env())
}

/// [`parse_file`] with the model paths given rather than read from the environment.
pub fn parse_file_with(path: &Path, paths: &ModelPaths) -> Result<SdfDocument, SdfError> {
    let bytes = plugin_api::files::read(path, plugin_api::files::TEXT_LIMIT)
        .map_err(|source| SdfError::Io { path: path.to_path_buf(), source })?;
    let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    match String::from_utf8(bytes) {
        Ok(text) => parse_text(&text, Arc::new(path.to_path_buf()), paths, Some(key)),
        Err(e) => {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
            Err(SdfError::Invalid {
                file: path.to_path_buf(),
                line: u32::try_from(line).unwrap_or(u32::MAX),
                message: "the file is not valid UTF-8".into(),
            })
        }
    }
}

/// Parses SDFormat given as text; `label` stands for the file in errors and warnings (for
/// example `<create request>`). Relative `<include>` paths are taken from the working
/// directory; `model://` URIs are looked up as for [`parse_file`].
pub fn parse_str(text: &str, label: &str) -> Result<SdfDocument, SdfError> {
    parse_str_with(text, label, &ModelPaths::from_env())
}

/// [`parse_str`] with the model paths given rather than read from the environment.
pub fn parse_str_with(text: &str, label: &str, paths: &ModelPaths) -> Result<SdfDocument, SdfError> {
    parse_text(text, Arc::new(PathBuf::from(label)), paths, None)
}

fn parse_text(
    text: &str,
    file: Arc<PathBuf>,
    paths: &ModelPaths,
    canonical: Option<PathBuf>,
) -> Result<SdfDocument, SdfError> {
    let doc = crate::xml::read(text).map_err(|f| SdfError::Xml {
        file: (*file).clone(),
        line: f.pos.line,
        column: f.pos.column,
        message: f.message,
    })?;
    let mut ctx = ctx::Ctx::new(file.clone(), &doc, Arc::new(paths.clone()));
    ctx.stack.extend(canonical);
    if !doc.exact {
        ctx.warnings.push(format!(
            "{}: element positions could not be matched to the text exactly; lines may be off",
            file.display()
        ));
    }
    let mut sdf = parse::document(&mut ctx, &doc.root)?;
    frames::resolve(&mut sdf)?;
    Ok(sdf)
}
