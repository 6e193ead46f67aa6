//! Lenient XML reading with source positions, shared by the server-config parser and
//! [`priority_from_xml`](super::priority_from_xml).
//!
//! Two things the XML crates do not do for us:
//!
//! * **Undeclared prefixes.** Gazebo files write `<gz:system_priority>` or
//!   `<gz:policies>` without ever declaring `xmlns:gz`; `xml-rs` rejects those. The text
//!   is therefore parsed inside a synthetic wrapper element, inserted right before the
//!   root element, that declares every prefix the text seems to use (declaring a prefix
//!   that is never used is harmless, and the document's own declarations still win).
//! * **Positions.** `xmltree` keeps none, so the text is read a second time with
//!   `xml-rs`'s `EventReader`, recording the position of every `StartElement` in
//!   document order: the n-th element of a depth-first walk of the `xmltree` tree is the
//!   n-th recorded start tag. Each record also keeps the byte range of the element in the
//!   source, so the exact text the user wrote can be handed on.

use std::collections::BTreeSet;
use xml::common::Position;
use xml::reader::{EventReader, ParserConfig, XmlEvent};
use xmltree::{Element, XMLNode};

/// Local name of the synthetic wrapper element.
const WRAPPER: &str = "troupe-lenient-xml-wrapper";
/// Deepest element nesting accepted (the tree builder recurses per level).
const MAX_DEPTH: usize = 512;
/// Namespace given to prefixes the document uses without declaring them.
const UNDECLARED_NS: &str = "urn:troupe:undeclared-prefix:";

/// An XML syntax error, with a 1-based position in the caller's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XmlSyntaxError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

/// Where one element was written.
#[derive(Clone, Debug)]
pub(crate) struct Span {
    /// 1-based line of the start tag.
    pub line: u32,
    /// Byte range of the whole element in the wrapped text, when it could be found.
    range: Option<(usize, usize)>,
}

/// A parsed document whose elements can be traced back to the source text.
pub(crate) struct LocatedDocument {
    /// The document's root element (the wrapper is already removed).
    pub root: Element,
    /// One entry per element in depth-first document order; index 0 is the root.
    spans: Vec<Span>,
    /// The wrapped text the spans point into.
    text: String,
}

impl LocatedDocument {
    /// 1-based line of the element with preorder `index` (1 if unknown).
    pub fn line(&self, index: usize) -> u32 {
        self.spans.get(index).map_or(1, |s| s.line)
    }

    /// The exact source text of the element with preorder `index`, from `<` of its start
    /// tag to `>` of its end tag.
    pub fn source(&self, index: usize) -> Option<&str> {
        let (a, b) = self.spans.get(index)?.range?;
        self.text.get(a..b)
    }
}

/// The element children of `parent` paired with their preorder indices, given the
/// preorder index of `parent`.
pub(crate) fn children_indexed(parent: &Element, parent_index: usize) -> Vec<(usize, &Element)> {
    let mut next = parent_index + 1;
    let mut out = Vec::new();
    for child in &parent.children {
        if let XMLNode::Element(e) = child {
            out.push((next, e));
            next += subtree_len(e);
        }
    }
    out
}

/// Number of elements in the subtree rooted at `e` (including `e`).
fn subtree_len(e: &Element) -> usize {
    1 + e
        .children
        .iter()
        .map(|c| match c {
            XMLNode::Element(c) => subtree_len(c),
            _ => 0,
        })
        .sum::<usize>()
}

/// `prefix:name` or `name`, as written.
pub(crate) fn qualified_name(e: &Element) -> String {
    match &e.prefix {
        Some(p) => format!("{p}:{}", e.name),
        None => e.name.clone(),
    }
}

/// Parses `text` (leniently about undeclared prefixes) into its root element only.
pub fn parse_element_lenient(text: &str) -> Result<Element, XmlSyntaxError> {
    parse_located(text).map(|d| d.root)
}

/// Parses `text` into a [`LocatedDocument`]. Multiple root elements, text outside the
/// root, and a document without any element are errors.
pub(crate) fn parse_located(text: &str) -> Result<LocatedDocument, XmlSyntaxError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let wrapped = Wrapped::new(text);
    let spans = record_spans(&wrapped)?;
    let config = ParserConfig::new().ignore_comments(true);
    let nodes = Element::parse_all_with_config(wrapped.text.as_bytes(), config)
        .map_err(|e| wrapped.error_at(0, 0, format!("cannot parse: {e}")))?;
    let wrapper = nodes.into_iter().find_map(|n| match n {
        XMLNode::Element(e) => Some(e),
        _ => None,
    });
    let root = wrapper.and_then(|w| {
        w.children.into_iter().find_map(|n| match n {
            XMLNode::Element(e) => Some(e),
            _ => None,
        })
    });
    let Some(root) = root else {
        return Err(XmlSyntaxError {
            line: 1,
            column: 1,
            message: "no root element".into(),
        });
    };
    if subtree_len(&root) != spans.len() {
        return Err(XmlSyntaxError {
            line: 1,
            column: 1,
            message: "internal error: element positions do not match the parsed tree".into(),
        });
    }
    Ok(LocatedDocument {
        root,
        spans,
        text: wrapped.text,
    })
}

