//! Part 2: The per-iteration cost of an empty world with three `testing::Noop` plugin systems
//! (`Server::step_once`) next to the same hook calls made through the same `FfiSystem`
//! objects, and, for scale, as in-process virtual calls. No goal: the abi_stable boundary
//! alone costs more than an earlier goal against in-process calls allowed, and what the
//! host adds is the difference printed.

use super::{best_of_interleaved, ns_per, Plan};
use plugin_api::{EcmView, Hooks, System, UpdateInfo};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use troupe::ecm::{Ecm as HostEcm, EcmAccess};
use troupe::server::{Server, ServerOptions};

const EMPTY_WORLD: &str = r#"<sdf version="1.9"><world name="bench"><physics><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics></world></sdf>"#;

const NOOP_CONFIG: &str = r#"<?xml version="1.0"?>
<server_config>
  <plugins>
    <plugin entity_name="*" entity_type="world" filename="troupe_testing" name="testing::Noop"/>
    <plugin entity_name="*" entity_type="world" filename="troupe_testing" name="testing::Noop"/>
    <plugin entity_name="*" entity_type="world" filename="troupe_testing" name="testing::Noop"/>
  </plugins>
</server_config>
"#;

/// Points `TROUPE_SYSTEM_PLUGIN_PATH` at `<exe dir>/deps` and `<exe dir>` (ahead of any value
/// already set) and checks that `libtroupe_testing.so` is there.
pub(crate) fn set_plugin_path() -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the executable: {e}"))?;
    let exe_dir = exe.parent().ok_or("the executable has no directory")?.to_path_buf();
    let dirs = [exe_dir.join("deps"), exe_dir.clone()];
    let mut value: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    if let Ok(old) = std::env::var("TROUPE_SYSTEM_PLUGIN_PATH") {
        value.push(old);
    }
    // Single-threaded here: nothing else reads the environment concurrently.
    std::env::set_var("TROUPE_SYSTEM_PLUGIN_PATH", value.join(":"));
    if !dirs.iter().any(|d| d.join("libtroupe_testing.so").is_file()) {
        return Err(format!(
            "libtroupe_testing.so is in neither {} nor {}; build with `cargo build -p troupe-bench`",
            dirs[0].display(),
            dirs[1].display()
        ));
    }
    Ok(())
}

/// A temporary file removed on drop.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn load_noop_server() -> Result<(Server, TempFile), String> {
    static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("troupe-bench-{}-{n}.config", std::process::id()));
    std::fs::write(&path, NOOP_CONFIG).map_err(|e| format!("{}: {e}", path.display()))?;
    let config = TempFile(path);
    let opts = ServerOptions {
        world_text: Some((EMPTY_WORLD.to_string(), "<bench empty world>".into())),
        run: true,
        config: Some(config.0.clone()),
        ..Default::default()
    };
    let server = Server::load(&opts).map_err(|e| format!("loading the empty world: {e}"))?;
    let labels = server.runners()[0].system_labels();
    if labels.len() != 3 || !labels.iter().all(|l| l.starts_with("testing::Noop")) {
        return Err(format!(
            "expected three testing::Noop systems loaded from the server config, got {}: {labels:?}",
            labels.len()
        ));
    }
    Ok((server, config))
}

/// The baseline's systems: the same `testing::Noop` type the plugin exports, linked into this
/// binary and called through `&mut dyn System` (no abi_stable boundary, no catch_unwind).
fn baseline_systems() -> Vec<Box<dyn System>> {
    (0..3).map(|_| Box::new(troupe_testing::Noop) as Box<dyn System>).collect()
}

