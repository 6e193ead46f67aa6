//! Command components applied to the rapier world before the step: pose, velocity,
//! wrench and joint commands.

use super::*;

impl World {
    pub(super) fn apply_pose_commands(&mut self, ecm: &mut Ecm<'_>) -> Result<(), Error> {
        let cmds = self.commands::<WorldPoseCmd>(ecm)?;
        for (e, cmd) in cmds {
            ecm.remove::<WorldPoseCmd>(e);
            finite(&cmd.0.position, "WorldPoseCmd position", e)?;
            let q = cmd.0.rotation;
            finite(&Vec3::new(q.x, q.y, q.z), "WorldPoseCmd rotation", e)?;
            if !(q.w.is_finite() && (q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z) > 1e-12) {
                return Err(err(format!("entity {e}: WorldPoseCmd rotation {q:?} is not a rotation")));
            }
            let target = pose_to_r(&cmd.0);
            if let Some(state) = self.model(e) {
                let parent_world = state.parent.and_then(|p| self.model(p)).map_or(RPose::IDENTITY, |p| p.world);
                let new_world = parent_world * target;
                let delta = new_world * state.world.inverse();
                let (models, links) = self.subtree(e);
                for m in models {
                    if let Some(s) = self.model_slots[m].as_mut() {
                        s.world = delta * s.world;
                    }
                }
                for l in links {
                    let Some(h) = self.slot_body(l) else { continue };
                    let b = &mut self.sim.bodies[h];
                    let p = delta * *b.position();
                    b.set_position(p, true);
                }
                ecm.set(e, &cmd.0, Change::OneTime)?;
            } else if let Some(link) = self.link(e) {
                let body = link.body;
                let model_world = self.model_slots[link.model].as_ref().map_or(RPose::IDENTITY, |m| m.world);
                self.sim.bodies[body].set_position(model_world * target, true);
                ecm.set(e, &cmd.0, Change::OneTime)?;
            }
        }
        Ok(())
    }

    pub(super) fn apply_joint_resets(&mut self, ecm: &mut Ecm<'_>) -> Result<(), Error> {
        for (e, cmd) in self.commands::<JointPositionReset>(ecm)? {
            ecm.remove::<JointPositionReset>(e);
            let Some(s) = self.joints.get_mut(&e) else { continue };
            let Some(&q) = cmd.0.first() else { continue };
            // The reported angle restarts from the reset value, whole turns included.
            s.angle = Some(q);
            let s = &self.joints[&e];
            let motion = match s.kind {
                JointType::Revolute | JointType::Continuous => RPose::from_rotation(Rotation::from_rotation_x(q)),
                JointType::Prismatic => RPose::from_translation(Vector::new(q, 0.0, 0.0)),
                _ => continue,
            };
            let xp = *self.sim.bodies[s.parent].position();
            let xc = xp * s.frame1 * motion * s.frame2.inverse();
            let b = &mut self.sim.bodies[s.child];
            b.set_position(xc, true);
            b.set_linvel(Vector::ZERO, true);
            b.set_angvel(Vector::ZERO, true);
        }
        Ok(())
    }

    pub(super) fn apply_velocity_commands(&mut self, ecm: &mut Ecm<'_>) -> Result<(), Error> {
        let lin: BTreeMap<EntityId, Vec3> =
            self.commands::<LinearVelocityCmd>(ecm)?.into_iter().map(|(e, v)| (e, v.0)).collect();
        let ang: BTreeMap<EntityId, Vec3> =
            self.commands::<AngularVelocityCmd>(ecm)?.into_iter().map(|(e, v)| (e, v.0)).collect();
        let targets: BTreeSet<EntityId> = lin.keys().chain(ang.keys()).copied().collect();
        for e in targets {
            let (v, w) = (lin.get(&e).copied(), ang.get(&e).copied());
            v.map_or(Ok(()), |v| finite(&v, "LinearVelocityCmd", e))?;
            w.map_or(Ok(()), |w| finite(&w, "AngularVelocityCmd", e))?;
            let (frame, bodies): (RPose, Vec<RigidBodyHandle>) = if let Some(l) = self.link(e) {
                (*self.sim.bodies[l.body].position(), vec![l.body])
            } else if let Some(&m) = self.models.get(&e) {
                let links = self.model_slots[m].as_ref().map(|s| s.links.clone()).unwrap_or_default();
                (self.model_world_now(m), links.into_iter().filter_map(|l| self.slot_body(l)).collect())
            } else {
                continue;
            };
            let w_world = w.map(|w| frame.rotation * vec_to_r(w));
            let v_world = v.map(|v| frame.rotation * vec_to_r(v));
            for h in bodies {
                let b = &mut self.sim.bodies[h];
                if b.is_fixed() {
                    continue;
                }
                let ang_now = w_world.unwrap_or(b.angvel());
                // Velocity of the commanded frame's origin, carried to this body's centre of
                // mass by the angular velocity.
                let origin_vel = v_world.unwrap_or_else(|| b.velocity_at_point(frame.translation));
                let com = b.center_of_mass();
                b.set_angvel(ang_now, true);
                b.set_linvel(origin_vel + ang_now.cross(com - frame.translation), true);
            }
        }
        Ok(())
    }

