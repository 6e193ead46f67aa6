//! Parsing and validating server-config XML files.
//!
//! ```xml
//! <server_config>
//!   <plugin_path>relative/or/absolute/dir</plugin_path>   <!-- optional, repeatable -->
//!   <plugins>
//!     <plugin entity_name="*" entity_type="world"
//!             filename="gz-sim-physics-system" name="gz::sim::systems::Physics">
//!       <troupe:roles>primary standalone</troupe:roles>  <!-- optional: see roles.rs -->
//!       ...inner XML handed to the system...
//!     </plugin>
//!   </plugins>
//!   <record>                                               <!-- optional: record a state log -->
//!     <record_path>run.tlog</record_path>                  <!-- the log file -->
//!     <keyframe_interval>1000</keyframe_interval>          <!-- optional, steps -->
//!   </record>
//! </server_config>
//! ```
//!
//! Unlike gz-sim, which skips bad entries silently, every problem is collected and
//! reported at once in one [`ConfigError::Invalid`].

use super::roles::RoleSet;
use super::{ConfigError, Problem};
use crate::xml::{elements, qname, read, to_string, XmlDoc};
use std::fmt;
use std::path::{Path, PathBuf};
use xmltree::{Element, XMLNode};

/// The kind of entity a config plugin attaches to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntityType {
    /// `entity_type="world"`; `entity_name` is a world name or `*`.
    World,
    /// `entity_type="model"`; `entity_name` is a model name.
    Model,
    /// `entity_type="sensor"`; `entity_name` is a scoped name such as
    /// `default::box::link_1::camera`.
    Sensor,
}

impl EntityType {
    /// Parses the `entity_type` attribute value (`world`, `model` or `sensor`).
    pub fn from_attribute(value: &str) -> Option<Self> {
        match value {
            "world" => Some(Self::World),
            "model" => Some(Self::Model),
            "sensor" => Some(Self::Sensor),
            _ => None,
        }
    }

    /// The attribute spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::World => "world",
            Self::Model => "model",
            Self::Sensor => "sensor",
        }
    }
}

impl fmt::Display for EntityType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `<plugin>` of a server config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginSpec {
    /// The `entity_name` attribute (`*` = any world).
    pub entity_name: String,
    /// The `entity_type` attribute.
    pub entity_type: EntityType,
    /// The `filename` attribute (library).
    pub filename: String,
    /// The `name` attribute (class).
    pub name: String,
    /// The whole `<plugin>` element as written in the file, handed to the system. It may
    /// use undeclared prefixes such as `gz:`; read it with a lenient parser.
    pub xml: String,
    /// Where it was written: `file:line`.
    pub origin: String,
    /// Its `<troupe:roles>`: the roles of a distributed run it runs in (`None`: the
    /// default of its kind; see [`super::roles`]).
    pub roles: Option<RoleSet>,
}

/// A parsed server-config file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerConfigFile {
    /// The plugins, in file order.
    pub plugins: Vec<PluginSpec>,
    /// `<plugin_path>` directories, in file order; relative ones are resolved against
    /// the config file's directory.
    pub plugin_paths: Vec<PathBuf>,
    /// `<record>`: write a state log (`--record-path` overrides the path).
    pub record: Option<RecordSpec>,
    /// `<levels>true</levels>`: use levels and performers, as `--levels` does (`None`: not
    /// written; `--levels` turns levels on whatever the file says).
    pub levels: Option<bool>,
    /// `<transport>`: where the server listens and which machines it meets.
    pub transport: Option<TransportSpec>,
    /// `<network>`: this process's part in a distributed run (`--network-role` ...).
    pub network: Option<NetworkSpec>,
}

