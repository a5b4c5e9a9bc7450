//! What `report.html` is made of besides the verdict: this run's trace, read back from beside
//! its results, and the base run whose calls the changed scenarios are shown beside.
//!
//! The base run is `--base-run DIR` (its `results.json` and `trace.jsonl`); without it, the
//! `--baseline` file when that is a results file (not an aggregated baseline) with a
//! `trace.jsonl` in its directory. Reading either trace is best effort: a missing or
//! malformed file is a warning on stderr naming it, and the page says what it lacks.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::cli::GateArgs;
use crate::gate::{Baseline, Policy, Verdict};
use crate::report::html;
use crate::results::RunReport;
use crate::trace::TraceLine;

/// A finished run read back from its output directory.
struct ReadRun {
    report: RunReport,
    trace: Vec<TraceLine>,
}

/// The file name of a run's trace in its output directory.
const TRACE_FILE: &str = "trace.jsonl";

/// Reads a `trace.jsonl`.
///
/// Errors: an unreadable file or a malformed line, naming the file (and the line).
fn read_trace(path: &Path) -> Result<Vec<TraceLine>> {
    let text = crate::fs::read_text(path, "trace", crate::defaults::MAX_RUN_FILE_BYTES)?;
    crate::ingest::toolgate_lines(&text, path)
}

/// The directory of `file` (`.` for a bare file name).
fn directory_of(file: &Path) -> PathBuf {
    match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// This run's trace: beside the `--results` file when one was judged, else in `--out`.
/// Missing is empty (the page says the trace is not available); malformed is a warning.
fn head_trace(args: &GateArgs, err: &mut dyn Write) -> Result<Vec<TraceLine>> {
    let dir = match &args.ci.results {
        Some(results) => directory_of(results),
        None => args.out.clone(),
    };
    let path = dir.join(TRACE_FILE);
    if !path.exists() {
        return Ok(Vec::new());
    }
    Ok(match read_trace(&path) {
        Ok(lines) => lines,
        Err(error) => {
            writeln!(
                err,
                "warning: report.html shows no calls of this run: {error:#}"
            )?;
            Vec::new()
        }
    })
}

/// The base run (see the module docs); `None` when there is none or it cannot be read (a
/// warning then, for `--base-run` or a trace beside the baseline that does not read).
fn base_run(
    args: &GateArgs,
    baseline_file: Option<&Path>,
    err: &mut dyn Write,
) -> Result<Option<ReadRun>> {
    let read = |dir: &Path, report: RunReport| -> Result<ReadRun> {
        Ok(ReadRun {
            report,
            trace: read_trace(&dir.join(TRACE_FILE))?,
        })
    };
    let found = match (&args.base_run, baseline_file) {
        (Some(dir), _) => {
            RunReport::load(&dir.join("results.json")).and_then(|report| read(dir, report))
        }
        (None, Some(file)) => {
            let dir = directory_of(file);
            if !dir.join(TRACE_FILE).exists() {
                return Ok(None);
            }
            // An aggregated baseline is not a run: it has no trajectories to show.
            let Ok(report) = RunReport::load(file) else {
                return Ok(None);
            };
            read(&dir, report)
        }
        (None, None) => return Ok(None),
    };
    match found {
        Ok(run) => Ok(Some(run)),
        Err(error) => {
            writeln!(err, "warning: report.html shows no base run: {error:#}")?;
            Ok(None)
        }
    }
}

/// The whole `report.html` of `report` judged as `verdict` under `policy` (see
/// [`crate::report::html`]); warnings about traces that do not read go to `err`.
///
/// Errors: only a failed write to `err`.
pub(super) fn render(
    args: &GateArgs,
    (report, verdict, policy): (&RunReport, &Verdict, &Policy),
    baseline: Option<&Baseline>,
    baseline_file: Option<&Path>,
    err: &mut dyn Write,
) -> Result<String> {
    let trace = head_trace(args, err)?;
    let base = base_run(args, baseline_file, err)?;
    Ok(html::render(&html::Input {
        report,
        verdict,
        policy,
        baseline,
        trace: &trace,
        base: base.as_ref().map(|base| html::BaseRun {
            report: &base.report,
            trace: &base.trace,
        }),
    }))
}
