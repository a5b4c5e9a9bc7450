//! The judging half of `gate` (baseline, verdict, reports, GitHub), and the `baseline`,
//! `record` and `merge` commands.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context as _, Result};

use super::runtime;
use crate::cli::{BaselineArgs, GateArgs, MergeArgs, OnInconclusive, RecordArgs};
use crate::exit::Exit;
use crate::fs::write_atomic;
use crate::gate::history::{self, HistoryEntry};
use crate::gate::{self, Baseline, Decision, Policy, Verdict, quarantine};
use crate::github::ci::{self, Runner};
use crate::github::{self, Connection};
use crate::redact::Redactor;
use crate::report::github::render_annotations;
use crate::report::markdown::{self, GITHUB_COMMENT_LIMIT};
use crate::report::{self, comment};
use crate::results::RunReport;
use crate::results::shard;

/// The step summary takes 1 MiB per step; stay well below.
const STEP_SUMMARY_LIMIT: usize = 512 * 1024;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// What the verdict is judged against, read before the run so that a bad baseline or
/// quarantine list fails the gate (exit 2) before any run, not after it.
pub(super) struct JudgeInputs {
    baseline: Option<Baseline>,
    baseline_label: String,
    /// The local file the baseline was read from (`None` for an artifact or no baseline).
    baseline_file: Option<PathBuf>,
    quarantine: Vec<quarantine::QuarantineEntry>,
}

impl JudgeInputs {
    /// The baseline's pins, when there is a baseline and it has them.
    pub(super) fn baseline_pins(&self) -> Option<&crate::results::pins::Pins> {
        self.baseline.as_ref()?.pins.as_ref()
    }
}

/// Reads the baseline (`--baseline`, default `ROOT/baseline.json`, or a GitHub artifact)
/// and the quarantine list. Errors name the file and what is wrong with it.
pub(super) fn load_inputs(args: &GateArgs, out: &mut dyn Write) -> Result<JudgeInputs> {
    let now = args.ci.now.unwrap_or_else(SystemTime::now);
    let (baseline, baseline_label, baseline_file) = resolve_baseline(args, out)?;
    let quarantine_path = args
        .ci
        .quarantine
        .clone()
        .unwrap_or_else(|| args.suite.root.join("quarantine.yaml"));
    Ok(JudgeInputs {
        baseline,
        baseline_label,
        baseline_file,
        quarantine: quarantine::load(&quarantine_path, now)?,
    })
}

/// The previous run's reports that a new run removes just before it writes its files
/// (`report.md`, `report.html`, `junit.xml`, `verdict.json`, and `judge.jsonl` unless
/// `keep_results`), so
/// the directory never holds a new `results.json` beside an old verdict after an interrupted
/// or failed judgement. `keep_results` is for judging an existing `--results` file.
/// `results.json` and `trace.jsonl` are replaced atomically by the run, never removed first:
/// a run killed at any moment leaves whole files.
pub(super) fn stale_outputs(dir: &Path, keep_results: bool) -> Vec<PathBuf> {
    let paths = OutputPaths::new(dir);
    let mut stale = vec![paths.markdown, paths.html, paths.junit, paths.verdict];
    if !keep_results {
        stale.push(dir.join("judge.jsonl"));
    }
    stale
}

/// Removes [`stale_outputs`] from `dir`.
///
/// Errors: a file that exists but cannot be removed, naming it.
pub(super) fn clear_outputs(dir: &Path, keep_results: bool) -> Result<()> {
    crate::fs::remove_stale(&stale_outputs(dir, keep_results))
}

