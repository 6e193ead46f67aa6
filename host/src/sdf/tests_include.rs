//! `<include>`: model paths, model.config, overrides, ordinals in place, and the errors.

use super::*;
use plugin_api::math::Vec3;
use std::f64::consts::FRAC_PI_2;
use std::path::{Path, PathBuf};

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../worlds/test/include")
}

fn paths_for(dir: &Path) -> ModelPaths {
    ModelPaths::new(Some(&dir.display().to_string()), None)
}

/// A fresh folder under the system's temporary folder, holding `files` (path, text).
fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("troupe-sdf-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap_or(&dir)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
    dir
}

fn error_in(dir: &Path, file: &str, paths: &ModelPaths) -> String {
    match parse_file_with(&dir.join(file), paths) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn include_world_loads_models_lights_and_overrides() {
    let dir = include_dir();
    let paths = paths_for(&dir.join("models"));
    let d = parse_file_with(&dir.join("include.sdf"), &paths).unwrap_or_else(|e| panic!("{e}"));
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    let w = &d.worlds[0];
    let names: Vec<_> = w.models.iter().map(|m| (m.name.as_str(), m.ordinal)).collect();
    assert_eq!(names, [("crate", 2), ("between", 5), ("cart2", 7), ("spare", 17), ("after", 20)]);
    assert_eq!(d.entity_count, 20);

    // model.config: the highest version (1.10, above 1.9) is read; no overrides.
    let c = &w.models[0];
    assert_eq!((c.links[0].name.as_str(), c.links[0].ordinal), ("box", 3));
    assert_eq!(c.links[0].collisions[0].ordinal, 4);
    assert_eq!(c.pose.position, Vec3::new(0.0, 0.0, 0.5));
    assert!(!c.is_static);
    assert_eq!(c.plugins.len(), 1);
    // Positions name the included file.
    assert!(c.origin.file.ends_with("models/crate/model.sdf"), "{}", c.origin);
    assert_eq!(c.origin.line, 3);

    // Overrides: name, pose, static, plugins appended after the model's own.
    let cart = &w.models[2];
    assert!(cart.is_static);
    assert_eq!(cart.pose, plugin_api::math::Pose::from_xyz_rpy(1.0, 2.0, 0.0, 0.0, 0.0, FRAC_PI_2));
    let plugins: Vec<_> = cart.plugins.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(plugins, ["testing::Noop"]);
    assert!(cart.plugins[0].origin.file.ends_with("include.sdf"));
    // Nested includes, numbered in place (the joint is written after both includes).
    let inner: Vec<_> = cart.models.iter().map(|m| (m.name.as_str(), m.ordinal)).collect();
    assert_eq!(inner, [("left", 9), ("right", 12)]);
    assert_eq!((cart.links[0].ordinal, cart.joints[0].ordinal), (8, 15));
    assert_eq!(cart.models[1].links[0].collisions[0].ordinal, 14);
    // Poses inside included files use their own scope (the frame "hub" of each wheel);
    // relative_to in an include names a frame of the including scope.
    assert_eq!(cart.models[0].pose.position, Vec3::new(0.0, 0.5, 0.0));
    let right = cart.models[1].pose.position;
    assert!((right.y + 0.5).abs() < 1e-12 && right.x.abs() < 1e-12 && right.z.abs() < 1e-12, "{right:?}");
    let rim = cart.models[1].links[0].pose;
    assert_eq!(rim, plugin_api::math::Pose::from_xyz_rpy(0.0, 0.0, 0.3, FRAC_PI_2, 0.0, 0.0));
    assert_eq!(cart.joints[0].child, "left::rim");

    // A light by relative path, placed relative to an included model.
    let lamp = &w.lights[0];
    assert_eq!((lamp.name.as_str(), lamp.ordinal), ("lamp2", 16));
    assert_eq!(lamp.light.diffuse, [1.0, 0.5, 0.5, 1.0]);
    let p = lamp.pose.position;
    assert!((p.x - 1.0).abs() < 1e-12 && (p.y - 2.0).abs() < 1e-12 && (p.z - 3.0).abs() < 1e-12, "{p:?}");
    let [_, _, yaw] = lamp.pose.rotation.to_rpy();
    assert!((yaw - FRAC_PI_2).abs() < 1e-12);

    // file:// relative to the including file; a model folder without model.config.
    assert_eq!(w.models[3].links[0].name, "rim");
}

#[test]
fn model_paths_come_in_order_without_empty_or_repeated_entries() {
    let p = ModelPaths::new(Some("/a::/b"), Some("/b:/c:"));
    let dirs: Vec<_> = p.dirs().map(|d| d.display().to_string()).collect();
    assert_eq!(dirs, ["/a", "/b", "/c"]);
    // GZ_SIM_RESOURCE_PATH is searched before SDF_PATH: the first folder holding the model wins.
    let first = scratch("order1", &[("m/model.sdf", "<sdf version='1.9'><model name='from_gz'/></sdf>")]);
    let second = scratch("order2", &[("m/model.sdf", "<sdf version='1.9'><model name='from_sdf'/></sdf>")]);
    let paths = ModelPaths::new(Some(&first.display().to_string()), Some(&second.display().to_string()));
    let text = "<sdf version='1.9'><world name='w'><include><uri>model://m</uri></include></world></sdf>";
    let d = parse_str_with(text, "t.sdf", &paths).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.worlds[0].models[0].name, "from_gz");
    let paths = ModelPaths::new(None, Some(&second.display().to_string()));
    let d = parse_str_with(text, "t.sdf", &paths).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.worlds[0].models[0].name, "from_sdf");
}

