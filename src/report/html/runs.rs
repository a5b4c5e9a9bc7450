//! The trace read back by run, and two runs' calls aligned for the side-by-side view.
//!
//! Alignment pairs calls by tool name along a longest common subsequence (the rows a diff
//! of the two tool sequences would show): calls of the same tool in the same order share a
//! row, an inserted or dropped call gets a row of its own with a gap on the other side. Two
//! runs longer than [`ALIGN_CELLS`] allows are paired by position instead.

use std::collections::{BTreeMap, BTreeSet};

use crate::trace::TraceLine;

/// Most cells (base calls × head calls) of the alignment table; beyond it, calls are paired
/// by position (the i-th with the i-th).
pub(super) const ALIGN_CELLS: usize = 250_000;

/// One run's trace: its calls in file order and its final answer.
#[derive(Debug, Default)]
pub(super) struct RunTrace<'a> {
    /// The call lines, in file (arrival) order.
    pub calls: Vec<&'a TraceLine>,
    /// The last final answer given, if any.
    pub answer: Option<&'a str>,
}

/// A trace by run: (scenario id, repetition) to its calls and answer.
#[derive(Debug, Default)]
pub(super) struct Traces<'a> {
    runs: BTreeMap<(String, u32), RunTrace<'a>>,
    /// Whether there was any trace line at all (so "no calls" can be told from "no trace").
    pub available: bool,
}

impl<'a> Traces<'a> {
    /// Groups `lines` by run. With `run_id`, lines of another run (an older trace beside the
    /// results) are left out; lines without a run id are kept.
    pub(super) fn of(lines: &'a [TraceLine], run_id: Option<&str>) -> Traces<'a> {
        let mut runs: BTreeMap<(String, u32), RunTrace<'a>> = BTreeMap::new();
        for line in lines {
            if let (Some(want), Some(got)) = (run_id, line.run_id.as_deref())
                && want != got
            {
                continue;
            }
            let run = runs
                .entry((line.scenario.clone(), line.repeat))
                .or_default();
            if line.tool.is_some() {
                run.calls.push(line);
            }
            if let Some(answer) = &line.final_answer {
                run.answer = Some(answer);
            }
        }
        Traces {
            available: !runs.is_empty(),
            runs,
        }
    }

    /// The trace of repetition `repeat` of scenario `id`, if any line names it.
    pub(super) fn run(&self, id: &str, repeat: u32) -> Option<&RunTrace<'a>> {
        self.runs.get(&(id.to_string(), repeat))
    }

    /// The tools any run of scenario `id` called, each once, in name order.
    pub(super) fn tools(&self, id: &str) -> BTreeSet<&'a str> {
        self.runs
            .range((id.to_string(), 0)..=(id.to_string(), u32::MAX))
            .flat_map(|(_, run)| run.calls.iter().filter_map(|line| line.tool.as_deref()))
            .collect()
    }
}

/// One row of the side-by-side view: a call on both sides, or on one side with a gap.
#[derive(Debug, Clone, Copy)]
pub(super) struct Row<'a> {
    /// The base run's call in this row, if any.
    pub base: Option<&'a TraceLine>,
    /// This run's call in this row, if any.
    pub head: Option<&'a TraceLine>,
}

impl Row<'_> {
    /// Whether the two sides differ: a gap on one side, or another tool, arguments, outcome,
    /// result, error, injected fault or invalid-call kind.
    pub(super) fn differs(&self) -> bool {
        match (self.base, self.head) {
            (Some(base), Some(head)) => {
                base.tool != head.tool
                    || base.arguments != head.arguments
                    || base.outcome != head.outcome
                    || base.result != head.result
                    || base.error != head.error
                    || base.fault != head.fault
                    || base.invalid != head.invalid
            }
            _ => true,
        }
    }
}

