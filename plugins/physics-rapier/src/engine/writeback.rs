//! The write-back after the step: poses, velocities, accelerations, joint state and
//! contacts, in bulk and only for what changed.

use super::*;

/// Moved models from which the pose write-back visits the host's storage in place.
const DENSE_MIN: usize = 64;

impl World {
    /// Link and model poses of every model with a moving body, in one bulk write each.
    pub(super) fn write_poses(&mut self, ecm: &mut Ecm<'_>) -> Result<(), Error> {
        self.steps += 1;
        let step = self.steps;
        // Models with an awake body (kinematic ones moving by velocity included): nothing
        // else moved.
        let mut moved: Vec<usize> = Vec::new();
        for h in self.sim.islands.active_bodies() {
            let Some(b) = self.sim.bodies.get(h) else { continue };
            let Some(Some(l)) = self.link_slots.get(b.user_data as usize) else { continue };
            if let Some(m) = self.model_slots[l.model].as_mut() {
                if m.moved_in != step {
                    m.moved_in = step;
                    moved.push(l.model);
                }
            }
        }
        // Parents before their nested models (their slots come first).
        moved.sort_unstable();
        // In place when many models moved and most of them did; a few (a secondary's
        // performers) go in one bulk write, which costs less than lending the storage.
        let dense = moved.len() >= DENSE_MIN && moved.len() * 4 >= self.models.len();
        if dense && self.scratch.len() < self.model_slots.len() {
            self.scratch.resize(self.model_slots.len(), Pose::IDENTITY);
        }
        let (mut model_ids, mut model_poses, mut link_ids, mut link_poses) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for &m in &moved {
            let world = self.model_world_now(m);
            let s = self.model_slots[m].as_mut().expect("moved models are alive");
            s.world = world;
            let s = self.model_slots[m].as_ref().expect("moved models are alive");
            let relative = match s.parent.and_then(|p| self.model(p)) {
                Some(p) => p.world.inv_mul(&world),
                None => world,
            };
            if dense {
                self.scratch[m] = pose_from_r(&relative);
            } else {
                model_ids.push(s.entity);
                model_poses.push(pose_from_r(&relative));
            }
            for &l in &s.links {
                if Some(l) == s.canonical {
                    continue; // fixed in the model frame by definition
                }
                let Some(link) = self.link_slots[l].as_ref() else { continue };
                link_ids.push(link.entity);
                link_poses.push(pose_from_r(&world.inv_mul(self.sim.bodies[link.body].position())));
            }
        }
        if dense {
            // Most models moved: write them in place in one pass over the host's storage
            // (no copies, no id lookups), walking our id-ordered model map alongside.
            let (slots, scratch, models) = (&self.model_slots, &self.scratch, &self.models);
            let mut known = models.iter().peekable();
            ecm.for_each_mut::<Pose>(&[Model::ID], Change::Periodic, |id, pose| {
                while known.next_if(|(e, _)| **e < id).is_some() {}
                if let Some((_, &m)) = known.next_if(|(e, _)| **e == id) {
                    if slots[m].as_ref().is_some_and(|s| s.moved_in == step) {
                        *pose = scratch[m];
                    }
                }
            })?;
        } else if !model_ids.is_empty() {
            ecm.write_many(&model_ids, &model_poses, Change::Periodic)?;
        }
        if !link_ids.is_empty() {
            ecm.write_many(&link_ids, &link_poses, Change::Periodic)?;
        }
        Ok(())
    }

