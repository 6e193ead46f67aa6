//! How collisions touch and how visuals look: surfaces, collision flags and materials.

use super::{record_component, value_component};

record_component! {
    /// Contact properties of a collision (SDFormat `<surface>`).
    ///
    /// Physics combines two surfaces as gz-sim's default engine does: friction by minimum,
    /// restitution by product.
    Surface = "troupe.Surface" {
        /// Friction coefficient along the first friction direction (`<ode><mu>`, default 1).
        mu: f64 = 1.0,
        /// Friction coefficient along the second direction (`<mu2>`, default 1).
        mu2: f64 = 1.0,
        /// Coefficient of restitution, 0 (no bounce) to 1 (`<restitution_coefficient>`,
        /// default 0).
        restitution: f64 = 0.0,
        /// Impact velocity below which there is no bounce, m/s (`<threshold>`, default
        /// 100000).
        bounce_threshold: f64 = 100_000.0,
        /// Collision bitmask (`<contact><collide_bitmask>`, default 0xffff): two collisions
        /// touch only if their masks share a bit.
        collide_bitmask: u32 = 0xffff,
    }
}

value_component!(
    /// Whether a model's links collide with each other (`<self_collide>`, default false).
    SelfCollide(bool) = "gz_sim_components.SelfCollide");
value_component!(
    /// Whether a link is moved only by commands, not by forces (`<kinematic>`, default
    /// false).
    Kinematic(bool) = "troupe.Kinematic");
value_component!(
    /// Whether gravity acts on a link (link `<gravity>`, default true).
    GravityEnabled(bool) = "troupe.GravityEnabled");
value_component!(
    /// Whether wind acts on a model or link (`<enable_wind>`, default false).
    WindMode(bool) = "gz_sim_components.WindMode");

record_component! {
    /// How a visual looks (SDFormat `<material>`); colours are RGBA in 0..1.
    Material = "gz_sim_components.Material" {
        /// Ambient colour (default 0 0 0 1).
        ambient: [f64; 4] = [0.0, 0.0, 0.0, 1.0],
        /// Diffuse colour (default 0 0 0 1).
        diffuse: [f64; 4] = [0.0, 0.0, 0.0, 1.0],
        /// Specular colour (default 0 0 0 1).
        specular: [f64; 4] = [0.0, 0.0, 0.0, 1.0],
        /// Emissive colour (default 0 0 0 1).
        emissive: [f64; 4] = [0.0, 0.0, 0.0, 1.0],
        /// Whether lighting affects the visual (`<lighting>`, default true).
        lighting: bool = true,
        /// Whether both faces are rendered (`<double_sided>`, default false).
        double_sided: bool = false,
    }
}
