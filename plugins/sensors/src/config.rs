//! The settings every sensor shares, read from its `SensorSdf` component into typed
//! configuration. A bad block is a [`ConfigError`] naming the sensor and where it was
//! written; the system warns and skips that sensor.

use plugin_api::components::SensorSdf;
use xmltree::Element;

/// What was wrong with a sensor's SDF.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The sensor types Troupe simulates, each enabled by one gz-sim system name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `imu`: gz-sim-imu-system.
    Imu,
    /// `altimeter`: gz-sim-altimeter-system.
    Altimeter,
    /// `air_pressure`: gz-sim-air-pressure-system.
    AirPressure,
    /// `magnetometer`: gz-sim-magnetometer-system.
    Magnetometer,
    /// `navsat` (and the old `gps`): gz-sim-navsat-system.
    NavSat,
    /// `contact`: gz-sim-contact-system.
    Contact,
    /// `force_torque`: gz-sim-forcetorque-system.
    ForceTorque,
    /// `logical_camera`: gz-sim-logical-camera-system.
    LogicalCamera,
    /// `gpu_lidar`, `lidar`, `ray`, `gpu_ray`: gz-sim-sensors-system (on the CPU here).
    Lidar,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 9] = [
        Kind::Imu,
        Kind::Altimeter,
        Kind::AirPressure,
        Kind::Magnetometer,
        Kind::NavSat,
        Kind::Contact,
        Kind::ForceTorque,
        Kind::LogicalCamera,
        Kind::Lidar,
    ];

    /// The kind of an SDF `type`; `None` if Troupe has no such sensor.
    pub fn from_sdf(kind: &str) -> Option<Kind> {
        Some(match kind {
            "imu" => Kind::Imu,
            "altimeter" => Kind::Altimeter,
            "air_pressure" => Kind::AirPressure,
            "magnetometer" => Kind::Magnetometer,
            "navsat" | "gps" => Kind::NavSat,
            "contact" => Kind::Contact,
            "force_torque" => Kind::ForceTorque,
            "logical_camera" => Kind::LogicalCamera,
            "gpu_lidar" | "lidar" | "ray" | "gpu_ray" => Kind::Lidar,
            _ => return None,
        })
    }

    /// The gz-sim class (`gz::sim::systems::X`) whose name enables this kind.
    pub fn system_class(self) -> &'static str {
        match self {
            Kind::Imu => "Imu",
            Kind::Altimeter => "Altimeter",
            Kind::AirPressure => "AirPressure",
            Kind::Magnetometer => "Magnetometer",
            Kind::NavSat => "NavSat",
            Kind::Contact => "Contact",
            Kind::ForceTorque => "ForceTorque",
            Kind::LogicalCamera => "LogicalCamera",
            Kind::Lidar => "Sensors",
        }
    }

    /// The kinds a system class name enables (`gz::sim::systems::Imu` → IMU;
    /// `troupe::sensors::All` → every kind).
    pub fn enabled_by(class: &str) -> Vec<Kind> {
        let class = class.trim();
        if class == "troupe::sensors::All" {
            return Kind::ALL.to_vec();
        }
        let local = class.rsplit("::").next().unwrap_or(class);
        Kind::ALL.into_iter().filter(|k| k.system_class() == local).collect()
    }

    /// The default topic's last part (gz-sim's).
    pub fn topic_suffix(self) -> &'static str {
        match self {
            Kind::Imu => "imu",
            Kind::Altimeter => "altimeter",
            Kind::AirPressure => "air_pressure",
            Kind::Magnetometer => "magnetometer",
            Kind::NavSat => "navsat",
            Kind::Contact => "contact",
            Kind::ForceTorque => "forcetorque",
            Kind::LogicalCamera => "logical_camera",
            Kind::Lidar => "scan",
        }
    }
}

/// Sensor types SDFormat knows that Troupe does not simulate (they need a renderer).
pub const UNSUPPORTED: &[&str] = &[
    "camera",
    "depth_camera",
    "depth",
    "rgbd_camera",
    "rgbd",
    "thermal_camera",
    "thermal",
    "segmentation_camera",
    "segmentation",
    "boundingbox_camera",
    "boundingbox",
    "wideanglecamera",
    "multicamera",
    "air_speed",
    "sonar",
    "rfid",
    "rfidtag",
    "wireless_receiver",
    "wireless_transmitter",
    "custom",
];

/// The common settings of one sensor.
#[derive(Clone, Debug)]
pub struct Common {
    /// The sensor's name.
    pub name: String,
    /// `type` as written.
    pub sdf_type: String,
    /// What it is.
    pub kind: Kind,
    /// `<update_rate>`, Hz; 0 samples every step.
    pub rate: f64,
    /// Where `<sensor>` was written (`file:line`), empty if unknown.
    pub origin: String,
    /// The `<sensor>` element.
    pub xml: Element,
}

impl Common {
    /// "sensor NAME (type T) at FILE:LINE", for messages.
    pub fn what(&self) -> String {
        describe(&self.name, &self.sdf_type, &self.origin)
    }
    /// The type's block (`<imu>`, `<lidar>`...), the first of `names` present.
    pub fn block(&self, names: &[&str]) -> Option<&Element> {
        names.iter().find_map(|n| self.xml.get_child(*n))
    }
}

