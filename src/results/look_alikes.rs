//! Confused tool pairs next to the look-alike lint: for each pair the agent confused
//! (expected one tool, called another), whether `toolgate lint` flags the two tools as
//! look-alikes, with the similarity and the words that would tell them apart.
//!
//! Computed once, where the run report is assembled, and stored as plain data in the results;
//! renderers only render it.

use crate::lint::checks::CheckId;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::lint::similarity::{self, TfIdf};
use crate::lint::{LintOptions, ToolRef};
use crate::score::metrics::ConfusionCell;

/// The check id of the look-alike lint finding a pair is pointed at.
pub const LOOK_ALIKE_CHECK: CheckId = CheckId::LookAlikeTools;

/// A pair of tools the agent confused, and what the look-alike lint says about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfusedPair {
    /// The tool the scenario expected.
    pub expected: String,
    /// The tool the agent called in its place.
    pub called: String,
    /// How many times, over every run, at least 1.
    pub count: usize,
    /// What the look-alike lint says about the two tools.
    pub lint: LintPointer,
}

/// What the look-alike lint (`look_alike_tools`, default threshold) says about a confused pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum LintPointer {
    /// `toolgate lint` reports the pair: their names and descriptions are too alike.
    Flagged {
        /// The finding's check id, [`LOOK_ALIKE_CHECK`].
        check: String,
        /// The tool the finding is reported on (one of the pair).
        tool: String,
        /// TF-IDF cosine similarity, in 0.0..=1.0.
        similarity: f64,
        /// The highest-weighted words only the expected tool uses (at most five).
        only_expected: Vec<String>,
        /// The highest-weighted words only the called tool uses (at most five).
        only_called: Vec<String>,
    },
    /// Both tools are in the catalog and the lint does not report them as look-alikes: the
    /// confusion is not a naming problem.
    NotFlagged {
        /// TF-IDF cosine similarity, in 0.0..=1.0.
        similarity: f64,
        /// The lint's threshold, in 0.0..=1.0.
        threshold: f64,
    },
    /// The called tool is not in the catalog (an invented name): there is nothing to compare.
    NotInCatalog,
}

/// Points each confused pair of `confusion` (cells whose called tool differs from the expected
/// one; cells without a call are left out) at the look-alike lint of `catalog` (MCP tool
/// definitions), in the order of `confusion`.
pub fn of(confusion: &[ConfusionCell], catalog: &[Value]) -> Vec<ConfusedPair> {
    let confused: Vec<(&ConfusionCell, &str)> = confusion
        .iter()
        .filter_map(|cell| {
            let called = cell.called.as_deref()?;
            (called != cell.expected).then_some((cell, called))
        })
        .collect();
    if confused.is_empty() {
        return Vec::new();
    }
    let tools: Vec<ToolRef<'_>> = catalog
        .iter()
        .map(|definition| ToolRef {
            server: crate::lint::sources::BUILTIN_SERVER,
            name: definition.get("name").and_then(Value::as_str).unwrap_or(""),
            definition,
        })
        .collect();
    let threshold = LintOptions::default().similarity_threshold;
    let reported = similarity::look_alikes(&tools, threshold);
    let model = TfIdf::new(&tools);
    let index = |name: &str| tools.iter().position(|tool| tool.name == name);
    confused
        .into_iter()
        .map(|(cell, called)| {
            let lint = match (index(&cell.expected), index(called)) {
                (Some(expected), Some(called)) => {
                    let finding = reported.iter().find(|pair| {
                        (pair.first, pair.second) == (expected.min(called), expected.max(called))
                    });
                    match finding {
                        Some(pair) => LintPointer::Flagged {
                            check: LOOK_ALIKE_CHECK.as_str().to_owned(),
                            tool: tools[pair.first].name.to_owned(),
                            similarity: pair.similarity,
                            only_expected: model.separating(expected, called),
                            only_called: model.separating(called, expected),
                        },
                        None => LintPointer::NotFlagged {
                            similarity: model.similarity(expected, called),
                            threshold,
                        },
                    }
                }
                _ => LintPointer::NotInCatalog,
            };
            ConfusedPair {
                expected: cell.expected.clone(),
                called: called.to_owned(),
                count: cell.count,
                lint,
            }
        })
        .collect()
}

