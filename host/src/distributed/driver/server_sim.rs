//! The driver's [`Simulation`] over a loaded [`Server`] (one world), and
//! [`Server::run_distributed`].

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use plugin_api::msgs::SerializedStateMap;

use super::{run_primary, run_secondary, DriverConfig, DriverError, Simulation};
use crate::distributed::settings::Role;
use crate::distributed::{fingerprint, Outcome, PeerRef, StepInput, StepOrder};
use crate::server::{RunSummary, Server};

/// A server stepped by the driver.
struct ServerSim<'a> {
    server: &'a mut Server,
    target: Option<u64>,
    start_iterations: u64,
    last: Instant,
}

impl ServerSim<'_> {
    fn wall(&mut self) -> Duration {
        let now = Instant::now();
        let wall = now - self.last;
        self.last = now;
        wall
    }
}

impl Simulation for ServerSim<'_> {
    fn listing(&self) -> Vec<String> {
        let r = &self.server.runners[0];
        fingerprint::listing(&r.ecm, r.world_entity())
    }

    fn next_step(&mut self) -> StepInput {
        let (runner, transport) = (&mut self.server.runners[0], &mut self.server.transports[0]);
        transport.before_step(runner);
        let paused = runner.clock.paused;
        let info = runner.clock.info();
        let dt = if paused { 0 } else { runner.clock.step_ns.max(0) as u64 };
        StepInput {
            iteration: info.iterations + u64::from(!paused),
            sim_time: Duration::from_nanos(info.sim_time_ns.max(0) as u64 + dt),
            dt: Duration::from_nanos(dt),
            paused,
            commands: Vec::new(),
        }
    }

    fn primary_step(&mut self, _answers: &[(PeerRef, SerializedStateMap)]) -> Result<(), String> {
        let wall = self.wall();
        let s = &mut *self.server;
        let (runner, transport) = (&mut s.runners[0], &mut s.transports[0]);
        runner.step(&mut s.loader, wall).map_err(|e| e.to_string())?;
        transport.after_step(runner, wall);
        Ok(())
    }

    fn secondary_step(&mut self, order: &StepOrder) -> Result<SerializedStateMap, String> {
        let wall = self.wall();
        let s = &mut *self.server;
        let runner = &mut s.runners[0];
        runner.clock.paused = order.paused;
        if !order.paused {
            runner.clock.step_ns = order.dt.as_nanos() as i64;
        }
        runner.step(&mut s.loader, wall).map_err(|e| e.to_string())?;
        let info = runner.clock.info();
        if info.iterations != order.iteration || info.sim_time_ns as u128 != order.sim_time.as_nanos() {
            return Err(format!(
                "its clock left the primary's: after step {} it is at iteration {} and {} ns, the primary at {} and {} ns",
                order.seq,
                info.iterations,
                info.sim_time_ns,
                order.iteration,
                order.sim_time.as_nanos()
            ));
        }
        Ok(runner.take_changes().unwrap_or_default())
    }

    fn should_stop(&self) -> bool {
        let r = &self.server.runners[0];
        r.stop_requested() || self.target.is_some_and(|n| r.clock.iterations() - self.start_iterations >= n)
    }

    fn period(&self) -> Duration {
        if self.server.runners[0].clock.paused {
            Duration::from_millis(1)
        } else {
            self.server.step_period().unwrap_or_default()
        }
    }

    fn finish(&mut self) -> Result<(), String> {
        self.server.runners[0].shutdown().map_err(|e| e.to_string())
    }
}

impl Server {
    /// Runs this server's part of a distributed run (see [`Server::network`]) until it
    /// ends: the primary until `iterations` unpaused iterations (0 or `None`: until
    /// stopped), a secondary until the primary stops it. The outcome says whether the run
    /// ended cleanly and, if not, names the lost peer and the cause.
    pub fn run_distributed(
        &mut self,
        iterations: Option<u64>,
        mut progress: impl FnMut(u64),
    ) -> Result<(RunSummary, Outcome), DriverError> {
        let Some(settings) = self.network().cloned() else {
            return Err(DriverError::Setup(String::from("this server has no --network-role")));
        };
        let cfg = DriverConfig::from_env(settings);
        let stop = self.stop_flag();
        let started = Instant::now();
        let start_iterations = self.runners[0].clock.iterations();
        let mut sim = ServerSim { server: self, target: iterations.filter(|n| *n > 0), start_iterations, last: started };
        let stop_flag: &AtomicBool = &stop;
        let outcome = match cfg.settings.role {
            Role::Primary => run_primary(&mut sim, &cfg, stop_flag, &mut |_seq: u64| {})?,
            Role::Secondary => run_secondary(&mut sim, &cfg, stop_flag)?,
        };
        let first = &self.runners[0];
        progress(first.clock.iterations() - start_iterations);
        let summary = RunSummary {
            iterations: first.clock.iterations() - start_iterations,
            sim_time: first.clock.info().sim_time(),
            wall_time: started.elapsed().as_secs_f64(),
        };
        Ok((summary, outcome))
    }
}