/// The `<network>` element: the distributed-run settings (`--network-role`,
/// `--network-secondaries`, ...; see `docs/distributed.md`). Each value keeps the line it
/// was written on, so a disagreement with the command line can name it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkSpec {
    /// `<role>`: `primary` or `secondary` (any case), checked here.
    pub role: Option<(String, String)>,
    /// `<secondaries>`: how many secondaries a primary waits for (at least 1).
    pub secondaries: Option<(u32, String)>,
    /// `<token>`: the cluster token (guards against cross-talk; not authentication).
    pub token: Option<(String, String)>,
    /// `<primary>`: the primary's join address on another machine (`tcp://host:port`).
    pub primary: Option<(String, String)>,
    /// `<listen>`: where a primary listens for secondaries on other machines
    /// (`tcp://host:port`; port 0 lets the system pick).
    pub listen: Option<(String, String)>,
    /// `<heartbeat_period_ms>`.
    pub heartbeat_period_ms: Option<u64>,
    /// `<peer_timeout_ms>`.
    pub peer_timeout_ms: Option<u64>,
    /// `<step_timeout_ms>`.
    pub step_timeout_ms: Option<u64>,
    /// `<discovery_timeout_ms>`.
    pub discovery_timeout_ms: Option<u64>,
    /// `<auto_performers>true</auto_performers>`: a distributed run makes every dynamic model
    /// that is not a performer and in no level a performer, instead of refusing the world.
    pub auto_performers: Option<bool>,
    /// Where the element was written: `file:line`.
    pub origin: String,
}

/// The `<transport>` element: how other machines reach this server (`--transport-host`,
/// `--transport-port` and `--peer` on the command line).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransportSpec {
    /// `<host>`: the address to listen on over TCP.
    pub host: Option<String>,
    /// `<port>`: the service socket's port (0: the system picks).
    pub port: Option<u16>,
    /// `<peer>` elements: service addresses of nodes on other machines (`tcp://host:port`).
    pub peers: Vec<String>,
    /// Where it was written: `file:line`.
    pub origin: String,
}

/// The `<record>` element: where to write the state log and how often to put keyframes.
/// gz-sim records with its LogRecord system, whose `<record_path>` this borrows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordSpec {
    /// `<record_path>`: the log file; a relative path is resolved against the config
    /// file's directory.
    pub path: PathBuf,
    /// `<keyframe_interval>`: steps between full states (default 1000).
    pub keyframe_interval: Option<u64>,
    /// Where it was written: `file:line`.
    pub origin: String,
}

/// Reads and parses the server-config file at `path`.
///
/// A missing file is [`ConfigError::NotFound`]; an empty (or whitespace-only) file is a
/// valid config without plugins.
pub fn parse_server_config_file(path: impl AsRef<Path>) -> Result<ServerConfigFile, ConfigError> {
    read_and_parse(path.as_ref(), None)
}

/// Reads and parses `path`; `named_by` says who named the file, for the error message.
pub(crate) fn read_and_parse(path: &Path, named_by: Option<&'static str>) -> Result<ServerConfigFile, ConfigError> {
    let bytes = match plugin_api::files::read(path, plugin_api::files::TEXT_LIMIT) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ConfigError::NotFound { path: path.to_path_buf(), named_by })
        }
        Err(source) => return Err(ConfigError::Io { path: path.to_path_buf(), source }),
    };
    let label = path.display().to_string();
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = 1 + good.iter().filter(|&&b| b == b'\n').count();
            return Err(ConfigError::Invalid {
                problems: vec![Problem {
                    file: label,
                    line: u32::try_from(line).unwrap_or(u32::MAX),
                    column: None,
                    message: "the file is not valid UTF-8".into(),
                }],
            });
        }
    };
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    parse_with_base(&text, &label, Some(&base))
}

/// Parses server-config XML given as a string. `label` names it in origins and errors
/// (e.g. a file name or `<built-in>`). Relative `<plugin_path>` entries are kept as
/// written (relative to the current directory).
pub fn parse_server_config_str(text: &str, label: &str) -> Result<ServerConfigFile, ConfigError> {
    parse_with_base(text, label, None)
}

/// Parses `text`; relative plugin paths are joined to `base` when given.
pub(crate) fn parse_with_base(text: &str, label: &str, base: Option<&Path>) -> Result<ServerConfigFile, ConfigError> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    if body.trim().is_empty() {
        return Ok(ServerConfigFile::default());
    }
    let doc = read(body).map_err(|e| ConfigError::Invalid {
        problems: vec![Problem {
            file: label.to_string(),
            line: e.pos.line,
            column: Some(e.pos.column),
            message: format!("malformed XML: {}", e.message),
        }],
    })?;
    let mut v = Validator { doc: &doc, label, base, problems: Vec::new() };
    let config = v.root();
    if v.problems.is_empty() {
        Ok(config)
    } else {
        Err(ConfigError::Invalid { problems: v.problems })
    }
}

