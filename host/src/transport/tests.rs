use super::*;

/// A partition no other test or process uses. Its rendezvous directory goes when the value
/// does, so declare it before the nodes that use it (they are dropped first).
struct Partition(String);

impl std::ops::Deref for Partition {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Drop for Partition {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(registry::rendezvous_dir(&self.0));
    }
}

fn partition(name: &str) -> Partition {
    Partition(format!("troupe-unit-{name}-{}", std::process::id()))
}

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn names_follow_gz_rules() {
    for good in ["/world/shapes/pose/info", "/clock", "/a_b-c.d"] {
        check_name("topic", good).unwrap();
    }
    for (bad, why) in [
        ("world/x", "start with '/'"),
        ("/", "empty"),
        ("/a//b", "\"//\""),
        ("/a b", "whitespace"),
        ("/a:b", "':'"),
        ("/a/", "ends with"),
    ] {
        let e = check_name("topic", bad).unwrap_err().to_string();
        assert!(e.contains(why), "{bad}: {e}");
    }
}

#[test]
fn a_local_node_delivers_to_its_own_subscribers_and_counts_gaps() {
    let node = Node::local();
    let publisher = node.advertise("/t", "gz.msgs.StringMsg", TopicOptions::default()).unwrap();
    let sub = node.subscribe("/t", "gz.msgs.StringMsg").unwrap();
    let other_type = node.subscribe("/t", "gz.msgs.Pose").unwrap();
    assert!(node.has_subscribers(publisher));
    for i in 0..3u8 {
        assert!(node.publish(publisher, &[i]).unwrap());
    }
    let got = sub.take();
    assert_eq!(
        got.iter().map(|m| (m.seq, m.payload.clone())).collect::<Vec<_>>(),
        vec![(1, vec![0]), (2, vec![1]), (3, vec![2])]
    );
    assert!(other_type.take().is_empty(), "a subscriber of another type gets nothing");
    // A sender's sequence jumping from 3 to 6 is two missed messages.
    sub.0.push("/t", "gz.msgs.StringMsg", node.id(), 6, &[9]);
    assert_eq!(sub.take()[0].missed, 2);
    assert_eq!(sub.missed(), 2);
    assert!(node.unsubscribe(sub.id()));
    assert!(matches!(node.publish(999, &[]), Err(TransportError::UnknownPublisher(999))));
}

/// A sequence number is whatever a peer sends: the largest one, then a restart from 1, are
/// taken like any other (the gap arithmetic overflowed on 2^64 - 1 and killed the thread
/// that receives every subscribed topic).
#[test]
fn any_sequence_number_a_peer_sends_is_delivered() {
    let node = Node::local();
    let sub = node.subscribe("/t", "gz.msgs.StringMsg").unwrap();
    for seq in [u64::MAX, 1, u64::MAX - 1, u64::MAX, 0] {
        sub.0.push("/t", "gz.msgs.StringMsg", "peer", seq, &[1]);
    }
    let got: Vec<(u64, u64)> = sub.take().iter().map(|m| (m.seq, m.missed)).collect();
    // From 1 to 2^64 - 2, the messages between were missed; going backwards misses none.
    assert_eq!(got, [(u64::MAX, 0), (1, 0), (u64::MAX - 1, u64::MAX - 3), (u64::MAX, 0), (0, 0)]);
}

#[test]
fn a_throttled_publisher_skips_what_exceeds_its_rate() {
    let node = Node::local();
    let publisher = node
        .advertise("/stats", "gz.msgs.WorldStatistics", TopicOptions { reliable: false, max_rate_hz: 10.0 })
        .unwrap();
    let sub = node.subscribe("/stats", "").unwrap();
    let sent = (0..50).filter(|_| node.publish(publisher, b"x").unwrap()).count();
    // 50 publications in far less than 100 ms: only the first goes out.
    assert!(sent <= 2, "{sent} of 50 went out at 10 Hz");
    assert_eq!(sub.take().len(), sent);
}

