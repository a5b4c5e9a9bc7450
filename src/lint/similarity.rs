//! Look-alike tools: pairs whose names and descriptions are too similar for a model to tell
//! apart, by cosine similarity of TF-IDF vectors, listed with the words that separate them.

use super::checks::CheckId;
use std::collections::HashMap;

use super::descriptions::{STOP_WORDS, name_words, words};
use super::{Finding, Severity, ToolRef};

/// How many separating words each side of a pair lists.
const SEPARATING_WORDS: usize = 5;

/// A sparse, L2-normalised TF-IDF vector: `(term id, weight)` sorted by term id.
type Vector = Vec<(u32, f64)>;

/// One look-alike pair.
#[derive(Debug, Clone, PartialEq)]
pub struct LookAlike {
    /// Indexes into the tool list, `first < second`.
    pub first: usize,
    pub second: usize,
    /// Cosine similarity in 0.0..=1.0.
    pub similarity: f64,
    /// The highest-weighted words only the first tool uses (at most five).
    pub only_first: Vec<String>,
    /// The highest-weighted words only the second tool uses (at most five).
    pub only_second: Vec<String>,
}

/// The words of a tool as the similarity sees them: its name split into words, then its
/// description, lowercased, without stop words.
fn terms(tool: &ToolRef<'_>) -> Vec<String> {
    let description = tool
        .definition
        .get("description")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    name_words(tool.name)
        .into_iter()
        .chain(words(description))
        .filter(|word| !STOP_WORDS.contains(&word.as_str()))
        .collect()
}

/// The TF-IDF vectors of a catalog's tools (names split into words, then descriptions), the
/// model behind [`look_alikes`]; also answers for any one pair.
pub struct TfIdf {
    /// Term names by term id.
    names: Vec<String>,
    /// One L2-normalised vector per tool, in catalog order.
    vectors: Vec<Vector>,
}

