//! XML reading shared by the SDFormat parser ([`crate::sdf`]) and the server-config parser
//! ([`crate::config`]): an `xmltree` tree with the source position and the exact source text
//! of every element, tolerance for undeclared namespace prefixes (`<gz:policies>`), and
//! deterministic serialisation ([`to_string`]).
//!
//! What libsdformat's reader (tinyxml2) accepts and xml-rs refuses is rewritten first, keeping
//! every character's line and column ([`repair`]): `--` inside comments, whitespace or several
//! declarations before the root, a declaration missing its `<`, names with one `::`. The
//! source text of an element is that of the repaired document, so it is well-formed XML.
//!
//! The tree is built in a single pass over `xml` (xml-rs) reader events. The n-th
//! `StartElement` event gets the position (and byte range) of the n-th element found by
//! [`scan`], and the n-th element of a depth-first, document-order walk of the tree is the
//! element built from the n-th `StartElement`.
//!
//! Prefixes used but not declared on the root element get a placeholder declaration
//! (namespace `urn:troupe:undeclared-prefix:PREFIX`) injected right after the root element's
//! name; error columns on that line are shifted back, so every position reported is one in
//! the caller's text.
//!
//! A document has exactly one root element: a second one is an error (xml-rs would accept it).

mod repair;
mod scan;
mod write;

#[cfg(test)]
mod tests;

pub(crate) use write::to_string;

use ::xml::common::{Position, TextPosition};
use ::xml::reader::{ErrorKind, EventReader, ParserConfig, XmlEvent};
use repair::repair;
use scan::{positions, scan, tag_name};
use std::collections::HashMap;
use std::fmt;
use xmltree::{Element, XMLNode};

/// Namespace given to prefixes the document uses without declaring them.
const UNDECLARED_NS: &str = "urn:troupe:undeclared-prefix:";

/// Deepest element nesting accepted; deeper input is refused rather than risking the stack
/// in the recursive walks (and drops) of the tree. SDFormat needs a few dozen levels.
const MAX_DEPTH: usize = 256;

/// A 1-based line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pos {
    pub line: u32,
    pub column: u32,
}

/// Malformed XML: where and what.
#[derive(Debug)]
pub(crate) struct XmlFailure {
    pub pos: Pos,
    pub message: String,
}

/// An XML syntax error, with a 1-based position in the caller's text (returned by
/// [`parse_element_lenient`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XmlSyntaxError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

impl From<XmlFailure> for XmlSyntaxError {
    fn from(f: XmlFailure) -> Self {
        XmlSyntaxError { line: f.pos.line, column: f.pos.column, message: f.message }
    }
}

impl fmt::Display for XmlSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for XmlSyntaxError {}

/// Where one element was written.
#[derive(Clone, Copy, Debug)]
struct Located {
    /// Its start tag's `<`.
    pos: Pos,
    /// Byte range in `XmlDoc::text`, when known.
    span: Option<(usize, usize)>,
}

/// A parsed document: the root element, and the position and source text of every element
/// in it.
pub(crate) struct XmlDoc {
    /// Boxed so that its address, a key of `located`, survives moves of `XmlDoc`.
    pub root: Box<Element>,
    located: HashMap<usize, Located>,
    /// The text read (without byte-order mark, repaired), which the spans point into.
    text: String,
    /// Whether the positions come from the exact source scan (always, in practice).
    pub exact: bool,
}

impl XmlDoc {
    /// Where `el` (an element of this tree) starts; line 0 if it is not of this tree.
    pub fn pos(&self, el: &Element) -> Pos {
        self.located.get(&key(el)).map(|l| l.pos).unwrap_or_default()
    }

    /// The exact source text of `el` (an element of this tree), from the `<` of its start
    /// tag to the `>` of its end tag (of the start tag for `<x/>`), as [`repair`]ed (a `--`
    /// in a comment or a `::` in a name rewritten). `None` if `el` is not of
    /// this tree or the positions are not [`exact`](Self::exact).
    pub fn source(&self, el: &Element) -> Option<&str> {
        let (start, end) = self.located.get(&key(el))?.span?;
        self.text.get(start..end)
    }
}

