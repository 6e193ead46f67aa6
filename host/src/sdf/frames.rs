//! Frame semantics (SDFormat 1.7+): `<pose relative_to>`, `<frame name attached_to>` and the
//! default frame of each element, resolved into the pose every entity keeps relative to its
//! parent entity.
//!
//! Defaults: a model's pose is relative to the enclosing model frame (the world at the top),
//! a link's to its model frame (`__model__`), a joint's to its child (link or frame), a
//! collision's, visual's, light's or sensor's to its link (or joint), a frame's to what it is
//! attached to (default the model frame or the world). Names are looked up in the scope of
//! the enclosing model (the world for world-level elements); `a::b` walks into nested model
//! `a`. A joint's pose is stored relative to its child frame, as gz-sim does.
//!
//! The work is done on a graph built from the document: one node per pose (entities and
//! frames), each pointing at the node its pose is relative to. Unknown names and cycles are
//! errors naming the element, the name and the file and line of its `<pose>`.

use super::dom::{
    FrameSdf, JointSdf, LightSdf, LinkSdf, ModelSdf, Origin, PoseSdf, SdfDocument, SensorSdf, ShapeSdf, WorldSdf,
};
use super::SdfError;
use plugin_api::math::{Pose, Quat};
use std::collections::HashMap;

type NodeId = usize;
type ScopeId = usize;

/// A frame that is only known by name until the graph is complete.
#[derive(Clone)]
enum Link {
    Node(NodeId),
    /// `name` looked up in `scope`; `attr` says where the name was written, for errors.
    Name {
        name: String,
        scope: ScopeId,
        attr: &'static str,
    },
}

struct Node {
    /// `<link name="l">`, for messages.
    label: String,
    /// The pose as written, relative to `target`.
    pose: Pose,
    /// Where the pose was written.
    origin: Origin,
    /// The frame the pose is relative to; `None` for a root (the world).
    target: Option<Link>,
    /// A frame's `attached_to`, checked for existence and cycles.
    attached: Option<Link>,
}

struct Scope {
    /// `model "m"` or `world "w"`, for messages.
    label: String,
    /// The model frame (`__model__`) or the world frame.
    frame: NodeId,
    names: HashMap<String, NodeId>,
    models: HashMap<String, ScopeId>,
}

/// One pose to write back: the node, and the node the stored pose is relative to.
struct Output {
    node: NodeId,
    parent: Link,
}

#[derive(Default)]
struct Graph {
    nodes: Vec<Node>,
    scopes: Vec<Scope>,
    /// In the order the `write_*` functions visit the document.
    outputs: Vec<Output>,
    /// Per joint, in the same order: the joint's node and the frames its axes were written in.
    axes: Vec<(NodeId, [Option<Link>; 2])>,
    warnings: Vec<String>,
}

/// Resolves every pose of `doc` in place (`pose` fields from `raw_pose`).
pub(crate) fn resolve(doc: &mut SdfDocument) -> Result<(), SdfError> {
    let mut g = Graph::default();
    for w in &doc.worlds {
        g.world(w);
    }
    if !doc.models.is_empty() || !doc.lights.is_empty() {
        let file = doc.models.first().map(|m| m.origin.clone());
        let origin = file.or_else(|| doc.lights.first().map(|l| l.origin.clone()));
        let Some(origin) = origin else { return Ok(()) };
        let root = g.root_scope("the document".into(), origin);
        let frame = g.scopes[root].frame;
        for l in &doc.lights {
            g.light(l, root, frame);
        }
        for m in &doc.models {
            g.model(m, root);
        }
    }
    let targets = g.link_all()?;
    let world = g.world_poses(&targets)?;
    let mut out = Vec::with_capacity(g.outputs.len());
    for o in &g.outputs {
        let parent = g.find(&o.parent, o.node)?;
        let pose = if targets[o.node] == Some(parent) {
            g.nodes[o.node].pose
        } else {
            world[parent].inverse() * world[o.node]
        };
        out.push(pose);
    }
    // An axis written in frame F turns into the joint frame: R_joint^-1 R_F.
    let mut turns = Vec::with_capacity(g.axes.len());
    for (joint, frames) in &g.axes {
        let mut t = [None, None];
        for (slot, f) in t.iter_mut().zip(frames) {
            if let Some(f) = f {
                let f = g.find(f, *joint)?;
                *slot = Some(world[*joint].rotation.inverse() * world[f].rotation);
            }
        }
        turns.push(t);
    }
    let mut w = Writer { poses: out.into_iter(), turns: turns.into_iter() };
    for world in &mut doc.worlds {
        w.world(world);
    }
    doc.lights.iter_mut().for_each(|l| w.light(l));
    doc.models.iter_mut().for_each(|m| w.model(m));
    doc.warnings.append(&mut g.warnings);
    Ok(())
}

