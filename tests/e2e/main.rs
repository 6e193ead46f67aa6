//! End-to-end tests: the real `troupe` binary loading real plugin libraries.
//!
//! Each test starts `troupe` as a child process through [`harness`] (controlled
//! environment, own temp dir, 120 s timeout). nextest runs this binary's tests one at a
//! time (`.config/nextest.toml`).
//!
//! * [`worlds`]: gz-sim's reference worlds (`$TROUPE_GZ_WORLDS`) and `worlds/demo.sdf` run.
//! * [`ids`]: entity ids are a pure function of the world file.
//! * [`include`]: `<include>` of `model://` URIs found through the environment.
//! * [`errors`]: every way of failing to start or failing while running says what and where.
//! * [`lifecycle`]: iteration counts, stop event, signals, pacing.
//! * [`limits`]: numbers out of range (world values, `-z`, service requests): refused, no
//!   panic or hang.
//! * [`config`]: which config systems load (`--config`, `GZ_SIM_SERVER_CONFIG_PATH`,
//!   policies, `--physics-engine`).
//! * [`spawn`]: systems of models created while running.
//! * [`logs`]: recording state logs and `troupe log diff`.
//! * [`transport`]: world control, stats and the topic/service tools, with `nngcat`.
//! * [`commands`]: spawning, moving and resetting through the user-commands services.
//! * [`scene`]: the scene broadcaster of the default config, read with the tools.
//! * [`model_systems`]: `worlds/diff_drive.sdf` driven over `cmd_vel` with `troupe topic`.
//! * [`sensors`]: a real subscriber at real time receives every sensor sample.
//! * [`distributed`]: primaries and secondaries as processes: clean ends, kill -9, late and
//!   refused peers, discovery timeouts.
//! * [`roles`]: which systems each role of a distributed run skips, in its log.
//! * [`netns`]: the one across-machines test: 1 + 2 in network namespaces, a link cut.
//! * [`split`]: one world split across processes: the primary's log against standalone,
//!   commands through the primary, spawned performers.
//!
//! [`harness`] starts runs; [`output`] reads what they left (exit code, output, Recorder files).

mod commands;
mod config;
mod distributed;
mod errors;
mod harness;
mod ids;
mod include;
mod levels;
mod lifecycle;
mod limits;
mod logs;
mod model_systems;
mod netns;
mod output;
mod roles;
mod scene;
mod sensors;
mod spawn;
mod split;
mod transport;
mod worlds;
