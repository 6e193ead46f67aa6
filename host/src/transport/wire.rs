//! How topic messages, service requests and service replies are laid out on the wire.
//!
//! Plain framing that a client we did not write (Debian's `nngcat`) can produce and read:
//!
//! * a **topic message** (nng PUB/SUB) is `topic NUL type NUL sender NUL seq NUL payload`:
//!   the topic name, the message type (`gz.msgs.Pose_V`), the publishing node's id, the
//!   decimal sequence number of this message among the sender's messages on this topic
//!   (1, 2, ...), then the protobuf bytes. A subscriber subscribes to the prefix
//!   `topic NUL`; a gap in `seq` from one sender means messages were dropped;
//! * a **service request** (nng REQ/REP) is `service NUL payload`;
//! * a **service reply** is one status byte, then the rest: `1` and the response bytes
//!   (the service answered true), `0` and the response bytes (it answered false), or `E`
//!   and a UTF-8 text saying why the request was not served (unknown service, malformed
//!   request).

use std::fmt;

/// A topic message as it travels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicFrame<'a> {
    /// Topic name.
    pub topic: &'a str,
    /// Message type name (`gz.msgs.X`).
    pub msg_type: &'a str,
    /// Id of the node that published it.
    pub sender: &'a str,
    /// Sequence number among the sender's messages on this topic, from 1.
    pub seq: u64,
    /// The encoded message.
    pub payload: &'a [u8],
}

/// A frame that does not follow the layout above.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MalformedFrame(pub String);

impl fmt::Display for MalformedFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MalformedFrame {}

/// The subscription prefix of a topic: its name and the NUL that ends it.
pub fn topic_prefix(topic: &str) -> Vec<u8> {
    let mut p = Vec::with_capacity(topic.len() + 1);
    p.extend_from_slice(topic.as_bytes());
    p.push(0);
    p
}

impl<'a> TopicFrame<'a> {
    /// Lays the frame out.
    pub fn encode(&self) -> Vec<u8> {
        let seq = self.seq.to_string();
        let mut out = Vec::with_capacity(
            self.topic.len() + self.msg_type.len() + self.sender.len() + seq.len() + 4 + self.payload.len(),
        );
        for field in [self.topic, self.msg_type, self.sender, &seq] {
            out.extend_from_slice(field.as_bytes());
            out.push(0);
        }
        out.extend_from_slice(self.payload);
        out
    }

    /// Reads a frame; the payload is borrowed from `bytes`.
    pub fn decode(bytes: &'a [u8]) -> Result<TopicFrame<'a>, MalformedFrame> {
        let mut rest = bytes;
        let mut fields = [""; 4];
        for (i, name) in ["topic", "type", "sender", "sequence number"].iter().enumerate() {
            let end = rest.iter().position(|&b| b == 0).ok_or_else(|| {
                MalformedFrame(format!("topic message of {} bytes ends before its {name}", bytes.len()))
            })?;
            fields[i] = std::str::from_utf8(&rest[..end])
                .map_err(|_| MalformedFrame(format!("topic message: its {name} is not UTF-8")))?;
            rest = &rest[end + 1..];
        }
        let seq = fields[3].parse().map_err(|_| {
            MalformedFrame(format!("topic message on {:?}: sequence number {:?} is not a number", fields[0], fields[3]))
        })?;
        if !fields[0].starts_with('/') {
            return Err(MalformedFrame(format!("topic message: topic {:?} does not start with '/'", fields[0])));
        }
        Ok(TopicFrame { topic: fields[0], msg_type: fields[1], sender: fields[2], seq, payload: rest })
    }
}

/// Lays out a service request.
pub fn encode_request(service: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(service.len() + 1 + payload.len());
    out.extend_from_slice(service.as_bytes());
    out.push(0);
    out.extend_from_slice(payload);
    out
}

/// Reads a service request: the service name and the request bytes.
pub fn decode_request(bytes: &[u8]) -> Result<(&str, &[u8]), MalformedFrame> {
    let end = bytes.iter().position(|&b| b == 0).ok_or_else(|| {
        MalformedFrame(format!("service request of {} bytes has no NUL after the service name", bytes.len()))
    })?;
    let name = std::str::from_utf8(&bytes[..end])
        .map_err(|_| MalformedFrame("service request: the name is not UTF-8".into()))?;
    Ok((name, &bytes[end + 1..]))
}

/// What a service answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The service ran and answered true, with its response.
    Ok(Vec<u8>),
    /// The service ran and answered false (the response may be empty).
    Failed(Vec<u8>),
    /// The request was not served; why.
    Error(String),
}

impl Answer {
    /// Lays the reply out.
    pub fn encode(&self) -> Vec<u8> {
        let (status, body): (u8, &[u8]) = match self {
            Answer::Ok(b) => (b'1', b),
            Answer::Failed(b) => (b'0', b),
            Answer::Error(text) => (b'E', text.as_bytes()),
        };
        let mut out = Vec::with_capacity(1 + body.len());
        out.push(status);
        out.extend_from_slice(body);
        out
    }

    /// Reads a reply.
    pub fn decode(bytes: &[u8]) -> Result<Answer, MalformedFrame> {
        match bytes.split_first() {
            Some((b'1', rest)) => Ok(Answer::Ok(rest.to_vec())),
            Some((b'0', rest)) => Ok(Answer::Failed(rest.to_vec())),
            Some((b'E', rest)) => Ok(Answer::Error(String::from_utf8_lossy(rest).into_owned())),
            Some((other, _)) => {
                Err(MalformedFrame(format!("service reply starts with status byte {other:#04x}, not '1', '0' or 'E'")))
            }
            None => Err(MalformedFrame("empty service reply".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_frames_round_trip_with_binary_payloads() {
        let payload = [0u8, 1, 0, 255, 0];
        let frame = TopicFrame {
            topic: "/world/w/pose/info",
            msg_type: "gz.msgs.Pose_V",
            sender: "12-1",
            seq: 42,
            payload: &payload,
        };
        let bytes = frame.encode();
        assert!(bytes.starts_with(&topic_prefix("/world/w/pose/info")));
        assert_eq!(TopicFrame::decode(&bytes).unwrap(), frame);
    }

    #[test]
    fn malformed_topic_frames_say_what_is_wrong() {
        let err = TopicFrame::decode(b"/t\0gz.msgs.X\0").unwrap_err();
        assert!(err.0.contains("ends before its sender"), "{err}");
        let err = TopicFrame::decode(b"/t\0gz.msgs.X\0n\0x7\0data").unwrap_err();
        assert!(err.0.contains("\"x7\" is not a number"), "{err}");
        let err = TopicFrame::decode(b"t\0gz.msgs.X\0n\x001\0").unwrap_err();
        assert!(err.0.contains("does not start with '/'"), "{err}");
    }

    #[test]
    fn requests_and_answers_round_trip() {
        let req = encode_request("/world/w/control", &[8, 1]);
        assert_eq!(decode_request(&req).unwrap(), ("/world/w/control", &[8u8, 1][..]));
        assert!(decode_request(b"no-nul").unwrap_err().0.contains("no NUL"));
        for a in [Answer::Ok(vec![1, 2]), Answer::Failed(vec![]), Answer::Error("no service \"/x\"".into())] {
            assert_eq!(Answer::decode(&a.encode()).unwrap(), a);
        }
        assert!(Answer::decode(b"").is_err());
        assert!(Answer::decode(b"x").unwrap_err().0.contains("0x78"));
    }
}
