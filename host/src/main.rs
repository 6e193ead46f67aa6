//! `troupe`: the Troupe simulation server's command line.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
