//! The sums of the regions that share one key: a category, a path, a
//! permission set, a vmmap region type or purge state. One shape for every
//! grouping, in every view and in snapshots, and the one way to add
//! regions up by key (`Grouper`, inside the library).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::region::Region;
use super::sizes::Sizes;

/// Regions added up under one key.
///
/// In JSON (snapshots) the key is written as `category`, with the sizes
/// beside it: `{"category":"heap","regions":3,"rss":4096,...}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Group {
    /// The key the regions share: a category key, a path, a permission set, a
    /// vmmap region type or purge label.
    #[serde(rename = "category")]
    pub key: String,
    /// How many regions were added up.
    pub regions: usize,
    /// Their sizes added up (virtual size from the range where the source gave none).
    #[serde(flatten)]
    pub sizes: Sizes,
}

impl Group {
    /// An empty group for `key`.
    pub(crate) fn new(key: impl Into<String>) -> Group {
        Group { key: key.into(), regions: 0, sizes: Sizes::default() }
    }
}

/// Adds regions up by key as they come, without keeping them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Grouper {
    /// Hashed by foldhash, seeded at random as std's map is: a key is
    /// hashed once a region added, and SipHash was most of the grouping's cost.
    index: HashMap<String, usize, foldhash::fast::RandomState>,
    groups: Vec<Group>,
}

impl Grouper {
    pub(crate) fn new() -> Grouper {
        Grouper::default()
    }

    /// A grouper with room for `keys` keys.
    pub(crate) fn with_capacity(keys: usize) -> Grouper {
        Grouper {
            index: HashMap::with_capacity_and_hasher(keys, Default::default()),
            groups: Vec::with_capacity(keys),
        }
    }

    fn slot(&mut self, key: &str) -> &mut Group {
        let i = match self.index.get(key) {
            Some(&i) => i,
            None => {
                self.groups.push(Group::new(key));
                self.index.insert(key.to_string(), self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        &mut self.groups[i]
    }

    /// Adds one region under `key` (its virtual size from its range when
    /// the source gave no size).
    pub(crate) fn add_region(&mut self, key: &str, region: &Region) {
        let g = self.slot(key);
        g.regions += 1;
        g.sizes.add_region(region);
    }

    /// Adds a sum of `regions` regions under `key`.
    pub(crate) fn add_sizes(&mut self, key: &str, regions: usize, sizes: &Sizes) {
        let g = self.slot(key);
        g.regions += regions;
        g.sizes.add(sizes);
    }

    /// Adds another group's sums under its key.
    pub(crate) fn add_group(&mut self, group: &Group) {
        self.add_sizes(&group.key, group.regions, &group.sizes);
    }

    /// Every group so far, in first-seen (or listed) order.
    pub(crate) fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// Every group, in first-seen (or listed) order.
    pub(crate) fn into_groups(self) -> Vec<Group> {
        self.groups
    }
}