/// `iterations` bare iterations: advance an UpdateInfo, then the hooks each system declares
/// (`System::hooks`, the rule the runner follows) as virtual calls, phase by phase, each
/// result checked. `all`: every hook of every system instead.
fn bare_loop(
    systems: &mut [Box<dyn System>],
    access: &mut EcmAccess<'_>,
    iterations: u64,
    all: bool,
) -> Result<Duration, String> {
    let hooks: Vec<Hooks> = systems.iter().map(|s| if all { Hooks::ALL } else { s.hooks() }).collect();
    let mut info = UpdateInfo { dt_ns: 1_000_000, ..UpdateInfo::default() };
    let t = Instant::now();
    for _ in 0..iterations {
        info.iterations += 1;
        info.sim_time_ns += info.dt_ns;
        let systems = black_box(&mut *systems);
        {
            let mut ecm = plugin_api::Ecm::from_ffi(access.as_mut_obj());
            for (s, h) in systems.iter_mut().zip(&hooks) {
                if h.contains(Hooks::PRE_UPDATE) {
                    s.pre_update(&info, &mut ecm).map_err(|e| e.0)?;
                }
            }
            for (s, h) in systems.iter_mut().zip(&hooks) {
                if h.contains(Hooks::UPDATE) {
                    s.update(&info, &mut ecm).map_err(|e| e.0)?;
                }
            }
        }
        let view = EcmView::from_ffi(access.as_ref_obj());
        for (s, h) in systems.iter_mut().zip(&hooks) {
            if h.contains(Hooks::POST_UPDATE) {
                s.post_update(&info, &view).map_err(|e| e.0)?;
            }
        }
    }
    let d = t.elapsed();
    black_box(info);
    Ok(d)
}

pub(crate) fn bench_step(plan: &Plan) -> Result<(), String> {
    let iterations = plan.step_iterations;
    let (mut server, _config) = load_noop_server()?;
    let library = server.runners()[0].system_labels()[0].clone();
    println!("2. Per-iteration cost of an empty world (Server::step_once(Duration::ZERO), real_time_factor 0).");
    println!(
        "   Systems: three testing::Noop systems loaded from the server config through the real \
         plugin loader ({}), in place of the default three (physics, user-commands, \
         scene-broadcaster), so that the figure is the host's own cost per step and not theirs.",
        library.trim_start_matches("testing::Noop ").trim_matches(|c| c == '(' || c == ')')
    );
    println!(
        "   Next to it: the same hook calls made through FfiSystem objects (into_ffi(Noop): abi_stable vtable, \
         catch_unwind, a bool result), as the runner makes them (Noop declares update only: 3 calls); \
         for scale, the same calls as in-process virtual calls on &mut dyn System"
    );
    println!(
        "   (the Ecm/EcmView arguments are wrapped over an empty ECM's facade each iteration as \
         the adapter does, and Noop never calls them, so no FFI cost)."
    );

    let mut empty = HostEcm::new();
    let mut access = EcmAccess::new(&mut empty, None);
    let mut systems = baseline_systems();
    // For the breakdown: the same calls through FfiSystem objects, and end_step on a copy of
    // the bench world's ECM (taken from a second server loaded the same way).
    let mut ffi_empty = HostEcm::new();
    let mut ffi_access = EcmAccess::new(&mut ffi_empty, None);
    let mut ffi_systems: Vec<plugin_api::ffi::SystemObj> =
        (0..3).map(|_| plugin_api::into_ffi(troupe_testing::Noop)).collect();
    let (mut second, _second_config) = load_noop_server()?;
    let mut world_ecm = std::mem::take(&mut second.runners_mut()[0].ecm);

    let start_iterations = server.runners()[0].clock.iterations();
    let mut step = || {
        let t = Instant::now();
        for _ in 0..iterations {
            server.step_once(black_box(Duration::ZERO)).map_err(|e| e.to_string())?;
        }
        Ok(t.elapsed())
    };
    let mut bare = || bare_loop(&mut systems, &mut access, iterations, false);
    let mut bare_all_empty = HostEcm::new();
    let mut bare_all_access = EcmAccess::new(&mut bare_all_empty, None);
    let mut bare_all_systems = baseline_systems();
    let mut bare_all = || bare_loop(&mut bare_all_systems, &mut bare_all_access, iterations, true);
    let mut ffi = || ffi_calls(&mut ffi_systems, &mut ffi_access, iterations, false);
    let mut all_empty = HostEcm::new();
    let mut all_access = EcmAccess::new(&mut all_empty, None);
    let mut all_systems: Vec<plugin_api::ffi::SystemObj> =
        (0..3).map(|_| plugin_api::into_ffi(troupe_testing::Noop)).collect();
    let mut ffi_all = || ffi_calls(&mut all_systems, &mut all_access, iterations, true);
    let mut end_step = || {
        let t = Instant::now();
        for _ in 0..iterations {
            black_box(&mut world_ecm).end_step();
        }
        Ok(t.elapsed())
    };
    // Warm-up.
    step()?;
    bare()?;
    bare_all()?;
    ffi()?;
    ffi_all()?;
    end_step()?;
    let [d_step, d_bare, d_bare_all, d_ffi, d_ffi_all, d_end] =
        best_of_interleaved(plan.reps, [&mut step, &mut bare, &mut bare_all, &mut ffi, &mut ffi_all, &mut end_step])?;
    let done = server.runners()[0].clock.iterations() - start_iterations;
    let expected = iterations * (plan.reps as u64 + 1);
    if done != expected {
        return Err(format!("the server simulated {done} iterations, expected {expected} (paused?)"));
    }

    let (s, b) = (ns_per(d_step, iterations), ns_per(d_bare, iterations));
    // Where the time of an empty step goes, each part alone (best of the same repetitions).
    let (ffi, ffi_all, end_step) =
        (ns_per(d_ffi, iterations), ns_per(d_ffi_all, iterations), ns_per(d_end, iterations));
    println!(
        "   step_once, 3 Noop plugins  {s:>9.1} ns/iteration {:>12.0} iterations/s   the same hook calls through FfiSystem objects {ffi:>7.1} ns   \
         ratio {:>5.1}x (no goal; the host's own work {:.1} ns)   in-process virtual calls {b:.1} ns",
        1e9 / s,
        s / ffi,
        s - ffi
    );

    let columns = world_ecm.component_types().count();
    println!(
        "      parts, each timed alone (interleaved with the above): the hook calls as the runner makes them through FfiSystem \
         objects (Noop declares update only: 3 run_update calls, 6 hooks skipped) {ffi:.1} ns, Ecm::end_step ({columns} component columns) {end_step:.1} ns,"
    );
    println!(
        "      the rest of WorldRunner::step (event dispatch, pending-removal checks, clock): about {:.1} ns",
        s - ffi - end_step
    );
    let b_all = ns_per(d_bare_all, iterations);
    println!(
        "      for reference, all 9 hooks (systems declaring all three): through FfiSystem objects {ffi_all:.1} ns \
         ({:.1} ns per call), as in-process virtual calls {b_all:.1} ns ({:.1} ns per call)",
        ffi_all / 9.0,
        b_all / 9.0
    );
    println!("      (for scale: a 10 us iteration is 100,000 iterations/s)");
    Ok(())
}

