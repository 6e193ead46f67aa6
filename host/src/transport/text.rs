//! Messages in protobuf text format, as `gz topic -e` prints them and as users type them
//! (`name: "sphere" position { x: 1 }`), looked up by type name (`gz.msgs.Pose`) in the
//! descriptor set of `plugin-api`'s messages.

use plugin_api::msgs::FILE_DESCRIPTOR_SET;
use prost_reflect::{DescriptorPool, DynamicMessage, Kind, MapKey, MessageDescriptor, Value};
use std::fmt::Write;
use std::sync::OnceLock;

/// A type name, text or payload that could not be handled.
#[derive(Debug, thiserror::Error)]
pub enum TextError {
    /// No message of that name.
    #[error("unknown message type {name:?}; types are written gz.msgs.<Name>, e.g. gz.msgs.Pose")]
    UnknownType {
        /// The name asked for.
        name: String,
    },
    /// The text is not a valid message of the type.
    #[error("not a valid {type_name} in text format: {message}")]
    Parse {
        /// The type.
        type_name: String,
        /// What the parser said.
        message: String,
    },
    /// The bytes are not a valid message of the type.
    #[error("{len} bytes that are not a valid {type_name}: {message}")]
    Decode {
        /// The type.
        type_name: String,
        /// How many bytes.
        len: usize,
        /// What the decoder said.
        message: String,
    },
}

fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| DescriptorPool::decode(FILE_DESCRIPTOR_SET).expect("plugin-api's descriptor set is valid"))
}

/// The descriptor of a message type, by full name (`gz.msgs.Pose`). A bare `Pose` is
/// accepted too.
pub fn descriptor(type_name: &str) -> Result<MessageDescriptor, TextError> {
    let pool = pool();
    pool.get_message_by_name(type_name)
        .or_else(|| pool.get_message_by_name(&format!("gz.msgs.{type_name}")))
        .ok_or_else(|| TextError::UnknownType { name: type_name.to_string() })
}

/// Every message type known, sorted.
pub fn type_names() -> Vec<String> {
    let mut names: Vec<String> =
        pool().all_messages().map(|m| m.full_name().to_string()).filter(|n| n.starts_with("gz.msgs.")).collect();
    names.sort();
    names
}

/// Parses text format into the encoded message.
pub fn encode_text(type_name: &str, text: &str) -> Result<Vec<u8>, TextError> {
    let desc = descriptor(type_name)?;
    let msg = DynamicMessage::parse_text_format(desc.clone(), text)
        .map_err(|e| TextError::Parse { type_name: desc.full_name().to_string(), message: e.to_string() })?;
    Ok(prost_reflect::prost::Message::encode_to_vec(&msg))
}

/// Prints an encoded message in gz's text layout: one field per line, nested messages in
/// braces indented by two spaces, numbers without a trailing `.0`, only fields that are
/// set.
pub fn decode_to_text(type_name: &str, bytes: &[u8]) -> Result<String, TextError> {
    let desc = descriptor(type_name)?;
    let msg = DynamicMessage::decode(desc.clone(), bytes).map_err(|e| TextError::Decode {
        type_name: desc.full_name().to_string(),
        len: bytes.len(),
        message: e.to_string(),
    })?;
    let mut out = String::new();
    print_message(&mut out, &msg, 0);
    Ok(out)
}

fn print_message(out: &mut String, msg: &DynamicMessage, depth: usize) {
    let mut fields: Vec<_> = msg.fields().collect();
    fields.sort_by_key(|(f, _)| f.number());
    for (field, value) in fields {
        match value {
            Value::List(items) => {
                for item in items {
                    print_field(out, field.name(), &field.kind(), item, depth);
                }
            }
            Value::Map(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| map_key_order(a.0, b.0));
                let Kind::Message(entry) = field.kind() else { continue };
                let value_kind = entry.map_entry_value_field().kind();
                for (k, v) in entries {
                    indent(out, depth);
                    let _ = writeln!(out, "{} {{", field.name());
                    indent(out, depth + 1);
                    let _ = writeln!(out, "key: {}", map_key_text(k));
                    print_field(out, "value", &value_kind, v, depth + 1);
                    indent(out, depth);
                    out.push_str("}\n");
                }
            }
            v => print_field(out, field.name(), &field.kind(), v, depth),
        }
    }
}