#[test]
fn a_missing_model_names_the_uri_the_line_and_every_folder_searched() {
    let paths = ModelPaths::new(Some("/nonexistent/a:/nonexistent/b"), Some("/nonexistent/c"));
    let text = "<sdf version='1.9'><world name='w'>\n<include>\n<uri>model://nothing</uri></include></world></sdf>";
    let e = parse_str_with(text, "w.sdf", &paths).map(|_| ()).map_err(|e| e.to_string());
    assert_eq!(
        e,
        Err("w.sdf:2: <include>: model \"nothing\" of model://nothing not found; searched \
             /nonexistent/a (GZ_SIM_RESOURCE_PATH), /nonexistent/b (GZ_SIM_RESOURCE_PATH), \
             /nonexistent/c (SDF_PATH)"
            .into())
    );
    let e = parse_str_with(text, "w.sdf", &ModelPaths::default()).map(|_| ()).map_err(|e| e.to_string());
    assert_eq!(
        e,
        Err("w.sdf:2: <include>: model \"nothing\" of model://nothing not found; searched \
             nothing: GZ_SIM_RESOURCE_PATH and SDF_PATH are both unset or empty"
            .into())
    );
}

#[test]
fn fuel_and_unknown_schemes_are_refused_without_network() {
    let text = "<sdf version='1.9'><world name='w'>\n<include><uri>https://fuel.gazebosim.org/1.0/OpenRobotics/models/Ambulance</uri></include></world></sdf>";
    let e = parse_str_with(text, "w.sdf", &ModelPaths::default()).map(|_| ()).map_err(|e| e.to_string());
    let e = e.err().unwrap_or_default();
    assert!(
        e.starts_with(
            "w.sdf:2: <include> of https://fuel.gazebosim.org/1.0/OpenRobotics/models/Ambulance: \
             Fuel downloads are not supported"
        ),
        "{e}"
    );
    let text = "<sdf version='1.9'><world name='w'><include><uri>package://x/y</uri></include></world></sdf>";
    let e = parse_str_with(text, "w.sdf", &ModelPaths::default()).map(|_| ()).map_err(|e| e.to_string());
    assert!(e.err().unwrap_or_default().contains("unsupported URI scheme \"package://\""));
    let text = "<sdf version='1.9'><world name='w'>\n<include/></world></sdf>";
    let e = parse_str_with(text, "w.sdf", &ModelPaths::default()).map(|_| ()).map_err(|e| e.to_string());
    assert_eq!(e, Err("w.sdf:2: <include> needs a <uri>".into()));
}

#[test]
fn an_include_cycle_is_an_error() {
    let dir = scratch(
        "cycle",
        &[
            ("a.sdf", "<sdf version='1.9'><world name='w'>\n<include><uri>m/b.sdf</uri></include></world></sdf>"),
            ("m/b.sdf", "<sdf version='1.9'><model name='b'>\n\n<include><uri>c.sdf</uri></include></model></sdf>"),
            ("m/c.sdf", "<sdf version='1.9'><model name='c'>\n\n\n<include><uri>b.sdf</uri></include></model></sdf>"),
        ],
    );
    let e = error_in(&dir, "a.sdf", &ModelPaths::default());
    let canon = |p: &str| dir.join(p).canonicalize().map(|c| c.display().to_string()).unwrap_or_default();
    let (b, c) = (canon("m/b.sdf"), canon("m/c.sdf"));
    let prefix =
        format!("{}:4: <include> of b.sdf is a cycle: {b} includes {c} includes {b}", dir.join("m/c.sdf").display());
    assert!(e.starts_with(&prefix), "{e}\nexpected to start with {prefix}");
    // The chain of includes that led there is named too.
    assert!(e.contains(&format!("(included from {}:3)", dir.join("m/b.sdf").display())), "{e}");
    assert!(e.ends_with(&format!("(included from {}:2)", dir.join("a.sdf").display())), "{e}");
    // A file including itself.
    let dir = scratch(
        "self",
        &[("s.sdf", "<sdf version='1.9'><model name='s'>\n<include><uri>s.sdf</uri></include></model></sdf>")],
    );
    let e = error_in(&dir, "s.sdf", &ModelPaths::default());
    assert!(e.contains("s.sdf:2: <include> of s.sdf is a cycle"), "{e}");
}