/// `base` and `head` aligned by tool name (see the module docs), in order; every call of
/// each side appears in exactly one row.
pub(super) fn align<'a>(base: &[&'a TraceLine], head: &[&'a TraceLine]) -> Vec<Row<'a>> {
    let (n, m) = (base.len(), head.len());
    if n.saturating_mul(m) > ALIGN_CELLS {
        return (0..n.max(m))
            .map(|i| Row {
                base: base.get(i).copied(),
                head: head.get(i).copied(),
            })
            .collect();
    }
    // common[i][j]: the longest common tool subsequence of base[i..] and head[j..].
    let mut common = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            common[i][j] = if base[i].tool == head[j].tool {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let mut rows = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        let row = if i < n && j < m && base[i].tool == head[j].tool {
            i += 1;
            j += 1;
            Row {
                base: Some(base[i - 1]),
                head: Some(head[j - 1]),
            }
        } else if j < m && (i == n || common[i][j + 1] >= common[i + 1][j]) {
            j += 1;
            Row {
                base: None,
                head: Some(head[j - 1]),
            }
        } else {
            i += 1;
            Row {
                base: Some(base[i - 1]),
                head: None,
            }
        };
        rows.push(row);
    }
    rows
}

/// Where two aligned runs first differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FirstDiff {
    /// At this row of the alignment.
    Row(usize),
    /// Every call matches; the final answers differ.
    Answer,
    /// Nothing differs in the trace.
    Nowhere,
}

/// The first row of `rows` that [`Row::differs`], else the answers when they differ.
pub(super) fn first_diff(rows: &[Row<'_>], base: Option<&str>, head: Option<&str>) -> FirstDiff {
    match rows.iter().position(Row::differs) {
        Some(row) => FirstDiff::Row(row),
        None if base != head => FirstDiff::Answer,
        None => FirstDiff::Nowhere,
    }
}

/// The 0-based call where a run's first divergence (`RunMetrics::first_divergence`, which
/// starts `call N` with N 1-based) points, if it names one.
pub(super) fn divergence_call(divergence: &str) -> Option<usize> {
    let rest = divergence.strip_prefix("call ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<usize>().ok()?.checked_sub(1)
}

#[cfg(test)]
mod tests {
    //! Alignment keeps every call once and pairs equal tools; the first difference is found.
    use super::*;
    use serde_json::json;

    fn call(tool: &str, argument: i64) -> TraceLine {
        let record = crate::trace::CallRecord::recorded(0, tool, json!({ "n": argument }));
        TraceLine::call("S", 0, &record)
    }

    #[test]
    fn an_inserted_call_gets_its_own_row_and_is_the_first_difference() {
        let base = [call("search", 1), call("get", 2), call("log", 3)];
        let head = [
            call("search", 1),
            call("list", 9),
            call("get", 2),
            call("log", 3),
        ];
        let (base, head): (Vec<&TraceLine>, Vec<&TraceLine>) =
            (base.iter().collect(), head.iter().collect());
        let rows = align(&base, &head);
        let shape: Vec<(Option<&str>, Option<&str>)> = rows
            .iter()
            .map(|row| {
                (
                    row.base.and_then(|l| l.tool.as_deref()),
                    row.head.and_then(|l| l.tool.as_deref()),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                (Some("search"), Some("search")),
                (None, Some("list")),
                (Some("get"), Some("get")),
                (Some("log"), Some("log")),
            ]
        );
        assert_eq!(first_diff(&rows, None, None), FirstDiff::Row(1));
    }

    #[test]
    fn same_tools_with_other_arguments_differ_and_same_calls_fall_back_to_the_answer() {
        let base = [call("get", 2)];
        let head = [call("get", 3)];
        let rows = align(&[&base[0]], &[&head[0]]);
        assert_eq!(first_diff(&rows, None, None), FirstDiff::Row(0));
        let rows = align(&[&base[0]], &[&base[0]]);
        assert_eq!(first_diff(&rows, Some("a"), Some("b")), FirstDiff::Answer);
        assert_eq!(first_diff(&rows, Some("a"), Some("a")), FirstDiff::Nowhere);
    }

    #[test]
    fn the_divergence_names_its_call() {
        assert_eq!(divergence_call("call 2: expected `a`, got `b`"), Some(1));
        assert_eq!(divergence_call("call 12 `a`: wrong"), Some(11));
        assert_eq!(divergence_call("made 9 calls, at most 4"), None);
    }
}