fn describe(name: &str, kind: &str, origin: &str) -> String {
    if origin.is_empty() {
        format!("sensor {name:?} (type {kind})")
    } else {
        format!("sensor {name:?} (type {kind}) at {origin}")
    }
}

/// What to do with a sensor entity.
#[derive(Debug)]
pub enum Parsed {
    /// Simulate it.
    Sensor(Box<Common>),
    /// Skip it, with this warning.
    Skip(String),
}

/// Reads the common settings of a sensor named `name`.
pub fn parse_common(name: &str, sdf: &SensorSdf) -> Parsed {
    let xml = match parse_xml(&sdf.xml) {
        Ok(x) => x,
        Err(e) => {
            return Parsed::Skip(format!("{}: its XML does not parse: {e}; skipped", describe(name, &sdf.kind, "")))
        }
    };
    let origin = xml.attributes.get("troupe_origin").cloned().unwrap_or_default();
    let what = describe(name, &sdf.kind, &origin);
    let Some(kind) = Kind::from_sdf(&sdf.kind) else {
        return Parsed::Skip(if UNSUPPORTED.contains(&sdf.kind.as_str()) {
            format!("{what}: this sensor type needs a renderer, which Troupe does not have; skipped")
        } else {
            format!("{what}: unknown sensor type {:?}; skipped", sdf.kind)
        });
    };
    if !sdf.update_rate.is_finite() || sdf.update_rate < 0.0 {
        return Parsed::Skip(format!(
            "{what}: <update_rate> must be a number >= 0, found {}; skipped",
            sdf.update_rate
        ));
    }
    Parsed::Sensor(Box::new(Common {
        name: name.to_string(),
        sdf_type: sdf.kind.clone(),
        kind,
        rate: sdf.update_rate,
        origin,
        xml,
    }))
}

/// Parses an element given as text (undeclared prefixes are tolerated as the plugin API does).
pub fn parse_xml(text: &str) -> Result<Element, String> {
    let wrapped = format!("<troupe-sensor xmlns:gz=\"gz\" xmlns:ignition=\"ignition\">{text}</troupe-sensor>");
    let root = Element::parse(wrapped.as_bytes()).map_err(|e| e.to_string())?;
    root.children
        .into_iter()
        .find_map(|n| match n {
            xmltree::XMLNode::Element(e) => Some(e),
            _ => None,
        })
        .ok_or_else(|| "no element".to_string())
}

/// The trimmed text of child `tag`.
pub fn child_text(el: &Element, tag: &str) -> Option<String> {
    el.get_child(tag).map(|c| c.get_text().map(|t| t.trim().to_string()).unwrap_or_default())
}

/// Child `tag` as a number, `default` when absent; an error naming `what` and the tag when
/// it is not a number.
pub fn child_f64(el: &Element, tag: &str, default: f64, what: &str) -> Result<f64, ConfigError> {
    match child_text(el, tag) {
        None => Ok(default),
        Some(t) => t
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| ConfigError(format!("{what}: <{tag}> must be a number, found {t:?}"))),
    }
}

/// Child `tag` as a number; an error when it is missing.
pub fn required_f64(el: &Element, tag: &str, what: &str) -> Result<f64, ConfigError> {
    if el.get_child(tag).is_none() {
        return Err(ConfigError(format!("{what}: missing required <{tag}>")));
    }
    child_f64(el, tag, 0.0, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sdf(kind: &str, rate: f64) -> SensorSdf {
        SensorSdf {
            kind: kind.into(),
            update_rate: rate,
            xml: format!("<sensor name=\"s\" type=\"{kind}\" troupe_origin=\"w.sdf:12\"/>"),
            ..Default::default()
        }
    }

    #[test]
    fn bad_sensors_are_skipped_with_their_name_and_line() {
        let Parsed::Skip(m) = parse_common("s", &sdf("sonic_screwdriver", 1.0)) else { panic!() };
        assert!(m.contains("\"s\"") && m.contains("w.sdf:12") && m.contains("unknown sensor type"), "{m}");
        let Parsed::Skip(m) = parse_common("s", &sdf("imu", -1.0)) else { panic!() };
        assert!(m.contains("w.sdf:12") && m.contains("update_rate"), "{m}");
        let Parsed::Skip(m) = parse_common("s", &sdf("camera", 1.0)) else { panic!() };
        assert!(m.contains("renderer"), "{m}");
        assert!(
            matches!(parse_common("s", &sdf("gpu_lidar", 10.0)), Parsed::Sensor(c) if c.kind == Kind::Lidar && c.origin == "w.sdf:12")
        );
    }

    #[test]
    fn system_names_enable_their_kinds() {
        assert_eq!(Kind::enabled_by("gz::sim::systems::Imu"), vec![Kind::Imu]);
        assert_eq!(Kind::enabled_by("gz::sim::systems::Sensors"), vec![Kind::Lidar]);
        assert_eq!(Kind::enabled_by("troupe::sensors::All").len(), 9);
        assert!(Kind::enabled_by("acme::Other").is_empty());
    }
}