    /// A model's world pose (by slot) from its canonical link's body now.
    pub(super) fn model_world_now(&self, m: usize) -> RPose {
        let Some(s) = self.model_slots[m].as_ref() else { return RPose::IDENTITY };
        match s.canonical.and_then(|c| self.slot_body(c)) {
            Some(h) => *self.sim.bodies[h].position() * s.canon_offset.inverse(),
            None => s.world,
        }
    }

    pub(super) fn apply_wrenches(&mut self, ecm: &mut Ecm<'_>) -> Result<(), Error> {
        for (e, cmd) in self.commands::<ExternalWorldWrenchCmd>(ecm)? {
            ecm.remove::<ExternalWorldWrenchCmd>(e);
            let Some(body) = self.link(e).map(|l| l.body) else { continue };
            let b = &mut self.sim.bodies[body];
            let Wrench { force, torque } = cmd.0;
            finite(&force, "ExternalWorldWrenchCmd force", e)?;
            finite(&torque, "ExternalWorldWrenchCmd torque", e)?;
            b.add_force(vec_to_r(force), true);
            b.add_torque(vec_to_r(torque), true);
            self.forced.push(body);
        }
        Ok(())
    }

    pub(super) fn apply_joint_commands(&mut self, ecm: &mut Ecm<'_>) -> Result<(), Error> {
        for (e, cmd) in self.commands::<JointForceCmd>(ecm)? {
            ecm.remove::<JointForceCmd>(e);
            if cmd.0.iter().any(|f| !f.is_finite()) {
                return Err(err(format!("entity {e}: JointForceCmd {:?} is not finite", cmd.0)));
            }
            let Some(s) = self.joints.get(&e) else { continue };
            let world_frame = *self.sim.bodies[s.parent].position() * s.frame1;
            for (i, (ax, data)) in s.axes.iter().enumerate() {
                let Some(&f) = cmd.0.get(i) else { break };
                // As gz-sim does, a positive `<effort>` limit clamps the commanded force.
                let f = if data.effort > 0.0 { f.clamp(-data.effort, data.effort) } else { f };
                let dir = world_frame.rotation * if i == 0 { Vector::X } else { Vector::Y };
                let v = dir * f;
                for (h, sign) in [(s.child, 1.0), (s.parent, -1.0)] {
                    let b = &mut self.sim.bodies[h];
                    if matches!(ax, RAxis::LinX) {
                        b.add_force(v * sign, true);
                    } else {
                        b.add_torque(v * sign, true);
                    }
                    self.forced.push(h);
                }
            }
        }
        let commands: BTreeMap<EntityId, Vec<f64>> =
            self.commands::<JointVelocityCmd>(ecm)?.into_iter().map(|(e, v)| (e, v.0)).collect();
        if let Some((e, v)) = commands.iter().find(|(_, v)| v.iter().any(|x| !x.is_finite())) {
            return Err(err(format!("entity {e}: JointVelocityCmd {v:?} is not finite")));
        }
        for (e, s) in self.joints.iter_mut() {
            let cmd = commands.get(e);
            if cmd.is_none() && !s.commanded {
                continue;
            }
            let Some(j) = self.sim.joints.get_mut(s.handle, true) else { continue };
            for (i, (ax, data)) in s.axes.iter().enumerate() {
                match cmd.and_then(|c| c.get(i)) {
                    Some(&v) => {
                        // A positive `<velocity>` limit clamps the commanded velocity.
                        let v = if data.velocity > 0.0 { v.clamp(-data.velocity, data.velocity) } else { v };
                        j.data.set_motor_model(*ax, MotorModel::AccelerationBased);
                        j.data.set_motor(*ax, 0.0, v, 0.0, 1e6);
                        j.data.set_motor_max_force(*ax, if data.effort > 0.0 { data.effort } else { f64::MAX });
                    }
                    None => set_passive_motor(&mut j.data, *ax, data),
                }
            }
            s.commanded = cmd.is_some();
        }
        Ok(())
    }
}