/// `iterations` times the hook calls of an iteration through `FfiSystem` objects
/// (in-process `into_ffi(Noop)`: abi_stable vtable, catch_unwind, a bool result), made as
/// the runner makes them: the `run_*` entry points, only for the hooks each system declares
/// (`all`: every hook, as for a system that declares all three).
fn ffi_calls(
    systems: &mut [plugin_api::ffi::SystemObj],
    access: &mut EcmAccess<'_>,
    iterations: u64,
    all: bool,
) -> Result<Duration, String> {
    use abi_stable::std_types::RNone;
    use plugin_api::ffi::Hooks;
    let hooks: Vec<Hooks> = systems.iter().map(|s| if all { Hooks::ALL } else { s.hooks() }).collect();
    let mut info = UpdateInfo { dt_ns: 1_000_000, ..UpdateInfo::default() };
    let failed = |what: &str| format!("a Noop failed in {what}");
    let t = Instant::now();
    for _ in 0..iterations {
        info.iterations += 1;
        info.sim_time_ns += info.dt_ns;
        let systems = black_box(&mut *systems);
        for (s, h) in systems.iter_mut().zip(&hooks) {
            if h.contains(Hooks::PRE_UPDATE) && !s.run_pre_update(&info, access.as_mut_obj(), &mut RNone) {
                return Err(failed("pre_update"));
            }
        }
        for (s, h) in systems.iter_mut().zip(&hooks) {
            if h.contains(Hooks::UPDATE) && !s.run_update(&info, access.as_mut_obj(), &mut RNone) {
                return Err(failed("update"));
            }
        }
        for (s, h) in systems.iter_mut().zip(&hooks) {
            if h.contains(Hooks::POST_UPDATE) && !s.run_post_update(&info, access.as_ref_obj(), &mut RNone) {
                return Err(failed("post_update"));
            }
        }
    }
    Ok(t.elapsed())
}
