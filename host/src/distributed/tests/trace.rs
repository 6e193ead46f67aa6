//! The trace test: a recorded message sequence of a three-secondary run with two
//! hand-overs (`testdata/three_secondaries_two_handovers.trace`) replays to the same
//! messages and the same outcome. Each line is `<µs> send|recv <from> <to> <Envelope as
//! protobuf text>`, closed by one `end` line per machine. Regenerate after a deliberate
//! protocol change with `TROUPE_BLESS=1 cargo nextest run -p troupe distributed::tests::trace`.

use std::collections::VecDeque;
use std::sync::OnceLock;

use plugin_api::prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};

use super::*;
use crate::distributed::messages::Envelope;

const FILE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/src/distributed/testdata/three_secondaries_two_handovers.trace");

fn descriptor() -> &'static MessageDescriptor {
    static D: OnceLock<MessageDescriptor> = OnceLock::new();
    D.get_or_init(|| {
        let pool = DescriptorPool::decode(messages::FILE_DESCRIPTOR_SET).expect("descriptor set");
        pool.get_message_by_name("troupe.distributed.Envelope").expect("Envelope")
    })
}

/// An envelope as one line of protobuf text.
pub(super) fn text(msg: &Envelope) -> String {
    let dynamic = DynamicMessage::decode(descriptor().clone(), msg.encode_to_vec().as_slice()).expect("valid");
    dynamic.to_string()
}

fn parse(text: &str) -> Envelope {
    let dynamic =
        DynamicMessage::parse_text_format(descriptor().clone(), text).unwrap_or_else(|e| panic!("{e}: {text}"));
    Envelope::decode(dynamic.encode_to_vec().as_slice()).expect("valid")
}

pub(super) fn node(n: Node) -> String {
    match n {
        Node::Primary => "primary".into(),
        Node::Secondary(i) => format!("node{i}"),
    }
}

fn parse_node(s: &str) -> Node {
    match s.strip_prefix("node") {
        Some(i) => Node::Secondary(i.parse().expect("node index")),
        None => Node::Primary,
    }
}

pub(super) fn line(at: Duration, kind: &str, from: Node, to: Node, msg: &Envelope) -> String {
    format!("{} {kind} {} {} {}", at.as_micros(), node(from), node(to), text(msg))
}

/// A trace line as its fields, the message decoded (`end` lines stay text).
fn split(line: &str) -> (Vec<&str>, Option<Envelope>) {
    let f: Vec<&str> = line.splitn(5, ' ').collect();
    if f.len() == 5 && (f[1] == "send" || f[1] == "recv") {
        (f[..4].to_vec(), Some(parse(f[4])))
    } else {
        (vec![line], None)
    }
}

/// A network that delivers exactly what the trace says was delivered, when it says.
struct Replay {
    deliveries: VecDeque<Delivery>,
    secondaries: usize,
}

impl Net for Replay {
    fn send(&mut self, _now: Duration, _from: Node, _t: &Transmit) {}
    fn deliver_due(&mut self, now: Duration) -> Vec<Delivery> {
        let mut out = Vec::new();
        while self.deliveries.front().is_some_and(|d| d.at <= now) {
            out.push(self.deliveries.pop_front().expect("front"));
        }
        out
    }
    fn add_secondary(&mut self, _id: &str, _link: LinkConfig) -> Node {
        self.secondaries += 1;
        Node::Secondary(self.secondaries - 1)
    }
}

/// P1 in L1, P2 and P3 in L2 (the design's worked example); P3 enters L3 before step 3 (hand-over to
/// S3), P2 enters L1 before step 5 (hand-over to S1); stop after step 6.
fn script() -> Vec<Membership> {
    let start = membership(&[(1, &[10]), (2, &[20]), (3, &[20])]);
    let p3_in_l3 = membership(&[(1, &[10]), (2, &[20]), (3, &[30])]);
    let p2_in_l1 = membership(&[(1, &[10]), (2, &[10]), (3, &[30])]);
    vec![start.clone(), start, p3_in_l3.clone(), p3_in_l3, p2_in_l1]
}

fn finish<N: Net>(c: &mut Cluster<N>) -> Vec<String> {
    c.stop_after = Some(6);
    assert!(c.run(Duration::from_secs(60)), "the traced run hangs");
    let mut lines = c.trace.take().expect("recording");
    lines.push(format!("end primary {:?}", c.primary_outcome));
    for (i, o) in c.secondary_outcomes.iter().enumerate() {
        lines.push(format!("end node{i} {o:?}"));
    }
    lines
}

#[test]
fn a_recorded_three_secondary_run_with_two_handovers_replays_to_the_same_outcome() {
    if std::env::var_os("TROUPE_BLESS").is_some() {
        // A lossy, reordering network, so the trace holds retransmissions and duplicates.
        let link = LinkConfig {
            loss: 0.1,
            duplicate: 0.1,
            reorder: 0.1,
            delay_min: Duration::from_millis(1),
            delay_max: Duration::from_millis(15),
        };
        let mut c = Cluster::new(SimNet::new(2026), 1, 3, link, script());
        c.trace = Some(Vec::new());
        let lines = finish(&mut c);
        assert_eq!(c.handovers.len(), 2, "{:?}", c.handovers);
        std::fs::write(FILE, lines.join("\n") + "\n").expect("write the trace");
    }
    let recorded: Vec<String> =
        std::fs::read_to_string(FILE).expect("the trace file").lines().map(str::to_owned).collect();
    let deliveries: VecDeque<Delivery> = recorded
        .iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.splitn(5, ' ').collect();
            (f.get(1) == Some(&"recv")).then(|| Delivery {
                at: Duration::from_micros(f[0].parse().expect("time")),
                from: parse_node(f[2]),
                to: parse_node(f[3]),
                msg: parse(f[4]),
            })
        })
        .collect();
    assert!(deliveries.len() > 50, "a trace of {} deliveries", deliveries.len());
    let mut c =
        Cluster::new(Replay { deliveries, secondaries: 0 }, 1, 3, LinkConfig::perfect(Duration::ZERO), script());
    c.trace = Some(Vec::new());
    let replayed = finish(&mut c);
    assert!(c.violations.is_empty(), "{:#?}", c.violations);
    // The same messages sent, in the same order, and the same ends. Messages are compared
    // decoded: text format prints map entries in no fixed order.
    for (i, (a, b)) in recorded.iter().zip(&replayed).enumerate() {
        assert_eq!(split(a), split(b), "line {} of the trace differs:\n{a}\n{b}", i + 1);
    }
    assert_eq!(recorded.len(), replayed.len());
    assert_eq!(c.handovers, vec![(3, 3, "s3".to_owned()), (5, 2, "s1".to_owned())]);
    assert_eq!(c.primary_outcome, Some(Outcome::Stopped { after_seq: 6 }));
}