/// The caller's text with the wrapper inserted before the root element.
struct Wrapped {
    text: String,
    /// Byte offset where the original text ends (the closing wrapper tag follows).
    original_end: usize,
    /// 0-based row and column (in the original text) where the wrapper was inserted.
    ins_row: u64,
    ins_col: u64,
    /// Length of the inserted start tag in characters (it has no newlines).
    wrap_len: u64,
    /// Byte offset at which each line of `text` starts.
    line_starts: Vec<usize>,
}

impl Wrapped {
    fn new(original: &str) -> Self {
        let at = prolog_end(original);
        let mut start_tag = format!("<{WRAPPER}");
        for p in used_prefixes(original) {
            start_tag.push_str(&format!(" xmlns:{p}=\"{UNDECLARED_NS}{p}\""));
        }
        start_tag.push('>');
        let mut text = String::with_capacity(original.len() + start_tag.len() + WRAPPER.len() + 3);
        text.push_str(&original[..at]);
        text.push_str(&start_tag);
        text.push_str(&original[at..]);
        let original_end = text.len();
        text.push_str(&format!("</{WRAPPER}>"));
        let line_starts = line_starts(&text);
        let ins_row = line_starts.iter().filter(|&&s| s <= at && s > 0).count() as u64;
        let row_start = line_starts.get(ins_row as usize).copied().unwrap_or(0);
        let ins_col = original
            .get(row_start..at)
            .map_or(0, |s| s.chars().count() as u64);
        Wrapped {
            text,
            original_end,
            ins_row,
            ins_col,
            wrap_len: start_tag.chars().count() as u64,
            line_starts,
        }
    }

    /// Byte offset in `text` of a 0-based (row, column) position reported by `xml-rs`.
    fn byte_of(&self, row: u64, col: u64) -> Option<usize> {
        let start = *self.line_starts.get(usize::try_from(row).ok()?)?;
        let col = usize::try_from(col).ok()?;
        let line = self.text.get(start..)?;
        match line.char_indices().nth(col) {
            Some((i, _)) => Some(start + i),
            None => Some(self.text.len()),
        }
    }

    /// Translates a 0-based wrapped-text position to the 1-based (line, column) of the
    /// caller's text.
    fn user_position(&self, row: u64, col: u64) -> (u32, u32) {
        let col = if row == self.ins_row && col >= self.ins_col + self.wrap_len {
            col - self.wrap_len
        } else if row == self.ins_row && col >= self.ins_col {
            self.ins_col
        } else {
            col
        };
        (to_u32(row + 1), to_u32(col + 1))
    }

    fn error_at(&self, row: u64, col: u64, message: String) -> XmlSyntaxError {
        let (line, column) = self.user_position(row, col);
        XmlSyntaxError {
            line,
            column,
            message,
        }
    }
}

fn to_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// First pass: the position and byte range of every element, in document order.
fn record_spans(w: &Wrapped) -> Result<Vec<Span>, XmlSyntaxError> {
    let mut reader = EventReader::new_with_config(w.text.as_bytes(), ParserConfig::new());
    let mut spans: Vec<Span> = Vec::new();
    // Open elements: (index into spans, start position, name); the wrapper has no index.
    let mut stack: Vec<(Option<usize>, (u64, u64), String)> = Vec::new();
    let mut roots = 0usize;
    loop {
        let event = reader.next();
        let pos = reader.position();
        let here = (pos.row(), pos.column());
        match event {
            Ok(XmlEvent::StartElement { name, .. }) => {
                if stack.is_empty() {
                    stack.push((None, here, String::new()));
                    continue;
                }
                if stack.len() > MAX_DEPTH {
                    return Err(w.error_at(
                        here.0,
                        here.1,
                        format!("elements nested more than {MAX_DEPTH} deep"),
                    ));
                }
                if stack.len() == 1 {
                    roots += 1;
                    if roots > 1 {
                        return Err(w.error_at(here.0, here.1, format!(
                            "a second root element <{name}>; a document has exactly one root element"
                        )));
                    }
                }
                let (line, _) = w.user_position(here.0, here.1);
                let start = w.byte_of(here.0, here.1);
                let range = start
                    .filter(|&s| w.text[s..].starts_with('<'))
                    .map(|s| (s, s));
                stack.push((Some(spans.len()), here, name.to_string()));
                spans.push(Span { line, range });
            }
            Ok(XmlEvent::EndElement { .. }) => {
                if let Some((Some(i), start_pos, _)) = stack.pop() {
                    close_span(w, &mut spans[i], start_pos, here);
                }
            }
            Ok(XmlEvent::Characters(s)) | Ok(XmlEvent::CData(s))
                if stack.len() == 1 && !s.trim().is_empty() =>
            {
                let what = s.trim().chars().take(20).collect::<String>();
                return Err(w.error_at(
                    here.0,
                    here.1,
                    format!("text \"{what}\" outside the root element"),
                ));
            }
            Ok(XmlEvent::EndDocument) => break,
            Ok(_) => {}
            Err(e) => return Err(convert_error(w, &e, &stack)),
        }
    }
    if roots == 0 {
        return Err(XmlSyntaxError {
            line: 1,
            column: 1,
            message: "no root element".into(),
        });
    }
    Ok(spans)
}

