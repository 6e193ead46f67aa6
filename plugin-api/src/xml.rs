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
pub struct PluginXml {
    root: xmltree::Element,
}

impl PluginXml {
    /// Parses the XML a system receives in [`crate::ConfigureContext::xml`].
    pub fn parse(xml: &str) -> Result<PluginXml, XmlError> {
        xmltree::Element::parse(xml.as_bytes())
            .map(|root| PluginXml { root })
            .map_err(|e| XmlError(format!("plugin XML is malformed: {e}")))
    }
    /// An attribute of the `<plugin>` element (`name`, `filename`...).
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.root.attributes.get(name).map(String::as_str)
    }
    /// The trimmed text of the first child element `tag`.
    pub fn text(&self, tag: &str) -> Option<String> {
        self.root
            .get_child(tag)
            .and_then(|c| c.get_text())
            .map(|t| t.trim().to_string())
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
