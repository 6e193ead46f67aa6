//! The world fingerprint every process of a distributed run must share (docs/distributed.md).
//!
//! A world's **listing** is one line per entity, in ascending id order:
//! `<id> <kind> <scoped name>` (kind `world`, `model`, `link`, `collision`, `joint`,
//! `sensor`, `light` or `entity`), then one line `physics step=<s> gravity=<x> <y> <z>`.
//! Visuals and everything under them are left out, and so are world plugins, `<scene>` and
//! `<gui>` (they are not entities): gz-sim's distributed worlds give the primary and the
//! secondaries different plugins, scene and visuals. The fingerprint is FNV-1a over the
//! lines; on a mismatch the two listings give the first entity that differs.

use plugin_api::components::{
    Collision, Gravity, Joint, Light, Link, Model, Name, ParentEntity, Physics, Sensor, Visual, World,
};
use plugin_api::EntityId;

use crate::ecm::Ecm;

/// The listing of the world loaded in `ecm` (see the module doc).
pub fn listing(ecm: &Ecm, world: EntityId) -> Vec<String> {
    let ids: Vec<EntityId> = ecm.snapshot().entities.into_iter().map(|e| e.id).collect();
    let under_visual = |mut e: EntityId| loop {
        if ecm.has::<Visual>(e) {
            return true;
        }
        match ecm.get::<ParentEntity>(e) {
            Some(ParentEntity(p)) if p != e => e = p,
            _ => return false,
        }
    };
    let mut lines = Vec::with_capacity(ids.len() + 1);
    for id in ids {
        if under_visual(id) {
            continue;
        }
        let kind = if ecm.has::<World>(id) {
            "world"
        } else if ecm.has::<Model>(id) {
            "model"
        } else if ecm.has::<Link>(id) {
            "link"
        } else if ecm.has::<Collision>(id) {
            "collision"
        } else if ecm.has::<Joint>(id) {
            "joint"
        } else if ecm.has::<Sensor>(id) {
            "sensor"
        } else if ecm.has::<Light>(id) {
            "light"
        } else {
            "entity"
        };
        lines.push(format!("{} {kind} {}", id.0, scoped_name(ecm, id)));
    }
    let step = ecm.get::<Physics>(world).map_or(0.0, |p| p.max_step_size);
    let g = ecm.get::<Gravity>(world).map(|g| g.0).unwrap_or_default();
    lines.push(format!("physics step={step:?} gravity={:?} {:?} {:?}", g.x, g.y, g.z));
    lines
}

/// `world::model::link...`, from the names up the parent chain.
fn scoped_name(ecm: &Ecm, id: EntityId) -> String {
    let mut parts = Vec::new();
    let mut e = id;
    for _ in 0..64 {
        parts.push(ecm.get::<Name>(e).map(|n| n.0).unwrap_or_default());
        match ecm.get::<ParentEntity>(e) {
            Some(ParentEntity(p)) if p != e => e = p,
            _ => break,
        }
    }
    parts.reverse();
    parts.join("::")
}

/// FNV-1a 64 over the listing's lines (each followed by a newline).
pub fn hash(listing: &[String]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for line in listing {
        for &b in line.as_bytes().iter().chain(b"\n") {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The first line where `mine` and `theirs` differ, in words (`None` when equal).
pub fn first_difference(mine: &[String], theirs: &[String]) -> Option<String> {
    let n = mine.len().max(theirs.len());
    (0..n).find_map(|i| match (mine.get(i), theirs.get(i)) {
        (Some(a), Some(b)) if a == b => None,
        (Some(a), Some(b)) => {
            Some(format!("the first entity that differs: the primary has \"{a}\", the secondary \"{b}\""))
        }
        (Some(a), None) => Some(format!("the secondary's world ends where the primary has \"{a}\"")),
        (None, Some(b)) => Some(format!("the primary's world ends where the secondary has \"{b}\"")),
        (None, None) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_first_difference_is_named_and_the_hash_sees_it() {
        let a = lines(&["1 world w", "2 model w::box", "physics step=0.001 gravity=0.0 0.0 -9.8"]);
        let b = lines(&["1 world w", "2 model w::crate", "physics step=0.001 gravity=0.0 0.0 -9.8"]);
        assert_eq!(first_difference(&a, &a), None);
        assert_eq!(hash(&a), hash(&a.clone()));
        assert_ne!(hash(&a), hash(&b));
        let d = first_difference(&a, &b).unwrap();
        assert!(d.contains("w::box") && d.contains("w::crate"), "{d}");
        let d = first_difference(&a[..2], &a).unwrap();
        assert!(d.contains("physics step"), "{d}");
    }
}