/// The confused pairs of a merged `confusion` matrix, each keeping the lint pointer the parts'
/// `pairs` gave it (every part pointed at the catalog it was served; a merge has none of its
/// own). A pair no part holds is [`LintPointer::NotInCatalog`].
pub fn regroup(confusion: &[ConfusionCell], pairs: &[&ConfusedPair]) -> Vec<ConfusedPair> {
    confusion
        .iter()
        .filter_map(|cell| {
            let called = cell.called.as_deref()?;
            (called != cell.expected).then_some((cell, called))
        })
        .map(|(cell, called)| ConfusedPair {
            expected: cell.expected.clone(),
            called: called.to_owned(),
            count: cell.count,
            lint: pairs
                .iter()
                .find(|pair| pair.expected == cell.expected && pair.called == called)
                .map_or(LintPointer::NotInCatalog, |pair| pair.lint.clone()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! Confused pairs: whether the lint flags the two tools, their similarity and telling words.

    use serde_json::json;

    use super::*;
    use crate::catalog::Catalog;

    fn cell(expected: &str, called: Option<&str>, count: usize) -> ConfusionCell {
        ConfusionCell {
            expected: expected.to_owned(),
            called: called.map(str::to_owned),
            count,
        }
    }

    /// `crm_search_contacts` / `admin_search_users` is a deliberate look-alike of the built-in
    /// catalog; their descriptions say customers vs employees, so the lint does not flag them.
    #[test]
    fn a_confused_builtin_pair_the_lint_does_not_flag_says_so_with_its_similarity() {
        let confusion = [
            cell("crm_search_contacts", Some("crm_search_contacts"), 4),
            cell("crm_search_contacts", Some("admin_search_users"), 2),
            cell("crm_search_contacts", None, 1),
            cell("comm_send_email", Some("send_mail"), 1),
        ];
        let pairs = of(&confusion, Catalog::builtin().definitions());
        assert_eq!(pairs.len(), 2);
        let mut merged = confusion.to_vec();
        merged[1].count = 5;
        let regrouped = regroup(&merged, &[&pairs[1], &pairs[0]]);
        assert_eq!(regrouped[0].count, 5);
        assert_eq!(regrouped[0].lint, pairs[0].lint);
        assert_eq!(regrouped[1], pairs[1]);
        assert_eq!(
            (
                pairs[0].expected.as_str(),
                pairs[0].called.as_str(),
                pairs[0].count
            ),
            ("crm_search_contacts", "admin_search_users", 2)
        );
        let LintPointer::NotFlagged {
            similarity,
            threshold,
        } = pairs[0].lint
        else {
            panic!("not flagged: {:?}", pairs[0].lint);
        };
        assert_eq!(threshold, 0.5);
        // Just below the lint's threshold: the descriptions say customers vs employees.
        assert_eq!(format!("{similarity:.3}"), "0.498");
        assert_eq!(pairs[1].lint, LintPointer::NotInCatalog);
    }

    #[test]
    fn a_confused_pair_the_lint_flags_points_at_its_finding_and_separating_words() {
        let catalog = [
            json!({"name": "purge_record", "description": "Delete the record for good."}),
            json!({"name": "drop_record", "description": "Delete the record for good."}),
            json!({"name": "send_invoice", "description": "Email an invoice PDF to a customer."}),
        ];
        let pairs = of(&[cell("drop_record", Some("purge_record"), 3)], &catalog);
        assert_eq!(
            pairs,
            [ConfusedPair {
                expected: "drop_record".to_owned(),
                called: "purge_record".to_owned(),
                count: 3,
                lint: LintPointer::Flagged {
                    check: "look_alike_tools".to_owned(),
                    tool: "purge_record".to_owned(),
                    similarity: pairs_similarity(&catalog),
                    only_expected: vec!["drop".to_owned()],
                    only_called: vec!["purge".to_owned()],
                },
            }]
        );
    }

    fn pairs_similarity(catalog: &[Value]) -> f64 {
        let tools: Vec<ToolRef<'_>> = catalog
            .iter()
            .map(|definition| ToolRef {
                server: "s",
                name: definition["name"].as_str().unwrap_or(""),
                definition,
            })
            .collect();
        TfIdf::new(&tools).similarity(0, 1)
    }
}