    /// Velocity and acceleration components, for the links and models that carry them.
    pub(super) fn write_velocities(&mut self, ecm: &mut Ecm<'_>, dt: f64) -> Result<(), Error> {
        write_link_values::<WorldLinearVelocity>(self, ecm, |_, v, _, _| WorldLinearVelocity(vec_from_r(v)))?;
        write_link_values::<WorldAngularVelocity>(self, ecm, |_, _, w, _| WorldAngularVelocity(vec_from_r(w)))?;
        write_link_values::<LinearVelocity>(self, ecm, |x, v, _, _| {
            LinearVelocity(vec_from_r(x.rotation.inverse() * v))
        })?;
        write_link_values::<AngularVelocity>(self, ecm, |x, _, w, _| {
            AngularVelocity(vec_from_r(x.rotation.inverse() * w))
        })?;
        // Accelerations: finite differences of the link origin's velocity over the step.
        let lin_links = self.queries.entities_with(ecm, &[Link::ID, WorldLinearAcceleration::ID]).to_vec();
        let ang_links = self.queries.entities_with(ecm, &[Link::ID, WorldAngularAcceleration::ID]).to_vec();
        if lin_links.is_empty() && ang_links.is_empty() {
            return Ok(());
        }
        let acc_links: BTreeSet<EntityId> = lin_links.iter().chain(&ang_links).copied().collect();
        let mut lin_acc = (Vec::new(), Vec::new());
        let mut ang_acc = (Vec::new(), Vec::new());
        for l in acc_links {
            let Some(s) = self.link(l) else { continue };
            let b = &self.sim.bodies[s.body];
            let (v, w) = (b.velocity_at_point(b.position().translation), b.angvel());
            let (v0, w0) = self.prev_vel.insert(l, (v, w)).unwrap_or((v, w));
            if b.is_sleeping() && v == v0 && w == w0 {
                continue;
            }
            // Both lists are ascending (query answers).
            if lin_links.binary_search(&l).is_ok() {
                lin_acc.0.push(l);
                lin_acc.1.push(WorldLinearAcceleration(vec_from_r((v - v0) / dt)));
            }
            if ang_links.binary_search(&l).is_ok() {
                ang_acc.0.push(l);
                ang_acc.1.push(WorldAngularAcceleration(vec_from_r((w - w0) / dt)));
            }
        }
        if !lin_acc.0.is_empty() {
            ecm.write_many(&lin_acc.0, &lin_acc.1, Change::Periodic)?;
        }
        if !ang_acc.0.is_empty() {
            ecm.write_many(&ang_acc.0, &ang_acc.1, Change::Periodic)?;
        }
        Ok(())
    }

    pub(super) fn write_joints(&mut self, ecm: &mut Ecm<'_>, dt: f64) -> Result<(), Error> {
        let ids: Vec<EntityId> = self.joints.keys().copied().collect();
        for e in ids {
            let s = self.joints.get_mut(&e).expect("listed");
            let (bp, bc) = (&self.sim.bodies[s.parent], &self.sim.bodies[s.child]);
            let idle = bp.is_sleeping() && bc.is_sleeping() || (!bp.is_dynamic() && bc.is_sleeping());
            if idle && s.written_idle {
                continue;
            }
            s.written_idle = idle;
            let f1 = *bp.position() * s.frame1;
            let f2 = *bc.position() * s.frame2;
            let rel = f1.inv_mul(&f2);
            let rel_w = bc.angvel() - bp.angvel();
            let anchor = f2.translation;
            let rel_v = bc.velocity_at_point(anchor) - bp.velocity_at_point(anchor);
            let (pos, vel) = match s.kind {
                JointType::Revolute | JointType::Continuous => {
                    let (axis, angle) = rel.rotation.to_axis_angle();
                    let q = if axis.x < 0.0 { -angle } else { angle };
                    // Rapier's angle is wrapped to (−π, π]; gz-sim reports the accumulated
                    // one. A joint turns less than half a turn per step, so the motion since
                    // the last report is the wrapped difference. The first report continues
                    // from the ECM's value (a hand-over carries it; after a world reset the
                    // restored one), or starts at rapier's.
                    let prev = s.angle.or_else(|| ecm.get::<JointPosition>(e).and_then(|p| p.0.first().copied()));
                    let q = match prev {
                        Some(prev) if prev.is_finite() => prev + wrap_angle(q - prev),
                        _ => wrap_angle(q),
                    };
                    s.angle = Some(q);
                    (vec![q], vec![rel_w.dot(f1.rotation * Vector::X)])
                }
                JointType::Prismatic => (vec![rel.translation.x], vec![rel_v.dot(f1.rotation * Vector::X)]),
                JointType::Universal | JointType::Revolute2 => {
                    let (a, b, _) = rel.rotation.to_euler(rapier3d_f64::glamx::EulerRot::XYZ);
                    (vec![a, b], vec![rel_w.dot(f1.rotation * Vector::X), rel_w.dot(f2.rotation * Vector::Y)])
                }
                _ => (Vec::new(), Vec::new()),
            };
            ecm.set(e, &JointPosition(pos), Change::Periodic)?;
            ecm.set(e, &JointVelocity(vel), Change::Periodic)?;
            if ecm.has::<JointTransmittedWrench>(e) {
                if let Some(j) = self.sim.joints.get(s.handle) {
                    // Rapier keeps the last substep's constraint impulses, along frame 1's
                    // axes, as applied to the parent; the wrench on the child over a substep
                    // is their negation, expressed here in the SDF joint frame.
                    let h = dt / self.sim.params.num_solver_iterations.max(1) as f64;
                    let i = j.impulses;
                    let to_joint = (f2.rotation * s.axis_rot.inverse()).inverse() * f1.rotation;
                    let force = to_joint * Vector::new(i[0], i[1], i[2]) * (-1.0 / h);
                    let torque = to_joint * Vector::new(i[3], i[4], i[5]) * (-1.0 / h);
                    let w = Wrench { force: vec_from_r(force), torque: vec_from_r(torque) };
                    ecm.set(e, &JointTransmittedWrench(w), Change::Periodic)?;
                }
            }
        }
        Ok(())
    }

