//! [`Recorder`]: the one consumer of a suite's finished runs. Each run is reduced to its
//! result and its trace lines the moment it finishes, so memory holds one result per run and
//! never the runs' traces; `finish` commits `trace.jsonl` and then `results.json`.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result};

use super::pins::Pins;
use super::stream::ResultsStream;
use super::{NotRun, RunMeta, ScenarioResult, run_trace_lines};
use crate::fs::StreamedFile;
use crate::redact::Redactor;
use crate::runner::ScenarioRun;
use crate::scenario::Scenario;

/// Writes a suite's finished runs into an output directory as they arrive, in any order.
///
/// `trace.jsonl` and `results.json` are written under temporary names and replace the
/// previous run's files only in [`Recorder::finish`] (the trace first, the results last: they
/// are the run's commit point), so a run killed at any moment leaves whole files. Every
/// line and result is scrubbed of the secrets the [`Redactor`] knows.
pub struct Recorder {
    out: PathBuf,
    /// The scenarios in suite order; a run names its scenario by position.
    scenarios: Arc<[Scenario]>,
    /// Runs per scenario, at least 1.
    repeat: u32,
    run_id: Option<String>,
    redactor: Redactor,
    trace: OrderedTrace,
    results: ResultsStream,
    /// The first write error; later runs are not written once one failed.
    error: Option<anyhow::Error>,
}

impl Recorder {
    /// Starts recording the runs of `scenarios` (each run `repeat` times) into `out`
    /// (created if missing), every trace line naming `run_id`.
    ///
    /// Errors: the directory or the temporary files cannot be created, naming the path.
    pub fn create(
        out: &Path,
        scenarios: Arc<[Scenario]>,
        repeat: u32,
        run_id: Option<String>,
        redactor: Redactor,
    ) -> Result<Recorder> {
        std::fs::create_dir_all(out)
            .with_context(|| format!("failed to create `{}`", out.display()))?;
        Ok(Recorder {
            out: out.to_path_buf(),
            scenarios,
            repeat: repeat.max(1),
            run_id,
            trace: OrderedTrace {
                file: StreamedFile::create(&out.join("trace.jsonl"))?,
                next: 0,
                waiting: BTreeMap::new(),
            },
            results: ResultsStream::create(out)?.redacting(redactor.clone()),
            redactor,
            error: None,
        })
    }

    /// Records one finished run: its result goes to the results spool and its trace lines
    /// to `trace.jsonl` in suite order. A write error is kept and returned by
    /// [`Recorder::finish`]; a run of an unknown scenario position is ignored.
    pub fn record(&mut self, run: &ScenarioRun) {
        if self.error.is_some() {
            return;
        }
        let Some(scenario) = self.scenarios.get(run.index) else {
            return;
        };
        let mut text = String::new();
        for mut line in run_trace_lines(scenario, run) {
            line.run_id.clone_from(&self.run_id);
            text.push_str(&self.redactor.redact(&line.render()));
            text.push('\n');
        }
        let position = run.index * self.repeat as usize + run.repeat as usize;
        let written = self.trace.push(position, text).and_then(|()| {
            self.results
                .push(position, &ScenarioResult::of(scenario, run))
        });
        if let Err(error) = written {
            self.error = Some(error);
        }
    }

    /// How many runs were recorded.
    pub fn finished(&self) -> usize {
        self.results.len()
    }

    /// The runs of the suite that were never recorded (an interrupted run), in suite order.
    pub fn not_run(&self) -> Vec<NotRun> {
        let done: HashSet<usize> = self.results.positions().collect();
        let repeat = self.repeat as usize;
        let mut missing = Vec::new();
        for (index, scenario) in self.scenarios.iter().enumerate() {
            for run in 0..self.repeat {
                if !done.contains(&(index * repeat + run as usize)) {
                    missing.push(NotRun {
                        id: scenario.id.clone(),
                        repeat: run,
                    });
                }
            }
        }
        missing
    }

    /// Commits the run: removes the previous run's `stale` files (reports that would
    /// otherwise sit beside the new results), replaces `trace.jsonl`, then writes
    /// `results.json` with `meta` and `pins`, its confused tools pointed at the look-alike lint
    /// of `catalog` (the tools the run was served). Returns the path of `results.json`.
    ///
    /// Errors: the first error of [`Recorder::record`], or a file that cannot be removed or
    /// written, naming it.
    pub fn finish(
        self,
        meta: RunMeta,
        pins: Option<Pins>,
        catalog: &[serde_json::Value],
        stale: &[PathBuf],
    ) -> Result<PathBuf> {
        if let Some(error) = self.error {
            return Err(error);
        }
        crate::fs::remove_stale(stale)?;
        self.trace.finish()?.commit()?;
        let path = self.out.join("results.json");
        let mut file = StreamedFile::create(&path)?;
        self.results.finish(meta, pins, catalog, &mut file)?;
        file.commit()?;
        Ok(path)
    }
}

/// `trace.jsonl` written as runs finish, in suite order: the lines of a run that finishes
/// before an earlier one wait here, rendered, until every earlier run's lines are written.
struct OrderedTrace {
    file: StreamedFile,
    /// The position (scenario index x repeat + repetition) whose lines go next.
    next: usize,
    /// Rendered lines of finished runs past `next`, by position.
    waiting: BTreeMap<usize, String>,
}

impl OrderedTrace {
    /// Takes the rendered lines of the run at `position` and writes every run now in order.
    fn push(&mut self, position: usize, text: String) -> Result<()> {
        self.waiting.insert(position, text);
        while let Some(text) = self.waiting.remove(&self.next) {
            self.file.write(&text)?;
            self.next += 1;
        }
        Ok(())
    }

    /// Writes what still waits (runs behind one that never finished), in order.
    fn finish(mut self) -> Result<StreamedFile> {
        for text in std::mem::take(&mut self.waiting).into_values() {
            self.file.write(&text)?;
        }
        Ok(self.file)
    }
}

#[cfg(test)]
mod tests {
    //! The recorder: the trace is written in suite order, whatever order the runs finish in.

    use super::*;

    #[test]
    fn the_trace_is_written_in_suite_order_whatever_order_runs_finish_in() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("trace.jsonl");
        let mut trace = OrderedTrace {
            file: StreamedFile::create(&path).expect("create"),
            next: 0,
            waiting: BTreeMap::new(),
        };
        trace.push(2, "c\n".to_owned()).expect("push");
        trace.push(0, "a\n".to_owned()).expect("push");
        assert_eq!(trace.next, 1, "run 0 is written, run 2 waits for run 1");
        assert_eq!(trace.waiting.len(), 1);
        trace.push(4, "e\n".to_owned()).expect("push");
        // Run 1 and 3 never finish (the suite was interrupted): what waits follows in order.
        trace.finish().expect("finish").commit().expect("commit");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "a\nc\ne\n");
    }
}