/// Decides the verdict on `report` against `inputs` (the baseline, quarantine and policy),
/// then delivers it: writes the reports to the output directory and, on
/// GitHub Actions, to the runner; comments when asked.
pub(super) fn decide_and_deliver(
    args: &GateArgs,
    settings: &crate::config::Settings,
    report: &RunReport,
    inputs: JudgeInputs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let now = args.ci.now.unwrap_or_else(SystemTime::now);
    let JudgeInputs {
        baseline,
        baseline_label,
        baseline_file,
        quarantine,
    } = inputs;
    let policy = Policy {
        tolerance_points: settings.tolerance,
        alpha: args.ci.alpha,
        min_pass_rate: settings.min_pass_rate,
        usage: settings.usage_limits,
        quarantine,
        now,
    };
    let verdict = gate::decide(report, baseline.as_ref(), &policy);

    // File paths in JUnit, annotations and links are relative to the working directory (the
    // repository root on a runner), an absolute --root inside it included.
    let display_root = match std::env::current_dir() {
        Ok(workdir) => report::github::relative_root(&args.suite.root, &workdir),
        Err(_) => args.suite.root.clone(),
    };
    let runner = Runner::from_env(env);
    let links = runner.links(&display_root);
    let input = markdown::Input {
        report,
        baseline: baseline.as_ref(),
        verdict: &verdict,
        limit: STEP_SUMMARY_LIMIT,
        links: links.as_ref(),
        report_url: args.ci.report_url.as_deref(),
    };
    let markdown_text = markdown::render(&input);
    let paths = OutputPaths::new(&args.out);
    write_atomic(&paths.markdown, markdown_text.as_bytes())?;
    let html_text = super::html::render(
        args,
        (report, &verdict, &policy),
        baseline.as_ref(),
        baseline_file.as_deref(),
        err,
    )?;
    write_atomic(&paths.html, html_text.as_bytes())?;
    write_atomic(
        &paths.junit,
        report::junit::render(
            report,
            &verdict,
            &display_root,
            args.ci.report_url.as_deref(),
        )
        .as_bytes(),
    )?;
    write_atomic(
        &paths.verdict,
        report::json::render_verdict(
            &verdict,
            report.run.as_ref().and_then(|run| run.run_id.as_deref()),
        )
        .as_bytes(),
    )?;

    if baseline.is_none() {
        writeln!(out, "no baseline at `{baseline_label}`")?;
    }
    let table = report::table::render(report, baseline.as_ref(), &verdict);
    if runner.is_actions {
        // The table quotes model text: a line of it must never run as a workflow command.
        let token = ci::stop_token();
        write!(out, "::stop-commands::{token}\n{table}::{token}::\n")?;
    } else {
        write!(out, "{table}")?;
    }
    writeln!(out, "results: {}", paths.results.display())?;

    if runner.is_actions {
        publish_on_runner(&runner, args, report, &verdict, &markdown_text, &paths, out)?;
    }
    if args.ci.comment {
        let pr = args.ci.pr.or_else(|| runner.pull_request());
        let body = comment::render(
            &args.ci.comment_key,
            &markdown::Input {
                limit: GITHUB_COMMENT_LIMIT,
                ..input
            },
        );
        match post_comment(pr, &args.ci, &body) {
            Ok(note) => writeln!(out, "{note}")?,
            // On a runner, a warning annotation shows on the run's page; the text has no
            // newline, so it is one workflow command.
            Err(warning) if runner.is_actions => writeln!(
                out,
                "::warning title=toolgate::{}",
                report::github::escape_data(warning.strip_prefix("warning: ").unwrap_or(&warning))
            )?,
            Err(warning) => writeln!(err, "{warning}")?,
        }
    }
    Ok(match verdict.decision {
        Decision::Pass => Exit::Pass,
        Decision::Fail => Exit::GateFailed,
        Decision::NoVerdict => Exit::CouldNotEvaluate,
        Decision::Inconclusive => match args.ci.on_inconclusive {
            OnInconclusive::Pass => Exit::Pass,
            OnInconclusive::Fail => Exit::GateFailed,
            OnInconclusive::Distinct => Exit::Inconclusive,
        },
    })
}

/// Where `gate` writes its files.
struct OutputPaths {
    results: PathBuf,
    markdown: PathBuf,
    html: PathBuf,
    junit: PathBuf,
    verdict: PathBuf,
}

