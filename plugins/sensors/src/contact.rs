//! Contact: the contacts of the watched collisions, from the contact data physics writes.
//!
//! As gz-sim's contact system, a message goes out at the sensor's rate only while there are
//! contacts.

use crate::config::{Common, ConfigError};
use crate::motion::ensure;
use crate::system::{Sample, Setup};
use plugin_api::components::{Collision, ContactSensorData, Name, WatchContacts};
use plugin_api::math::Vec3;
use plugin_api::msgs::{entity, Contact as ContactMsg, Contacts, Entity, JointWrench, Vector3d, Wrench};
use plugin_api::{EcmRead, EntityId, Publisher, TopicOptions};

/// A contact sensor.
pub struct Contact {
    collisions: Vec<EntityId>,
    publisher: Publisher<Contacts>,
}

fn v3(v: Vec3) -> Vector3d {
    Vector3d { x: v.x, y: v.y, z: v.z, ..Default::default() }
}

fn entity_msg(ecm: &impl EcmRead, e: EntityId) -> Entity {
    Entity {
        id: e.0,
        name: crate::frames::scoped_name(ecm, e),
        r#type: entity::Type::Collision as i32,
        ..Default::default()
    }
}

impl Contact {
    /// Reads `<contact><collision>` (required, one or more: collisions of the sensor's
    /// link) and asks physics to report their contacts.
    pub fn new(common: &Common, topic: &str, s: &mut Setup<'_, '_>) -> Result<Contact, ConfigError> {
        let block = common.block(&["contact"]).ok_or_else(|| ConfigError("missing required <contact> block".into()))?;
        let names: Vec<String> = block
            .children
            .iter()
            .filter_map(|n| n.as_element())
            .filter(|e| e.name == "collision")
            .map(|e| e.get_text().map(|t| t.trim().to_string()).unwrap_or_default())
            .collect();
        if names.is_empty() {
            return Err(ConfigError("missing required <contact><collision>".into()));
        }
        let link = s.ecm.parent(s.entity).ok_or_else(|| ConfigError("has no parent link".into()))?;
        let mut collisions = Vec::new();
        for name in names {
            let found = s
                .ecm
                .children(link)
                .into_iter()
                .find(|c| s.ecm.has::<Collision>(*c) && s.ecm.get::<Name>(*c).is_some_and(|n| n.0 == name));
            let c = found.ok_or_else(|| {
                ConfigError(format!("<contact><collision>{name}</collision>: the link has no such collision"))
            })?;
            ensure::<WatchContacts>(s.ecm, c).map_err(|e| ConfigError(e.to_string()))?;
            collisions.push(c);
        }
        let publisher = s.host.advertise(topic, TopicOptions::default()).map_err(|e| ConfigError(e.0))?;
        Ok(Contact { collisions, publisher })
    }

    /// Publishes one sample if there are contacts.
    pub fn sample(&mut self, _: EntityId, s: &mut Sample<'_, '_>) -> plugin_api::Result {
        let mut msg = Contacts { header: Some(s.header.clone()), ..Default::default() };
        for &c in &self.collisions {
            let Some(data) = s.ecm.get::<ContactSensorData>(c) else { continue };
            for k in data.0 {
                let one = entity_msg(s.ecm, k.collision1);
                let two = entity_msg(s.ecm, k.collision2);
                let wrench = k
                    .forces
                    .iter()
                    .map(|f| JointWrench {
                        body_1_name: one.name.clone(),
                        body_1_id: one.id as u32,
                        body_2_name: two.name.clone(),
                        body_2_id: two.id as u32,
                        body_1_wrench: Some(Wrench { force: Some(v3(*f)), ..Default::default() }),
                        body_2_wrench: Some(Wrench { force: Some(v3(-*f)), ..Default::default() }),
                        ..Default::default()
                    })
                    .collect();
                msg.contact.push(ContactMsg {
                    collision1: Some(one),
                    collision2: Some(two),
                    position: k.positions.iter().map(|p| v3(*p)).collect(),
                    normal: k.normals.iter().map(|n| v3(*n)).collect(),
                    depth: k.depths.clone(),
                    wrench,
                    ..Default::default()
                });
            }
        }
        if !msg.contact.is_empty() {
            self.publisher.publish(&msg)?;
        }
        Ok(())
    }
}