impl Graph {
    fn add(&mut self, label: String, raw: &PoseSdf, target: Option<Link>) -> NodeId {
        self.nodes.push(Node { label, pose: raw.value, origin: raw.origin.clone(), target, attached: None });
        self.nodes.len() - 1
    }

    /// The target of a pose: its `relative_to` in `scope`, else `default`.
    fn target(raw: &PoseSdf, scope: ScopeId, default: Link) -> Link {
        if raw.relative_to.is_empty() {
            default
        } else {
            Link::Name { name: raw.relative_to.clone(), scope, attr: "relative_to" }
        }
    }

    fn output(&mut self, node: NodeId, parent: Link) {
        self.outputs.push(Output { node, parent });
    }

    fn register(&mut self, scope: ScopeId, name: &str, node: NodeId) {
        let s = &mut self.scopes[scope];
        if let Some(&first) = s.names.get(name) {
            let (a, b) = (&self.nodes[first], &self.nodes[node]);
            self.warnings.push(format!(
                "{}: {} has the name of {} ({}) in {}; the name refers to the {}",
                b.origin, b.label, a.label, a.origin, s.label, a.label
            ));
        } else {
            s.names.insert(name.to_string(), node);
        }
    }

    fn root_scope(&mut self, label: String, origin: Origin) -> ScopeId {
        let raw = PoseSdf { value: Pose::IDENTITY, relative_to: String::new(), origin };
        let frame = self.add(label.clone(), &raw, None);
        self.scopes.push(Scope { label, frame, names: HashMap::new(), models: HashMap::new() });
        let scope = self.scopes.len() - 1;
        self.scopes[scope].names.insert("world".into(), frame);
        scope
    }

    fn world(&mut self, w: &WorldSdf) {
        let scope = self.root_scope(format!("world \"{}\"", w.name), w.origin.clone());
        let frame = self.scopes[scope].frame;
        let frames: Vec<NodeId> = w.frames.iter().map(|f| self.frame(f, scope)).collect();
        for l in &w.lights {
            self.light(l, scope, frame);
        }
        for m in &w.models {
            self.model(m, scope);
        }
        for j in &w.joints {
            self.joint(j, scope);
        }
        for (f, node) in w.frames.iter().zip(frames) {
            self.register(scope, &f.name, node);
        }
    }

    /// A frame's node; its name is registered by the caller, after the scope's links,
    /// joints and models, so that those win a name clash.
    fn frame(&mut self, f: &FrameSdf, scope: ScopeId) -> NodeId {
        let frame = self.scopes[scope].frame;
        let attached =
            (!f.attached_to.is_empty()).then(|| Link::Name { name: f.attached_to.clone(), scope, attr: "attached_to" });
        let default = attached.clone().unwrap_or(Link::Node(frame));
        let target = Self::target(&f.raw_pose, scope, default);
        let label = format!("<frame name=\"{}\">", f.name);
        let node = self.add(label, &f.raw_pose, Some(target));
        self.nodes[node].attached = attached;
        self.output(node, Link::Node(frame));
        node
    }

    fn light(&mut self, l: &LightSdf, scope: ScopeId, parent: NodeId) {
        let target = Self::target(&l.raw_pose, scope, Link::Node(parent));
        let node = self.add(format!("<light name=\"{}\">", l.name), &l.raw_pose, Some(target));
        self.output(node, Link::Node(parent));
    }

    /// A model in `scope`; its own elements live in a new scope.
    fn model(&mut self, m: &ModelSdf, scope: ScopeId) {
        let parent = self.scopes[scope].frame;
        let target = Self::target(&m.raw_pose, scope, Link::Node(parent));
        let label = format!("<model name=\"{}\">", m.name);
        let node = self.add(label, &m.raw_pose, Some(target));
        self.register(scope, &m.name, node);
        self.output(node, Link::Node(parent));
        let inner = self.scopes.len();
        self.scopes.push(Scope {
            label: format!("model \"{}\"", m.name),
            frame: node,
            names: HashMap::from([("__model__".to_string(), node)]),
            models: HashMap::new(),
        });
        self.scopes[scope].models.entry(m.name.clone()).or_insert(inner);
        let frames: Vec<NodeId> = m.frames.iter().map(|f| self.frame(f, inner)).collect();
        for l in &m.links {
            self.link(l, inner);
        }
        for j in &m.joints {
            self.joint(j, inner);
        }
        for nested in &m.models {
            self.model(nested, inner);
        }
        for (f, node) in m.frames.iter().zip(frames) {
            self.register(inner, &f.name, node);
        }
    }

