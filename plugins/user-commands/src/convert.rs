//! gz-msgs messages to component values, refusing what cannot be a pose or a light.

use plugin_api::components::{Light, LightKind};
use plugin_api::math::{Pose, Quat, Vec3};
use plugin_api::msgs;

/// A `gz.msgs.Pose` as a pose: a missing position is the origin; a missing or all-zero
/// orientation is no rotation (gz tools often send only a position); any other orientation
/// is normalised. Non-finite numbers are refused.
pub fn pose(msg: &msgs::Pose) -> Result<Pose, String> {
    let p = msg.position.as_ref().map_or(Vec3::ZERO, |v| Vec3::new(v.x, v.y, v.z));
    let q = match &msg.orientation {
        None => Quat::IDENTITY,
        Some(q) => Quat { w: q.w, x: q.x, y: q.y, z: q.z },
    };
    let numbers = [p.x, p.y, p.z, q.w, q.x, q.y, q.z];
    if numbers.iter().any(|v| !v.is_finite()) {
        return Err(format!("the pose has a number that is not finite: position {p:?}, orientation {q:?}"));
    }
    let norm = (q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z).sqrt();
    let rotation =
        if norm == 0.0 { Quat::IDENTITY } else { Quat { w: q.w / norm, x: q.x / norm, y: q.y / norm, z: q.z / norm } };
    Ok(Pose { position: p, rotation })
}

fn color(c: &msgs::Color) -> [f64; 4] {
    [c.r as f64, c.g as f64, c.b as f64, c.a as f64]
}

/// The SDF `type` attribute of a light message's type.
pub fn light_type_name(msg: &msgs::Light) -> Result<&'static str, String> {
    match msgs::light::LightType::try_from(msg.r#type) {
        Ok(msgs::light::LightType::Point) => Ok("point"),
        Ok(msgs::light::LightType::Spot) => Ok("spot"),
        Ok(msgs::light::LightType::Directional) => Ok("directional"),
        Err(_) => Err(format!("unknown light type {} (expected POINT, SPOT or DIRECTIONAL)", msg.r#type)),
    }
}

/// `current` updated from a `gz.msgs.Light`, as gz-sim's conversion does: every scalar field
/// is taken as sent (proto3 cannot tell an unset number from 0). A colour or direction the
/// message leaves out keeps its current value.
pub fn light(msg: &msgs::Light, current: &Light) -> Result<Light, String> {
    let kind = match light_type_name(msg)? {
        "spot" => LightKind::Spot,
        "directional" => LightKind::Directional,
        _ => LightKind::Point,
    };
    let mut l = current.clone();
    l.kind = kind;
    l.cast_shadows = msg.cast_shadows;
    if let Some(c) = &msg.diffuse {
        l.diffuse = color(c);
    }
    if let Some(c) = &msg.specular {
        l.specular = color(c);
    }
    if let Some(d) = &msg.direction {
        l.direction = Vec3::new(d.x, d.y, d.z);
    }
    l.range = msg.range as f64;
    l.attenuation = [msg.attenuation_constant as f64, msg.attenuation_linear as f64, msg.attenuation_quadratic as f64];
    l.intensity = msg.intensity as f64;
    l.spot = [msg.spot_inner_angle as f64, msg.spot_outer_angle as f64, msg.spot_falloff as f64];
    l.on = !msg.is_light_off;
    l.visualize = msg.visualize_visual;
    let numbers = l.diffuse.iter().chain(&l.specular).chain(&l.attenuation).chain(&l.spot).copied().chain([
        l.range,
        l.intensity,
        l.direction.x,
        l.direction.y,
        l.direction.z,
    ]);
    if numbers.into_iter().any(|v| !v.is_finite()) {
        return Err("the light has a number that is not finite".into());
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pose_without_orientation_is_unrotated_and_a_turned_one_is_normalised() {
        let m = msgs::Pose { position: Some(msgs::Vector3d { z: 2.0, ..Default::default() }), ..Default::default() };
        assert_eq!(pose(&m).unwrap(), Pose { position: Vec3::new(0.0, 0.0, 2.0), rotation: Quat::IDENTITY });
        let m =
            msgs::Pose { orientation: Some(msgs::Quaternion { w: 2.0, ..Default::default() }), ..Default::default() };
        assert_eq!(pose(&m).unwrap().rotation, Quat::IDENTITY);
        let m =
            msgs::Pose { position: Some(msgs::Vector3d { x: f64::NAN, ..Default::default() }), ..Default::default() };
        assert!(pose(&m).unwrap_err().contains("not finite"));
    }

    #[test]
    fn a_light_message_replaces_scalars_and_keeps_colours_it_leaves_out() {
        let current = Light::default();
        let m = msgs::Light { r#type: 1, intensity: 3.0, range: 5.0, is_light_off: true, ..Default::default() };
        let l = light(&m, &current).unwrap();
        assert_eq!(l.kind, LightKind::Spot);
        assert_eq!((l.intensity, l.range, l.on), (3.0, 5.0, false));
        assert_eq!(l.diffuse, current.diffuse);
        assert!(light(&msgs::Light { r#type: 7, ..Default::default() }, &current)
            .unwrap_err()
            .contains("unknown light type 7"));
    }
}