#[test]
fn local_services_answer_directly_or_through_their_queue() {
    let node = Node::local();
    node.offer_direct(
        "/echo",
        "gz.msgs.StringMsg",
        "gz.msgs.StringMsg",
        Arc::new(|req: &[u8]| Answer::Ok(req.to_vec())),
    )
    .unwrap();
    assert_eq!(node.call("/echo", b"hi", WAIT).unwrap(), Answer::Ok(b"hi".to_vec()));
    assert!(matches!(
        node.offer_direct("/echo", "a", "b", Arc::new(|_: &[u8]| Answer::Failed(vec![]))),
        Err(TransportError::ServiceTaken(_))
    ));
    let queue = node.offer_queued("/later", "gz.msgs.Empty", "gz.msgs.Boolean").unwrap();
    let caller = {
        let node = node.clone();
        std::thread::spawn(move || node.call("/later", b"q", WAIT))
    };
    let request = loop {
        if let Some(r) = node.take_requests(&queue).pop() {
            break r;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    assert_eq!(request.1, b"q");
    assert!(node.reply(request.0, Answer::Failed(b"no".to_vec())));
    assert!(!node.reply(request.0, Answer::Ok(vec![])), "a request is answered once");
    assert_eq!(caller.join().unwrap().unwrap(), Answer::Failed(b"no".to_vec()));
    let err = node.call("/nobody", b"", WAIT).unwrap_err().to_string();
    assert!(err.contains("offers service \"/nobody\""), "{err}");
}

#[test]
fn two_networked_nodes_exchange_topics_and_services() {
    let p = partition("net");
    let server = Node::open(&p, &Bind::Ipc).unwrap();
    let client = Node::open(&p, &Bind::Ipc).unwrap();
    let publisher = server.advertise("/world/w/clock", "gz.msgs.Clock", TopicOptions::default()).unwrap();
    server
        .offer_direct(
            "/world/w/echo",
            "gz.msgs.StringMsg",
            "gz.msgs.StringMsg",
            Arc::new(|r: &[u8]| Answer::Ok(r.to_vec())),
        )
        .unwrap();
    let sub = client.subscribe("/world/w/clock", "gz.msgs.Clock").unwrap();
    // Publish until the subscriber's connection is up (PUB drops what is sent before).
    let deadline = Instant::now() + WAIT;
    let first = loop {
        server.publish(publisher, b"tick").unwrap();
        if let Some(m) = sub.recv_timeout(Duration::from_millis(20)) {
            break m;
        }
        assert!(Instant::now() < deadline, "no message reached the subscriber in {WAIT:?}");
    };
    assert_eq!(
        (first.topic.as_str(), first.msg_type.as_str(), first.sender.as_str()),
        ("/world/w/clock", "gz.msgs.Clock", server.id())
    );
    assert!(eventually(|| server.has_subscribers(publisher)));
    // A burst after the connection is up arrives whole and in order.
    let base = first.seq;
    for _ in 0..500 {
        server.publish(publisher, b"burst").unwrap();
    }
    let mut seqs = Vec::new();
    while seqs.len() < 500 {
        let m = sub.recv_timeout(WAIT).expect("the burst arrives");
        if m.seq > base {
            seqs.push(m.seq);
        }
    }
    assert_eq!(seqs, (base + 1..=base + 500).collect::<Vec<_>>());
    assert_eq!(client.call("/world/w/echo", b"ping", WAIT).unwrap(), Answer::Ok(b"ping".to_vec()));
    assert!(client.topics().contains(&("/world/w/clock".to_string(), "gz.msgs.Clock".to_string())));
    assert!(client.services().iter().any(|(s, _, _)| s == "/world/w/echo"));
    // A service that never answers times out at the caller.
    let _queue = server.offer_queued("/world/w/silent", "gz.msgs.Empty", "gz.msgs.Empty").unwrap();
    let err = client.call("/world/w/silent", b"", Duration::from_millis(200)).unwrap_err();
    assert!(matches!(err, TransportError::Timeout { .. }), "{err}");
    drop(server);
    let err = client.call("/world/w/echo", b"ping", WAIT).unwrap_err().to_string();
    assert!(err.contains("no node of partition"), "a dropped node is no longer listed: {err}");
}

#[test]
fn tcp_nodes_listen_on_system_chosen_ports() {
    let p = partition("tcp");
    let server = Node::open(&p, &Bind::Tcp { host: "127.0.0.1".into(), port: 0 }).unwrap();
    server.offer_direct("/s", "gz.msgs.Empty", "gz.msgs.Empty", Arc::new(|_: &[u8]| Answer::Ok(vec![]))).unwrap();
    let client = Node::open(&p, &Bind::Ipc).unwrap();
    let peer = client.peers().into_iter().find(|e| e.node == server.id()).unwrap();
    assert!(peer.rep_addr.starts_with("tcp://127.0.0.1:") && !peer.rep_addr.ends_with(":0"), "{}", peer.rep_addr);
    assert_eq!(client.call("/s", b"", WAIT).unwrap(), Answer::Ok(vec![]));
}

/// Polls `cond` until it holds or `WAIT` passes; answers whether it held.
fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < WAIT {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

#[test]
fn a_publisher_knows_which_of_its_topics_have_subscribers() {
    let p = partition("wanted");
    let server = Node::open(&p, &Bind::Ipc).unwrap();
    let watched = server.advertise("/watched", "gz.msgs.StringMsg", TopicOptions::default()).unwrap();
    let ignored = server.advertise("/ignored", "gz.msgs.StringMsg", TopicOptions::default()).unwrap();
    let client = Node::open(&p, &Bind::Ipc).unwrap();
    let sub = client.subscribe("/watched", "").unwrap();
    assert!(eventually(|| server.has_subscribers(watched)), "the subscription is noticed");
    // Until discovery has read the subscriber's listing, its connection counts for every
    // topic; after that, only for the topic it named.
    assert!(eventually(|| !server.has_subscribers(ignored)), "a connected subscriber of another topic does not count");
    assert!(server.has_subscribers(watched));
    assert!(client.unsubscribe(sub.id()));
    assert!(eventually(|| !server.has_subscribers(watched)), "the ended subscription is noticed");
}

#[test]
fn nodes_of_other_machines_meet_through_peer_addresses() {
    // Two partitions stand for two machines: their rendezvous directories never meet, so
    // only the peer address brings them together.
    let (server_side, tool_side) = (partition("peer-server"), partition("peer-tool"));
    let server = Node::open(&server_side, &Bind::Tcp { host: "127.0.0.1".into(), port: 0 }).unwrap();
    server
        .offer_direct(
            "/remote/echo",
            "gz.msgs.StringMsg",
            "gz.msgs.StringMsg",
            Arc::new(|r: &[u8]| Answer::Ok(r.to_vec())),
        )
        .unwrap();
    let info = server.advertise("/remote/info", "gz.msgs.StringMsg", TopicOptions::default()).unwrap();
    let commands = server.subscribe("/remote/cmd", "").unwrap();
    let addr = server.service_addr().unwrap();
    assert!(addr.starts_with("tcp://127.0.0.1:"), "{addr}");

    // As a command-line tool with --peer opens its node.
    let tool = Node::open_with_peers(&tool_side, &Bind::Tcp { host: "0.0.0.0".into(), port: 0 }, vec![addr]).unwrap();
    assert!(tool.silent_peers().is_empty(), "{:?}", tool.silent_peers());
    assert!(
        tool.services().iter().any(|(s, _, _)| s == "/remote/echo"),
        "the first greeting happens before open returns"
    );
    assert!(tool.topics().iter().any(|(t, _)| t == "/remote/info"));
    assert_eq!(tool.call("/remote/echo", b"over there", WAIT).unwrap(), Answer::Ok(b"over there".to_vec()));

    // Topics flow both ways: the server dials the tool's publisher from what the tool told it.
    let echo = tool.subscribe("/remote/info", "").unwrap();
    assert!(eventually(|| server.has_subscribers(info)));
    assert!(eventually(|| {
        server.publish(info, b"state").unwrap();
        echo.take().iter().any(|m| m.payload == b"state")
    }));
    let cmd = tool.advertise("/remote/cmd", "gz.msgs.Twist", TopicOptions::default()).unwrap();
    assert!(eventually(|| {
        tool.publish(cmd, b"go").unwrap();
        commands.take().iter().any(|m| m.payload == b"go" && m.msg_type == "gz.msgs.Twist")
    }));
    assert!(server.peers().iter().any(|e| e.node == tool.id()), "the server lists the tool it heard from");

    // A node that stops greeting is forgotten.
    let tool_id = tool.id().to_string();
    drop(tool);
    assert!(eventually(|| !server.peers().iter().any(|e| e.node == tool_id)), "a silent peer is forgotten");
}

#[test]
fn a_peer_that_does_not_answer_is_named() {
    // A port nobody listens on: taken from the system, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("tcp://127.0.0.1:{port}");
    let p = partition("silent");
    let node = Node::open_with_peers(&p, &Bind::Ipc, vec![url.clone()]).unwrap();
    let silent = node.silent_peers();
    assert_eq!(silent.len(), 1, "{silent:?}");
    assert_eq!(silent[0].0, url);
    assert!(!silent[0].1.is_empty());
    let err = node.call("/anything", b"", Duration::from_secs(1)).unwrap_err().to_string();
    assert!(err.contains("/anything"), "{err}");
}