#[test]
fn errors_inside_an_included_file_name_that_file_and_line() {
    let dir = scratch(
        "inner",
        &[
            ("w.sdf", "<sdf version='1.9'><world name='w'>\n\n<include><uri>model://bad</uri></include></world></sdf>"),
            ("models/bad/model.sdf", "<sdf version='1.9'>\n<model name='bad'>\n<pose>1 x 0 0 0 0</pose></model></sdf>"),
            ("models/broken/model.sdf", "<sdf version='1.9'>\n<model name='broken'>\n</sdf>"),
            (
                "models/frames/model.sdf",
                "<sdf version='1.9'>\n<model name='f'>\n<link name='l'><pose relative_to='nope'/></link></model></sdf>",
            ),
        ],
    );
    let paths = paths_for(&dir.join("models"));
    let e = error_in(&dir, "w.sdf", &paths);
    let bad = dir.join("models/bad/model.sdf");
    assert_eq!(
        e,
        format!(
            "{}:3: <pose>: \"x\" is not a number (in \"1 x 0 0 0 0\") (included from {}:3)",
            bad.display(),
            dir.join("w.sdf").display()
        )
    );
    std::fs::write(
        dir.join("w.sdf"),
        "<sdf version='1.9'><world name='w'><include><uri>model://broken</uri></include></world></sdf>",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let e = error_in(&dir, "w.sdf", &paths);
    assert!(e.starts_with(&format!("{}:3:", dir.join("models/broken/model.sdf").display())), "{e}");
    assert!(e.contains("malformed XML"), "{e}");
    // Frame errors are found after reading; they still point into the included file.
    std::fs::write(
        dir.join("w.sdf"),
        "<sdf version='1.9'><world name='w'><include><uri>model://frames</uri></include></world></sdf>",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let e = error_in(&dir, "w.sdf", &paths);
    assert!(
        e.starts_with(&format!(
            "{}:3: <link name=\"l\"> has <pose relative_to=\"nope\">",
            dir.join("models/frames/model.sdf").display()
        )),
        "{e}"
    );
}

#[test]
fn model_folders_and_configs_that_name_no_file_are_errors() {
    let dir = scratch(
        "folders",
        &[
            ("w.sdf", "<sdf version='1.9'><world name='w'>\n<include><uri>model://empty</uri></include></world></sdf>"),
            ("models/empty/readme.txt", "nothing here"),
            ("models/lost/model.config", "<model>\n<sdf version='1.9'>gone.sdf</sdf></model>"),
            ("models/world/model.sdf", "<sdf version='1.9'>\n<world name='inner'/></sdf>"),
        ],
    );
    let paths = paths_for(&dir.join("models"));
    let e = error_in(&dir, "w.sdf", &paths);
    let folder = dir.join("models").join("empty");
    assert_eq!(
        e,
        format!(
            "{}:2: <include> of model://empty: the model folder {} has no model.config and no model.sdf",
            dir.join("w.sdf").display(),
            folder.display()
        )
    );
    std::fs::write(
        dir.join("w.sdf"),
        "<sdf version='1.9'><world name='w'><include><uri>model://lost</uri></include></world></sdf>",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let e = error_in(&dir, "w.sdf", &paths);
    let config = dir.join("models/lost/model.config");
    assert!(e.starts_with(&format!("{}:2: model.config names ", config.display())), "{e}");
    assert!(e.ends_with("gone.sdf, which is not a file"), "{e}");
    std::fs::write(
        dir.join("w.sdf"),
        "<sdf version='1.9'><world name='w'><include><uri>model://world</uri></include></world></sdf>",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let e = error_in(&dir, "w.sdf", &paths);
    assert!(
        e.starts_with(&format!("{}:2: <world> cannot be included", dir.join("models/world/model.sdf").display())),
        "{e}"
    );
}

#[test]
fn placement_frame_and_merge_in_an_include_warn() {
    let dir = scratch(
        "warn",
        &[
            (
                "w.sdf",
                "<sdf version='1.9'><world name='w'>\n<include merge='true'><uri>m.sdf</uri>\n\
                       <placement_frame>l</placement_frame></include></world></sdf>",
            ),
            ("m.sdf", "<sdf version='1.9'><model name='m'><link name='l'/></model></sdf>"),
        ],
    );
    let d = parse_file_with(&dir.join("w.sdf"), &ModelPaths::default()).unwrap_or_else(|e| panic!("{e}"));
    let w = dir.join("w.sdf").display().to_string();
    assert_eq!(
        d.warnings,
        [
            format!("{w}:3: <include><placement_frame> is not supported yet; the pose places the model frame"),
            format!("{w}:2: <include merge> is not supported yet; the model is included as a nested model"),
        ]
    );
}
