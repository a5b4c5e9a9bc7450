//! The smoke set: the subset of scenarios a pull request runs (`smoke-set.yaml`).
//!
//! ```yaml
//! tiers: [1]            # every scenario of these tiers
//! scenarios:            # plus these ids
//!   - T2-007            # why it is here
//! ```

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Result, bail};
use serde::Deserialize;

use super::Scenario;

/// A validated smoke-set selection.
#[derive(Debug, Clone, Default)]
pub struct SmokeSet {
    /// Every scenario of these tiers is selected.
    pub tiers: BTreeSet<u8>,
    /// Scenario ids selected one by one; each exists in the suite.
    pub scenarios: BTreeSet<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SmokeSetFile {
    #[serde(default)]
    tiers: Vec<u8>,
    #[serde(default)]
    scenarios: Vec<String>,
}

impl SmokeSet {
    /// Reads `path` and checks every id against `suite`.
    ///
    /// Errors: unreadable or malformed file, a tier outside 1..=5, an unknown or repeated id,
    /// an empty selection.
    pub fn load(path: &Path, suite: &[Scenario]) -> Result<SmokeSet> {
        let text = crate::fs::read_text(path, "smoke set", crate::defaults::MAX_SMALL_FILE_BYTES)?;
        let file: SmokeSetFile = serde_saphyr::from_str(&text)
            .map_err(|error| anyhow::anyhow!("`{}`: {error}", path.display()))?;
        let mut set = SmokeSet::default();
        for tier in file.tiers {
            if !(1..=5).contains(&tier) {
                bail!("`{}`: tiers: {tier} is not a tier (1..=5)", path.display());
            }
            set.tiers.insert(tier);
        }
        for (index, id) in file.scenarios.into_iter().enumerate() {
            if !suite.iter().any(|s| s.id == id) {
                bail!(
                    "`{}`: scenarios[{index}]: no scenario has id `{id}`",
                    path.display()
                );
            }
            if !set.scenarios.insert(id.clone()) {
                bail!(
                    "`{}`: scenarios[{index}]: `{id}` is listed twice",
                    path.display()
                );
            }
        }
        if set.tiers.is_empty() && set.scenarios.is_empty() {
            bail!(
                "`{}`: selects no scenarios (give `tiers` or `scenarios`)",
                path.display()
            );
        }
        Ok(set)
    }

    /// Whether `scenario` is in the set.
    pub fn contains(&self, scenario: &Scenario) -> bool {
        self.tiers.contains(&scenario.tier) || self.scenarios.contains(&scenario.id)
    }
}