impl OutputPaths {
    fn new(dir: &Path) -> OutputPaths {
        OutputPaths {
            results: dir.join("results.json"),
            markdown: dir.join("report.md"),
            html: dir.join("report.html"),
            junit: dir.join("junit.xml"),
            verdict: dir.join("verdict.json"),
        }
    }
}

/// The baseline named by `--baseline` (default `ROOT/baseline.json`), how to name it, and the
/// local file it was read from. A missing file is `None`; an `artifact:NAME` is fetched from
/// GitHub and must exist.
fn resolve_baseline(
    args: &GateArgs,
    out: &mut dyn Write,
) -> Result<(Option<Baseline>, String, Option<PathBuf>)> {
    let source = args
        .baseline
        .clone()
        .unwrap_or_else(|| args.suite.root.join("baseline.json"));
    let label = source.display().to_string();
    if let Some(name) = label.strip_prefix("artifact:") {
        let connection = Connection::from_env(env).with_context(|| {
            format!("`--baseline {label}` needs GITHUB_TOKEN and GITHUB_REPOSITORY")
        })?;
        // GitHub's error bodies can echo the request, token included.
        let fetched = runtime()?
            .block_on(github::artifact::fetch_newest(
                &connection,
                name,
                github::artifact::DEADLINE,
            ))
            .map_err(|error| {
                anyhow::anyhow!(Redactor::new([&connection.token]).redact(&format!("{error:#}")))
            })?;
        writeln!(
            out,
            "baseline: artifact `{name}` (id {}) of workflow run {}, file `{}`",
            fetched.artifact_id, fetched.run_id, fetched.file
        )?;
        let origin = PathBuf::from(format!("{label}/{}", fetched.file));
        return Ok((Some(Baseline::parse(&fetched.text, &origin)?), label, None));
    }
    if !source.exists() {
        if args.require_baseline {
            anyhow::bail!(
                "no baseline at `{label}`, and --require-baseline asks for one (write it with `toolgate baseline`)"
            );
        }
        return Ok((None, label, None));
    }
    Ok((Some(Baseline::load(&source)?), label, Some(source)))
}

/// Step summary, outputs and annotations for a GitHub Actions runner.
fn publish_on_runner(
    runner: &Runner,
    args: &GateArgs,
    report: &RunReport,
    verdict: &Verdict,
    markdown_text: &str,
    paths: &OutputPaths,
    out: &mut dyn Write,
) -> Result<()> {
    if let Some(path) = &runner.step_summary {
        ci::append(path, markdown_text)?;
    }
    if let Some(path) = &runner.output {
        let comparison = verdict.comparison.as_ref();
        let outputs = [
            ("verdict", verdict.decision.as_str().to_string()),
            (
                "pass-rate",
                report
                    .summary
                    .overall
                    .pass_rate()
                    .map_or_else(String::new, |r| format!("{:.4}", r)),
            ),
            (
                "baseline-pass-rate",
                comparison.map_or_else(String::new, |c| format!("{:.4}", c.baseline.rate)),
            ),
            (
                "delta-points",
                verdict
                    .delta_points
                    .map_or_else(String::new, |d| format!("{d:.2}")),
            ),
            (
                "p-value",
                comparison.map_or_else(String::new, |c| format!("{:.6}", c.p_value)),
            ),
            ("ruler-moved", (!verdict.ruler_moved.is_empty()).to_string()),
            ("results", paths.results.display().to_string()),
            ("report", paths.markdown.display().to_string()),
            ("html-report", paths.html.display().to_string()),
            ("junit", paths.junit.display().to_string()),
            ("reasons", verdict.reasons.join("\n")),
        ];
        ci::write_outputs(path, &outputs)?;
    }
    let workdir = std::env::current_dir().unwrap_or_default();
    let display_root = report::github::relative_root(&args.suite.root, &workdir);
    let annotations =
        report::github::annotations(report, &display_root, args.ci.report_url.as_deref());
    write!(out, "{}", render_annotations(&annotations))?;
    Ok(())
}

