//! Part 5: Physics: Troupe's server stepping `troupe_physics_rapier` against bare rapier on the
//! identical scene, built from the same loaded ECM, timed in alternating blocks of steps.
//!
//! Scenes: a pile of 0.1 m boxes (`../shared/bench/mujoco_boxes.py`'s `pile`, same layout
//! and jitter) and gz-sim's 3k_shapes.sdf (`$TROUPE_GZ_WORLDS`). Phases: `fall` (the first
//! steps) and `settled` (after the scene came to rest). Sleeping is off in both for the
//! ratio goal (≤ 1.15x); with sleeping on, the settled 3k world is timed too.

use plugin_api::components::{Collision, Geometry, Inertial, Link, Model, Static, Surface};
use plugin_api::math::Pose;
use plugin_api::{Component, EntityId, Which};
use rapier3d_f64::dynamics::{
    CCDSolver, CoefficientCombineRule, ImpulseJointSet, IntegrationParameters, IslandManager, MultibodyJointSet,
    RigidBodyBuilder, RigidBodySet, SoftBodySet,
};
use rapier3d_f64::geometry::{ColliderBuilder, ColliderSet, DefaultBroadPhase, NarrowPhase, SharedShape};
use rapier3d_f64::math::{Matrix, Pose as RPose, Rotation, Vector};
use rapier3d_f64::parry::mass_properties::MassProperties;
use rapier3d_f64::pipeline::PhysicsPipeline;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use troupe::ecm::Ecm as HostEcm;
use troupe::server::{Server, ServerOptions};

/// Steps of each phase.
struct Phases {
    fall: u64,
    settle: u64,
    settled: u64,
    block: u64,
}

/// mujoco_boxes.py's jitter: a deterministic number in [-1, 1) for box `i`, component `k`.
fn jitter(i: usize, k: usize) -> f64 {
    let v = ((i as f64 * 12.9898 + k as f64 * 78.233).sin() * 43758.5453).abs();
    2.0 * (v - v.floor()) - 1.0
}

/// mujoco_boxes.py's `pile --n N` as an SDF world: 0.1 m, 1 kg cubes, 10 × 10 per layer at
/// 0.12 m pitch, first layer at z = 0.08 m, jittered ±0.01 m and ±0.2 rad yaw; g = 9.81.
fn pile_world(n: usize, sleep: bool) -> String {
    let per_side = ((n.min(100) as f64).sqrt().round() as usize).max(1);
    let per_layer = per_side * per_side;
    let pitch = 0.12;
    let off = (per_side - 1) as f64 * pitch / 2.0;
    let i_box = 1.0 * (0.1f64 * 0.1 + 0.1 * 0.1) / 12.0;
    let mut body = String::new();
    for i in 0..n {
        let (layer, k) = (i / per_layer, i % per_layer);
        let (ix, iy) = (k / per_side, k % per_side);
        let x = ix as f64 * pitch - off + 0.01 * jitter(i, 0);
        let y = iy as f64 * pitch - off + 0.01 * jitter(i, 1);
        let z = 0.05 + 0.03 + layer as f64 * pitch;
        let yaw = 0.2 * jitter(i, 2);
        body += &format!(
            "<model name=\"box{i}\"><pose>{x:.5} {y:.5} {z:.5} 0 0 {yaw:.6}</pose><link name=\"l\"><inertial><mass>1</mass>\
             <inertia><ixx>{i_box}</ixx><iyy>{i_box}</iyy><izz>{i_box}</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>\
             <collision name=\"c\"><geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision></link></model>\n"
        );
    }
    format!(
        r#"<sdf version="1.9"><world name="pile">
<physics name="1ms" type="ignored"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
<gravity>0 0 -9.81</gravity>
<plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"><sleep>{sleep}</sleep></plugin>
<model name="ground"><static>true</static><link name="l"><collision name="c"><geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry></collision></link></model>
{body}</world></sdf>"#
    )
}

/// 3k_shapes.sdf's text with the physics plugin told whether to sleep.
fn world_3k(sleep: bool) -> Result<Option<String>, String> {
    let Some(dir) = std::env::var_os("TROUPE_GZ_WORLDS").filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let mut dir = PathBuf::from(dir);
    if dir.is_relative() {
        dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
    }
    let path = dir.join("3k_shapes.sdf");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let tag = "name=\"gz::sim::systems::Physics\">";
    if !text.contains(tag) {
        return Err(format!("{}: no gz-sim physics plugin element to configure", path.display()));
    }
    Ok(Some(text.replacen(tag, &format!("{tag}<sleep>{sleep}</sleep>"), 1)))
}

