//! The world's environment: where on the planet it is, its magnetic field, atmosphere, wind
//! and how its scene looks. All live on the world entity.

use super::{record_component, value_component};
use crate::math::Vec3;

record_component! {
    /// Where the world's origin is on the planet (SDFormat `<spherical_coordinates>`).
    SphericalCoordinates = "gz_sim_components.SphericalCoordinates" {
        /// Surface model as SDFormat names it (`EARTH_WGS84` by default, `MOON_SCS`,
        /// `CUSTOM_SURFACE`).
        surface_model: String = "EARTH_WGS84".to_string(),
        /// Orientation convention of the world frame (`ENU` by default).
        world_frame_orientation: String = "ENU".to_string(),
        /// Geodetic latitude of the origin, degrees.
        latitude_deg: f64 = 0.0,
        /// Longitude of the origin, degrees.
        longitude_deg: f64 = 0.0,
        /// Elevation of the origin above the surface model, m.
        elevation: f64 = 0.0,
        /// Heading offset of the world frame, degrees.
        heading_deg: f64 = 0.0,
    }
}

value_component!(
    /// The world's magnetic field, tesla, world frame (SDFormat default
    /// 5.5645e-6 22.8758e-6 -42.3884e-6).
    MagneticField(Vec3) = "gz_sim_components.MagneticField");

record_component! {
    /// The atmosphere model (SDFormat `<atmosphere>`).
    Atmosphere = "gz_sim_components.Atmosphere" {
        /// Model type (`adiabatic`, the only one SDFormat defines).
        kind: String = "adiabatic".to_string(),
        /// Temperature at sea level, K (default 288.15).
        temperature: f64 = 288.15,
        /// Temperature gradient with height, K/m (default -0.0065).
        temperature_gradient: f64 = -0.0065,
        /// Pressure at sea level, Pa (default 101325).
        pressure: f64 = 101_325.0,
    }
}

value_component!(
    /// The wind's linear velocity, world frame, m/s (SDFormat `<wind><linear_velocity>`,
    /// default zero).
    WindVelocity(Vec3) = "troupe.WindVelocity");

record_component! {
    /// How the world's scene looks (SDFormat `<scene>`); colours are RGBA in 0..1.
    Scene = "gz_sim_components.Scene" {
        /// Ambient light (default 0.4 0.4 0.4 1).
        ambient: [f64; 4] = [0.4, 0.4, 0.4, 1.0],
        /// Background colour (default 0.7 0.7 0.7 1).
        background: [f64; 4] = [0.7, 0.7, 0.7, 1.0],
        /// Whether shadows are drawn (default true).
        shadows: bool = true,
        /// Whether a grid is drawn (default true).
        grid: bool = true,
        /// Whether the origin axes are drawn (default true).
        origin_visual: bool = true,
    }
}