    pub(super) fn write_contacts(&mut self, ecm: &mut Ecm<'_>) -> Result<(), Error> {
        let watched = self.queries.entities_with(ecm, &[Collision::ID, WatchContacts::ID]).to_vec();
        let mut reported = BTreeSet::new();
        for c in watched {
            let Some(&h) = self.collisions.get(&c) else { continue };
            let mut out = Vec::new();
            for pair in self.sim.narrow.contact_pairs_with(h) {
                if !pair.has_any_active_contact() {
                    continue;
                }
                let (Some(c1), Some(c2)) =
                    (self.sim.colliders.get(pair.collider1), self.sim.colliders.get(pair.collider2))
                else {
                    continue;
                };
                let mine_first = pair.collider1 == h;
                let other = EntityId(if mine_first { c2.user_data } else { c1.user_data } as u64); // low 64 bits
                let mut contact = Contact { collision1: c, collision2: other, ..Default::default() };
                let dt = self.sim.params.dt;
                for m in pair.manifolds() {
                    // The manifold normal points from collider1 to collider2; ours points
                    // from the other collision to this one.
                    let n = if mine_first { -m.data.normal } else { m.data.normal };
                    for p in &m.points {
                        // A point apart (dist > 0) counts only when the solver pushed through it:
                        // rapier finds contacts ahead of time and, once a body rests, can keep
                        // the gap it first measured (a dropped ball at rest reads 1.3 cm apart
                        // while carrying its weight).
                        if p.dist > 0.0 && p.data.impulse <= 0.0 {
                            continue;
                        }
                        let world = c1.position() * p.local_p1;
                        contact.positions.push(vec_from_r(world));
                        contact.normals.push(vec_from_r(n));
                        contact.depths.push((-p.dist).max(0.0));
                        contact.forces.push(vec_from_r(n * (p.data.impulse / dt)));
                    }
                }
                if !contact.positions.is_empty() {
                    out.push(contact);
                }
            }
            if !out.is_empty() {
                reported.insert(c);
                ecm.set(c, &ContactSensorData(out), Change::Periodic)?;
            } else if self.contacts_reported.contains(&c) || !ecm.has::<ContactSensorData>(c) {
                ecm.set(c, &ContactSensorData(Vec::new()), Change::Periodic)?;
            }
        }
        self.contacts_reported = reported;
        Ok(())
    }
}

/// Writes component `C` of every link carrying it, from the body's world pose, the velocity
/// of the link origin and the angular velocity. Sleeping bodies too (their velocities are
/// zero, and the host flags only values that changed): the cost is per link that asked.
pub(super) fn write_link_values<C: Component>(
    w: &mut World,
    ecm: &mut Ecm<'_>,
    f: impl Fn(&RPose, Vector, Vector, ()) -> C,
) -> Result<(), Error> {
    // The cache is set aside while its answer is read alongside the rest of the world (no
    // copy of the answer each step).
    let mut queries = std::mem::take(&mut w.queries);
    let carriers = queries.entities_with(ecm, &[Link::ID, C::ID]);
    let (mut ids, mut vals) = (Vec::with_capacity(carriers.len()), Vec::with_capacity(carriers.len()));
    for &l in carriers {
        let Some(s) = w.link(l) else { continue };
        let b = &w.sim.bodies[s.body];
        if b.is_fixed() {
            continue;
        }
        let x = b.position();
        ids.push(l);
        vals.push(f(x, b.velocity_at_point(x.translation), b.angvel(), ()));
    }
    w.queries = queries;
    if !ids.is_empty() {
        ecm.write_many(&ids, &vals, Change::Periodic)?;
    }
    Ok(())
}

/// `a` wrapped to [−π, π).
fn wrap_angle(a: f64) -> f64 {
    use std::f64::consts::PI;
    (a + PI).rem_euclid(2.0 * PI) - PI
}
