//! Just enough of an SDF text to name what `create` makes: the first `<model>`, `<light>` or
//! `<actor>` start tag (the top-level entity; nested ones come after it) and its `name`
//! attribute, which a rename rewrites in place. Everything else is left to the host's SDF
//! parser, which reports malformed input with line and column.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// The top-level entity's start tag.
#[derive(Debug, PartialEq)]
pub struct Top {
    /// `model`, `light` or `actor`.
    pub kind: String,
    /// Its `name` attribute (entities `&lt;` etc. decoded), empty if absent.
    pub name: String,
    /// Where the attribute's value is in the text, or where to insert one after the tag name.
    value: Result<Range<usize>, usize>,
}

fn skip_past(text: &str, from: usize, end: &str) -> Option<usize> {
    text[from..].find(end).map(|i| from + i + end.len())
}

/// Finds the top-level `<model>`, `<light>` or `<actor>` of an SDF text.
pub fn top(text: &str) -> Result<Top, String> {
    let mut i = 0;
    while let Some(off) = text[i..].find('<') {
        let at = i + off;
        let rest = &text[at..];
        let next = if rest.starts_with("<!--") {
            skip_past(text, at, "-->")
        } else if rest.starts_with("<![CDATA[") {
            skip_past(text, at, "]]>")
        } else if rest.starts_with("<?") {
            skip_past(text, at, "?>")
        } else if rest.starts_with("<!") || rest.starts_with("</") {
            skip_past(text, at, ">")
        } else {
            let name_end =
                rest[1..].find(|c: char| c.is_whitespace() || c == '/' || c == '>').map_or(rest.len(), |n| n + 1);
            let tag = &rest[1..name_end];
            let (attrs, end) = attributes(text, at + name_end)?;
            if matches!(tag, "model" | "light" | "actor") {
                let value = attrs.into_iter().find(|(n, _)| n == "name").map(|(_, r)| r);
                let name = value.as_ref().map_or(String::new(), |r| unescape(&text[r.clone()]));
                return Ok(Top { kind: tag.to_string(), name, value: value.ok_or(at + name_end) });
            }
            Some(end)
        };
        i = next.ok_or_else(|| format!("the SDF ends inside a tag or comment that starts at byte {at}"))?;
    }
    Err("the SDF has no <model>, <light> or <actor>".into())
}

/// Attribute names with the ranges of their values.
type Attributes = Vec<(String, Range<usize>)>;

/// The attributes of a start tag from `from` (just after its name) to its `>`: names with
/// value ranges, and the index past the `>`.
fn attributes(text: &str, from: usize) -> Result<(Attributes, usize), String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = from;
    let unterminated = || format!("the SDF ends inside the tag before byte {from}");
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        match bytes.get(i) {
            None => return Err(unterminated()),
            Some(b'>') => return Ok((out, i + 1)),
            Some(b'/') => i += 1,
            Some(_) => {
                let start = i;
                while i < bytes.len() && !matches!(bytes[i], b'=' | b'>' | b'/') && !bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                let name = text[start..i].to_string();
                while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                if bytes.get(i) != Some(&b'=') {
                    continue;
                }
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                let quote = *bytes.get(i).ok_or_else(unterminated)?;
                if quote != b'"' && quote != b'\'' {
                    return Err(format!("attribute {name:?} at byte {start}: its value is not quoted"));
                }
                let v_start = i + 1;
                let v_end = text[v_start..].find(quote as char).map(|n| v_start + n).ok_or_else(unterminated)?;
                out.push((name, v_start..v_end));
                i = v_end + 1;
            }
        }
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&apos;")
}

/// `text` with the top-level entity named `name`.
pub fn renamed(text: &str, top: &Top, name: &str) -> String {
    match &top.value {
        Ok(range) => format!("{}{}{}", &text[..range.start], escape(name), &text[range.end..]),
        Err(at) => format!("{} name=\"{}\"{}", &text[..*at], escape(name), &text[*at..]),
    }
}

