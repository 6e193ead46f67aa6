//! A collision's `<surface>` and a visual's `<material>`.

use super::ctx::{text, Ctx, Result};
use crate::xml::elements;
use plugin_api::components::{Material, Surface};
use xmltree::Element;

/// `<surface>`: friction (`<ode>` `mu`/`mu2`, else `<bullet>` `friction`/`friction2`),
/// `<bounce>` and `<contact><collide_bitmask>`. Engine tuning (slip, torsional friction,
/// soft contacts...) is SDFormat that no Troupe component holds; it is accepted silently
/// and listed as ignored in docs/sdf-support.md.
pub(crate) fn surface(ctx: &mut Ctx<'_>, el: &Element) -> Result<Surface> {
    let mut s = Surface::default();
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "friction" => {
                if let Some(ode) = child.get_child("ode") {
                    s.mu = ctx.child_f64(ode, "mu", s.mu)?;
                    s.mu2 = ctx.child_f64(ode, "mu2", s.mu2)?;
                    ctx.check_children(ode, &["mu", "mu2", "fdir1", "slip1", "slip2"]);
                } else if let Some(bullet) = child.get_child("bullet") {
                    s.mu = ctx.child_f64(bullet, "friction", s.mu)?;
                    s.mu2 = ctx.child_f64(bullet, "friction2", s.mu2)?;
                    ctx.check_children(bullet, &["friction", "friction2", "fdir1", "rolling_friction"]);
                }
                ctx.check_children(child, &["ode", "bullet", "torsional"]);
            }
            "bounce" => {
                s.restitution = ctx.child_f64(child, "restitution_coefficient", s.restitution)?;
                s.bounce_threshold = ctx.child_f64(child, "threshold", s.bounce_threshold)?;
                ctx.check_children(child, &["restitution_coefficient", "threshold"]);
            }
            "contact" => {
                if let Some(mask) = child.get_child("collide_bitmask") {
                    s.collide_bitmask = bitmask(ctx, mask)?;
                }
                ctx.check_children(
                    child,
                    &[
                        "collide_without_contact",
                        "collide_without_contact_bitmask",
                        "collide_bitmask",
                        "category_bitmask",
                        "poissons_ratio",
                        "elastic_modulus",
                        "ode",
                        "bullet",
                    ],
                );
            }
            "soft_contact" => {}
            _ => ctx.unknown(child, el),
        }
    }
    Ok(s)
}

/// An unsigned integer written in decimal or as `0x` hexadecimal.
fn bitmask(ctx: &Ctx<'_>, el: &Element) -> Result<u32> {
    let t = text(el);
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.map_err(|_| {
        ctx.error(el, format!("<collide_bitmask> needs an unsigned integer (decimal or 0x hex), found \"{t}\""))
    })
}

/// `<material>`: the colours and flags a renderer needs; scripts, shaders and PBR maps are
/// accepted and ignored.
pub(crate) fn material(ctx: &mut Ctx<'_>, el: &Element) -> Result<Material> {
    let mut m = Material::default();
    for child in elements(el) {
        match child.name.as_str() {
            _ if child.prefix.is_some() => {}
            "ambient" => m.ambient = ctx.color(child)?,
            "diffuse" => m.diffuse = ctx.color(child)?,
            "specular" => m.specular = ctx.color(child)?,
            "emissive" => m.emissive = ctx.color(child)?,
            "lighting" => m.lighting = ctx.bool(child)?,
            "double_sided" => m.double_sided = ctx.bool(child)?,
            "script" | "shader" | "pbr" | "render_order" => {}
            _ => ctx.unknown(child, el),
        }
    }
    Ok(m)
}