    fn link(&mut self, l: &LinkSdf, scope: ScopeId) {
        let model = self.scopes[scope].frame;
        let target = Self::target(&l.raw_pose, scope, Link::Node(model));
        let node = self.add(format!("<link name=\"{}\">", l.name), &l.raw_pose, Some(target));
        self.register(scope, &l.name, node);
        self.output(node, Link::Node(model));
        for s in &l.collisions {
            self.shape(s, "collision", scope, node);
        }
        for s in &l.visuals {
            self.shape(s, "visual", scope, node);
        }
        for light in &l.lights {
            self.light(light, scope, node);
        }
        for s in &l.sensors {
            self.sensor(s, scope, node);
        }
    }

    fn shape(&mut self, s: &ShapeSdf, kind: &str, scope: ScopeId, link: NodeId) {
        let target = Self::target(&s.raw_pose, scope, Link::Node(link));
        let label = format!("<{kind} name=\"{}\">", s.name);
        let node = self.add(label, &s.raw_pose, Some(target));
        self.output(node, Link::Node(link));
    }

    fn sensor(&mut self, s: &SensorSdf, scope: ScopeId, parent: NodeId) {
        let target = Self::target(&s.raw_pose, scope, Link::Node(parent));
        let node = self.add(format!("<sensor name=\"{}\">", s.name), &s.raw_pose, Some(target));
        self.output(node, Link::Node(parent));
    }

    fn joint(&mut self, j: &JointSdf, scope: ScopeId) {
        let child = Link::Name { name: j.child.clone(), scope, attr: "child" };
        let target = Self::target(&j.raw_pose, scope, child.clone());
        let node = self.add(format!("<joint name=\"{}\">", j.name), &j.raw_pose, Some(target));
        self.register(scope, &j.name, node);
        self.output(node, child);
        let frame = self.scopes[scope].frame;
        let axis = |f: &Option<super::dom::AxisFrame>| {
            f.as_ref().map(|f| match f.frame.as_str() {
                "" => Link::Node(frame),
                name => Link::Name { name: name.to_string(), scope, attr: "expressed_in" },
            })
        };
        self.axes.push((node, [axis(&j.axis_frames[0]), axis(&j.axis_frames[1])]));
        for s in &j.sensors {
            self.sensor(s, scope, node);
        }
    }

    /// The node `name` means in `scope`: a name of the scope, or `a::rest` inside nested
    /// model `a`.
    fn lookup(&self, scope: ScopeId, name: &str) -> Option<NodeId> {
        let s = &self.scopes[scope];
        if let Some(&n) = s.names.get(name) {
            return Some(n);
        }
        let (first, rest) = name.split_once("::")?;
        self.lookup(*s.models.get(first)?, rest)
    }

    /// The node `link` means; `from` is the node whose element wrote it, for the error.
    fn find(&self, link: &Link, from: NodeId) -> Result<NodeId, SdfError> {
        let (name, scope, attr) = match link {
            Link::Node(n) => return Ok(*n),
            Link::Name { name, scope, attr } => (name, *scope, *attr),
        };
        self.lookup(scope, name).ok_or_else(|| {
            let node = &self.nodes[from];
            let s = &self.scopes[scope];
            let mut known: Vec<&str> = s.names.keys().map(String::as_str).collect();
            known.sort_unstable();
            let what = match attr {
                "child" => format!("{} has <child>{name}</child>", node.label),
                "attached_to" => format!("{} has attached_to=\"{name}\"", node.label),
                "expressed_in" => format!("{} has an axis <xyz expressed_in=\"{name}\">", node.label),
                _ => format!("{} has <pose relative_to=\"{name}\">", node.label),
            };
            invalid(
                &node.origin,
                format!("{what}, but {} has no frame named \"{name}\" (it has: {})", s.label, known.join(", ")),
            )
        })
    }