fn key(el: &Element) -> usize {
    el as *const Element as usize
}

/// The child elements of `el`, in document order.
pub(crate) fn elements(el: &Element) -> impl Iterator<Item = &Element> {
    el.children.iter().filter_map(XMLNode::as_element)
}

/// The element's name as written: `prefix:name` or `name`.
pub(crate) fn qname(el: &Element) -> String {
    match &el.prefix {
        Some(p) => format!("{p}:{}", el.name),
        None => el.name.clone(),
    }
}

/// Elements in depth-first document order (pre-order), the order of their start tags.
pub(crate) fn walk<'a>(el: &'a Element, out: &mut Vec<&'a Element>) {
    out.push(el);
    for child in elements(el) {
        walk(child, out);
    }
}

/// Parses `text` (a leading byte-order mark is dropped) into a tree with the position and
/// source text of every element, accepting what libsdformat's tinyxml2 accepts
/// ([`repair`]).
pub(crate) fn read(text: &str) -> Result<XmlDoc, XmlFailure> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let repaired = repair(text);
    let text: &str = &repaired;
    let scan = scan(text);
    // Declare prefixes the document uses undeclared, on the root start tag (same line).
    let decl: String = scan.undeclared.iter().map(|p| format!(" xmlns:{p}=\"{UNDECLARED_NS}{p}\"")).collect();
    let (source, inject_at) = match scan.root_name_end {
        Some(at) if !decl.is_empty() && text.is_char_boundary(at) => {
            let mut s = String::with_capacity(text.len() + decl.len());
            s.push_str(&text[..at]);
            s.push_str(&decl);
            s.push_str(&text[at..]);
            (std::borrow::Cow::Owned(s), positions(text, &[at]).first().copied())
        }
        _ => (std::borrow::Cow::Borrowed(text), None),
    };
    let decl_chars = u32::try_from(decl.chars().count()).unwrap_or(u32::MAX);
    // Positions xml-rs gives (errors only) are in the text with the declarations injected.
    let fix = |p: TextPosition| -> Pos {
        let line = u32::try_from(p.row.saturating_add(1)).unwrap_or(u32::MAX);
        let mut column = u32::try_from(p.column.saturating_add(1)).unwrap_or(u32::MAX);
        if let Some(at) = inject_at {
            if line == at.line && column > at.column {
                column = column.saturating_sub(decl_chars).max(at.column);
            }
        }
        Pos { line, column }
    };
    let config = ParserConfig::new().ignore_comments(false).cdata_to_characters(true);
    let mut reader = EventReader::new_with_config(source.as_bytes(), config);
    let mut stack: Vec<(Element, Pos)> = Vec::new();
    let mut reported = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let event = match reader.next() {
            Ok(e) => e,
            Err(e) => {
                let pos = fix(e.position());
                // After the root: a second root start tag the scan saw before the place of
                // the error (often its prefix, declared on the first root only) is the cause.
                let k = reported.len();
                let before = |s: &&Pos| (s.line, s.column) <= (pos.line, pos.column);
                let next = scan.starts.get(k).filter(before).zip(scan.offsets.get(k));
                if let (true, Some((&at, &off))) = (stack.is_empty() && root.is_some(), next) {
                    return Err(second_root(tag_name(text, off), at));
                }
                return Err(failure(&e, &stack, pos));
            }
        };
        match event {
            XmlEvent::StartElement { name, attributes, namespace } => {
                let pos = scan.starts.get(reported.len()).copied().unwrap_or_default();
                if stack.is_empty() && root.is_some() {
                    let name = match &name.prefix {
                        Some(p) => format!("{p}:{}", name.local_name),
                        None => name.local_name,
                    };
                    return Err(second_root(&name, pos));
                }
                if stack.len() >= MAX_DEPTH {
                    let message = format!("elements are nested more than {MAX_DEPTH} deep");
                    return Err(XmlFailure { pos, message });
                }
                reported.push(fix(reader.position()));
                let mut el = Element::new(&name.local_name);
                el.prefix = name.prefix;
                el.namespace = name.namespace;
                el.namespaces = (!namespace.is_essentially_empty()).then_some(namespace);
                for a in attributes {
                    el.attributes.insert(a.name.local_name, a.value);
                }
                stack.push((el, pos));
            }
            XmlEvent::EndElement { .. } => {
                if let Some((el, _)) = stack.pop() {
                    match stack.last_mut() {
                        Some((parent, _)) => parent.children.push(XMLNode::Element(el)),
                        None => root = Some(el),
                    }
                }
            }
            XmlEvent::Characters(s) | XmlEvent::Whitespace(s) => push(&mut stack, XMLNode::Text(s)),
            XmlEvent::CData(s) => push(&mut stack, XMLNode::CData(s)),
            XmlEvent::Comment(s) => push(&mut stack, XMLNode::Comment(s)),
            XmlEvent::EndDocument => break,
            _ => {}
        }
    }
    let root = Box::new(root.ok_or_else(|| XmlFailure {
        pos: Pos { line: 1, column: 1 },
        message: "the document has no root element".into(),
    })?);
    let mut order = Vec::with_capacity(reported.len());
    walk(&root, &mut order);
    // The scan and xml-rs agree on every document xml-rs accepts (tested); should they ever
    // not, the positions xml-rs reports (less exact) are used rather than misattributed ones.
    let exact = scan.starts.len() == order.len();
    let located = if exact {
        let at = scan.starts.into_iter().zip(scan.spans);
        order.iter().zip(at).map(|(el, (pos, span))| (key(el), Located { pos, span })).collect()
    } else {
        let at = reported.into_iter().map(|pos| Located { pos, span: None });
        order.iter().zip(at).map(|(el, l)| (key(el), l)).collect()
    };
    Ok(XmlDoc { root, located, text: text.to_owned(), exact })
}