// ------------------------------------------------------------------------------- bare rapier

/// Bare rapier: the sets, the pipeline and a step, nothing else.
struct Bare {
    params: IntegrationParameters,
    gravity: Vector,
    pipeline: PhysicsPipeline,
    islands: IslandManager,
    broad: DefaultBroadPhase,
    narrow: NarrowPhase,
    bodies: RigidBodySet,
    colliders: ColliderSet,
    joints: ImpulseJointSet,
    multibody: MultibodyJointSet,
    soft: SoftBodySet,
    ccd: CCDSolver,
}

impl Bare {
    fn step(&mut self) {
        self.pipeline.step(
            self.gravity,
            &self.params,
            &mut self.islands,
            &mut self.broad,
            &mut self.narrow,
            &mut self.bodies,
            &mut self.colliders,
            &mut self.joints,
            &mut self.multibody,
            &mut self.soft,
            &mut self.ccd,
            &(),
            &(),
        );
    }
}

fn rpose(p: &Pose) -> RPose {
    let q = Rotation::from_xyzw(p.rotation.x, p.rotation.y, p.rotation.z, p.rotation.w);
    let n = q.length();
    let q = if (n - 1.0).abs() > 1e-12 && n > 0.0 { q / n } else { q };
    RPose::from_parts(Vector::new(p.position.x, p.position.y, p.position.z), q)
}

/// The same scene in bare rapier, read from the loaded world's ECM (top-level models of one
/// link; boxes, spheres, cylinders and planes), with the same parameters Troupe's physics
/// uses: rapier's default integration parameters at the world's step, mass properties from
/// `<inertial>` (collider density 0), friction by minimum and restitution by product.
fn bare_from_ecm(ecm: &HostEcm, dt: f64, gravity: Vector, sleep: bool) -> Result<Bare, String> {
    let params = IntegrationParameters { dt, ..IntegrationParameters::default() };
    let mut bare = Bare {
        params,
        gravity,
        pipeline: PhysicsPipeline::new(),
        islands: IslandManager::new(),
        broad: DefaultBroadPhase::new(),
        narrow: NarrowPhase::new(),
        bodies: RigidBodySet::new(),
        colliders: ColliderSet::new(),
        joints: ImpulseJointSet::new(),
        multibody: MultibodyJointSet::new(),
        soft: SoftBodySet::new(),
        ccd: CCDSolver::new(),
    };
    for link in ecm.query(Which::ALL, &[Link::ID]) {
        let model: EntityId = ecm.parent(link).filter(|m| ecm.has::<Model>(*m)).ok_or("a link outside a model")?;
        let world = rpose(&ecm.get::<Pose>(model).unwrap_or(Pose::IDENTITY))
            * rpose(&ecm.get::<Pose>(link).unwrap_or(Pose::IDENTITY));
        let builder = if ecm.get::<Static>(model).is_some_and(|s| s.0) {
            RigidBodyBuilder::fixed()
        } else {
            let i = ecm.get::<Inertial>(link).unwrap_or_default();
            let [ixx, ixy, ixz, iyy, iyz, izz] = i.inertia;
            let local =
                Matrix::from_cols(Vector::new(ixx, ixy, ixz), Vector::new(ixy, iyy, iyz), Vector::new(ixz, iyz, izz));
            let r = Matrix::from_quat(rpose(&i.pose).rotation);
            let com = Vector::new(i.pose.position.x, i.pose.position.y, i.pose.position.z);
            RigidBodyBuilder::dynamic()
                .additional_mass_properties(MassProperties::with_inertia_matrix(com, i.mass, r * local * r.transpose()))
                .can_sleep(sleep)
        };
        let body = bare.bodies.insert(builder.pose(world).build());
        for c in ecm.children(link).filter(|c| ecm.has::<Collision>(*c)) {
            let (shape, extra) = match ecm.get::<Geometry>(c).unwrap_or_default() {
                Geometry::Box { size } => {
                    (SharedShape::cuboid(size.x / 2.0, size.y / 2.0, size.z / 2.0), RPose::IDENTITY)
                }
                Geometry::Sphere { radius } => (SharedShape::ball(radius), RPose::IDENTITY),
                Geometry::Cylinder { radius, length } => (
                    SharedShape::cylinder(length / 2.0, radius),
                    RPose::from_rotation(Rotation::from_rotation_x(std::f64::consts::FRAC_PI_2)),
                ),
                Geometry::Plane { normal, .. } => {
                    (SharedShape::halfspace(Vector::new(normal.x, normal.y, normal.z).normalize()), RPose::IDENTITY)
                }
                Geometry::Empty => continue,
                other => return Err(format!("the bare baseline does not build {other:?}")),
            };
            let surface = ecm.get::<Surface>(c).unwrap_or_default();
            let collider = ColliderBuilder::new(shape)
                .position(rpose(&ecm.get::<Pose>(c).unwrap_or(Pose::IDENTITY)) * extra)
                .density(0.0)
                .friction(surface.mu)
                .friction_combine_rule(CoefficientCombineRule::Min)
                .restitution(surface.restitution)
                .restitution_combine_rule(CoefficientCombineRule::Multiply)
                .build();
            bare.colliders.insert_with_parent(collider, body, &mut bare.bodies);
        }
    }
    Ok(bare)
}

