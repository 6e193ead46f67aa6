//! Part 7: Sensors: the step time of a world with a 640 x 16 CPU lidar at 10 Hz among static
//!    shapes, its rays cast through rapier's ray caster (the host's ray-cast service) and
//!    against the sensors system's own geometry (`<ray_casts>own</ray_casts>`), against the
//!    same world without the lidar, all on `troupe_physics_rapier` with `troupe_sensors`
//!    loaded as plugins through `Server::step_once`.

use super::best_of_interleaved;
use std::hint::black_box;
use std::time::{Duration, Instant};
use troupe::server::{Server, ServerOptions};

/// `shapes` static shapes (boxes, spheres, cylinders in turn) on a ring of radius 2..8 m
/// around the origin, and a static post at the origin carrying the lidar when `lidar`;
/// `ray_casts` goes into the sensors system's `<ray_casts>`.
fn world(shapes: usize, lidar: bool, ray_casts: &str) -> String {
    let mut body = String::new();
    for i in 0..shapes {
        let a = i as f64 * 2.399_963; // golden angle: spread evenly
        let r = 2.0 + 6.0 * (i as f64 / shapes as f64).sqrt();
        let (x, y, z) = (r * a.cos(), r * a.sin(), 0.2 + 0.3 * (i % 7) as f64);
        let geometry = match i % 3 {
            0 => "<box><size>0.2 0.2 0.2</size></box>",
            1 => "<sphere><radius>0.1</radius></sphere>",
            _ => "<cylinder><radius>0.1</radius><length>0.3</length></cylinder>",
        };
        body += &format!(
            "<model name=\"s{i}\"><static>true</static><pose>{x:.4} {y:.4} {z:.4} 0 0 0</pose><link name=\"l\">\
             <collision name=\"c\"><geometry>{geometry}</geometry></collision></link></model>\n"
        );
    }
    let sensor = if lidar {
        "<sensor name=\"lidar\" type=\"gpu_lidar\"><update_rate>10</update_rate><lidar><scan>\
         <horizontal><samples>640</samples><min_angle>-3.14159</min_angle><max_angle>3.14159</max_angle></horizontal>\
         <vertical><samples>16</samples><min_angle>-0.26</min_angle><max_angle>0.26</max_angle></vertical></scan>\
         <range><min>0.1</min><max>20</max><resolution>0.01</resolution></range></lidar></sensor>"
    } else {
        ""
    };
    format!(
        r#"<sdf version="1.9"><world name="lidar_bench">
<physics name="1ms" type="ignored"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
<plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>
<plugin filename="gz-sim-sensors-system" name="gz::sim::systems::Sensors"><ray_casts>{ray_casts}</ray_casts></plugin>
<model name="post"><static>true</static><pose>0 0 1 0 0 0</pose><link name="l">{sensor}</link></model>
{body}</world></sdf>"#
    )
}

fn load(shapes: usize, lidar: bool, ray_casts: &str) -> Result<Server, String> {
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
    let opts = ServerOptions {
        world_text: Some((world(shapes, lidar, ray_casts), "<bench lidar>".into())),
        run: true,
        ..Default::default()
    };
    Server::load(&opts).map_err(|e| format!("loading the lidar world: {e}"))
}

pub(crate) fn bench(quick: bool, reps: usize) -> Result<(), String> {
    let (shapes, steps) = if quick { (200, 200) } else { (1000, 1000) };
    println!("7. Sensors: {shapes} static shapes and a 640 x 16 CPU lidar at 10 Hz (one scan per 100 steps of 1 ms), {steps} steps");
    println!("   per repetition: Server::step_once with troupe_physics_rapier and troupe_sensors loaded: rays through rapier's ray caster,");
    println!(
        "   rays against the sensors system's own geometry (<ray_casts>own), and the same world without the lidar."
    );
    let mut caster = load(shapes, true, "physics")?;
    let mut own = load(shapes, true, "own")?;
    let mut without = load(shapes, false, "auto")?;
    fn run(server: &mut Server, steps: usize) -> Result<Duration, String> {
        let t = Instant::now();
        for _ in 0..steps {
            server.step_once(black_box(Duration::ZERO)).map_err(|e| e.to_string())?;
        }
        Ok(t.elapsed())
    }
    let mut through_caster = || run(&mut caster, steps);
    let mut own_geometry = || run(&mut own, steps);
    let mut baseline = || run(&mut without, steps);
    through_caster()?;
    own_geometry()?;
    baseline()?;
    let [d_caster, d_own, d_base] = best_of_interleaved(reps, [&mut through_caster, &mut own_geometry, &mut baseline])?;
    let per = |d: Duration| d.as_secs_f64() * 1e6 / steps as f64;
    let scans = steps / 100;
    let per_scan = |d: Duration| (d.as_secs_f64() - d_base.as_secs_f64()).max(0.0) * 1e3 / scans as f64;
    println!("   {:<34} {:>9.1} us/step", "without lidar", per(d_base));
    for (name, d) in [("lidar through rapier's ray caster", d_caster), ("lidar against own geometry (BVH)", d_own)] {
        println!(
            "   {name:<34} {:>9.1} us/step   ratio {:>6.2}x   ({:.2} ms per scan of 10240 rays)",
            per(d),
            d.as_secs_f64() / d_base.as_secs_f64(),
            per_scan(d)
        );
    }
    Ok(())
}