impl TfIdf {
    /// Builds the vectors of `tools` (smoothed IDF, as scikit-learn's `TfidfVectorizer`).
    pub fn new(tools: &[ToolRef<'_>]) -> Self {
        let mut vocabulary: HashMap<String, u32> = HashMap::new();
        let documents: Vec<Vec<u32>> = tools
            .iter()
            .map(|tool| {
                terms(tool)
                    .into_iter()
                    .map(|term| {
                        let next = u32::try_from(vocabulary.len()).unwrap_or(u32::MAX);
                        *vocabulary.entry(term).or_insert(next)
                    })
                    .collect()
            })
            .collect();
        let mut names = vec![String::new(); vocabulary.len()];
        for (term, id) in vocabulary {
            names[id as usize] = term;
        }
        let mut document_frequency = vec![0_usize; names.len()];
        for document in &documents {
            let mut unique = document.clone();
            unique.sort_unstable();
            unique.dedup();
            for term in unique {
                document_frequency[term as usize] += 1;
            }
        }
        let count = documents.len() as f64;
        let vectors: Vec<Vector> = documents
            .into_iter()
            .map(|mut document| {
                // Term counts by sorting, not hashing: the vector comes out in term order,
                // which the sums below need (a float sum in hash order would differ between
                // runs and break ties between equally similar tools at random).
                document.sort_unstable();
                let mut vector: Vector = Vec::with_capacity(document.len());
                for term in document {
                    match vector.last_mut() {
                        Some((last, tf)) if *last == term => *tf += 1.0,
                        _ => vector.push((term, 1.0)),
                    }
                }
                for (term, weight) in &mut vector {
                    // Smoothed IDF, as scikit-learn's TfidfVectorizer.
                    let df = document_frequency[*term as usize] as f64;
                    *weight *= ((1.0 + count) / (1.0 + df)).ln() + 1.0;
                }
                let norm = vector.iter().map(|(_, w)| w * w).sum::<f64>().sqrt();
                if norm > 0.0 {
                    vector.iter_mut().for_each(|(_, w)| *w /= norm);
                }
                vector
            })
            .collect();
        Self { names, vectors }
    }

    /// Cosine similarity of tools `first` and `second` (indexes into the catalog), in
    /// 0.0..=1.0.
    pub fn similarity(&self, first: usize, second: usize) -> f64 {
        dot(&self.vectors[first], &self.vectors[second])
    }

    /// The highest-weighted words of tool `own` that tool `other` lacks (at most five).
    pub fn separating(&self, own: usize, other: usize) -> Vec<String> {
        separating(&self.vectors[own], &self.vectors[other], &self.names)
    }
}

/// Pairs of tools with similarity at or above `threshold` (in 0.0..=1.0), most similar first:
/// each tool's closest such partner (ties: the first in catalog order). Tools with the same
/// name are left to the duplicate-name check, and each pair of names is reported once.
pub fn look_alikes(tools: &[ToolRef<'_>], threshold: f64) -> Vec<LookAlike> {
    let model = TfIdf::new(tools);
    let vectors = &model.vectors;

    // Each tool's closest partner at or above the threshold; a pair is reported when it is the
    // closest for either side, so a family of near-identical tools gives one line per tool
    // rather than one per pair.
    //
    // All pairs: the first tool's weights are scattered into a dense array once, so each pair
    // costs one pass over the second tool's terms. The products are summed in the same term
    // order as [`dot`], so every similarity is bit for bit the same.
    //
    // Plain loops and integer name ids rather than iterator adapters and string comparisons:
    // the shipped binary is optimised for size, which inlines little, and this loop runs once
    // per pair (half a million times for 1,000 tools).
    let names = name_ids(tools);
    let mut closest: Vec<Option<(usize, f64)>> = vec![None; vectors.len()];
    let mut dense = vec![0.0_f64; model.names.len()];
    for first in 0..vectors.len() {
        for &(term, weight) in &vectors[first] {
            dense[term as usize] = weight;
        }
        for second in first + 1..vectors.len() {
            if names[first] == names[second] {
                continue;
            }
            let mut similarity = 0.0;
            for &(term, weight) in &vectors[second] {
                similarity += dense[term as usize] * weight;
            }
            if similarity < threshold {
                continue;
            }
            for (own, other) in [(first, second), (second, first)] {
                if closest[own].is_none_or(|(_, best)| similarity > best) {
                    closest[own] = Some((other, similarity));
                }
            }
        }
        for &(term, _) in &vectors[first] {
            dense[term as usize] = 0.0;
        }
    }
    let mut chosen: Vec<(usize, usize, f64)> = closest
        .iter()
        .enumerate()
        .filter_map(|(own, best)| best.map(|(other, s)| (own.min(other), own.max(other), s)))
        .collect();
    chosen.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
    chosen.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    // A tool listed twice (two servers offering it, or a repeated page) would give the same
    // pair of names twice; one line per pair of names.
    let mut named: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
    chosen.retain(|&(first, second, _)| {
        let (a, b) = (tools[first].name, tools[second].name);
        named.insert(if a <= b { (a, b) } else { (b, a) })
    });
    chosen
        .into_iter()
        .map(|(first, second, similarity)| LookAlike {
            first,
            second,
            similarity,
            only_first: model.separating(first, second),
            only_second: model.separating(second, first),
        })
        .collect()
}

/// One id per distinct tool name, by position in `tools`: equal ids for equal names.
fn name_ids(tools: &[ToolRef<'_>]) -> Vec<u32> {
    let mut ids: HashMap<&str, u32> = HashMap::new();
    tools
        .iter()
        .map(|tool| {
            let next = u32::try_from(ids.len()).unwrap_or(u32::MAX);
            *ids.entry(tool.name).or_insert(next)
        })
        .collect()
}

fn dot(a: &Vector, b: &Vector) -> f64 {
    let (mut i, mut j, mut sum) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                sum += a[i].1 * b[j].1;
                i += 1;
                j += 1;
            }
        }
    }
    sum
}

/// The highest-weighted terms of `own` that `other` lacks.
fn separating(own: &Vector, other: &Vector, names: &[String]) -> Vec<String> {
    let mut only: Vec<&(u32, f64)> = own
        .iter()
        .filter(|(term, _)| other.binary_search_by_key(term, |(t, _)| *t).is_err())
        .collect();
    only.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    only.iter()
        .take(SEPARATING_WORDS)
        .map(|(term, _)| names[*term as usize].clone())
        .collect()
}