fn print_field(out: &mut String, name: &str, kind: &Kind, value: &Value, depth: usize) {
    indent(out, depth);
    match value {
        Value::Message(m) => {
            let _ = writeln!(out, "{name} {{");
            print_message(out, m, depth + 1);
            indent(out, depth);
            out.push_str("}\n");
        }
        v => {
            let _ = writeln!(out, "{name}: {}", scalar_text(kind, v));
        }
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn float_text(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        format!("{x}")
    }
}

fn scalar_text(kind: &Kind, v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::I32(x) => x.to_string(),
        Value::I64(x) => x.to_string(),
        Value::U32(x) => x.to_string(),
        Value::U64(x) => x.to_string(),
        Value::F32(x) => float_text(f64::from(*x)),
        Value::F64(x) => float_text(*x),
        Value::String(s) => quote(s.as_bytes()),
        Value::Bytes(b) => quote(b),
        Value::EnumNumber(n) => match kind {
            Kind::Enum(e) => e.get_value(*n).map(|v| v.name().to_string()).unwrap_or_else(|| n.to_string()),
            _ => n.to_string(),
        },
        Value::Message(_) | Value::List(_) | Value::Map(_) => String::new(),
    }
}

fn quote(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            for c in text.chars() {
                match c {
                    '"' => s.push_str("\\\""),
                    '\\' => s.push_str("\\\\"),
                    '\n' => s.push_str("\\n"),
                    '\t' => s.push_str("\\t"),
                    '\r' => s.push_str("\\r"),
                    c if (c as u32) < 0x20 => {
                        let _ = write!(s, "\\{:03o}", c as u32);
                    }
                    c => s.push(c),
                }
            }
        }
        Err(_) => {
            for &b in bytes {
                match b {
                    b'"' => s.push_str("\\\""),
                    b'\\' => s.push_str("\\\\"),
                    0x20..=0x7e => s.push(b as char),
                    _ => {
                        let _ = write!(s, "\\{b:03o}");
                    }
                }
            }
        }
    }
    s.push('"');
    s
}

fn map_key_text(k: &MapKey) -> String {
    match k {
        MapKey::Bool(b) => b.to_string(),
        MapKey::I32(x) => x.to_string(),
        MapKey::I64(x) => x.to_string(),
        MapKey::U32(x) => x.to_string(),
        MapKey::U64(x) => x.to_string(),
        MapKey::String(s) => quote(s.as_bytes()),
    }
}

fn map_key_order(a: &MapKey, b: &MapKey) -> std::cmp::Ordering {
    match (a, b) {
        (MapKey::U64(x), MapKey::U64(y)) => x.cmp(y),
        (MapKey::I64(x), MapKey::I64(y)) => x.cmp(y),
        (MapKey::U32(x), MapKey::U32(y)) => x.cmp(y),
        (MapKey::I32(x), MapKey::I32(y)) => x.cmp(y),
        _ => map_key_text(a).cmp(&map_key_text(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::msgs::{Pose, Quaternion, Vector3d};
    use plugin_api::prost::Message;

    #[test]
    fn prints_like_gz_topic_and_parses_what_users_type() {
        let pose = Pose {
            name: "sphere".into(),
            id: 7,
            position: Some(Vector3d { x: 1.0, y: -0.5, z: 0.0, ..Default::default() }),
            orientation: Some(Quaternion { w: 1.0, ..Default::default() }),
            ..Default::default()
        };
        let text = decode_to_text("gz.msgs.Pose", &pose.encode_to_vec()).unwrap();
        assert_eq!(text, "name: \"sphere\"\nid: 7\nposition {\n  x: 1\n  y: -0.5\n}\norientation {\n  w: 1\n}\n");
        let bytes =
            encode_text("gz.msgs.Pose", "name: \"sphere\", id: 7, position: {x: 1, y: -0.5}, orientation {w: 1}")
                .unwrap();
        assert_eq!(Pose::decode(bytes.as_slice()).unwrap(), pose);
        assert_eq!(
            encode_text("Pose", "name: \"sphere\"").unwrap(),
            Pose { name: "sphere".into(), ..Default::default() }.encode_to_vec()
        );
    }

    #[test]
    fn errors_name_the_type_and_the_problem() {
        let e = descriptor("gz.msgs.Nope").unwrap_err().to_string();
        assert!(e.contains("gz.msgs.Nope") && e.contains("gz.msgs.<Name>"), "{e}");
        let e = encode_text("gz.msgs.Pose", "nme: \"x\"").unwrap_err().to_string();
        assert!(e.contains("gz.msgs.Pose") && e.contains("nme"), "{e}");
        let e = decode_to_text("gz.msgs.Pose", &[0xff, 0xff]).unwrap_err().to_string();
        assert!(e.contains("2 bytes") && e.contains("gz.msgs.Pose"), "{e}");
        assert!(type_names().contains(&"gz.msgs.WorldControl".to_string()));
    }
}
