//! Tests on gz-sim's own world files, read from `$TROUPE_GZ_WORLDS`.

use super::*;
use plugin_api::components::Geometry;
use plugin_api::math::Vec3;
use std::path::PathBuf;

/// The folder of gz-sim worlds, or None (with the reason printed) when it is not there.
fn worlds_dir() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("TROUPE_GZ_WORLDS") else {
        eprintln!("skipped: TROUPE_GZ_WORLDS is not set");
        return None;
    };
    let dir = PathBuf::from(dir);
    if !dir.is_dir() {
        eprintln!("skipped: TROUPE_GZ_WORLDS={} is not a folder", dir.display());
        return None;
    }
    Some(dir)
}

fn load(path: &std::path::Path) -> SdfDocument {
    match parse_file(path) {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn every_gz_sim_world_parses() {
    let Some(dir) = worlds_dir() else { return };
    let mut files: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(r) => r.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(e) => panic!("{}: {e}", dir.display()),
    };
    files.retain(|p| p.extension().is_some_and(|e| e == "sdf"));
    files.sort();
    assert!(!files.is_empty(), "no .sdf files in {}", dir.display());
    for f in &files {
        let d = load(f);
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let exact = crate::xml::read(&text).map(|x| x.exact).map_err(|e| e.message);
        assert_eq!(exact, Ok(true), "{}: start tag scan disagrees with xml-rs", f.display());
        assert_eq!(d.worlds.len(), 1, "{}", f.display());
        assert!(d.entity_count > 0);
        for w in &d.warnings {
            eprintln!("{w}");
        }
        let world = &d.worlds[0];
        assert!(world.plugins.iter().all(|p| p.filename.starts_with("gz-sim-")), "{}", f.display());
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with("distributed") || name == "levels.sdf" {
            assert!(world.levels_plugin.is_some(), "{name}");
            assert!(!world.performers.is_empty(), "{name}");
        }
    }
}

#[test]
fn shapes_world_values() {
    let Some(dir) = worlds_dir() else { return };
    let d = load(&dir.join("shapes.sdf"));
    assert_eq!(d.version, "1.6");
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    let w = &d.worlds[0];
    assert_eq!(w.name, "default");
    assert_eq!((w.physics.name.as_str(), w.physics.engine.as_str()), ("1ms", "ode"));
    assert_eq!((w.physics.max_step_size, w.physics.real_time_factor), (0.001, 0.0));
    assert!(w.plugins.is_empty(), "the <gui> plugin is not a system");
    assert_eq!(w.models.len(), 5);
    let names: Vec<_> = w.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["box", "cylinder", "sphere", "capsule", "ellipsoid"]);

    let sun = &w.lights[0];
    assert!(sun.light.cast_shadows);
    assert_eq!(sun.light.attenuation, [0.9, 0.01, 0.001]);
    assert_eq!(sun.light.range, 1000.0);
    assert_eq!(sun.pose.position, Vec3::new(0.0, 0.0, 10.0));

    let b = &w.models[0];
    assert_eq!(b.pose.position, Vec3::new(1.0, 2.0, 3.0));
    let [r, p, y] = b.pose.rotation.to_rpy();
    assert!(r.abs() < 1e-12 && p.abs() < 1e-12 && (y - 1.0).abs() < 1e-12);
    let l = &b.links[0];
    assert_eq!(l.inertial.mass, 1.0);
    assert_eq!(l.pose.position, Vec3::new(0.1, 0.1, 0.1));
    assert_eq!(l.collisions[0].geometry, Geometry::Box { size: Vec3::new(3.0, 4.0, 5.0) });
    assert_eq!(l.visuals[0].geometry, Geometry::Box { size: Vec3::new(1.0, 2.0, 3.0) });
    assert_eq!(l.collisions[0].origin.line, 57);
    assert_eq!(b.origin.line, 42);

    // world 1, sun 2, then box model 3, link 4, collision 5, visual 6; cylinder 7, ...
    assert_eq!((w.ordinal, sun.ordinal, b.ordinal, l.ordinal), (1, 2, 3, 4));
    assert_eq!((l.collisions[0].ordinal, l.visuals[0].ordinal), (5, 6));
    assert_eq!((w.models[1].ordinal, w.models[1].links[0].ordinal), (7, 8));
    assert_eq!(d.entity_count, 2 + 5 * 4);

    let g: Vec<_> = w.models.iter().map(|m| m.links[0].collisions[0].geometry.clone()).collect();
    assert_eq!(g[1], Geometry::Cylinder { radius: 0.2, length: 0.1 });
    assert_eq!(g[2], Geometry::Sphere { radius: 23.4 });
    assert_eq!(g[3], Geometry::Capsule { radius: 0.23, length: 0.14 });
    assert_eq!(g[4], Geometry::Ellipsoid { radii: Vec3::new(0.4, 0.6, 1.6) });
}

#[test]
fn levels_world_levels_and_performers() {
    let Some(dir) = worlds_dir() else { return };
    let d = load(&dir.join("levels.sdf"));
    let w = &d.worlds[0];
    let perf: Vec<_> = w.performers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(perf, ["perf_sphere", "perf_box"]);
    let levels: Vec<_> = w.levels.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(levels, ["level1", "level2", "level3", "level4", "level5"]);
    let first = w.performers[0].ordinal;
    assert_eq!(w.levels[4].ordinal, first + 6);
    assert_eq!(d.entity_count, first + 6);
    assert!(w.plugins.iter().all(|p| p.name != "gz::sim"));
    assert!(w.levels_plugin.as_ref().is_some_and(|p| p.xml.contains("<level name=\"level3\">")));
}