/// Walks the parsed document, collecting the config and every problem.
struct Validator<'a> {
    doc: &'a XmlDoc,
    label: &'a str,
    base: Option<&'a Path>,
    problems: Vec<Problem>,
}

/// The four attributes every `<plugin>` needs, in the order problems are reported.
const REQUIRED: [&str; 4] = ["entity_name", "entity_type", "filename", "name"];

impl Validator<'_> {
    /// 1-based line of `element`'s start tag.
    fn line(&self, element: &Element) -> u32 {
        self.doc.pos(element).line
    }

    fn problem(&mut self, element: &Element, message: String) {
        let line = self.line(element);
        self.problems.push(Problem { file: self.label.to_string(), line, column: None, message });
    }

    fn root(&mut self) -> ServerConfigFile {
        let doc = self.doc;
        let root: &Element = &doc.root;
        let mut config = ServerConfigFile::default();
        if root.prefix.is_some() || root.name != "server_config" {
            let found = qname(root);
            self.problem(root, format!("the root element is <{found}>, expected <server_config>"));
        }
        self.stray_text(root, "server_config");
        let mut plugins_at: Option<&Element> = None;
        for child in elements(root) {
            match (child.prefix.as_deref(), child.name.as_str()) {
                (None, "plugins") => match plugins_at {
                    Some(first) => {
                        let line = self.line(first);
                        self.problem(
                            child,
                            format!(
                                "a second <plugins> element (the first is at line {line}); \
                             put all plugins in one <plugins>"
                            ),
                        );
                    }
                    None => {
                        plugins_at = Some(child);
                        config.plugins = self.plugins(child);
                    }
                },
                (None, "plugin_path") => {
                    if let Some(p) = self.plugin_path(child) {
                        config.plugin_paths.push(p);
                    }
                }
                (None, "record") => match &config.record {
                    Some(first) => {
                        let first = first.origin.clone();
                        self.problem(child, format!("a second <record> element (the first is at {first})"));
                    }
                    None => config.record = self.record(child),
                },
                (None, "transport") => match &config.transport {
                    Some(first) => {
                        let first = first.origin.clone();
                        self.problem(child, format!("a second <transport> element (the first is at {first})"));
                    }
                    None => config.transport = Some(self.transport(child)),
                },
                (None, "levels") => {
                    let text = child.get_text().unwrap_or_default().trim().to_string();
                    match text.as_str() {
                        _ if config.levels.is_some() => self.problem(child, "a second <levels> element".into()),
                        "true" | "1" => config.levels = Some(true),
                        "false" | "0" => config.levels = Some(false),
                        _ => self.problem(child, format!("<levels> is \"{text}\"; expected true or false")),
                    }
                }
                (None, "network") => match &config.network {
                    Some(first) => {
                        let first = first.origin.clone();
                        self.problem(child, format!("a second <network> element (the first is at {first})"));
                    }
                    None => config.network = Some(self.network(child)),
                },
                (None, "plugin") => self.problem(child, "<plugin> must be inside <plugins>".into()),
                _ => {
                    let name = qname(child);
                    self.problem(
                        child,
                        format!(
                            "unknown element <{name}> in <server_config> \
                         (expected <plugins>, <plugin_path>, <record>, <transport>, <levels> or <network>)"
                        ),
                    );
                }
            }
        }
        if plugins_at.is_none() {
            self.problem(root, "missing <plugins> element".into());
        }
        config
    }

    fn plugins(&mut self, plugins: &Element) -> Vec<PluginSpec> {
        self.stray_text(plugins, "plugins");
        let mut out = Vec::new();
        for child in elements(plugins) {
            if child.prefix.is_none() && child.name == "plugin" {
                if let Some(spec) = self.plugin(child) {
                    out.push(spec);
                }
            } else {
                let name = qname(child);
                self.problem(child, format!("unknown element <{name}> in <plugins> (expected <plugin>)"));
            }
        }
        out
    }

    fn plugin(&mut self, plugin: &Element) -> Option<PluginSpec> {
        let before = self.problems.len();
        let mut values = [""; 4];
        for (slot, attr) in values.iter_mut().zip(REQUIRED) {
            match plugin.attributes.get(attr) {
                None => self.problem(plugin, format!("<plugin> is missing the `{attr}` attribute")),
                Some(v) if v.trim().is_empty() => {
                    self.problem(plugin, format!("<plugin> has an empty `{attr}` attribute"))
                }
                Some(v) => *slot = v.as_str(),
            }
        }
        let [entity_name, entity_type, filename, name] = values;
        let kind = EntityType::from_attribute(entity_type);
        if kind.is_none() && !entity_type.is_empty() {
            self.problem(
                plugin,
                format!("<plugin> has entity_type=\"{entity_type}\"; expected world, model or sensor"),
            );
        }
        let roles = match super::roles::roles_of_plugin(plugin) {
            Ok(r) => r,
            Err((at, message)) => {
                self.problem(at, message);
                None
            }
        };
        if self.problems.len() != before {
            return None;
        }
        // The text as written; re-serialised only if the source could not be located.
        let xml = match self.doc.source(plugin) {
            Some(s) => s.to_string(),
            None => to_string(plugin),
        };
        Some(PluginSpec {
            entity_name: entity_name.to_string(),
            entity_type: kind?,
            filename: filename.to_string(),
            name: name.to_string(),
            xml,
            origin: format!("{}:{}", self.label, self.line(plugin)),
            roles,
        })
    }

    fn record(&mut self, element: &Element) -> Option<RecordSpec> {
        self.stray_text(element, "record");
        let before = self.problems.len();
        let mut path = None;
        let mut keyframe_interval = None;
        for child in elements(element) {
            let text = child.get_text().unwrap_or_default().trim().to_string();
            match (child.prefix.as_deref(), child.name.as_str()) {
                (None, "record_path") if text.is_empty() => {
                    self.problem(child, "empty <record_path>; expected the log file".into())
                }
                (None, "record_path") => {
                    let p = PathBuf::from(text);
                    path = Some(match self.base {
                        Some(base) if p.is_relative() => base.join(p),
                        _ => p,
                    });
                }
                (None, "keyframe_interval") => match text.parse::<u64>() {
                    Ok(n) if n > 0 => keyframe_interval = Some(n),
                    _ => self.problem(
                        child,
                        format!("<keyframe_interval> is \"{text}\"; expected a whole number of steps, at least 1"),
                    ),
                },
                _ => {
                    let name = qname(child);
                    self.problem(
                        child,
                        format!("unknown element <{name}> in <record> (expected <record_path> or <keyframe_interval>)"),
                    );
                }
            }
        }
        if path.is_none() && self.problems.len() == before {
            self.problem(element, "<record> needs a <record_path>".into());
        }
        let origin = format!("{}:{}", self.label, self.line(element));
        Some(RecordSpec { path: path?, keyframe_interval, origin })
    }

    fn transport(&mut self, element: &Element) -> TransportSpec {
        self.stray_text(element, "transport");
        let mut spec =
            TransportSpec { origin: format!("{}:{}", self.label, self.line(element)), ..TransportSpec::default() };
        for child in elements(element) {
            let text = child.get_text().unwrap_or_default().trim().to_string();
            match (child.prefix.as_deref(), child.name.as_str()) {
                (None, "host") if text.parse::<std::net::IpAddr>().is_ok() => spec.host = Some(text),
                (None, "host") => self.problem(
                    child,
                    format!("<host> is \"{text}\"; expected an IP address to listen on (e.g. 192.168.1.20 or 0.0.0.0)"),
                ),
                (None, "port") => match text.parse::<u16>() {
                    Ok(p) => spec.port = Some(p),
                    Err(_) => self.problem(child, format!("<port> is \"{text}\"; expected a port number (0 to 65535)")),
                },
                (None, "peer") => match super::network::peer_url(&text) {
                    Ok(url) => spec.peers.push(url),
                    Err(e) => self.problem(child, e),
                },
                _ => {
                    let name = qname(child);
                    self.problem(
                        child,
                        format!("unknown element <{name}> in <transport> (expected <host>, <port> or <peer>)"),
                    );
                }
            }
        }
        if spec.port.is_some() && spec.host.is_none() {
            self.problem(element, "<transport> gives a <port> but no <host> to listen on".into());
        }
        spec
    }

    fn network(&mut self, element: &Element) -> NetworkSpec {
        self.stray_text(element, "network");
        let mut spec =
            NetworkSpec { origin: format!("{}:{}", self.label, self.line(element)), ..NetworkSpec::default() };
        let mut seen: Vec<(String, u32)> = Vec::new();
        for child in elements(element) {
            let text = child.get_text().unwrap_or_default().trim().to_string();
            let at = format!("{}:{}", self.label, self.line(child));
            let name = qname(child);
            if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
                let first = *first;
                self.problem(child, format!("a second <{name}> in <network> (the first is at line {first})"));
                continue;
            }
            seen.push((name.clone(), self.line(child)));
            let ms = |v: &mut Self, text: &str| -> Option<u64> {
                match text.parse::<u64>() {
                    Ok(n) if n > 0 => Some(n),
                    _ => {
                        v.problem(
                            child,
                            format!("<{name}> is \"{text}\"; expected a whole number of milliseconds, at least 1"),
                        );
                        None
                    }
                }
            };
            match (child.prefix.as_deref(), child.name.as_str()) {
                (None, "role") => match super::network::parse_role(&text) {
                    Some(_) => spec.role = Some((text, at)),
                    None => self.problem(child, format!("<role> is \"{text}\"; expected primary or secondary")),
                },
                (None, "secondaries") => match text.parse::<u32>() {
                    Ok(n) if n > 0 => spec.secondaries = Some((n, at)),
                    _ => self.problem(child, format!("<secondaries> is \"{text}\"; expected a whole number, at least 1")),
                },
                (None, "token") if text.is_empty() => self.problem(child, "empty <token>; leave it out or give the cluster token".into()),
                (None, "token") => spec.token = Some((text, at)),
                (None, "primary") => match super::network::peer_url(&text) {
                    Ok(url) => spec.primary = Some((url, at)),
                    Err(e) => self.problem(child, format!("<primary>: {e}")),
                },
                (None, "listen") => match super::network::listen_url(&text) {
                    Ok(url) => spec.listen = Some((url, at)),
                    Err(e) => self.problem(child, format!("<listen>: {e}")),
                },
                (None, "heartbeat_period_ms") => spec.heartbeat_period_ms = ms(self, &text),
                (None, "peer_timeout_ms") => spec.peer_timeout_ms = ms(self, &text),
                (None, "step_timeout_ms") => spec.step_timeout_ms = ms(self, &text),
                (None, "discovery_timeout_ms") => spec.discovery_timeout_ms = ms(self, &text),
                (None, "auto_performers") => match text.as_str() {
                    "true" | "1" => spec.auto_performers = Some(true),
                    "false" | "0" => spec.auto_performers = Some(false),
                    _ => self.problem(child, format!("<auto_performers> is \"{text}\"; expected true or false")),
                },
                _ => self.problem(
                    child,
                    format!(
                        "unknown element <{name}> in <network> (expected <role>, <secondaries>, <token>, <primary>, <listen>, \
                         <heartbeat_period_ms>, <peer_timeout_ms>, <step_timeout_ms>, <discovery_timeout_ms> or <auto_performers>)"
                    ),
                ),
            }
        }
        spec
    }

    fn plugin_path(&mut self, element: &Element) -> Option<PathBuf> {
        for child in elements(element) {
            let name = qname(child);
            self.problem(child, format!("unexpected element <{name}> in <plugin_path> (expected a directory)"));
        }
        let text = element.get_text().unwrap_or_default();
        let dir = text.trim();
        if dir.is_empty() {
            self.problem(element, "empty <plugin_path>; expected a directory".into());
            return None;
        }
        let path = PathBuf::from(dir);
        Some(match self.base {
            Some(base) if path.is_relative() => base.join(path),
            _ => path,
        })
    }

    /// Reports non-whitespace text directly inside `element`, once per run of text between
    /// child elements (comments do not split a run).
    fn stray_text(&mut self, element: &Element, name: &str) {
        let mut runs = vec![String::new()];
        for node in &element.children {
            match node {
                XMLNode::Text(t) | XMLNode::CData(t) => {
                    if let Some(run) = runs.last_mut() {
                        run.push_str(t);
                    }
                }
                XMLNode::Element(_) => runs.push(String::new()),
                XMLNode::Comment(_) | XMLNode::ProcessingInstruction(..) => {}
            }
        }
        for run in runs.iter().filter(|r| !r.trim().is_empty()) {
            let what: String = run.trim().chars().take(20).collect();
            self.problem(element, format!("unexpected text \"{what}\" in <{name}>"));
        }
    }
}
