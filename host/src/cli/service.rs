//! `troupe service`: list services and call them, as `gz service` does.

use clap::Args;
use std::process::ExitCode;
use std::time::Duration;
use troupe::transport::{text, Answer, Node};

/// Arguments of `troupe service`.
#[derive(Args, Debug)]
pub struct ServiceArgs {
    /// List the services of the partition.
    #[arg(short = 'l', long = "list")]
    list: bool,
    /// Show who offers a service (with -s), and its types.
    #[arg(short = 'i', long = "info")]
    info: bool,
    /// The service to call (with --req) or describe (with -i).
    #[arg(short = 's', long = "service", value_name = "SERVICE")]
    service: Option<String>,
    /// The request type (`gz.msgs.WorldControl`).
    #[arg(long = "reqtype", value_name = "TYPE")]
    req_type: Option<String>,
    /// The response type (`gz.msgs.Boolean`).
    #[arg(long = "reptype", value_name = "TYPE")]
    rep_type: Option<String>,
    /// How long to wait for the answer, in milliseconds.
    #[arg(long = "timeout", value_name = "MS", default_value_t = 5000)]
    timeout: u64,
    /// The request in protobuf text format (`pause: true`).
    #[arg(short = 'r', long = "req", value_name = "TEXT")]
    req: Option<String>,
    /// Also meet the node serving at this address on another machine (`host:port`,
    /// repeatable; also `TROUPE_PEERS`).
    #[arg(long = "peer", value_name = "HOST:PORT", value_parser = troupe::config::peer_url)]
    peers: Vec<String>,
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    troupe::status!("troupe service: error: {message}");
    ExitCode::from(2)
}

/// Runs `troupe service ...`.
pub fn run(args: ServiceArgs) -> ExitCode {
    let node = match super::open_tool_node("service", &args.peers) {
        Ok(n) => n,
        Err(e) => return fail(e),
    };
    let code = run_with(&node, args);
    node.close_for_exit();
    code
}

fn run_with(node: &Node, args: ServiceArgs) -> ExitCode {
    if args.list {
        for (name, _, _) in node.services() {
            if !super::print_line(name) {
                break;
            }
        }
        return ExitCode::SUCCESS;
    }
    let Some(service) = args.service else { return fail("give -l, or a service: -s SERVICE") };
    let listed: Vec<_> = node.services().into_iter().filter(|(s, _, _)| *s == service).collect();
    if args.info {
        if listed.is_empty() {
            super::print_line(format_args!("No service [{service}]"));
            return ExitCode::from(1);
        }
        for e in node.peers() {
            for (_, req, rep) in e.services.iter().filter(|(s, _, _)| *s == service) {
                let entry =
                    format!("Node: {}\nAddress: {}\nRequest type: {req}\nResponse type: {rep}", e.node, e.rep_addr);
                if !super::print_line(entry) {
                    return ExitCode::SUCCESS;
                }
            }
        }
        return ExitCode::SUCCESS;
    }
    let (Some(req_type), Some(rep_type), Some(req)) = (args.req_type, args.rep_type, args.req) else {
        return fail("a call needs --reqtype TYPE, --reptype TYPE and --req TEXT");
    };
    let (req_desc, rep_desc) = match (text::descriptor(&req_type), text::descriptor(&rep_type)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return fail(e),
    };
    if let Some((_, offered_req, offered_rep)) = listed.first() {
        if offered_req != req_desc.full_name() || offered_rep != rep_desc.full_name() {
            return fail(format!(
                "service {service} takes {offered_req} and answers {offered_rep}, not {} and {}",
                req_desc.full_name(),
                rep_desc.full_name()
            ));
        }
    }
    let bytes = match text::encode_text(req_desc.full_name(), &req) {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    match node.call(&service, &bytes, Duration::from_millis(args.timeout)) {
        Ok(Answer::Ok(rep)) => match text::decode_to_text(rep_desc.full_name(), &rep) {
            Ok(t) => {
                super::print_line(t);
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        },
        Ok(Answer::Failed(_)) => {
            troupe::status!("troupe service: service call failed: {service} answered false");
            ExitCode::from(1)
        }
        Ok(Answer::Error(why)) => {
            troupe::status!("troupe service: service call failed: {why}");
            ExitCode::from(1)
        }
        Err(e) => {
            troupe::status!("troupe service: service call failed: {e}");
            ExitCode::from(1)
        }
    }
}
