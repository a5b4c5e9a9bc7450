//! The results file written as runs finish: each run's result goes to a spool file beside the
//! outputs the moment it is scored, and memory keeps only counts (the summary, the metrics'
//! tallies) and where each result sits in the spool. `results.json` is assembled from the
//! spool at the end, in suite order, byte for byte what serializing the whole [`RunReport`]
//! would write.

use std::fs::File;
use std::io::{BufWriter, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::Path;

use anyhow::{Context as _, Result};

use super::pins::Pins;
use super::{RunMeta, RunReport, ScenarioResult, Summary, grouped};
use crate::fs::StreamedFile;
use crate::score::metrics::MetricsReportTally;

/// Results of a suite run as they finish, spooled to disk.
pub struct ResultsStream {
    /// Each result as it will appear in `results.json` (pretty JSON, indented as an item of
    /// the `scenarios` array), in finishing order; an unnamed temporary file, gone when
    /// dropped.
    spool: BufWriter<File>,
    /// Bytes written to the spool so far.
    written: u64,
    /// `(position, offset, length)` of each result in the spool, in finishing order; the
    /// position is the run's place in suite order (scenario index x k + repetition).
    index: Vec<(usize, u64, usize)>,
    summary: Summary,
    metrics: MetricsReportTally,
    /// Secrets taken out of every spooled result (none unless [`ResultsStream::redacting`]).
    redactor: crate::redact::Redactor,
}

impl ResultsStream {
    /// Takes every secret `redactor` knows out of the results as they are spooled (an agent
    /// may put a key it was given into an answer or a tool call).
    pub fn redacting(mut self, redactor: crate::redact::Redactor) -> ResultsStream {
        self.redactor = redactor;
        self
    }

    /// Starts a spool in `dir` (created if missing).
    ///
    /// Errors: the directory or the file cannot be created, naming the directory.
    pub fn create(dir: &Path) -> Result<ResultsStream> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("failed to create `{}`", dir.display()))?;
        let spool = tempfile::tempfile_in(dir)
            .with_context(|| format!("failed to create a results spool in `{}`", dir.display()))?;
        Ok(ResultsStream {
            spool: BufWriter::new(spool),
            written: 0,
            index: Vec::new(),
            summary: Summary::default(),
            metrics: MetricsReportTally::default(),
            redactor: crate::redact::Redactor::default(),
        })
    }

    /// Counts `result`, the run at `position` of the suite, and spools it.
    ///
    /// Errors: the spool cannot be written.
    pub fn push(&mut self, position: usize, result: &ScenarioResult) -> Result<()> {
        self.summary.add(result);
        if let Some(grouped) = grouped(result) {
            self.metrics.add(position, &grouped);
        }
        let item = self.redactor.redact(&array_item(result));
        self.spool
            .write_all(item.as_bytes())
            .context("failed to write the results spool")?;
        self.index.push((position, self.written, item.len()));
        self.written += item.len() as u64;
        Ok(())
    }

    /// How many results were pushed.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no result was pushed.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The positions pushed, in finishing order.
    pub fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        self.index.iter().map(|(position, _, _)| *position)
    }

    /// Writes the whole results file into `file`: the report of `meta` and `pins`, its
    /// summary and metrics from the counts, the confused pairs pointed at the look-alike lint
    /// of `catalog` (the tool definitions the run was served), and every result in suite order.
    ///
    /// Errors: the spool cannot be read back, or `file` cannot be written.
    pub fn finish(
        self,
        meta: RunMeta,
        pins: Option<Pins>,
        catalog: &[serde_json::Value],
        file: &mut StreamedFile,
    ) -> Result<()> {
        let ResultsStream {
            spool,
            mut index,
            mut summary,
            metrics,
            ..
        } = self;
        summary.finish();
        let mut report = RunReport::assemble(meta, Vec::new(), summary, metrics.finish());
        report.pins = pins;
        report.confused_pairs = super::confused_pairs_of(&report.metrics, catalog);
        let text = crate::json::pretty(&report);
        let marker = "\n  \"scenarios\": [],\n";
        let at = text
            .find(marker)
            .expect("a report always has a top-level `scenarios` array");
        if index.is_empty() {
            return file.write(&text);
        }
        file.write(&text[..at])?;
        file.write("\n  \"scenarios\": [")?;
        let mut spool = spool
            .into_inner()
            .map_err(|error| error.into_error())
            .context("failed to write the results spool")?;
        index.sort_unstable_by_key(|(position, _, _)| *position);
        let mut item = Vec::new();
        for (i, (_, offset, length)) in index.into_iter().enumerate() {
            item.resize(length, 0);
            spool
                .seek(SeekFrom::Start(offset))
                .and_then(|_| spool.read_exact(&mut item))
                .context("failed to read the results spool back")?;
            file.write(if i == 0 { "\n" } else { ",\n" })?;
            file.write(std::str::from_utf8(&item).expect("the spool holds JSON text"))?;
        }
        file.write("\n  ],\n")?;
        file.write(&text[at + marker.len()..])
    }
}

