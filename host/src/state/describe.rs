//! Component values in words, and comparing them with a tolerance, for log diffs.
//!
//! Built-in types are decoded and shown with `Debug`; other types as hex bytes. The
//! floating-point tolerance applies to built-in types whose byte form is nothing but f64s
//! (poses, vectors, wrenches, inertials, joint axes) or a count followed by f64s (joint
//! positions, velocities and commands); every other type compares byte for byte.

use plugin_api::components::*;
use plugin_api::math::Pose;
use plugin_api::{Component, ComponentTypeId};

/// How a component type's bytes hold floats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatLayout {
    /// Only f64s.
    AllF64,
    /// A u32 count, then that many f64s.
    CountedF64,
}

/// The float layout of a built-in type, when it has one.
pub fn float_layout(ty: ComponentTypeId) -> Option<FloatLayout> {
    const ALL_F64: &[ComponentTypeId] = &[
        Pose::ID,
        WorldPoseCmd::ID,
        LinearVelocity::ID,
        AngularVelocity::ID,
        Gravity::ID,
        Inertial::ID,
        JointAxis::ID,
        JointAxis2::ID,
        LinearVelocityCmd::ID,
        AngularVelocityCmd::ID,
        ExternalWorldWrenchCmd::ID,
        WorldLinearVelocity::ID,
        WorldAngularVelocity::ID,
        WorldLinearAcceleration::ID,
        WorldAngularAcceleration::ID,
        JointTransmittedWrench::ID,
        MagneticField::ID,
        WindVelocity::ID,
        LevelBuffer::ID,
    ];
    const COUNTED_F64: &[ComponentTypeId] =
        &[JointForceCmd::ID, JointVelocityCmd::ID, JointPositionReset::ID, JointPosition::ID, JointVelocity::ID];
    if ALL_F64.contains(&ty) {
        Some(FloatLayout::AllF64)
    } else if COUNTED_F64.contains(&ty) {
        Some(FloatLayout::CountedF64)
    } else {
        None
    }
}

fn f64s(bytes: &[u8]) -> Option<Vec<f64>> {
    if bytes.len() % 8 != 0 {
        return None;
    }
    Some(bytes.chunks_exact(8).map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).collect())
}

fn close_floats(a: &[u8], b: &[u8], tolerance: f64) -> bool {
    match (f64s(a), f64s(b)) {
        (Some(a), Some(b)) if a.len() == b.len() => {
            a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits() || (x - y).abs() <= tolerance)
        }
        _ => false,
    }
}

/// Whether two values of type `ty` are the same: byte-equal, or for float types every
/// float within `tolerance` (NaNs equal only to the same NaN).
pub fn same_value(ty: ComponentTypeId, a: &[u8], b: &[u8], tolerance: f64) -> bool {
    if a == b {
        return true;
    }
    if tolerance <= 0.0 {
        return false;
    }
    match float_layout(ty) {
        Some(FloatLayout::AllF64) => close_floats(a, b, tolerance),
        Some(FloatLayout::CountedF64) => {
            a.len() >= 4 && b.len() >= 4 && a[..4] == b[..4] && close_floats(&a[4..], &b[4..], tolerance)
        }
        None => false,
    }
}

/// The registered name of a built-in type, or its id in hex.
pub fn type_name(ty: ComponentTypeId) -> String {
    macro_rules! names {
        ($($t:ty),* $(,)?) => {
            $( if ty == <$t>::ID { return <$t>::NAME.to_string(); } )*
        };
    }
    plugin_api::for_each_builtin_component!(names);
    ty.to_string()
}

/// A value in words: `Debug` of the decoded value for built-in types, hex otherwise.
pub fn describe(ty: ComponentTypeId, bytes: &[u8]) -> String {
    macro_rules! decode {
        ($($t:ty),* $(,)?) => {
            $( if ty == <$t>::ID {
                return match <$t>::from_bytes(bytes) {
                    Ok(v) => format!("{v:?}"),
                    Err(e) => format!("<{e}> {}", hex(bytes)),
                };
            } )*
        };
    }
    plugin_api::for_each_builtin_component!(decode);
    hex(bytes)
}

fn hex(bytes: &[u8]) -> String {
    const LIMIT: usize = 64;
    let mut out: String = bytes.iter().take(LIMIT).map(|b| format!("{b:02x}")).collect();
    if bytes.len() > LIMIT {
        out.push_str(&format!("... ({} bytes)", bytes.len()));
    }
    if out.is_empty() {
        out.push_str("(no bytes)");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::samples::samples;
    use plugin_api::math::Vec3;

    #[test]
    fn float_layouts_match_the_encodings() {
        for (ty, bytes) in samples() {
            match float_layout(ty) {
                Some(FloatLayout::AllF64) => assert!(bytes.len() % 8 == 0 && !bytes.is_empty(), "{}", type_name(ty)),
                Some(FloatLayout::CountedF64) => {
                    let count = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
                    assert_eq!(bytes.len(), 4 + 8 * count, "{}", type_name(ty));
                }
                None => {}
            }
        }
    }

    #[test]
    fn tolerance_applies_to_float_types_only() {
        let a = Pose::from_xyz_rpy(1.0, 2.0, 3.0, 0.0, 0.0, 0.0).to_bytes();
        let b = Pose::from_xyz_rpy(1.0, 2.0, 3.0 + 1e-9, 0.0, 0.0, 0.0).to_bytes();
        assert!(!same_value(Pose::ID, &a, &b, 0.0));
        assert!(same_value(Pose::ID, &a, &b, 1e-6));
        assert!(!same_value(Pose::ID, &a, &b, 1e-12));
        let (x, y) = (JointPosition(vec![0.5, 1.0]).to_bytes(), JointPosition(vec![0.5, 1.0 + 1e-9]).to_bytes());
        assert!(same_value(JointPosition::ID, &x, &y, 1e-6));
        let longer = JointPosition(vec![0.5, 1.0, 0.0]).to_bytes();
        assert!(!same_value(JointPosition::ID, &x, &longer, 1e6), "a different count is a difference");
        let (n, m) = (Name("a".into()).to_bytes(), Name("b".into()).to_bytes());
        assert!(!same_value(Name::ID, &n, &m, 1e6));
        let nan = Gravity(Vec3::new(f64::NAN, 0.0, 0.0)).to_bytes();
        let zero = Gravity(Vec3::ZERO).to_bytes();
        assert!(same_value(Gravity::ID, &nan, &nan, 1.0));
        assert!(!same_value(Gravity::ID, &nan, &zero, 1e300));
    }

    #[test]
    fn values_are_described_by_type() {
        assert_eq!(type_name(Name::ID), "gz_sim_components.Name");
        assert_eq!(describe(Name::ID, &Name("box".into()).to_bytes()), "Name(\"box\")");
        assert_eq!(describe(ComponentTypeId(7), &[1, 0xab]), "01ab");
        assert!(describe(Pose::ID, &[1, 2]).starts_with("<cannot decode gz_sim_components.Pose"));
        assert_eq!(type_name(ComponentTypeId(7)), ComponentTypeId(7).to_string());
    }
}
