//! `troupe topic`: list, inspect, echo and publish topics, as `gz topic` does.

use clap::Args;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use troupe::transport::{text, Node, TopicOptions};

/// Arguments of `troupe topic`.
#[derive(Args, Debug)]
pub struct TopicArgs {
    /// List the topics of the partition.
    #[arg(short = 'l', long = "list")]
    list: bool,
    /// Show who publishes a topic (with -t), and its type.
    #[arg(short = 'i', long = "info")]
    info: bool,
    /// Print the messages of a topic (with -t) in protobuf text format.
    #[arg(short = 'e', long = "echo")]
    echo: bool,
    /// Publish one message (with -t and -m): `-p 'text'`, or `-p` and the text last.
    #[arg(short = 'p', long = "pub", num_args = 0..=1, value_name = "TEXT")]
    publish: Option<Option<String>>,
    /// The topic.
    #[arg(short = 't', long = "topic", value_name = "TOPIC")]
    topic: Option<String>,
    /// The message type to publish (`gz.msgs.StringMsg`).
    #[arg(short = 'm', long = "msgtype", value_name = "TYPE")]
    msg_type: Option<String>,
    /// With -e: stop after this many messages.
    #[arg(short = 'n', long = "num", value_name = "N")]
    count: Option<u64>,
    /// With -e: stop after this many seconds.
    #[arg(short = 'd', long = "duration", value_name = "S")]
    duration: Option<f64>,
    /// The message text for -p, when not given right after it.
    #[arg(value_name = "TEXT")]
    text: Option<String>,
    /// Also meet the node serving at this address on another machine (`host:port`,
    /// repeatable; also `TROUPE_PEERS`).
    #[arg(long = "peer", value_name = "HOST:PORT", value_parser = troupe::config::peer_url)]
    peers: Vec<String>,
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    troupe::status!("troupe topic: error: {message}");
    ExitCode::from(2)
}

/// Runs `troupe topic ...`.
pub fn run(args: TopicArgs) -> ExitCode {
    let node = match super::open_tool_node("topic", &args.peers) {
        Ok(n) => n,
        Err(e) => return fail(e),
    };
    let code = run_with(&node, args);
    node.close_for_exit();
    code
}

fn run_with(node: &Node, args: TopicArgs) -> ExitCode {
    let modes = [args.list, args.info, args.echo, args.publish.is_some()].iter().filter(|m| **m).count();
    if modes != 1 {
        return fail("give exactly one of -l, -i, -e or -p");
    }
    if args.list {
        for (topic, _) in node.topics() {
            if !super::print_line(topic) {
                break;
            }
        }
        return ExitCode::SUCCESS;
    }
    let Some(topic) = args.topic.clone() else { return fail("-i, -e and -p need a topic: -t TOPIC") };
    if args.info {
        let publishers: Vec<_> = node
            .peers()
            .into_iter()
            .flat_map(|e| {
                e.topics
                    .iter()
                    .filter(|(t, _)| *t == topic)
                    .map(|(_, ty)| (e.node.clone(), e.pub_addr.clone(), ty.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        if publishers.is_empty() {
            super::print_line(format_args!("No publishers on topic [{topic}]"));
            return ExitCode::from(1);
        }
        let lines = publishers.iter().map(|(n, addr, ty)| format!("  {n}, {addr}, {ty}"));
        for line in std::iter::once("Publishers [Node, Address, Message Type]:".to_string()).chain(lines) {
            if !super::print_line(line) {
                break;
            }
        }
        return ExitCode::SUCCESS;
    }
    if args.echo {
        return echo(node, &topic, args.count, args.duration);
    }
    let text = match (args.publish.flatten(), args.text) {
        (Some(t), None) | (None, Some(t)) => t,
        (None, None) => return fail("-p needs the message text"),
        (Some(_), Some(_)) => return fail("the message text is given twice"),
    };
    let Some(msg_type) = args.msg_type else { return fail("-p needs the message type: -m gz.msgs.TYPE") };
    publish(node, &topic, &msg_type, &text)
}

fn echo(node: &Node, topic: &str, count: Option<u64>, duration: Option<f64>) -> ExitCode {
    let sub = match node.subscribe(topic, "") {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(signal, stop.clone());
    }
    let deadline = duration.map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0)));
    let mut seen = 0u64;
    while !stop.load(Ordering::Relaxed) && count.is_none_or(|n| seen < n) {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let Some(msg) = sub.recv_timeout(Duration::from_millis(50)) else { continue };
        if msg.missed > 0 {
            troupe::status!(
                "troupe topic: {} message(s) of node {} on {topic} were missed before #{}",
                msg.missed,
                msg.sender,
                msg.seq
            );
        }
        match text::decode_to_text(&msg.msg_type, &msg.payload) {
            Ok(t) => {
                if !super::print_line(t) {
                    break;
                }
            }
            Err(e) => troupe::status!("troupe topic: {e}"),
        }
        seen += 1;
    }
    ExitCode::SUCCESS
}

fn publish(node: &Node, topic: &str, msg_type: &str, message: &str) -> ExitCode {
    let bytes = match text::encode_text(msg_type, message) {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    let full_type =
        text::descriptor(msg_type).map(|d| d.full_name().to_string()).unwrap_or_else(|_| msg_type.to_string());
    let publisher = match node.advertise(topic, &full_type, TopicOptions::default()) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    // Subscribers find a new publisher through the rendezvous directory within ~100 ms;
    // a message sent before they connect would be lost, so wait for them a little.
    let deadline = Instant::now() + Duration::from_secs(2);
    while !node.has_subscribers(publisher) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    if !node.has_subscribers(publisher) {
        troupe::status!("troupe topic: nobody subscribes to {topic}; the message is published anyway");
    }
    if let Err(e) = node.publish(publisher, &bytes) {
        return fail(e);
    }
    // Let nng hand the message to the sockets before the process closes them.
    std::thread::sleep(Duration::from_millis(100));
    ExitCode::SUCCESS
}
