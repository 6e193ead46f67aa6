//! A light lexer over the source text: where every element begins and ends, and which
//! namespace prefixes are used without a declaration on the root element.
//!
//! xml-rs reports event positions that lag behind after comments, doctypes and the
//! synthesised `StartDocument` (measured with xml 1.4: a root element without XML
//! declaration is reported at the end of its start tag, an element after a comment at the
//! comment's start), so element positions come from this scan instead. The scan only has to
//! be right for text xml-rs accepted: there, `<` outside comments, CDATA sections,
//! processing instructions, the doctype and quoted attribute values always opens a tag, and
//! end tags close the open elements in reverse order.

use super::Pos;
use std::collections::{BTreeSet, HashSet};

/// What the scan found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// Position of each start tag's `<`, in document order.
    pub starts: Vec<Pos>,
    /// Byte offset of each start tag's `<`, in document order.
    pub offsets: Vec<usize>,
    /// Byte range of each element, in document order: from the `<` of its start tag to just
    /// past the `>` of its end tag (of the start tag for `<x/>`); `None` if never closed.
    pub spans: Vec<Option<(usize, usize)>>,
    /// Byte offset just after the root element's name.
    pub root_name_end: Option<usize>,
    /// Prefixes used on element or attribute names but not declared on the root element
    /// (never `xml` or `xmlns`).
    pub undeclared: BTreeSet<String>,
}

/// Scans `text` (without byte-order mark).
pub(crate) fn scan(text: &str) -> Scan {
    let mut out = Scan::default();
    let mut used = BTreeSet::new();
    let mut root_declared = HashSet::new();
    let mut offsets: Vec<usize> = Vec::new();
    // Indices (into `out.spans`) of the elements whose end tag is still to come.
    let mut open = Vec::new();
    let mut i = 0;
    while let Some(off) = text.get(i..).and_then(|t| t.find('<')) {
        let at = i + off;
        let rest = &text[at..];
        let skip_to = |end: &str| rest.find(end).map(|e| at + e + end.len());
        let next = if rest.starts_with("<!--") {
            skip_to("-->")
        } else if rest.starts_with("<![CDATA[") {
            skip_to("]]>")
        } else if rest.starts_with("<?") {
            skip_to("?>")
        } else if rest.starts_with("<!") {
            skip_doctype(rest).map(|e| at + e)
        } else if rest.starts_with("</") {
            let end = skip_to(">");
            if let (Some(e), Some(k)) = (end, open.pop()) {
                close(&mut out.spans, &offsets, k, e);
            }
            end
        } else {
            let k = out.spans.len();
            offsets.push(at);
            out.spans.push(None);
            let is_root = out.root_name_end.is_none();
            let (end, name_end) = scan_start_tag(text, at + 1, |name| {
                if let Some(p) = name.strip_prefix("xmlns:") {
                    if is_root {
                        root_declared.insert(p.to_string());
                    }
                } else if let Some((p, _)) = name.split_once(':') {
                    if p != "xml" && p != "xmlns" && valid_prefix(p) {
                        used.insert(p.to_string());
                    }
                }
            });
            if is_root {
                out.root_name_end = Some(name_end);
            }
            match end {
                Some(e) if text.get(..e).is_some_and(|t| t.ends_with("/>")) => close(&mut out.spans, &offsets, k, e),
                _ => open.push(k),
            }
            end
        };
        match next {
            Some(n) if n > i => i = n,
            _ => break,
        }
    }
    out.undeclared = used.into_iter().filter(|p| !root_declared.contains(p)).collect();
    out.starts = positions(text, &offsets);
    out.offsets = offsets;
    out
}

/// The name of the tag whose `<` is at byte `at`, as written.
pub(crate) fn tag_name(text: &str, at: usize) -> &str {
    let is_delim = |c: char| c.is_whitespace() || matches!(c, '/' | '>' | '=' | '"' | '\'');
    let rest = text.get(at + 1..).unwrap_or("");
    rest.get(..rest.find(is_delim).unwrap_or(rest.len())).unwrap_or("")
}

/// Records that element `k` (its start tag at byte `starts[k]`) ends just before byte `end`.
fn close(spans: &mut [Option<(usize, usize)>], starts: &[usize], k: usize, end: usize) {
    if let (Some(span), Some(&start)) = (spans.get_mut(k), starts.get(k)) {
        *span = Some((start, end));
    }
}

/// `<!DOCTYPE ...>` possibly with an internal subset `[...]`; returns the length.
pub(crate) fn skip_doctype(rest: &str) -> Option<usize> {
    let gt = rest.find('>')?;
    match rest.find('[') {
        Some(open) if open < gt => {
            let close = open + rest.get(open..)?.find(']')?;
            Some(close + rest.get(close..)?.find('>')? + 1)
        }
        _ => Some(gt + 1),
    }
}

/// 1-based line and column (in characters) of each byte offset; `offsets` ascending. Like
/// xml-rs, `\r\n`, `\n` and a lone `\r` each end a line.
pub(crate) fn positions(text: &str, offsets: &[usize]) -> Vec<Pos> {
    let mut out = Vec::with_capacity(offsets.len());
    let bytes = text.as_bytes();
    let (mut line, mut line_start, mut from) = (1usize, 0usize, 0usize);
    for &off in offsets {
        let Some(chunk) = text.get(from..off) else { break };
        for (k, b) in chunk.bytes().enumerate() {
            let at = from + k;
            if b == b'\n' || (b == b'\r' && bytes.get(at + 1) != Some(&b'\n')) {
                line += 1;
                line_start = at + 1;
            }
        }
        from = off;
        let column = text.get(line_start..off).map_or(0, |s| s.chars().count()) + 1;
        out.push(Pos {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        });
    }
    out
}

fn valid_prefix(p: &str) -> bool {
    let mut chars = p.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Scans the start tag whose name begins at byte `from`, calling `seen(name)` for the
/// element name and each attribute name. Returns the byte offset after the tag (None if
/// unterminated) and the offset just after the element name.
fn scan_start_tag(text: &str, from: usize, mut seen: impl FnMut(&str)) -> (Option<usize>, usize) {
    let is_delim = |c: char| c.is_whitespace() || matches!(c, '/' | '>' | '=' | '"' | '\'');
    let rest = text.get(from..).unwrap_or("");
    let name_len = rest.find(is_delim).unwrap_or(rest.len());
    seen(&rest[..name_len]);
    let name_end = from + name_len;
    let mut i = name_end;
    loop {
        let rest = text.get(i..).unwrap_or("");
        let Some(c) = rest.chars().next() else { return (None, name_end) };
        if c == '>' {
            return (Some(i + 1), name_end);
        } else if c == '"' || c == '\'' {
            match rest[1..].find(c) {
                Some(e) => i += e + 2,
                None => return (None, name_end),
            }
        } else if is_delim(c) {
            i += c.len_utf8();
        } else {
            let len = rest.find(is_delim).unwrap_or(rest.len());
            seen(&rest[..len]);
            i += len;
        }
    }
}
