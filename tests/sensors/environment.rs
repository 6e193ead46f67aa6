//! Air pressure, magnetometer and NavSat against the world's environment.

use crate::common::*;
use plugin_api::components::LinearVelocityCmd;
use plugin_api::components::Name;
use plugin_api::math::Vec3;
use plugin_api::msgs::{FluidPressure, Magnetometer, NavSat};
use plugin_api::{Change, Component, EcmRead, Which};
use troupe::fixture::TestFixture;
use troupe::server::ServerOptions;

#[test]
fn air_pressure_follows_the_standard_atmosphere_at_two_altitudes() {
    let s = sensor("baro", "air_pressure", 10.0, "");
    let body = ball("low", "0 0 0 0 0 0", 0.1, true, &s) + &ball("high", "0 0 1000 0 0 0", 0.1, true, &s);
    let mut f = load(&world("", &body));
    let low = subscribe(&mut f, &topic("low", "link", "baro", "air_pressure"), "gz.msgs.FluidPressure");
    let high = subscribe(&mut f, &topic("high", "link", "baro", "air_pressure"), "gz.msgs.FluidPressure");
    f.run(200).unwrap();
    let (low, high): (Vec<FluidPressure>, Vec<FluidPressure>) = (take(&low), take(&high));
    assert_eq!((low.len(), high.len()), (2, 2));
    // ICAO standard atmosphere: 101325 Pa at sea level, 89874.6 Pa at 1000 m.
    assert!((low[1].pressure - 101_325.0).abs() < 0.01, "{:?}", low[1]);
    assert!((high[1].pressure - 89_874.6).abs() < 1.0, "{:?}", high[1]);
}

#[test]
fn a_magnetometer_turned_by_a_yaw_reads_the_field_turned_back() {
    let s = sensor("mag", "magnetometer", 10.0, "");
    let body = ball("compass", "0 0 1 0 0 1.5707963267948966", 0.1, true, &s);
    let mut f = load(&world("<magnetic_field>1e-5 2e-5 -3e-5</magnetic_field>", &body));
    let sub = subscribe(&mut f, &topic("compass", "link", "mag", "magnetometer"), "gz.msgs.Magnetometer");
    let got: Vec<Magnetometer> = run_and_take(&mut f, &sub, 100);
    let b = got[0].field_tesla.clone().unwrap();
    // Yawed 90°: the sensor's x is the world's y, its y the world's -x.
    let expect = [2e-5, -1e-5, -3e-5];
    assert!(
        (b.x - expect[0]).abs() < 1e-15 && (b.y - expect[1]).abs() < 1e-15 && (b.z - expect[2]).abs() < 1e-15,
        "{b:?}"
    );
}

#[test]
fn navsat_moving_north_a_known_distance_changes_latitude_by_it() {
    let s = sensor("gps", "navsat", 10.0, "");
    let body = ball("rover", "0 0 0 0 0 0", 0.1, false, &s);
    let sc = "<gravity>0 0 0</gravity><spherical_coordinates><surface_model>EARTH_WGS84</surface_model>\
        <latitude_deg>45</latitude_deg><longitude_deg>7</longitude_deg><elevation>200</elevation></spherical_coordinates>";
    std::env::set_var("GZ_SIM_SERVER_CONFIG_PATH", "");
    let mut f = TestFixture::with_options(ServerOptions {
        world_text: Some((world(sc, &body), "<navsat world>".into())),
        run: true,
        ..Default::default()
    })
    .unwrap()
    .on_pre_update(|info, ecm| {
        if info.iterations == 1 {
            let m = ecm.entity_by_name("rover").unwrap();
            ecm.set(m, &LinearVelocityCmd(Vec3::new(0.0, 10.0, 0.0)), Change::OneTime)?;
        }
        Ok(())
    })
    .finalize()
    .unwrap();
    let sub = subscribe(&mut f, &topic("rover", "link", "gps", "navsat"), "gz.msgs.NavSat");
    f.run(2000).unwrap();
    let got: Vec<NavSat> = take(&sub);
    assert_eq!(got.len(), 20);
    let (first, last) = (&got[0], got.last().unwrap());
    let ecm = f.ecm();
    let rover = ecm
        .query(Which::ALL, &[Name::ID])
        .into_iter()
        .find(|e| ecm.get::<Name>(*e).is_some_and(|n| n.0 == "rover"))
        .unwrap();
    let north = ecm.get::<plugin_api::math::Pose>(rover).unwrap().position.y;
    assert!(north > 19.0, "the rover moved {north} m north");
    // The meridian radius of curvature at 45°: M = a(1-e²)/(1-e² sin²φ)^1.5 = 6367381.8 m.
    let m = 6_367_381.8;
    let moved = (last.latitude_deg - 45.0).to_radians() * m;
    assert!((moved - north).abs() < 0.01, "latitude says {moved} m, the ECM {north} m");
    assert!((last.longitude_deg - 7.0).abs() < 1e-9 && (last.altitude - 200.0).abs() < 0.01, "{last:?}");
    assert!((last.velocity_north - 10.0).abs() < 1e-6 && last.velocity_east.abs() < 1e-6, "{last:?}");
    assert!((first.latitude_deg - 45.0).abs() < 1e-4);
}
