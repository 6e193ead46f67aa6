//! Sensors as the SDF declares them. The sensors system reads the configuration from
//! [`SensorSdf`]; the entity also carries the [`Sensor`](super::Sensor) marker, a name, a
//! pose relative to its link and its parent.

use super::{record_component, value_component};

record_component! {
    /// A `<sensor>` element: its common settings, and its whole XML for the type-specific
    /// blocks (`<imu>`, `<ray>`, `<noise>`...).
    SensorSdf = "troupe.SensorSdf" {
        /// The `type` attribute (`imu`, `altimeter`, `gpu_lidar`...).
        kind: String = String::new(),
        /// Samples per second (`<update_rate>`, default 0: every step).
        update_rate: f64 = 0.0,
        /// Whether it samples when nobody subscribes (`<always_on>`, default false).
        always_on: bool = false,
        /// `<topic>` as written; empty for the sensor type's default topic.
        topic: String = String::new(),
        /// The whole `<sensor>...</sensor>` element, with where it was written added as
        /// a `troupe_origin="file:line"` attribute (for messages about it).
        xml: String = String::new(),
    }
}

value_component!(
    /// The topic a sensor publishes on, once the sensors system has resolved it.
    SensorTopic(String) = "gz_sim_components.SensorTopic");