/// `result` as pretty JSON indented as an item of the top-level `scenarios` array (four
/// spaces more on every line; JSON strings hold no raw line breaks).
fn array_item(result: &ScenarioResult) -> String {
    let json = serde_json::to_string_pretty(result).expect("a result always serializes");
    let mut item = String::with_capacity(json.len() + json.len() / 8);
    for (i, line) in json.lines().enumerate() {
        if i > 0 {
            item.push('\n');
        }
        item.push_str("    ");
        item.push_str(line);
    }
    item
}

#[cfg(test)]
mod tests {
    //! Streamed results: the file equals the whole report serialized in suite order, even empty.

    use super::*;
    use crate::score::Outcome;

    fn result(id: &str, repeat: u32, outcome: Outcome) -> ScenarioResult {
        let text = serde_json::json!({
            "id": id, "tier": 2, "type": "multi_step", "repeat": repeat,
            "outcome": outcome, "calls": 1, "checks": [], "duration_ms": 12,
            "final_answer": "line one\nline two", "category": "crm",
        });
        serde_json::from_value(text).expect("a valid result")
    }

    fn streamed(meta: &RunMeta, results: &[(usize, ScenarioResult)]) -> String {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut stream = ResultsStream::create(dir.path()).expect("spool");
        for (position, result) in results {
            stream.push(*position, result).expect("spooled");
        }
        let path = dir.path().join("results.json");
        let mut file = StreamedFile::create(&path).expect("file");
        stream
            .finish(
                meta.clone(),
                None,
                crate::catalog::Catalog::builtin().definitions(),
                &mut file,
            )
            .expect("written");
        file.commit().expect("committed");
        std::fs::read_to_string(&path).expect("read")
    }

    #[test]
    fn the_streamed_file_is_what_serializing_the_whole_report_writes_in_suite_order() {
        let meta = RunMeta {
            agent: "reference".into(),
            repeat: 2,
            ..RunMeta::default()
        };
        let in_order = vec![
            result("S-1", 0, Outcome::Pass),
            result("S-1", 1, Outcome::Fail),
            result("S-2", 0, Outcome::Errored),
            result("S-2", 1, Outcome::Pass),
        ];
        let expected =
            crate::json::pretty(&RunReport::from_results(meta.clone(), in_order.clone()));
        // Finishing order differs from suite order.
        let finished: Vec<(usize, ScenarioResult)> = [2, 0, 3, 1]
            .into_iter()
            .map(|position| (position, in_order[position].clone()))
            .collect();
        let text = streamed(&meta, &finished);
        assert_eq!(text, expected);
        let report = RunReport::parse(&text, Path::new("results.json")).expect("it reads back");
        assert_eq!(report.scenarios, in_order);
        assert_eq!(report.summary.overall.total, 4);
        assert_eq!(report.summary.overall.passed, 2);
        assert_eq!(report.summary.per_scenario["S-2"].errored, 1);
    }

    #[test]
    fn a_run_without_results_writes_an_empty_scenarios_array() {
        let meta = RunMeta {
            agent: "reference".into(),
            repeat: 1,
            ..RunMeta::default()
        };
        let expected = crate::json::pretty(&RunReport::from_results(meta.clone(), Vec::new()));
        assert_eq!(streamed(&meta, &[]), expected);
    }
}