/// Parses `text` into its root element, leniently about undeclared namespace prefixes
/// (`<gz:system_priority>` without `xmlns:gz`; such prefixes get the namespace
/// `urn:troupe:undeclared-prefix:PREFIX`). The text must be one well-formed element,
/// optionally with an XML declaration, comments and whitespace around it.
pub fn parse_element_lenient(text: &str) -> Result<Element, XmlSyntaxError> {
    read(text).map(|doc| *doc.root).map_err(XmlSyntaxError::from)
}

fn failure(e: &::xml::reader::Error, stack: &[(Element, Pos)], pos: Pos) -> XmlFailure {
    let eof = match e.kind() {
        ErrorKind::UnexpectedEof => true,
        ErrorKind::Syntax(m) => m.starts_with("Unexpected end of stream"),
        _ => false,
    };
    let message = match (e.kind(), stack.last()) {
        (_, Some((el, open))) if eof => {
            format!("unexpected end of document: <{}> opened at line {} is not closed", qname(el), open.line)
        }
        _ if eof => "unexpected end of document".to_string(),
        (ErrorKind::Syntax(m), _) => lower_first(m),
        (ErrorKind::Io(io), _) => io.to_string(),
        (ErrorKind::Utf8(u), _) => u.to_string(),
        _ => lower_first(&e.to_string()),
    };
    XmlFailure { pos, message }
}

fn second_root(name: &str, pos: Pos) -> XmlFailure {
    let message = format!("a second root element <{name}>; a document has exactly one root element");
    XmlFailure { pos, message }
}

fn push(stack: &mut [(Element, Pos)], node: XMLNode) {
    if let Some((el, _)) = stack.last_mut() {
        el.children.push(node);
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}