// ------------------------------------------------------------------------------- runs

struct Scene {
    label: &'static str,
    server: Server,
    bare: Bare,
    models: Vec<EntityId>,
}

fn load(label: &'static str, text: String, sleep: bool) -> Result<Scene, String> {
    let opts = ServerOptions { world_text: Some((text, format!("<bench {label}>"))), run: true, ..Default::default() };
    let server = Server::load(&opts).map_err(|e| format!("{label}: {e}"))?;
    if !server.runners()[0].system_labels().iter().any(|l| l.contains("troupe_physics_rapier")) {
        return Err(format!("{label}: the physics system did not load: {:?}", server.runners()[0].system_labels()));
    }
    let runner = &server.runners()[0];
    let ecm = &runner.ecm;
    let world = runner.world_entity();
    let physics = ecm.get::<plugin_api::components::Physics>(world).unwrap_or_default();
    let g = ecm
        .get::<plugin_api::components::Gravity>(world)
        .map(|g| g.0)
        .unwrap_or(plugin_api::math::Vec3::new(0.0, 0.0, -9.8));
    let bare = bare_from_ecm(ecm, physics.max_step_size, Vector::new(g.x, g.y, g.z), sleep)?;
    let models = ecm
        .query(Which::ALL, &[Model::ID])
        .into_iter()
        .filter(|m| !ecm.get::<Static>(*m).is_some_and(|s| s.0))
        .collect();
    Ok(Scene { label, server, bare, models })
}

/// Times of a phase: totals of each side, and the ratio of each block (both sides run the
/// same steps of the same scene in a block, so each block's ratio compares like with like).
struct Timed {
    ours: Duration,
    bare: Duration,
    ratios: Vec<f64>,
}

impl Timed {
    /// The median of the per-block ratios: a burst of load from another process on this
    /// shared machine lands in one block and moves the median little.
    fn ratio(&self) -> f64 {
        let mut r = self.ratios.clone();
        r.sort_by(f64::total_cmp);
        r.get(r.len() / 2).copied().unwrap_or(f64::NAN)
    }
}

/// `steps` steps of both, in alternating blocks (Troupe first in even blocks, rapier first
/// in odd ones) so both see the same machine noise.
fn run_both(scene: &mut Scene, steps: u64, block: u64) -> Result<Timed, String> {
    let (mut ours, mut bare) = (Duration::ZERO, Duration::ZERO);
    let mut ratios = Vec::new();
    let mut done = 0;
    let mut flip = false;
    while done < steps {
        let k = block.min(steps - done);
        let (mut o, mut b) = (Duration::ZERO, Duration::ZERO);
        for first in [flip, !flip] {
            let t = Instant::now();
            if first {
                for _ in 0..k {
                    scene.bare.step();
                }
                b = t.elapsed();
            } else {
                for _ in 0..k {
                    scene.server.step_once(Duration::ZERO).map_err(|e| format!("{}: {e}", scene.label))?;
                }
                o = t.elapsed();
            }
        }
        ours += o;
        bare += b;
        ratios.push(o.as_secs_f64() / b.as_secs_f64());
        flip = !flip;
        done += k;
    }
    Ok(Timed { ours, bare, ratios })
}

