//! The world's environment: `<spherical_coordinates>`, `<magnetic_field>`, `<atmosphere>`,
//! `<wind>` and `<scene>`, each with SDFormat's defaults for what it does not say.

use super::ctx::{text, Ctx, Result};
use crate::xml::elements;
use plugin_api::components::{Atmosphere, Scene, SphericalCoordinates};
use plugin_api::math::Vec3;
use xmltree::Element;

/// SDFormat's default magnetic field, tesla.
pub(crate) const MAGNETIC_FIELD: Vec3 = Vec3 { x: 5.5645e-6, y: 22.8758e-6, z: -42.3884e-6 };

const SURFACE_MODELS: &[&str] = &["EARTH_WGS84", "MOON_SCS", "CUSTOM_SURFACE"];

/// `<spherical_coordinates>`.
pub(crate) fn spherical_coordinates(ctx: &mut Ctx<'_>, el: &Element) -> Result<SphericalCoordinates> {
    let mut s = SphericalCoordinates::default();
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "surface_model" => {
                let model = text(child);
                if !SURFACE_MODELS.contains(&model.as_str()) {
                    return Err(ctx.error(
                        child,
                        format!("unknown <surface_model> \"{model}\" (expected one of {})", SURFACE_MODELS.join(", ")),
                    ));
                }
                s.surface_model = model;
            }
            "world_frame_orientation" => s.world_frame_orientation = text(child),
            "latitude_deg" => s.latitude_deg = ctx.f64(child)?,
            "longitude_deg" => s.longitude_deg = ctx.f64(child)?,
            "elevation" => s.elevation = ctx.f64(child)?,
            "heading_deg" => s.heading_deg = ctx.f64(child)?,
            "surface_axis_equatorial" | "surface_axis_polar" => {
                ctx.warn(child, format!("<{}> (a custom surface's size) is not supported yet, ignored", child.name))
            }
            _ => ctx.unknown(child, el),
        }
    }
    Ok(s)
}

/// `<atmosphere type>`.
pub(crate) fn atmosphere(ctx: &mut Ctx<'_>, el: &Element) -> Result<Atmosphere> {
    let mut a = Atmosphere::default();
    if let Some(kind) = el.attributes.get("type") {
        if kind.trim() != "adiabatic" {
            return Err(
                ctx.error(el, format!("unknown <atmosphere type=\"{kind}\"> (SDFormat defines only adiabatic)"))
            );
        }
    }
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "temperature" => a.temperature = ctx.f64(child)?,
            "pressure" => a.pressure = ctx.f64(child)?,
            "temperature_gradient" => a.temperature_gradient = ctx.f64(child)?,
            _ => ctx.unknown(child, el),
        }
    }
    Ok(a)
}

/// `<wind>`: its `<linear_velocity>`.
pub(crate) fn wind(ctx: &mut Ctx<'_>, el: &Element) -> Result<Vec3> {
    let mut v = Vec3::ZERO;
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "linear_velocity" => v = ctx.vec3(child)?,
            _ => ctx.unknown(child, el),
        }
    }
    Ok(v)
}

/// `<scene>`; sky and fog are for a renderer Troupe does not have.
pub(crate) fn scene(ctx: &mut Ctx<'_>, el: &Element) -> Result<Scene> {
    let mut s = Scene::default();
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "ambient" => s.ambient = ctx.color(child)?,
            "background" => s.background = ctx.color(child)?,
            "shadows" => s.shadows = ctx.bool(child)?,
            "grid" => s.grid = ctx.bool(child)?,
            "origin_visual" => s.origin_visual = ctx.bool(child)?,
            "sky" | "fog" => ctx.unsupported(child),
            _ => ctx.unknown(child, el),
        }
    }
    Ok(s)
}
