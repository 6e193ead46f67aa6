//! Reading a system's parameters from its `<plugin>` element.

use std::str::FromStr;

/// A malformed plugin element or parameter, with a message naming it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XmlError(pub String);

impl std::fmt::Display for XmlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for XmlError {}

/// The plugin element, parsed; children are looked up by tag name.
#[derive(Debug)]
pub struct PluginXml {
    root: xmltree::Element,
}

impl PluginXml {
    /// Parses the XML a system receives in [`crate::ConfigureContext::xml`]. Namespace
    /// prefixes used without a declaration (gz-sim worlds write `<gz:system_priority>`
    /// without declaring `gz`) are accepted.
    pub fn parse(xml: &str) -> Result<PluginXml, XmlError> {
        let wrapped =
            format!("<troupe-plugin-xml {}>{}</troupe-plugin-xml>", declare_prefixes(xml), strip_declaration(xml));
        let wrapper = xmltree::Element::parse(wrapped.as_bytes())
            .map_err(|e| XmlError(format!("plugin XML is malformed: {e}")))?;
        wrapper
            .children
            .into_iter()
            .find_map(|n| match n {
                xmltree::XMLNode::Element(e) => Some(PluginXml { root: e }),
                _ => None,
            })
            .ok_or_else(|| XmlError("plugin XML holds no element".into()))
    }
    /// An attribute of the `<plugin>` element (`name`, `filename`...).
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.root.attributes.get(name).map(String::as_str)
    }
    /// The trimmed text of the first child element `tag`.
    pub fn text(&self, tag: &str) -> Option<String> {
        self.root.get_child(tag).and_then(|c| c.get_text()).map(|t| t.trim().to_string())
    }
    /// The first child `tag` parsed as `T`: `Ok(None)` if absent, an error naming the tag
    /// and the text if it does not parse.
    pub fn value<T: FromStr>(&self, tag: &str) -> Result<Option<T>, XmlError> {
        match self.text(tag) {
            None => Ok(None),
            Some(t) => t
                .parse()
                .map(Some)
                .map_err(|_| XmlError(format!("<{tag}> must be a {}, found {t:?}", std::any::type_name::<T>()))),
        }
    }
    /// Every child element `tag`, in order, each readable like the plugin element itself
    /// (for parameters that are blocks, such as gz-sim's `<persistent>` wrenches).
    pub fn elements(&self, tag: &str) -> Vec<PluginXml> {
        self.root
            .children
            .iter()
            .filter_map(|n| n.as_element())
            .filter(|e| e.name == tag)
            .map(|e| PluginXml { root: e.clone() })
            .collect()
    }
    /// Texts of every child element `tag`, in order.
    pub fn texts(&self, tag: &str) -> Vec<String> {
        self.root
            .children
            .iter()
            .filter_map(|n| n.as_element())
            .filter(|e| e.name == tag)
            .filter_map(|e| e.get_text().map(|t| t.trim().to_string()))
            .collect()
    }
}

fn strip_declaration(xml: &str) -> &str {
    let t = xml.trim_start();
    match (t.starts_with("<?xml"), t.find("?>")) {
        (true, Some(end)) => &t[end + 2..],
        _ => t,
    }
}

/// `xmlns:p="urn:troupe:p"` for every prefix `p` used in a tag name of `xml`.
fn declare_prefixes(xml: &str) -> String {
    let mut prefixes: Vec<&str> = Vec::new();
    for (i, _) in xml.match_indices('<') {
        let rest = xml[i + 1..].trim_start_matches('/');
        let name_end = rest.find(|c: char| c.is_whitespace() || c == '>' || c == '/').unwrap_or(rest.len());
        if let Some((prefix, _)) = rest[..name_end].split_once(':') {
            let valid = !prefix.is_empty() && prefix.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-');
            if valid && prefix != "xml" && !prefixes.contains(&prefix) && !xml.contains(&format!("xmlns:{prefix}=")) {
                prefixes.push(prefix);
            }
        }
    }
    prefixes.iter().map(|p| format!("xmlns:{p}=\"urn:troupe:{p}\"")).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_parameters_with_undeclared_gz_prefix() {
        let x = PluginXml::parse(
            r#"<?xml version="1.0"?><plugin filename="f" name="n"><gz:system_priority>-5</gz:system_priority><every>3</every><tag>a</tag><tag>b</tag></plugin>"#,
        )
        .unwrap();
        assert_eq!(x.attribute("name"), Some("n"));
        assert_eq!(x.value::<u32>("every").unwrap(), Some(3));
        assert_eq!(x.texts("tag"), vec!["a", "b"]);
        assert_eq!(x.value::<u32>("missing").unwrap(), None);
        let x = PluginXml::parse("<plugin><block><a>1</a></block><block><a>2</a></block><other/></plugin>").unwrap();
        let blocks = x.elements("block");
        assert_eq!(blocks.iter().map(|b| b.text("a").unwrap()).collect::<Vec<_>>(), ["1", "2"]);
        assert!(x.elements("missing").is_empty());
    }

    #[test]
    fn bad_values_and_malformed_xml_are_errors_with_reasons() {
        let x = PluginXml::parse("<plugin><every>often</every></plugin>").unwrap();
        let e = x.value::<u32>("every").unwrap_err();
        assert!(e.0.contains("<every>") && e.0.contains("often"), "{e}");
        assert!(PluginXml::parse("<plugin><every>").unwrap_err().0.contains("malformed"));
    }
}
