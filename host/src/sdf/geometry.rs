//! `<geometry>`, `<collision>`/`<visual>` and `<inertial>`.

use super::ctx::{text, Ctx, Result};
use super::dom::ShapeSdf;
use super::surface::{material, surface};
use crate::xml::{elements, qname};
use plugin_api::components::{Geometry, Inertial};
use plugin_api::math::Vec3;
use xmltree::Element;

/// Children of `<collision>` and `<visual>` read elsewhere or deliberately ignored.
const SHAPE_TOLERATED: &[&str] = &[
    "laser_retro",
    "max_contacts",
    "transparency",
    "cast_shadows",
    "meta",
    "visibility_flags",
    "density",
    "auto_inertia_params",
];

/// A `<collision>` or `<visual>`; the ordinal is taken before its content is read.
pub(crate) fn shape(ctx: &mut Ctx<'_>, el: &Element) -> Result<ShapeSdf> {
    let ordinal = ctx.ordinal();
    let name = ctx.attr(el, "name")?;
    let is_collision = el.name == "collision";
    let mut pose = None;
    let mut geometry = None;
    let (mut surf, mut mat) = (None, None);
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "pose" if pose.is_none() => pose = Some(ctx.pose_sdf(child)?),
            "geometry" if geometry.is_none() => geometry = Some(parse_geometry(ctx, child)?),
            "surface" if is_collision && surf.is_none() => surf = Some(surface(ctx, child)?),
            "material" if !is_collision && mat.is_none() => mat = Some(material(ctx, child)?),
            "surface" | "material" => ctx.warn(child, format!("<{}> in <{}> is ignored", child.name, qname(el))),
            "plugin" => ctx.warn(child, format!("<plugin> in <{}> (a visual plugin) is ignored", qname(el))),
            "pose" | "geometry" => {}
            n if SHAPE_TOLERATED.contains(&n) => {}
            _ => ctx.unknown(child, el),
        }
    }
    let geometry = geometry.unwrap_or_else(|| {
        ctx.warn(el, format!("<{}> has no <geometry>; it is empty", qname(el)));
        Geometry::Empty
    });
    let raw_pose = pose.unwrap_or_else(|| ctx.default_pose(el));
    Ok(ShapeSdf {
        ordinal,
        name,
        pose: raw_pose.value,
        raw_pose,
        geometry,
        surface: is_collision.then(|| surf.unwrap_or_default()),
        material: mat,
        origin: ctx.origin(el),
    })
}

/// The first shape inside `<geometry>`.
pub(crate) fn parse_geometry(ctx: &mut Ctx<'_>, el: &Element) -> Result<Geometry> {
    let mut found = None;
    for child in elements(el) {
        if child.prefix.is_some() {
            continue;
        }
        let g = match child.name.as_str() {
            "empty" => Geometry::Empty,
            "box" => Geometry::Box { size: vec3_or(ctx, child, "size", Vec3::new(1.0, 1.0, 1.0))? },
            "sphere" => Geometry::Sphere { radius: ctx.child_f64(child, "radius", 1.0)? },
            "cylinder" => Geometry::Cylinder {
                radius: ctx.child_f64(child, "radius", 1.0)?,
                length: ctx.child_f64(child, "length", 1.0)?,
            },
            "capsule" => Geometry::Capsule {
                radius: ctx.child_f64(child, "radius", 0.5)?,
                length: ctx.child_f64(child, "length", 1.0)?,
            },
            "ellipsoid" => Geometry::Ellipsoid { radii: vec3_or(ctx, child, "radii", Vec3::new(1.0, 1.0, 1.0))? },
            "plane" => Geometry::Plane {
                normal: vec3_or(ctx, child, "normal", Vec3::new(0.0, 0.0, 1.0))?,
                size: match child.get_child("size") {
                    Some(s) => ctx.numbers::<2>(s, "two numbers")?,
                    None => [1.0, 1.0],
                },
            },
            "mesh" => mesh(ctx, child)?,
            kind @ ("heightmap" | "polyline" | "image" | "cone") => {
                ctx.warn(child, format!("<{kind}> geometry is not supported yet; it is empty"));
                Geometry::Empty
            }
            _ => {
                ctx.unknown(child, el);
                continue;
            }
        };
        let known: &[&str] = match child.name.as_str() {
            "box" => &["size"],
            "sphere" => &["radius"],
            "cylinder" | "capsule" => &["radius", "length"],
            "ellipsoid" => &["radii"],
            "plane" => &["normal", "size"],
            "mesh" => &["uri", "scale", "submesh", "convex_decomposition"],
            _ => &[],
        };
        if !matches!(child.name.as_str(), "heightmap" | "polyline" | "image" | "cone") {
            ctx.check_children(child, known);
        }
        if found.is_none() {
            found = Some(g);
        } else {
            ctx.warn(child, "<geometry> has more than one shape; only the first is used");
        }
    }
    Ok(found.unwrap_or(Geometry::Empty))
}

fn vec3_or(ctx: &Ctx<'_>, parent: &Element, name: &str, default: Vec3) -> Result<Vec3> {
    match parent.get_child(name) {
        Some(c) => ctx.vec3(c).map_err(|_| {
            ctx.error(c, format!("<{}> needs a <{name}> of three numbers, found \"{}\"", qname(parent), text(c)))
        }),
        None => Ok(default),
    }
}

fn mesh(ctx: &mut Ctx<'_>, el: &Element) -> Result<Geometry> {
    let uri = match el.get_child("uri") {
        Some(u) if !text(u).is_empty() => text(u),
        _ => return Err(ctx.error(el, "<mesh> needs a <uri>")),
    };
    let scale = vec3_or(ctx, el, "scale", Vec3::new(1.0, 1.0, 1.0))?;
    let submesh = el.get_child("submesh").and_then(|s| s.get_child("name")).map(text).unwrap_or_default();
    Ok(Geometry::Mesh { uri, scale, submesh })
}

/// `<inertial>`: mass (default 1), pose, inertia (default identity).
pub(crate) fn inertial(ctx: &mut Ctx<'_>, el: &Element) -> Result<Inertial> {
    let mut out = Inertial::default();
    if el.attributes.get("auto").is_some_and(|a| matches!(a.trim(), "true" | "1")) {
        ctx.warn(el, "<inertial auto> is not supported yet; the written or default values are used");
    }
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "mass" => out.mass = ctx.f64(child)?,
            "pose" => out.pose = ctx.pose(child)?,
            "inertia" => {
                const NAMES: [&str; 6] = ["ixx", "ixy", "ixz", "iyy", "iyz", "izz"];
                for (i, n) in NAMES.iter().enumerate() {
                    if let Some(c) = child.get_child(*n) {
                        out.inertia[i] = ctx.f64(c)?;
                    }
                }
                ctx.check_children(child, &NAMES);
            }
            "fluid_added_mass" => {}
            _ => ctx.unknown(child, el),
        }
    }
    Ok(out)
}