/// Lowest and highest body centre and highest speed of the dynamic bodies, for both, speeds
/// from the positions one step apart (Troupe's from the model poses it wrote: each model's
/// single link sits at its origin in these scenes).
fn summaries(scene: &mut Scene) -> Result<[(f64, f64, f64); 2], String> {
    let ours = |s: &Scene| -> Vec<Vector> {
        let ecm = &s.server.runners()[0].ecm;
        s.models
            .iter()
            .map(|m| ecm.get::<Pose>(*m).unwrap_or(Pose::IDENTITY).position)
            .map(|p| Vector::new(p.x, p.y, p.z))
            .collect()
    };
    let bare = |s: &Scene| -> Vec<Vector> {
        s.bare.bodies.iter().filter(|(_, b)| b.is_dynamic()).map(|(_, b)| b.translation()).collect()
    };
    let (ours0, bare0) = (ours(scene), bare(scene));
    scene.server.step_once(Duration::ZERO).map_err(|e| e.to_string())?;
    scene.bare.step();
    let dt = scene.bare.params.dt;
    let summary = |before: &[Vector], after: &[Vector]| {
        let mut s = (f64::MAX, f64::MIN, 0.0f64);
        for (a, b) in before.iter().zip(after) {
            s = (s.0.min(b.z), s.1.max(b.z), s.2.max((*b - *a).length() / dt));
        }
        s
    };
    Ok([summary(&ours0, &ours(scene)), summary(&bare0, &bare(scene))])
}

fn ms(d: Duration, steps: u64) -> f64 {
    d.as_secs_f64() * 1e3 / steps as f64
}

fn report(phase: &str, steps: u64, t: Timed, goal: Option<f64>) {
    let ratio = t.ratio();
    let (ours, bare) = (t.ours, t.bare);
    let verdict = match goal {
        Some(g) => format!(" (goal <= {g}x: {})", super::verdict(ratio, g)),
        None => " (no goal)".into(),
    };
    println!(
        "     {phase:<8} {steps:>5} steps   Troupe {:>8.4} ms/step   bare rapier {:>8.4} ms/step   ratio {ratio:>5.2}x{verdict}  [totals' ratio {:.2}x]",
        ms(ours, steps),
        ms(bare, steps),
        ours.as_secs_f64() / bare.as_secs_f64()
    );
}

/// Runs one scene's phases and reports them; answers Troupe's settled ms per step.
fn bench_scene(
    label: &'static str,
    text: String,
    sleep: bool,
    p: &Phases,
    goal: Option<f64>,
    phases: &[&str],
) -> Result<f64, String> {
    let t = Instant::now();
    let mut scene = load(label, text, sleep)?;
    println!(
        "   {label}: {} dynamic bodies, {} colliders, sleeping {} (loaded in {:.1} s)",
        scene.bare.bodies.iter().filter(|(_, b)| b.is_dynamic()).count(),
        scene.bare.colliders.len(),
        if sleep { "on" } else { "off" },
        t.elapsed().as_secs_f64()
    );
    // The first update builds Troupe's rapier world from the ECM (the bare one was built
    // at load, untimed): one untimed step of each, its cost printed apart.
    let t = Instant::now();
    scene.server.step_once(Duration::ZERO).map_err(|e| format!("{label}: {e}"))?;
    let first = t.elapsed();
    scene.bare.step();
    println!(
        "     first step (Troupe builds its rapier world from the ECM): {:.1} ms, untimed below",
        first.as_secs_f64() * 1e3
    );
    if phases.contains(&"fall") {
        let fall = run_both(&mut scene, p.fall, p.block)?;
        report("fall", p.fall, fall, goal);
    } else {
        run_both(&mut scene, p.fall, p.block)?;
    }
    run_both(&mut scene, p.settle, p.block)?;
    let settled = run_both(&mut scene, p.settled, p.block)?;
    let ours_settled = ms(settled.ours, p.settled);
    report("settled", p.settled, settled, goal);
    let [ours, bare] = summaries(&mut scene)?;
    println!(
        "     final state after {:.2} s: Troupe z {:.4}..{:.4} m, max speed {:.2e} m/s | bare rapier z {:.4}..{:.4} m, max speed {:.2e} m/s",
        (p.fall + p.settle + p.settled + 2) as f64 * scene.bare.params.dt,
        ours.0,
        ours.1,
        ours.2,
        bare.0,
        bare.1,
        bare.2
    );
    Ok(ours_settled)
}

