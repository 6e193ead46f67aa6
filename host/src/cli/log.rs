//! `troupe log`: state log tools.

use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use troupe::state::diff::{diff_logs_with, DiffOptions};

/// `troupe log` subcommands.
#[derive(Subcommand, Debug)]
pub enum LogCommand {
    /// Compare two state logs: print the first step, entity and component where they
    /// differ. Exit 0 identical, 1 different (or one log shorter), 2 a log is unreadable.
    Diff(DiffArgs),
}

/// Arguments of `troupe log diff`.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The first log (A).
    a: PathBuf,
    /// The second log (B).
    b: PathBuf,
    /// Largest difference between two floats still counted as equal, for components made
    /// of f64s (poses, velocities, wrenches, joint positions...). Default 0: bit for bit.
    #[arg(long, value_name = "X", default_value_t = 0.0)]
    tolerance: f64,
    /// Compare only the performers (each performer's model and its descendants): for a
    /// distributed run's primary log against a standalone log of the same world.
    #[arg(long)]
    performers: bool,
    /// Compare the state at the end of each iteration, taking consecutive records of one
    /// iteration (paused steps) as one step.
    #[arg(long)]
    by_iteration: bool,
    /// Compare only this component (e.g. `Pose` or `gz_sim_components.Pose`; repeatable).
    #[arg(long = "component", value_name = "NAME")]
    components: Vec<String>,
}

/// Runs `troupe log ...`.
pub fn run(cmd: LogCommand) -> ExitCode {
    super::sim::init_logging(2);
    match cmd {
        LogCommand::Diff(args) => diff(args),
    }
}

fn diff(args: DiffArgs) -> ExitCode {
    if !(args.tolerance >= 0.0 && args.tolerance.is_finite()) {
        troupe::status!("troupe: error: --tolerance must be a finite number >= 0, got {}", args.tolerance);
        return ExitCode::from(2);
    }
    match diff_logs_with(
        &args.a,
        &args.b,
        &DiffOptions {
            tolerance: args.tolerance,
            performers_only: args.performers,
            by_iteration: args.by_iteration,
            components: args.components.clone(),
        },
    ) {
        Ok(report) => {
            print!("{report}");
            if report.identical() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            troupe::status!("troupe: error: {e}");
            ExitCode::from(2)
        }
    }
}
