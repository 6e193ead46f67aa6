//! Server-config XML parsing and validation.

use crate::config::{
    parse_server_config_file, parse_server_config_str, ConfigError, EntityType, Problem, ServerConfigFile,
};
use std::path::{Path, PathBuf};

/// gz-sim's test/worlds/server_valid.config, in Troupe spelling.
const VALID: &str = r#"<?xml version="1.0"?>
<server_config>
  <plugins>
    <plugin entity_name="default"
            entity_type="world"
            filename="TestWorldSystem"
            name="gz::sim::TestWorldSystem">
      <world_key>0.123</world_key>
      <gz:system_priority>-5</gz:system_priority>
    </plugin>
    <plugin entity_name="box" entity_type="model"
            filename="TestModelSystem" name="gz::sim::TestModelSystem">
      <model_key>987</model_key>
    </plugin>
    <plugin entity_name="default::box::link_1::camera" entity_type="sensor"
            filename="TestSensorSystem" name="gz::sim::TestSensorSystem"/>
  </plugins>
</server_config>
"#;

fn problems(result: Result<ServerConfigFile, ConfigError>) -> Vec<Problem> {
    match result {
        Err(ConfigError::Invalid { problems }) => problems,
        other => panic!("expected ConfigError::Invalid, got {other:?}"),
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("troupe-config-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn valid_three_plugins_in_order_with_targets_and_xml() {
    let c = parse_server_config_str(VALID, "valid.config").unwrap();
    assert_eq!(c.plugins.len(), 3);
    let [w, m, s] = &c.plugins[..] else { unreachable!() };
    assert_eq!((w.entity_name.as_str(), w.entity_type), ("default", EntityType::World));
    assert_eq!((w.filename.as_str(), w.name.as_str()), ("TestWorldSystem", "gz::sim::TestWorldSystem"));
    assert_eq!((m.entity_name.as_str(), m.entity_type), ("box", EntityType::Model));
    assert_eq!(m.filename, "TestModelSystem");
    assert_eq!(s.entity_name, "default::box::link_1::camera");
    assert_eq!(s.entity_type, EntityType::Sensor);
    assert_eq!(s.name, "gz::sim::TestSensorSystem");
    // The whole element, exactly as written, undeclared gz: prefix included.
    assert!(w.xml.starts_with("<plugin entity_name=\"default\""), "{}", w.xml);
    assert!(w.xml.ends_with("</plugin>"));
    assert!(w.xml.contains("<world_key>0.123</world_key>"));
    assert!(w.xml.contains("<gz:system_priority>-5</gz:system_priority>"));
    assert!(m.xml.contains("<model_key>987</model_key>") && m.xml.ends_with("</plugin>"));
    assert!(s.xml.starts_with("<plugin ") && s.xml.ends_with("name=\"gz::sim::TestSensorSystem\"/>"), "{}", s.xml);
    assert_eq!(w.origin, "valid.config:4");
    assert_eq!(m.origin, "valid.config:11");
    assert_eq!(s.origin, "valid.config:15");
    assert!(c.plugin_paths.is_empty());
    // The inner XML is usable by the system.
    assert_eq!(crate::config::priority_from_xml(&w.xml), Ok(Some(-5)));
}

#[test]
fn shipped_server_config_has_the_three_defaults() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/server.config");
    let c = parse_server_config_file(&path).unwrap();
    let got: Vec<(&str, &str, &str, EntityType)> = c
        .plugins
        .iter()
        .map(|p| (p.entity_name.as_str(), p.filename.as_str(), p.name.as_str(), p.entity_type))
        .collect();
    assert_eq!(
        got,
        [
            ("*", "gz-sim-physics-system", "gz::sim::systems::Physics", EntityType::World),
            ("*", "gz-sim-user-commands-system", "gz::sim::systems::UserCommands", EntityType::World),
            ("*", "gz-sim-scene-broadcaster-system", "gz::sim::systems::SceneBroadcaster", EntityType::World),
        ]
    );
    assert!(c.plugins[0].origin.ends_with("server.config:38"), "{}", c.plugins[0].origin);
    // The built-in copy is the same file.
    let built_in = parse_server_config_str(crate::config::DEFAULT_SERVER_CONFIG, "b").unwrap();
    assert_eq!(built_in.plugins.len(), 3);
}

#[test]
fn empty_and_whitespace_files_mean_no_plugins() {
    for text in ["", "   \n\t\r\n  ", "\u{feff}"] {
        let c = parse_server_config_str(text, "empty").unwrap();
        assert!(c.plugins.is_empty() && c.plugin_paths.is_empty());
    }
    let dir = temp_dir("empty");
    let path = dir.join("empty.config");
    std::fs::write(&path, "").unwrap();
    assert_eq!(parse_server_config_file(&path).unwrap(), ServerConfigFile::default());
}

#[test]
fn nonexistent_file_is_not_found_naming_the_path() {
    let err = parse_server_config_file("/nonexistent/troupe/x.config").unwrap_err();
    assert!(matches!(err, ConfigError::NotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/troupe/x.config"), "{err}");
}

#[test]
fn malformed_xml_reports_line_and_column() {
    let text = "<server_config>\n  <plugins>\n    <plugin a='1'></plugins>\n</server_config>\n";
    let p = problems(parse_server_config_str(text, "bad.config"));
    assert_eq!(p.len(), 1);
    assert_eq!((p[0].line, p[0].column), (3, Some(28)), "{}", p[0]);
    assert!(p[0].to_string().starts_with("bad.config:3:28: malformed XML: "), "{}", p[0]);

    // An unclosed root: reported at the end of the text, naming the open element.
    let p = problems(parse_server_config_str("<server_config>\n<plugins/>\n", "u.config"));
    assert!(p[0].message.contains("<server_config> opened at line 1 is not closed"), "{}", p[0]);
    assert!(!p[0].message.contains("wrapper"), "{}", p[0]);
    assert_eq!(p[0].line, 3);

    // Two roots, and text outside the root.
    let p = problems(parse_server_config_str("<server_config><plugins/></server_config>\n<x/>", "t"));
    assert_eq!((p[0].line, p[0].column), (2, Some(1)), "{}", p[0]);
    assert!(p[0].message.contains("second root element"), "{}", p[0]);
    let p = problems(parse_server_config_str("junk <server_config><plugins/></server_config>", "t"));
    assert!(p[0].message.contains("outside the root element"), "{}", p[0]);

    // Columns on the root's own line are not shifted by the internal wrapper.
    let p = problems(parse_server_config_str("<server_config><plugins></server_config>", "c"));
    assert_eq!((p[0].line, p[0].column), (1, Some(40)), "{}", p[0]);
}

#[test]
fn all_problems_are_reported_together() {
    let text = r#"<config>
  <plugin_path></plugin_path>
  <plugin entity_name="*" entity_type="world" filename="a" name="b"/>
  <extra/>
  <plugins>
    <plugin entity_type="world" filename="f" name="n"/>
    <plugin entity_name="" entity_type="world" filename="f" name="n"/>
    <plugin entity_name="x" entity_type="visual" filename="f" name=""/>
    <plugin entity_name="x" entity_type="model" filename="ok" name="ok"/>
    <thing/>
  </plugins>
  <plugins/>
</config>
"#;
    let err = parse_server_config_str(text, "many.config").unwrap_err();
    let ConfigError::Invalid { problems } = &err else { panic!("{err:?}") };
    let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    let expected = [
        "many.config:1: the root element is <config>, expected <server_config>",
        "many.config:2: empty <plugin_path>; expected a directory",
        "many.config:3: <plugin> must be inside <plugins>",
        "many.config:4: unknown element <extra> in <server_config> (expected <plugins>, <plugin_path>, <record>, <transport>, <levels> or <network>)",
        "many.config:6: <plugin> is missing the `entity_name` attribute",
        "many.config:7: <plugin> has an empty `entity_name` attribute",
        "many.config:8: <plugin> has an empty `name` attribute",
        "many.config:8: <plugin> has entity_type=\"visual\"; expected world, model or sensor",
        "many.config:10: unknown element <thing> in <plugins> (expected <plugin>)",
        "many.config:12: a second <plugins> element (the first is at line 5); put all plugins in one <plugins>",
    ];
    assert_eq!(lines, expected);
    let shown = err.to_string();
    assert!(shown.starts_with("invalid server config (10 problems):"), "{shown}");
    for e in expected {
        assert!(shown.contains(e), "{shown}");
    }
}

#[test]
fn missing_plugins_and_stray_text() {
    let p = problems(parse_server_config_str("<server_config>\n  hello\n</server_config>", "m"));
    let lines: Vec<String> = p.iter().map(|p| p.to_string()).collect();
    assert_eq!(lines, ["m:1: unexpected text \"hello\" in <server_config>", "m:1: missing <plugins> element"]);
    // gz-sim's "plugin directly under the root" case is an error here.
    let p = problems(parse_server_config_str(
        "<server_config>\n<plugin entity_name='*' entity_type='world' filename='f' name='n'/>\n</server_config>",
        "d",
    ));
    assert_eq!(p.len(), 2);
    assert_eq!(p[0].to_string(), "d:2: <plugin> must be inside <plugins>");
}

#[test]
fn plugin_paths_resolve_against_the_config_directory() {
    let dir = temp_dir("paths");
    let path = dir.join("paths.config");
    std::fs::write(
        &path,
        "<server_config>\n <plugin_path>rel/dir</plugin_path>\n <plugin_path> /abs/dir </plugin_path>\n <plugins/>\n</server_config>\n",
    )
    .unwrap();
    let c = parse_server_config_file(&path).unwrap();
    assert_eq!(c.plugin_paths, [dir.join("rel/dir"), PathBuf::from("/abs/dir")]);
    assert!(c.plugins.is_empty());
    // From a string, relative paths stay as written.
    let c =
        parse_server_config_str("<server_config><plugin_path>x</plugin_path><plugins/></server_config>", "s").unwrap();
    assert_eq!(c.plugin_paths, [PathBuf::from("x")]);
}

#[test]
fn invalid_utf8_file_is_reported_with_its_line() {
    let dir = temp_dir("utf8");
    let path = dir.join("bad.config");
    std::fs::write(&path, b"<server_config>\n<plugins>\xff</plugins></server_config>").unwrap();
    let p = problems(parse_server_config_file(&path));
    assert_eq!(p[0].line, 2);
    assert!(p[0].message.contains("UTF-8"));
}

#[test]
fn declared_namespaces_comments_and_crlf_are_fine() {
    let text = "<?xml version=\"1.0\"?>\r\n<!-- c -->\r\n<server_config xmlns:gz=\"http://gazebosim.org/schema\">\r\n<plugins>\r\n\
                <plugin entity_name=\"*\" entity_type=\"world\" filename=\"f\" name=\"n\"><gz:x a='>'/></plugin>\r\n\
                </plugins></server_config>\r\n";
    let c = parse_server_config_str(text, "ns").unwrap();
    assert_eq!(c.plugins[0].origin, "ns:5");
    assert_eq!(
        c.plugins[0].xml,
        "<plugin entity_name=\"*\" entity_type=\"world\" filename=\"f\" name=\"n\"><gz:x a='>'/></plugin>"
    );
}

#[test]
fn garbage_input_does_not_panic() {
    // Every prefix of a valid file, deep nesting, and odd fragments: errors, never panics.
    let samples = [
        "<",
        "<<>>",
        "<a",
        "</a>",
        "<?xml",
        "<!--",
        "<!DOCTYPE x [",
        "<a b='",
        "é<é/>",
        "<a/>\u{0}",
        "<server_config><plugins><plugin entity_name='*' entity_type='world' filename='f' name='n'>",
        "\r\r\r<server_config/>",
        "<x:y/>",
        "<xmlns:a/>",
        "<a xml:lang='x' foo:bar='1'/>",
    ];
    let deep = "<a>".repeat(100_000);
    let truncations = (0..VALID.len()).filter(|&i| VALID.is_char_boundary(i)).map(|i| &VALID[..i]);
    for s in samples.into_iter().chain([deep.as_str()]).chain(truncations) {
        let _ = parse_server_config_str(s, "g");
        let _ = crate::config::priority_from_xml(s);
    }
}

#[test]
fn plugin_xml_is_exact_around_comments_and_cdata() {
    let plugin = "<plugin entity_name='*' entity_type='world' filename='f' name='n'>\
                  <!-- </plugin> --><![CDATA[</plugin>]]><gz:x/></plugin>";
    let text = format!("<server_config><plugins>\n  {plugin}\n</plugins></server_config>");
    let c = parse_server_config_str(&text, "x").unwrap();
    assert_eq!(c.plugins[0].xml, plugin);
    assert_eq!(c.plugins[0].origin, "x:2");
    // Text split only by a comment is one problem.
    let p = problems(parse_server_config_str("<server_config>a<!-- c -->b<plugins/>c</server_config>", "t"));
    let lines: Vec<String> = p.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        lines,
        ["t:1: unexpected text \"ab\" in <server_config>", "t:1: unexpected text \"c\" in <server_config>"]
    );
}

#[test]
fn record_element_names_the_log_and_keyframe_interval() {
    let dir = temp_dir("record");
    let path = dir.join("rec.config");
    std::fs::write(
        &path,
        "<server_config><plugins/><record><record_path>logs/run.tlog</record_path>\
         <keyframe_interval>50</keyframe_interval></record></server_config>",
    )
    .unwrap();
    let record = parse_server_config_file(&path).unwrap().record.unwrap();
    assert_eq!(record.path, dir.join("logs/run.tlog"), "relative to the config file");
    assert_eq!(record.keyframe_interval, Some(50));
    assert!(parse_server_config_str("<server_config><plugins/></server_config>", "x").unwrap().record.is_none());

    let text = "<server_config>\n<plugins/>\n<record><keyframe_interval>0</keyframe_interval><path>a</path></record>\n\
                <record><record_path>b</record_path></record>\n<record/>\n</server_config>";
    let lines: Vec<String> =
        problems(parse_server_config_str(text, "r.config")).iter().map(|p| p.to_string()).collect();
    assert_eq!(
        lines,
        [
            "r.config:3: <keyframe_interval> is \"0\"; expected a whole number of steps, at least 1",
            "r.config:3: unknown element <path> in <record> (expected <record_path> or <keyframe_interval>)",
            "r.config:5: a second <record> element (the first is at r.config:4)",
        ]
    );
    let lines: Vec<String> =
        problems(parse_server_config_str("<server_config><plugins/><record/></server_config>", "e.config"))
            .iter()
            .map(|p| p.to_string())
            .collect();
    assert_eq!(lines, ["e.config:1: <record> needs a <record_path>"]);
}

#[test]
fn transport_element_says_where_to_listen_and_whom_to_meet() {
    let text = "<server_config><plugins/><transport><host>10.0.0.5</host><port>11345</port>\
                <peer>10.0.0.6:11345</peer><peer>tcp://robot.local:7000</peer></transport></server_config>";
    let t = parse_server_config_str(text, "t.config").unwrap().transport.unwrap();
    assert_eq!(t.host.as_deref(), Some("10.0.0.5"));
    assert_eq!(t.port, Some(11345));
    assert_eq!(t.peers, ["tcp://10.0.0.6:11345", "tcp://robot.local:7000"]);
    assert_eq!(t.origin, "t.config:1");

    let text =
        "<server_config>\n<plugins/>\n<transport>\n<host>not-an-ip</host>\n<port>70000</port>\n<peer>nowhere</peer>\n\
                <bind>x</bind>\n</transport>\n<transport/>\n</server_config>";
    let lines: Vec<String> =
        problems(parse_server_config_str(text, "b.config")).iter().map(|p| p.to_string()).collect();
    assert_eq!(
        lines,
        [
            "b.config:4: <host> is \"not-an-ip\"; expected an IP address to listen on (e.g. 192.168.1.20 or 0.0.0.0)",
            "b.config:5: <port> is \"70000\"; expected a port number (0 to 65535)",
            "b.config:6: peer address \"nowhere\" has no port (write host:port, e.g. 192.168.1.20:11345)",
            "b.config:7: unknown element <bind> in <transport> (expected <host>, <port> or <peer>)",
            "b.config:9: a second <transport> element (the first is at b.config:3)",
        ]
    );
    let lines: Vec<String> = problems(parse_server_config_str(
        "<server_config><plugins/><transport><port>1</port></transport></server_config>",
        "p.config",
    ))
    .iter()
    .map(|p| p.to_string())
    .collect();
    assert_eq!(lines, ["p.config:1: <transport> gives a <port> but no <host> to listen on"]);
}

#[test]
fn levels_element_turns_levels_on_or_off() {
    let with = |body: &str| format!("<server_config><plugins/>{body}</server_config>");
    assert_eq!(parse_server_config_str(&with(""), "c").unwrap().levels, None);
    assert_eq!(parse_server_config_str(&with("<levels>true</levels>"), "c").unwrap().levels, Some(true));
    assert_eq!(parse_server_config_str(&with("<levels> false </levels>"), "c").unwrap().levels, Some(false));
    let p = problems(parse_server_config_str(&with("\n<levels>maybe</levels>"), "c"));
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].line, 2);
    assert_eq!(p[0].message, "<levels> is \"maybe\"; expected true or false");
}