pub(crate) fn bench(quick: bool) -> Result<(), String> {
    println!("5. Physics step: Troupe's server (Server::step_once, troupe_physics_rapier loaded as a plugin) vs bare rapier3d-f64");
    println!("   on the identical scene built from the same ECM (default integration parameters, 1 ms steps, single thread).");
    println!("   Timed in alternating blocks of steps: ms/step from the phase totals; ratio = median of the per-block ratios");
    println!("   (each block runs the same steps on both; the median resists bursts of load from other processes).");
    let (pile_n, p) = if quick {
        (100, Phases { fall: 200, settle: 300, settled: 200, block: 20 })
    } else {
        (1000, Phases { fall: 500, settle: 1500, settled: 500, block: 25 })
    };
    let pile_ms = bench_scene("box pile", pile_world(pile_n, false), false, &p, Some(1.15), &["fall", "settled"])?;
    if quick {
        println!("   3k_shapes.sdf and MuJoCo: full run only (`cargo run -p troupe-bench -- --only physics`).");
        return Ok(());
    }
    // Rapier's defaults sleep: the pile with sleeping on, for the MuJoCo comparison.
    let pile_asleep_ms = bench_scene("box pile", pile_world(pile_n, true), true, &p, None, &[])?;
    let p3 = Phases { fall: 300, settle: 200, settled: 500, block: 25 };
    // Rapier puts a body to sleep after 2 s at rest: settled from 2.3 s on.
    let asleep = Phases { fall: 300, settle: 2000, settled: 500, block: 25 };
    let mut asleep_ms = None;
    match world_3k(false)? {
        None => println!("   3k_shapes.sdf skipped: TROUPE_GZ_WORLDS is not set"),
        Some(text) => {
            bench_scene("3k_shapes.sdf", text, false, &p3, Some(1.15), &["fall", "settled"])?;
            let text = world_3k(true)?.ok_or("TROUPE_GZ_WORLDS vanished")?;
            asleep_ms = Some(bench_scene("3k_shapes.sdf", text, true, &asleep, None, &[])?);
        }
    }
    mujoco(pile_n, &p, [pile_ms, pile_asleep_ms], &asleep, asleep_ms)
}

/// MuJoCo on the same scenes through `../shared/bench/mujoco_boxes.py`, where it is
/// importable (never in CI): the pile with MuJoCo's defaults, the 3k world with `--sleep`,
/// each with its settled phase over the same steps as Troupe's above.
fn mujoco(
    pile_n: usize,
    pile: &Phases,
    pile_ms: [f64; 2],
    asleep: &Phases,
    asleep_ms: Option<f64>,
) -> Result<(), String> {
    if std::env::var_os("CI").is_some() {
        println!("   MuJoCo comparison skipped: CI");
        return Ok(());
    }
    let importable =
        std::process::Command::new("python3").args(["-c", "import mujoco"]).output().is_ok_and(|o| o.status.success());
    if !importable {
        println!(
            "   MuJoCo comparison skipped: `python3 -c 'import mujoco'` fails here (pip install mujoco to compare)"
        );
        return Ok(());
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench/mujoco_boxes.py");
    if !script.is_file() {
        println!("   MuJoCo comparison skipped: {} not found", script.display());
        return Ok(());
    }
    let n = pile_n.to_string();
    let (pf, ps) = ((pile.fall + pile.settle + 1).to_string(), pile.settled.to_string());
    let (af, as_) = ((asleep.fall + asleep.settle + 1).to_string(), asleep.settled.to_string());
    // (what, the MuJoCo script's arguments, Troupe's figures to print beside its answer)
    type Run<'a> = (&'a str, Vec<&'a str>, Vec<(&'a str, f64)>);
    let runs: [Run; 2] = [
        (
            "box pile with MuJoCo's defaults (no sleeping)",
            vec!["--scene", "pile", "--n", &n, "--fall-steps", &pf, "--steps", &ps],
            vec![("Troupe, rapier's defaults (sleeping on)", pile_ms[1]), ("Troupe, sleeping off", pile_ms[0])],
        ),
        (
            "3k world with MuJoCo --sleep",
            vec!["--scene", "3k", "--sleep", "--fall-steps", &af, "--steps", &as_],
            asleep_ms.map(|ms| vec![("Troupe, sleeping on", ms)]).unwrap_or_default(),
        ),
    ];
    for (what, args, ours) in runs {
        println!("   MuJoCo (Newton, 100 iterations), {what}: mujoco_boxes.py {}", args.join(" "));
        let out = std::process::Command::new("python3").arg(&script).args(&args).output().map_err(|e| e.to_string())?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        for line in stdout.lines().chain(String::from_utf8_lossy(&out.stderr).lines()) {
            println!("     {line}");
        }
        let settled_us = stdout
            .split_whitespace()
            .find_map(|w| w.strip_prefix("settled=").and_then(|v| v.strip_suffix("us/step")))
            .and_then(|v| v.parse::<f64>().ok());
        let Some(us) = settled_us else {
            println!("     (no settled figure to compare)");
            continue;
        };
        for (who, ms) in ours {
            let ratio = ms * 1e3 / us;
            println!(
                "     settled, same steps: {who} {ms:.4} ms/step, MuJoCo {:.4} ms/step: ratio {ratio:.2}x (goal <= 0.5x: {}; MuJoCo timed alone, not interleaved)",
                us / 1e3,
                super::verdict(ratio, 0.5)
            );
        }
    }
    Ok(())
}
