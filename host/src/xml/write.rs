//! Deterministic serialisation of a tree read by [`super::read`].

use super::{elements, qname};
use std::collections::BTreeMap;
use xmltree::{Element, XMLNode};

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
