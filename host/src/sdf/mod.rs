//! SDFormat (1.6–1.11) parser: world files and model snippets into an [`SdfDocument`].
//!
//! Errors name the file, the 1-based line (and column for malformed XML) and the problem;
//! non-fatal findings (unknown elements, unsupported features) are collected in
//! [`SdfDocument::warnings`], each starting with `file:line:`. No input makes it panic.

mod ctx;
mod dom;
mod entities;
mod geometry;
mod parse;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_files;

pub use dom::*;

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
pub fn parse_file(path: &Path) -> Result<SdfDocument, SdfError> {
    let bytes = std::fs::read(path)
        .map_err(|source| SdfError::Io { path: path.to_path_buf(), source })?;
    match String::from_utf8(bytes) {
        Ok(text) => parse_text(&text, Arc::new(path.to_path_buf())),
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
/// example `<create request>`).
pub fn parse_str(text: &str, label: &str) -> Result<SdfDocument, SdfError> {
    parse_text(text, Arc::new(PathBuf::from(label)))
}

fn parse_text(text: &str, file: Arc<PathBuf>) -> Result<SdfDocument, SdfError> {
    let doc = crate::xml::read(text).map_err(|f| SdfError::Xml {
        file: (*file).clone(),
        line: f.pos.line,
        column: f.pos.column,
        message: f.message,
    })?;
    let mut ctx = ctx::Ctx::new(file.clone(), &doc);
    if !doc.exact {
        ctx.warnings.push(format!(
            "{}: element positions could not be matched to the text exactly; lines may be off",
            file.display()
        ));
    }
    parse::document(&mut ctx, &doc.root)
}