/// Appends a `look_alike_tools` warning for every pair at or above `threshold`.
pub fn check_catalog(tools: &[ToolRef<'_>], threshold: f64, out: &mut Vec<Finding>) {
    for pair in look_alikes(tools, threshold) {
        let (a, b) = (&tools[pair.first], &tools[pair.second]);
        let list = |words: &[String]| {
            if words.is_empty() {
                "nothing".to_owned()
            } else {
                words.join(", ")
            }
        };
        out.push(Finding::tool(
            CheckId::LookAlikeTools,
            Severity::Warning,
            a,
            "/description",
            format!(
                "`{}` and `{}` look alike (similarity {}); only `{}` says: {}; only `{}` says: {}",
                a.name,
                b.name,
                // As many digits as it takes to read at or above the threshold, as it is.
                crate::json::decimal_against(pair.similarity, threshold, 2),
                a.name,
                list(&pair.only_first),
                b.name,
                list(&pair.only_second)
            ),
            format!(
                "state in each description when to use it rather than the other (`{}` vs `{}`)",
                a.name, b.name
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    //! Look-alikes: similar tools pair once with their separating words; the fast scan misses none.

    use serde_json::{Value, json};

    use super::*;

    fn refs(definitions: &[Value]) -> Vec<ToolRef<'_>> {
        definitions
            .iter()
            .map(|definition| ToolRef {
                server: "s",
                name: definition["name"].as_str().unwrap_or(""),
                definition,
            })
            .collect()
    }

    #[test]
    fn pairs_look_alikes_and_names_the_words_that_separate_them() {
        let definitions = [
            json!({"name": "search_contacts", "description": "Search contacts by name or email and return the matching contact records from the CRM."}),
            json!({"name": "find_contacts", "description": "Find contacts by name or email and return the matching contact records from the address book."}),
            json!({"name": "send_invoice", "description": "Email an invoice PDF to a customer."}),
        ];
        let pairs = look_alikes(&refs(&definitions), 0.5);
        assert_eq!(pairs.len(), 1);
        assert_eq!((pairs[0].first, pairs[0].second), (0, 1));
        assert!(pairs[0].similarity > 0.5 && pairs[0].similarity < 1.0);
        assert_eq!(pairs[0].only_first, ["search", "crm"]);
        assert_eq!(pairs[0].only_second, ["find", "address", "book"]);
    }

    /// A catalog that holds each tool twice (two listings of one server) reports
    /// the look-alike pair of names once, not once per copy.
    #[test]
    fn a_pair_of_names_seen_twice_is_reported_once() {
        let definitions = [
            json!({"name": "search_contacts", "description": "Search contacts by name or email and return the matching contact records from the CRM."}),
            json!({"name": "find_contacts", "description": "Find contacts by name or email and return the matching contact records from the address book."}),
        ];
        let twice = [definitions.clone(), definitions].concat();
        let pairs: Vec<(usize, usize)> = look_alikes(&refs(&twice), 0.1)
            .iter()
            .map(|pair| (pair.first, pair.second))
            .collect();
        assert_eq!(pairs, [(0, 1)]);
    }

    /// Issue #35: on a real pair, the similarity shown agrees with the threshold it is
    /// compared with: reported at its own similarity, and shown as no less than it; not
    /// reported just above it.
    #[test]
    fn the_shown_similarity_agrees_with_the_threshold() {
        let definitions = [
            json!({"name": "search_contacts", "description": "Search contacts by name or email and return the matching contact records from the CRM."}),
            json!({"name": "find_contacts", "description": "Find contacts by name or email and return the matching contact records from the address book."}),
        ];
        let tools = refs(&definitions);
        let similarity = look_alikes(&tools, 0.0)[0].similarity;
        // A threshold that the similarity rounded to two digits would reach from below.
        let threshold = (similarity * 100.0).round() / 100.0;
        let threshold = if threshold > similarity {
            threshold
        } else {
            threshold + 0.005
        };
        let mut findings = Vec::new();
        check_catalog(&tools, threshold, &mut findings);
        assert!(findings.is_empty(), "{findings:?}");
        check_catalog(&tools, similarity, &mut findings);
        let message = &findings[0].message;
        let shown: f64 = message
            .split("(similarity ")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .and_then(|number| number.parse().ok())
            .expect("a similarity in the message");
        assert!(shown >= similarity, "{message} vs {similarity}");
        // Under the threshold it was not reported at, it reads as under it.
        let under: f64 = crate::json::decimal_against(similarity, threshold, 2)
            .parse()
            .expect("a number");
        assert!(under < threshold, "{under} vs {threshold}");
    }

    #[test]
    fn reports_each_tools_closest_look_alike_once() {
        let definitions = [
            json!({"name": "get_order_a", "description": "Get an order by id from the store."}),
            json!({"name": "get_order_b", "description": "Get an order by id from the store."}),
            json!({"name": "get_order_c", "description": "Get an order by id from the store."}),
            json!({"name": "send_invoice", "description": "Email an invoice PDF to a customer."}),
        ];
        let pairs: Vec<(usize, usize)> = look_alikes(&refs(&definitions), 0.5)
            .iter()
            .map(|pair| (pair.first, pair.second))
            .collect();
        assert_eq!(pairs, [(0, 1), (0, 2)]);
    }

    #[test]
    fn reports_a_pair_whose_only_difference_is_the_name() {
        let definitions = [
            json!({"name": "purge_record", "description": "Delete the record for good."}),
            json!({"name": "drop_record", "description": "Delete the record for good."}),
        ];
        let mut out = Vec::new();
        check_catalog(&refs(&definitions), 0.5, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].tool.as_deref(), Some("purge_record"));
        assert_eq!(
            out[0].message,
            "`purge_record` and `drop_record` look alike (similarity 0.75); only `purge_record` says: purge; only `drop_record` says: drop"
        );
    }

    /// The scan over a dense copy of the first tool finds exactly the pairs, and the
    /// similarities to the bit, that comparing every pair with [`dot`] finds: on the built-in catalog, and at thresholds from
    /// none to all, where ties between equally close tools decide which pair is reported.
    #[test]
    fn the_dense_scan_agrees_with_every_pair_compared_by_dot() {
        let builtin: Vec<Value> = crate::catalog::Catalog::builtin().definitions().to_vec();
        let mut definitions = builtin.clone();
        // Copies under new names: many ties, and pairs whose only difference is the name.
        definitions.extend(builtin.iter().take(12).map(|tool| {
            let mut copy = tool.clone();
            copy["name"] = json!(format!("{}_v2", tool["name"].as_str().unwrap_or("")));
            copy
        }));
        let tools = refs(&definitions);
        let model = TfIdf::new(&tools);
        for threshold in [0.0, 0.2, 0.5, 0.8, 1.0] {
            let mut closest: Vec<Option<(usize, f64)>> = vec![None; tools.len()];
            for first in 0..tools.len() {
                for second in first + 1..tools.len() {
                    let similarity = model.similarity(first, second);
                    if similarity < threshold || tools[first].name == tools[second].name {
                        continue;
                    }
                    for (own, other) in [(first, second), (second, first)] {
                        if closest[own].is_none_or(|(_, best)| similarity > best) {
                            closest[own] = Some((other, similarity));
                        }
                    }
                }
            }
            let mut expected: Vec<(usize, usize, u64)> = closest
                .iter()
                .enumerate()
                .filter_map(|(own, best)| {
                    best.map(|(other, s)| (own.min(other), own.max(other), s.to_bits()))
                })
                .collect();
            expected.sort_unstable();
            expected.dedup();
            let mut found: Vec<(usize, usize, u64)> = look_alikes(&tools, threshold)
                .iter()
                .map(|pair| (pair.first, pair.second, pair.similarity.to_bits()))
                .collect();
            found.sort_unstable();
            assert_eq!(found, expected, "threshold {threshold}");
            if threshold <= 0.5 {
                assert!(found.len() >= 12, "threshold {threshold}: {found:?}");
            }
        }
    }
}
