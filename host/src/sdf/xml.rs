//! The XML layer: an `xmltree` tree with the source position of every element, tolerance
//! for undeclared namespace prefixes (`<gz:policies>`), and deterministic serialisation.
//!
//! The tree is built in a single pass over `xml` (xml-rs) reader events. The n-th
//! `StartElement` event gets the position of the n-th start tag found by [`super::scan`],
//! and the n-th element of a depth-first, document-order walk of the tree is the element
//! built from the n-th `StartElement`.

use std::collections::{BTreeMap, HashMap};
use super::scan::{positions, scan};
use xml::common::Position;
use xml::reader::{ErrorKind, EventReader, ParserConfig, XmlEvent};
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

/// A parsed document: the root element and the position of every element in it.
pub(crate) struct XmlDoc {
    /// Boxed so that its address, a key of `positions`, survives moves of `XmlDoc`.
    pub root: Box<Element>,
    positions: HashMap<usize, Pos>,
    /// Whether the positions come from the exact source scan (always, in practice).
    pub exact: bool,
}

impl XmlDoc {
    /// Where `el` (an element of this tree) starts; line 0 if it is not of this tree.
    pub fn pos(&self, el: &Element) -> Pos {
        self.positions.get(&key(el)).copied().unwrap_or_default()
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

/// Parses `text` into a tree with positions.
pub(crate) fn read(text: &str) -> Result<XmlDoc, XmlFailure> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let scan = scan(text);
    // Declare prefixes the document uses undeclared, on the root start tag (same line).
    let decl: String = scan
        .undeclared
        .iter()
        .map(|p| format!(" xmlns:{p}=\"{UNDECLARED_NS}{p}\""))
        .collect();
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
    let fix = |p: xml::common::TextPosition| -> Pos {
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
            Err(e) => return Err(failure(&e, &stack, fix(e.position()))),
        };
        match event {
            XmlEvent::StartElement { name, attributes, namespace } => {
                let pos = scan.starts.get(reported.len()).copied().unwrap_or_default();
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
    let starts = if exact { scan.starts } else { reported };
    let positions = order.iter().zip(starts).map(|(el, pos)| (key(el), pos)).collect();
    Ok(XmlDoc { root, positions, exact })
}

fn failure(e: &xml::reader::Error, stack: &[(Element, Pos)], pos: Pos) -> XmlFailure {
    let eof = match e.kind() {
        ErrorKind::UnexpectedEof => true,
        ErrorKind::Syntax(m) => m.starts_with("Unexpected end of stream"),
        _ => false,
    };
    let message = match (e.kind(), stack.last()) {
        (_, Some((el, open))) if eof => format!(
            "unexpected end of document: <{}> opened at line {} is not closed",
            qname(el),
            open.line
        ),
        _ if eof => "unexpected end of document".to_string(),
        (ErrorKind::Syntax(m), _) => lower_first(m),
        (ErrorKind::Io(io), _) => io.to_string(),
        (ErrorKind::Utf8(u), _) => u.to_string(),
        _ => lower_first(&e.to_string()),
    };
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

/// Serialises `el` and its content as XML text: attributes in name order, namespace
/// declarations for every prefix used inside, comments kept, no XML declaration.
pub(crate) fn to_string(el: &Element) -> String {
    let mut prefixes = BTreeMap::new();
    collect_prefixes(el, &mut prefixes);
    let mut out = String::new();
    write_element(el, &prefixes, &mut out);
    out
}

fn collect_prefixes(el: &Element, out: &mut BTreeMap<String, String>) {
    if let (Some(p), Some(ns)) = (&el.prefix, &el.namespace) {
        out.entry(p.clone()).or_insert_with(|| ns.clone());
    }
    for child in elements(el) {
        collect_prefixes(child, out);
    }
}

fn write_element(el: &Element, decls: &BTreeMap<String, String>, out: &mut String) {
    let name = qname(el);
    out.push('<');
    out.push_str(&name);
    for (p, ns) in decls {
        out.push_str(&format!(" xmlns:{p}=\"{}\"", escape(ns, true)));
    }
    let mut attrs: Vec<_> = el.attributes.iter().collect();
    attrs.sort();
    for (k, v) in attrs {
        out.push_str(&format!(" {k}=\"{}\"", escape(v, true)));
    }
    if el.children.is_empty() {
        out.push_str("/>");
        return;
    }
    out.push('>');
    let none = BTreeMap::new();
    for node in &el.children {
        match node {
            XMLNode::Element(child) => write_element(child, &none, out),
            XMLNode::Text(t) | XMLNode::CData(t) => out.push_str(&escape(t, false)),
            XMLNode::Comment(c) => out.push_str(&format!("<!--{c}-->")),
            XMLNode::ProcessingInstruction(..) => {}
        }
    }
    out.push_str("</");
    out.push_str(&name);
    out.push('>');
}

fn escape(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\t' if attribute => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}