    /// Every node's target as a node id, and attachment cycles refused.
    fn link_all(&self) -> Result<Vec<Option<NodeId>>, SdfError> {
        let mut targets = Vec::with_capacity(self.nodes.len());
        let mut attached = vec![None; self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            targets.push(n.target.as_ref().map(|t| self.find(t, i)).transpose()?);
            attached[i] = n.attached.as_ref().map(|a| self.find(a, i)).transpose()?;
        }
        // attached_to chains run through frames only; one that comes back is a cycle.
        for start in (0..self.nodes.len()).filter(|&n| attached[n].is_some()) {
            let mut chain = vec![start];
            let mut at = start;
            while let Some(next) = attached[at] {
                if let Some(k) = chain.iter().position(|&c| c == next) {
                    if k == 0 {
                        return Err(self.cycle(&chain, "attached_to"));
                    }
                    break; // a cycle not through `start`: reported from one of its own nodes
                }
                chain.push(next);
                at = next;
            }
        }
        Ok(targets)
    }

    fn cycle(&self, chain: &[NodeId], attr: &str) -> SdfError {
        let first = &self.nodes[chain[0]];
        let names: Vec<&str> = chain.iter().chain(&chain[..1]).map(|&n| self.nodes[n].label.as_str()).collect();
        invalid(&first.origin, format!("{} is {attr} a cycle of frames: {}", first.label, names.join(" -> ")))
    }

    /// Every node's pose in its root frame; a `relative_to` cycle is an error.
    fn world_poses(&self, targets: &[Option<NodeId>]) -> Result<Vec<Pose>, SdfError> {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            New,
            Open,
            Done,
        }
        let mut state = vec![State::New; self.nodes.len()];
        let mut world = vec![Pose::IDENTITY; self.nodes.len()];
        for start in 0..self.nodes.len() {
            // Walk up to a node already done (or a root), then fill in on the way down.
            let mut path = Vec::new();
            let mut at = Some(start);
            while let Some(n) = at {
                match state[n] {
                    State::Done => break,
                    State::Open => {
                        let k = path.iter().position(|&p| p == n).unwrap_or(0);
                        return Err(self.cycle(&path[k..], "relative_to"));
                    }
                    State::New => {
                        state[n] = State::Open;
                        path.push(n);
                        at = targets[n];
                    }
                }
            }
            for &n in path.iter().rev() {
                world[n] = match targets[n] {
                    Some(t) => world[t] * self.nodes[n].pose,
                    None => Pose::IDENTITY,
                };
                state[n] = State::Done;
            }
        }
        Ok(world)
    }
}

fn invalid(origin: &Origin, message: String) -> SdfError {
    SdfError::Invalid { file: (*origin.file).clone(), line: origin.line, message }
}

/// The write-back walk: it visits the document in exactly the order of the `Graph`
/// builders, taking the next resolved pose for each element (and the axis turns of each
/// joint).
struct Writer<P, T> {
    poses: P,
    turns: T,
}

impl<P: Iterator<Item = Pose>, T: Iterator<Item = [Option<Quat>; 2]>> Writer<P, T> {
    fn next(&mut self, into: &mut Pose) {
        if let Some(p) = self.poses.next() {
            *into = p;
        }
    }

    fn world(&mut self, w: &mut WorldSdf) {
        w.frames.iter_mut().for_each(|f| self.next(&mut f.pose));
        w.lights.iter_mut().for_each(|l| self.light(l));
        w.models.iter_mut().for_each(|m| self.model(m));
        w.joints.iter_mut().for_each(|j| self.joint(j));
    }

    fn light(&mut self, l: &mut LightSdf) {
        self.next(&mut l.pose);
    }

    fn model(&mut self, m: &mut ModelSdf) {
        self.next(&mut m.pose);
        m.frames.iter_mut().for_each(|f| self.next(&mut f.pose));
        for l in &mut m.links {
            self.next(&mut l.pose);
            for s in l.collisions.iter_mut().chain(&mut l.visuals) {
                self.next(&mut s.pose);
            }
            l.lights.iter_mut().for_each(|x| self.light(x));
            l.sensors.iter_mut().for_each(|s| self.next(&mut s.pose));
        }
        m.joints.iter_mut().for_each(|j| self.joint(j));
        m.models.iter_mut().for_each(|n| self.model(n));
    }

    fn joint(&mut self, j: &mut JointSdf) {
        self.next(&mut j.pose);
        let turns = self.turns.next().unwrap_or_default();
        for (axis, turn) in [&mut j.axis, &mut j.axis2].into_iter().zip(turns) {
            if let (Some(a), Some(q)) = (axis.as_mut(), turn) {
                a.xyz = q.rotate(a.xyz);
            }
        }
        j.sensors.iter_mut().for_each(|s| self.next(&mut s.pose));
    }
}