/// Posts the sticky comment: `Ok` says what was posted; `Err` is the warning saying why
/// nothing was (never an error: the report is in the step summary).
fn post_comment(
    pr: Option<u64>,
    ci_args: &crate::cli::GateCiArgs,
    body: &str,
) -> std::result::Result<String, String> {
    let Some(pr) = pr else {
        return Err(
            "warning: not commenting: no pull request (not a `pull_request` event and no --pr)"
                .to_string(),
        );
    };
    let Some(connection) = Connection::from_env(env) else {
        return Err("warning: not commenting: GITHUB_TOKEN or GITHUB_REPOSITORY is not set; the report is in the step summary".to_string());
    };
    let marker = comment::marker(&ci_args.comment_key);
    let author = match &ci_args.comment_author {
        Some(login) => github::comment::Author::Login(login.clone()),
        None => github::comment::Author::Token,
    };
    let posted = runtime()
        .map_err(github::comment::CommentError::Other)
        .and_then(|rt| {
            rt.block_on(github::comment::upsert(
                &connection,
                pr,
                &marker,
                &author,
                body,
            ))
        });
    match posted {
        Ok(github::comment::Posted::Created(id)) => {
            Ok(format!("commented on pull request #{pr} (comment {id})"))
        }
        Ok(github::comment::Posted::Updated(id)) => Ok(format!(
            "updated the comment on pull request #{pr} (comment {id})"
        )),
        Ok(github::comment::Posted::Unchanged(id)) => Ok(format!(
            "the comment on pull request #{pr} is up to date (comment {id})"
        )),
        Err(error) => Err(format!(
            "warning: not commenting: {}; the report is in the step summary",
            Redactor::new([&connection.token]).redact(&format!("{error:#}"))
        )),
    }
}

pub(super) fn baseline_command(args: &BaselineArgs, out: &mut dyn Write) -> Result<Exit> {
    let entries = history::load(&args.history)?;
    let now = args.now.unwrap_or_else(SystemTime::now);
    let baseline =
        Baseline::aggregate(&entries, &args.branch, args.window, now).with_context(|| {
            format!(
                "failed to build a baseline from `{}`",
                args.history.display()
            )
        })?;
    let text = crate::json::pretty(&baseline);
    write_atomic(&args.out, text.as_bytes())?;
    let overall = baseline.overall();
    writeln!(
        out,
        "baseline: {} run(s) of `{}` ({} left out: measured differently), {} scenarios, pass rate {}; written to {}",
        baseline.runs,
        args.branch,
        baseline.excluded_runs,
        baseline.scenarios.len(),
        overall
            .pass_rate()
            .map_or_else(|| "-".to_string(), |r| format!("{:.1}%", r * 100.0)),
        args.out.display()
    )?;
    Ok(Exit::Pass)
}

pub(super) fn record_command(args: &RecordArgs, out: &mut dyn Write) -> Result<Exit> {
    let report = RunReport::load(&args.results)?;
    let at = args.at.unwrap_or_else(SystemTime::now);
    let entry = HistoryEntry::new(&report, at, &args.branch, args.commit.clone());
    history::append(&args.history, &entry)?;
    writeln!(
        out,
        "recorded {} scenario(s) of `{}` at {} in {}",
        entry.scenarios.len(),
        entry.branch,
        entry.recorded_at,
        args.history.display()
    )?;
    Ok(Exit::Pass)
}

pub(super) fn merge_command(args: &MergeArgs, out: &mut dyn Write) -> Result<Exit> {
    let mut parts = Vec::new();
    for path in &args.inputs {
        parts.push((path.display().to_string(), RunReport::load(path)?));
    }
    let merged = shard::merge(&parts)?;
    write_atomic(&args.out, report::json::render_results(&merged).as_bytes())?;
    writeln!(
        out,
        "merged {} part(s), {} scenario(s) into {}",
        parts.len(),
        merged.scenarios.len(),
        args.out.display()
    )?;
    Ok(Exit::Pass)
}
