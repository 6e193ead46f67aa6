//! Mesh collisions (STL and OBJ) and the errors bad mesh input gives.

use crate::common::*;
use troupe::fixture::TestFixture;

fn mesh_model(name: &str, pose: &str, uri: &str, is_static: bool) -> String {
    format!(
        r#"<model name="{name}"><static>{is_static}</static><pose>{pose}</pose><link name="link">{}
  <collision name="col"><geometry><mesh><uri>{uri}</uri></mesh></geometry></collision></link></model>"#,
        inertial(1.0, [1.0 / 6.0; 3])
    )
}

/// Drops a 1 m cube, tilted a little so it lands on an edge, and answers where it settles.
fn settled_cube(geometry_model: String, floor: String) -> plugin_api::math::Pose {
    let mut f = load(&world(&(floor + &geometry_model)));
    f.run(3000).unwrap();
    pose(&f, "cube")
}

#[test]
fn a_mesh_box_rests_like_a_primitive_box() {
    let tilt = "0.2 -0.1 1.5 0.1 0.05 0.3";
    let primitive = settled_cube(cube("cube", tilt, [1.0, 1.0, 1.0], 1.0, ""), ground(""));
    assert!((primitive.position.z - 0.5).abs() < 2e-3, "{primitive:?}");
    for file in ["meshes/cube.stl", "meshes/cube.obj"] {
        let mesh = settled_cube(mesh_model("cube", tilt, &asset(file), false), ground(""));
        let (a, b) = (mesh.position, primitive.position);
        eprintln!("{file}: rests at {a:?}, the primitive box at {b:?}");
        assert!((a.z - 0.5).abs() < 2e-3, "{file}: {mesh:?}");
        // Same shape, same landing: same place, to within the contact's slop.
        assert!((a.x - b.x).abs() < 0.01 && (a.y - b.y).abs() < 0.01, "{file}: {a:?} vs {b:?}");
        // Resting on a face: its z axis is vertical again (up or down).
        let up = mesh.rotation.rotate(plugin_api::math::Vec3::new(0.0, 0.0, 1.0));
        let vertical = up.z.abs().max(up.x.abs()).max(up.y.abs());
        assert!((vertical - 1.0).abs() < 1e-3, "{file}: not on a face: {mesh:?}");
    }
}

#[test]
fn a_mesh_is_scaled_by_its_scale() {
    // The 1 m cube scaled to 1 × 1 × 0.4 m rests 0.2 m up: the mesh, not a stand-in, collides.
    let model = mesh_model("cube", "0 0 1 0 0 0", &asset("meshes/cube.obj"), false)
        .replace("</uri>", "</uri><scale>1 1 0.4</scale>");
    let z = settled_cube(model, ground("")).position.z;
    assert!((z - 0.2).abs() < 2e-3, "scaled mesh rests at {z}");
}

#[test]
fn a_static_obj_floor_holds_a_ball_as_a_triangle_mesh() {
    let floor = mesh_model("floor", "0 0 0 0 0 0", &asset("meshes/floor.obj"), true);
    let mut f = load(&world(&(floor + &sphere("ball", "1 2 1 0 0 0", 0.2, 1.0, ""))));
    f.run(2000).unwrap();
    let z = pose(&f, "ball").position.z;
    assert!((z - 0.2).abs() < 2e-3, "ball at {z}");
}

/// Runs a world a few steps and answers the error it stopped with.
fn run_error(body: String) -> String {
    let mut f = TestFixture::from_sdf(&world(&body)).unwrap().finalize().unwrap();
    match f.run(5) {
        Ok(()) => panic!("the world ran"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_missing_mesh_file_is_an_error_naming_the_collision_and_file() {
    let e = run_error(mesh_model("cube", "0 0 1 0 0 0", "/nonexistent/troupe/crate.stl", false));
    for part in ["cube::link::col", "/nonexistent/troupe/crate.stl", "not found"] {
        assert!(e.contains(part), "error lacks {part:?}: {e}");
    }
}

#[test]
fn a_malformed_mesh_is_an_error_naming_the_file_and_line() {
    let path = asset("meshes/broken.obj");
    let e = run_error(mesh_model("wreck", "0 0 1 0 0 0", &path, false));
    for part in ["wreck::link::col", path.as_str(), "line 5", "face index 9"] {
        assert!(e.contains(part), "error lacks {part:?}: {e}");
    }
}

#[test]
fn a_mesh_format_physics_does_not_read_is_left_out_with_a_warning() {
    // A COLLADA file: warned about (naming the collision) and not collided with, so the
    // body falls through the floor instead of stopping the run.
    let body = ground("") + &mesh_model("cube", "0 0 1 0 0 0", &asset("meshes/cube.dae"), false);
    let mut f = load(&world(&body));
    f.run(1000).unwrap();
    assert!(pose(&f, "cube").position.z < -2.0, "{:?}", pose(&f, "cube"));
}

#[test]
fn non_positive_sizes_are_errors_naming_the_collision() {
    let e = run_error(cube("slab", "0 0 1 0 0 0", [1.0, 0.0, 1.0], 1.0, ""));
    assert!(e.contains("slab::link::col") && e.contains("box size y"), "{e}");
    let e = run_error(sphere("dot", "0 0 1 0 0 0", -0.5, 1.0, ""));
    assert!(e.contains("dot::link::col") && e.contains("sphere radius"), "{e}");
}

#[test]
fn a_non_physical_inertia_or_mass_is_an_error_naming_the_link() {
    let with_inertial = |inertial: &str| {
        format!(
            r#"<model name="odd"><pose>0 0 1 0 0 0</pose><link name="link">{inertial}
  <collision name="col"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision></link></model>"#
        )
    };
    let e = run_error(with_inertial(&inertial(1.0, [1.0, -1.0, 1.0])));
    assert!(e.contains("link odd::link") && e.contains("negative principal moment"), "{e}");
    let e = run_error(with_inertial(&inertial(0.0, [1.0, 1.0, 1.0])));
    assert!(e.contains("link odd::link") && e.contains("<mass> must be positive"), "{e}");
}

#[test]
fn a_non_finite_command_is_an_error_naming_it_and_the_entity() {
    use plugin_api::components::WorldPoseCmd;
    use plugin_api::math::Pose;
    use plugin_api::{Change, EcmRead};
    let mut f = TestFixture::from_sdf(&world(&sphere("ball", "0 0 1 0 0 0", 0.1, 1.0, "")))
        .unwrap()
        .on_pre_update(|info, ecm| {
            if info.iterations == 3 {
                let ball = ecm.entity_by_name("ball").unwrap();
                ecm.set(ball, &WorldPoseCmd(Pose::from_xyz_rpy(f64::NAN, 0.0, 1.0, 0.0, 0.0, 0.0)), Change::OneTime)?;
            }
            Ok(())
        })
        .finalize()
        .unwrap();
    let e = f.run(10).expect_err("a NaN pose must stop the run").to_string();
    let ball = id(&f, "ball");
    assert!(
        e.contains("WorldPoseCmd position") && e.contains("not finite") && e.contains(&format!("entity {ball}")),
        "{e}"
    );
}
