//! Splitting a run across CI jobs and putting it back together: `gate --shard i/n` runs a
//! deterministic part of the selected scenarios (see [`Shard`]), `toolgate merge` combines the
//! parts into the results one run would have written.

use std::collections::BTreeSet;

use anyhow::{Result, bail};

use crate::results::impact::{Impact, Scoped};
use crate::results::pins::{Pins, Shard};
use crate::results::{RunReport, Summary};

/// Keeps the items of `shard` (by position), or all without a shard.
pub fn select<T>(items: Vec<T>, shard: Option<Shard>) -> Vec<T> {
    match shard {
        None => items,
        Some(shard) => items
            .into_iter()
            .enumerate()
            .filter(|(position, _)| shard.contains(*position))
            .map(|(_, item)| item)
            .collect(),
    }
}

/// Merges shard results (named by `names` in errors) into one report in suite order (the
/// order of the pinned scenario paths, as `load_dir` reads them).
///
/// Errors: no parts, a part without pinned metadata, parts measured differently (agent,
/// model, provider, system prompt, judge, harness, catalog), or a scenario in two parts.
pub fn merge(parts: &[(String, RunReport)]) -> Result<RunReport> {
    let Some((first_name, first)) = parts.first() else {
        bail!("nothing to merge");
    };
    let Some(first_pins) = &first.pins else {
        bail!(
            "`{first_name}` has no pinned metadata: merge reads results written by `toolgate gate`"
        );
    };
    let mut merged = first.clone();
    let mut pins = first_pins.clone();
    let mut seen = BTreeSet::new();
    merged.scenarios.clear();
    for (name, part) in parts {
        let Some(part_pins) = &part.pins else {
            bail!(
                "`{name}` has no pinned metadata: merge reads results written by `toolgate gate`"
            );
        };
        let mut differences = part_pins.ruler_changes(first_pins);
        differences.retain(|d| !d.starts_with("scenario files") && !d.starts_with("fixtures"));
        differences.extend(part_pins.subject_changes(first_pins));
        if part.agent != first.agent {
            differences.push(format!("agent `{}` -> `{}`", first.agent, part.agent));
        }
        if !differences.is_empty() {
            bail!(
                "`{name}` was measured differently from `{first_name}`: {}",
                differences.join("; ")
            );
        }
        for result in &part.scenarios {
            if !seen.insert(result.id.clone()) {
                bail!(
                    "scenario `{}` is in more than one part (again in `{name}`)",
                    result.id
                );
            }
            merged.scenarios.push(result.clone());
        }
        pins.scenarios.extend(
            part_pins
                .scenarios
                .iter()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        pins.fixtures.extend(
            part_pins
                .fixtures
                .iter()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
    }
    merged.scenarios.sort_by(|a, b| {
        let path = |id: &str| pins.scenarios.get(id).map(|p| p.path.clone());
        path(&a.id).cmp(&path(&b.id)).then_with(|| a.id.cmp(&b.id))
    });
    pins.shard = None;
    pins.rehash();
    let impact = merged_impact(parts, &pins);
    merged.pins = Some(pins);
    // The merged file is of every part's run: its id names them all, in the parts' order.
    let ids: Vec<&str> = parts
        .iter()
        .filter_map(|(_, part)| part.run.as_ref()?.run_id.as_deref())
        .collect();
    if let Some(run) = merged.run.as_mut() {
        run.run_id = (!ids.is_empty()).then(|| ids.join("+"));
        run.impact = impact;
        let cached: Vec<&str> = parts
            .iter()
            .filter_map(|(_, part)| part.run.as_ref()?.cached_from.as_deref())
            .collect();
        run.cached_from = (cached.len() == parts.len()).then(|| cached.join("+"));
    }
    merged.summary = Summary::of(&merged.scenarios);
    merged.metrics = crate::results::metrics_of(&merged.scenarios);
    let pointed: Vec<&crate::results::ConfusedPair> = parts
        .iter()
        .flat_map(|(_, part)| &part.confused_pairs)
        .collect();
    merged.confused_pairs =
        crate::results::look_alikes::regroup(&merged.metrics.overall.confusion, &pointed);
    Ok(merged)
}

/// The parts' `--impact` decisions as one: the changes of every part, and every part's
/// selected and skipped scenarios in suite order (by their files in `pins`, then by id);
/// `None` when no part was impact-scoped.
fn merged_impact(parts: &[(String, RunReport)], pins: &Pins) -> Option<Impact> {
    let impacts: Vec<&Impact> = parts
        .iter()
        .filter_map(|(_, part)| part.run.as_ref()?.impact.as_ref())
        .collect();
    let first = impacts.first()?;
    let union = |field: fn(&Impact) -> &Vec<String>| -> Vec<String> {
        let names: BTreeSet<&String> = impacts.iter().flat_map(|i| field(i)).collect();
        names.into_iter().cloned().collect()
    };
    let in_order = |field: fn(&Impact) -> &Vec<Scoped>| -> Vec<Scoped> {
        let mut all: Vec<Scoped> = impacts.iter().flat_map(|i| field(i)).cloned().collect();
        all.sort_by_key(|s| {
            (
                pins.scenarios.get(&s.id).map(|p| p.path.clone()),
                s.id.clone(),
            )
        });
        all
    };
    let selected = in_order(|i| &i.selected);
    Some(Impact {
        changed_tools: union(|i| &i.changed_tools),
        changed_scenarios: selected
            .iter()
            .map(|s| s.id.clone())
            .filter(|id| impacts.iter().any(|i| i.changed_scenarios.contains(id)))
            .collect(),
        changed_fixtures: union(|i| &i.changed_fixtures),
        selected,
        skipped: in_order(|i| &i.skipped),
        all_because: first.all_because.clone(),
    })
}
