//! `report.html`: one self-contained page for a person to read a run in a browser, from
//! `file://` or a downloaded CI artifact. No network and no external asset: the style sheet
//! and the script are inline, allowed by their SHA-256 hashes in a strict
//! Content-Security-Policy; every text from the run is escaped and cut to a few kilobytes.
//!
//! In order: the verdict and its reasons, the statistics (pass rates with their intervals,
//! p-value, tolerance band), the trend; with a baseline, the scenarios that regressed, were
//! fixed, are new or are gone, each with the base and this run side by side, call by call
//! (calls aligned by tool name, see `docs/gate.md`); then every scenario, folded, with each run's
//! timeline, answer and checks, behind filters (tier, type, outcome, tool, failing check)
//! and a search box.
//!
//! The page's structure is a contract that browser tests hold it to (ids, classes and data
//! attributes of `#verdict`, `#changes`, `#scenarios` and the filters; see `docs/gate.md`).

mod calls;
mod changes;
mod escape;
mod page;
mod runs;
mod scenarios;
mod traces;

pub use traces::render_traces;

use crate::gate::{Baseline, Policy, Verdict};
use crate::results::RunReport;
use crate::trace::TraceLine;

/// What the HTML report shows.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// This run.
    pub report: &'a RunReport,
    /// The verdict on it.
    pub verdict: &'a Verdict,
    /// The policy the verdict was decided under (its tolerance band and alpha are shown).
    pub policy: &'a Policy,
    /// The baseline it was compared with, if any.
    pub baseline: Option<&'a Baseline>,
    /// This run's `trace.jsonl` lines, in file order; empty when the trace is not available
    /// (the page then says so where the calls would be). Lines of another run id than the
    /// report's are left out.
    pub trace: &'a [TraceLine],
    /// The run the baseline stands for, for the side-by-side view; `None` when it is not
    /// available (each change then shows the baseline's per-scenario tally instead).
    pub base: Option<BaseRun<'a>>,
}

/// A previous run (the base of a comparison): its results and its trace lines.
#[derive(Debug, Clone, Copy)]
pub struct BaseRun<'a> {
    /// Its `results.json`.
    pub report: &'a RunReport,
    /// Its `trace.jsonl` lines, in file order.
    pub trace: &'a [TraceLine],
}

/// Renders the whole page: an HTML5 document, UTF-8.
///
/// The size is bounded by the run's shape, not by its texts: each text is cut to 4 KiB
/// (512 bytes once the page passes 3 MiB), so a 78-scenario run with 5 repeats stays
/// within a few megabytes.
pub fn render(input: &Input<'_>) -> String {
    page::render(input)
}

#[cfg(test)]
mod tests;
