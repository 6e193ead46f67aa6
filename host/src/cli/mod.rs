//! Command-line parsing and the `sim`, `log`, `topic` and `service` commands.

mod log;
mod service;
mod sim;
mod topic;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Troupe: a distributed, plugin-hosted robot simulation server.
#[derive(Parser, Debug)]
#[command(name = "troupe", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a world (gz-sim's `gz sim -s` flags).
    Sim(sim::SimArgs),
    /// Work with state logs written by `troupe sim --record-path`.
    #[command(subcommand)]
    Log(log::LogCommand),
    /// List, inspect, echo and publish topics (`gz topic`).
    Topic(topic::TopicArgs),
    /// List and call services (`gz service`).
    Service(service::ServiceArgs),
}

/// Runs the command line; the exit code is 0 on success, 1 when the run failed, 2 when it
/// could not start (bad arguments, world, config or plugin).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Sim(args) => sim::run(args),
        Command::Log(cmd) => log::run(cmd),
        Command::Topic(args) => topic::run(args),
        Command::Service(args) => service::run(args),
    }
}
