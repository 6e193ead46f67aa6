//! Command-line parsing and the `sim`, `log`, `topic` and `service` commands.

mod distributed;
mod log;
mod service;
mod sim;
mod topic;

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use troupe::transport::{registry, Bind, Node};

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

/// Writes `text` and a newline to stdout; `false` when stdout is closed (its reader, such as
/// `head`, left). The caller then stops and exits 0, as Unix filters do (`println!` panicked).
fn print_line(text: impl std::fmt::Display) -> bool {
    use std::io::Write;
    writeln!(std::io::stdout().lock(), "{text}").is_ok()
}

/// The node of `troupe topic` and `troupe service`: the partition's directory, and the
/// peers on other machines given by `--peer` and `TROUPE_PEERS`. With peers, the tool
/// listens on every interface so that a server there can reach its publisher. Peers that
/// do not answer are named on stderr.
fn open_tool_node(tool: &str, peers: &[String]) -> Result<Node, String> {
    let mut all = troupe::transport::peers_from_env()?;
    all.extend(peers.iter().cloned());
    let bind = if all.is_empty() { Bind::Ipc } else { Bind::Tcp { host: "0.0.0.0".into(), port: 0 } };
    let node = Node::open_with_peers(&registry::partition(), &bind, all).map_err(|e| e.to_string())?;
    for (url, why) in node.silent_peers() {
        troupe::status!("troupe {tool}: warning: peer {url} did not answer: {why}");
    }
    Ok(node)
}