/// Where an `sdf_filename` is: the path as given (a file, or a model directory holding
/// `model.sdf`), `file://` and `model://` prefixes stripped, else under each directory of
/// `GZ_SIM_RESOURCE_PATH` and `SDF_PATH`.
pub fn resolve(filename: &str) -> Result<PathBuf, String> {
    let plain = filename.strip_prefix("file://").unwrap_or(filename);
    let relative = plain.strip_prefix("model://");
    let as_file = |p: &Path| -> Option<PathBuf> {
        if p.is_file() {
            Some(p.to_path_buf())
        } else if p.is_dir() && p.join("model.sdf").is_file() {
            Some(p.join("model.sdf"))
        } else {
            None
        }
    };
    if relative.is_none() {
        if let Some(p) = as_file(Path::new(plain)) {
            return Ok(p);
        }
    }
    let rel = relative.unwrap_or(plain);
    let dirs: Vec<PathBuf> = ["GZ_SIM_RESOURCE_PATH", "SDF_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .flat_map(|v| std::env::split_paths(&v).collect::<Vec<_>>())
        .collect();
    if !Path::new(rel).is_absolute() {
        for dir in &dirs {
            if let Some(p) = as_file(&dir.join(rel)) {
                return Ok(p);
            }
        }
    }
    Err(format!("sdf_filename {filename:?}: no such file (nor a model directory with model.sdf), also not under GZ_SIM_RESOURCE_PATH or SDF_PATH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_top_level_model_past_comments_and_declarations() {
        let text = r#"<?xml version="1.0"?><!-- <model name="no"> --><sdf version='1.9'>
            <model name='box'><link name="l"><light name="inner"/></link></model></sdf>"#;
        let t = top(text).unwrap();
        assert_eq!((t.kind.as_str(), t.name.as_str()), ("model", "box"));
        let r = renamed(text, &t, "box_0");
        assert!(r.contains("<model name='box_0'>"), "{r}");
        assert!(r.contains("<light name=\"inner\"/>"), "{r}");
    }

    #[test]
    fn a_nameless_light_gets_a_name_attribute_and_names_are_escaped() {
        let text = "<sdf><light type=\"point\"/></sdf>";
        let t = top(text).unwrap();
        assert_eq!((t.kind.as_str(), t.name.as_str()), ("light", ""));
        assert_eq!(renamed(text, &t, "a<b"), "<sdf><light name=\"a&lt;b\" type=\"point\"/></sdf>");
    }

    #[test]
    fn non_ascii_names_and_attributes_are_read_whole() {
        // 'Å' is C3 85 in UTF-8; 0x85 read as a Latin-1 char would be whitespace (NEL).
        let text = "<sdf><model Åttr=\"x\" name=\"bÅx…\"><link name=\"l\"/></model></sdf>";
        let t = top(text).unwrap();
        assert_eq!(t.name, "bÅx…");
        assert_eq!(renamed(text, &t, "ÅÅ"), "<sdf><model Åttr=\"x\" name=\"ÅÅ\"><link name=\"l\"/></model></sdf>");
    }

    #[test]
    fn no_prefix_of_a_document_makes_the_scanner_panic() {
        let texts = [
            "<?xml version='1.0'?><!-- c --><sdf><![CDATA[<model name='no'>]]><model name = 'bÅx' a=\"1\"/></sdf>",
            "<sdf><light type=\"spot\"></light></sdf>",
            "<a b=c><model/>",
        ];
        for text in texts {
            for (end, _) in text.char_indices().chain([(text.len(), ' ')]) {
                let prefix = &text[..end];
                if let Ok(t) = top(prefix) {
                    let _ = renamed(prefix, &t, "n");
                }
            }
        }
        assert_eq!(top(texts[0]).unwrap().name, "bÅx");
    }

    #[test]
    fn text_without_an_entity_or_with_a_broken_tag_is_refused() {
        assert!(top("<sdf><world name='w'/></sdf>").unwrap_err().contains("no <model>"));
        assert!(top("<sdf><model name='x").unwrap_err().contains("ends inside"));
        assert!(top("<sdf><!-- never closed").unwrap_err().contains("ends inside"));
        assert!(top("<model name=x>").unwrap_err().contains("not quoted"));
    }
}
