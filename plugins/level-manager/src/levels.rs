//! The level rule (docs/levels.md), without the ECM: which buffered level boxes each performer
//! volume touches, and so which levels are wanted loaded.

use crate::volume::Aabb;
use plugin_api::EntityId;

/// One level: its entity, its box inflated by its buffer, and the names it holds.
#[derive(Clone, Debug)]
pub struct LevelRecord {
    /// The level entity.
    pub id: EntityId,
    /// Its name, for logs.
    pub name: String,
    /// The level's box inflated by its buffer: a performer touching it keeps the level
    /// loaded, and one entering it loads the level.
    pub buffered: Aabb,
    /// Names of the top-level entities the level holds (`LevelEntityNames`).
    pub names: Vec<String>,
}

/// Every level of a world, in ascending id order.
#[derive(Clone, Debug, Default)]
pub struct LevelSet {
    /// The levels.
    pub levels: Vec<LevelRecord>,
}

impl LevelSet {
    /// For each performer volume, the indices (into `levels`) of the buffered level boxes it
    /// touches, written into `touched` (one list per performer, reused); answers for each
    /// level whether some performer touches it. Cost: performers x levels box tests.
    pub fn update(&self, performers: &[Aabb], touched: &mut Vec<Vec<usize>>, wanted: &mut Vec<bool>) {
        wanted.clear();
        wanted.resize(self.levels.len(), false);
        touched.resize_with(performers.len(), Vec::new);
        for (volume, list) in performers.iter().zip(touched.iter_mut()) {
            list.clear();
            for (i, level) in self.levels.iter().enumerate() {
                if volume.touches(&level.buffered) {
                    list.push(i);
                    wanted[i] = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::math::Vec3;

    fn level(id: u64, x: f64, buffer: f64) -> LevelRecord {
        LevelRecord {
            id: EntityId(id),
            name: format!("L{id}"),
            buffered: Aabb::centered(Vec3::new(x, 0.0, 0.0), Vec3::new(10.0, 10.0, 10.0)).inflated(buffer),
            names: Vec::new(),
        }
    }

    fn robot(x: f64) -> Aabb {
        Aabb::centered(Vec3::new(x, 0.0, 0.0), Vec3::new(2.0, 2.0, 2.0))
    }

    #[test]
    fn a_performer_loads_the_levels_whose_buffer_it_touches() {
        let set = LevelSet { levels: vec![level(1, 0.0, 2.0), level(2, 20.0, 2.0)] };
        let (mut touched, mut wanted) = (Vec::new(), Vec::new());
        // L1 spans -7..7 with its buffer, L2 13..27; the robot spans x-1..x+1.
        for (x, expect) in [(0.0, vec![0]), (8.0, vec![0]), (8.01, vec![]), (12.0, vec![1]), (10.0, vec![])] {
            set.update(&[robot(x)], &mut touched, &mut wanted);
            assert_eq!(touched[0], expect, "robot at x = {x}");
            assert_eq!(wanted, [expect.contains(&0), expect.contains(&1)], "robot at x = {x}");
        }
    }

    #[test]
    fn two_performers_keep_a_level_until_both_leave() {
        let set = LevelSet { levels: vec![level(1, 0.0, 0.0)] };
        let (mut touched, mut wanted) = (Vec::new(), Vec::new());
        set.update(&[robot(0.0), robot(5.0)], &mut touched, &mut wanted);
        assert_eq!(wanted, [true]);
        set.update(&[robot(50.0), robot(5.0)], &mut touched, &mut wanted);
        assert_eq!(wanted, [true]);
        assert_eq!(touched, [vec![], vec![0]]);
        set.update(&[robot(50.0), robot(-50.0)], &mut touched, &mut wanted);
        assert_eq!(wanted, [false]);
    }
}