/// Completes the byte range of an element once its end tag has been read.
fn close_span(w: &Wrapped, span: &mut Span, start_pos: (u64, u64), end_pos: (u64, u64)) {
    let Some((start, _)) = span.range else { return };
    let end = if end_pos == start_pos {
        // `<x/>`: xml-rs reports the end at the start tag.
        tag_end(&w.text, start)
    } else {
        w.byte_of(end_pos.0, end_pos.1)
            .filter(|&b| w.text[b..].starts_with("</"))
            .and_then(|b| tag_end(&w.text, b))
    };
    span.range = end.map(|e| (start, e));
}

/// Byte offset just past the `>` closing the tag that starts at `from`, skipping quoted
/// attribute values.
fn tag_end(text: &str, from: usize) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in text.get(from..)?.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return Some(from + i + 1),
            _ => {}
        }
    }
    None
}

/// Turns an `xml-rs` error into one about the caller's text, hiding the wrapper.
fn convert_error(
    w: &Wrapped,
    e: &xml::reader::Error,
    stack: &[(Option<usize>, (u64, u64), String)],
) -> XmlSyntaxError {
    let pos = e.position();
    let full = e.to_string();
    let prefix = format!("{pos} ");
    let mut message = full.strip_prefix(&prefix).unwrap_or(&full).to_string();
    let in_trailer = w
        .byte_of(pos.row(), pos.column())
        .is_some_and(|b| b >= w.original_end);
    if message.contains(WRAPPER) || in_trailer {
        message = match stack.last() {
            Some((Some(_), (row, col), name)) => {
                let (line, _) = w.user_position(*row, *col);
                format!("unexpected end of document: <{name}> opened at line {line} is not closed")
            }
            _ if in_trailer => "unexpected end of document".to_string(),
            _ => "unexpected markup outside the root element".to_string(),
        };
    }
    if in_trailer {
        // Report the end of the caller's text rather than a place in the wrapper.
        let (row, col) = end_position(&w.text[..w.original_end]);
        return w.error_at(row, col, message);
    }
    w.error_at(pos.row(), pos.column(), message)
}

/// 0-based (row, column) of the end of `text`, counting newlines like `xml-rs`.
fn end_position(text: &str) -> (u64, u64) {
    let starts = line_starts(text);
    let last = starts.last().copied().unwrap_or(0);
    (
        (starts.len() - 1) as u64,
        text[last..].chars().count() as u64,
    )
}

/// Byte offsets at which lines start; `\r\n`, `\r` and `\n` each end a line (as in
/// `xml-rs`, which normalises line ends).
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\n' => starts.push(i + 1),
            b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(i + 1),
            _ => {}
        }
    }
    starts
}

/// Byte offset where the root element starts: after any XML declaration, processing
/// instructions, comments, DOCTYPE and whitespace.
fn prolog_end(text: &str) -> usize {
    let mut i = 0;
    loop {
        let rest = &text[i..];
        let trimmed = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        let at = i + (rest.len() - trimmed.len());
        let skip = if trimmed.starts_with("<?") {
            trimmed.find("?>").map(|p| p + 2)
        } else if trimmed.starts_with("<!--") {
            trimmed.find("-->").map(|p| p + 3)
        } else if trimmed.starts_with("<!DOCTYPE") {
            doctype_len(trimmed)
        } else {
            None
        };
        match skip {
            Some(n) => i = at + n,
            // Insert before the whitespace run so a root on the same line keeps its column.
            None => return i,
        }
    }
}

/// Length of a `<!DOCTYPE ...>` declaration, internal subset included.
fn doctype_len(text: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            '>' if depth <= 0 => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// Every `NAME` that appears as `NAME:x` right after `<`, `</` or whitespace: a superset
/// of the namespace prefixes used by element and attribute names.
fn used_prefixes(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let boundary = i == 0 || matches!(chars[i - 1], '<' | '/' | ' ' | '\t' | '\r' | '\n');
        if boundary && is_name_start(chars[i]) {
            let start = i;
            while i < chars.len() && is_name_char(chars[i]) {
                i += 1;
            }
            if chars.get(i) == Some(&':') && chars.get(i + 1).is_some_and(|&c| is_name_start(c)) {
                let name: String = chars[start..i].iter().collect();
                if !name.to_ascii_lowercase().starts_with("xml") {
                    out.insert(name);
                }
            }
        } else {
            i += 1;
        }
    }
    out
}

fn is_name_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_name_char(c: char) -> bool {
    c == '_' || c == '-' || c == '.' || c.is_alphanumeric()
}
