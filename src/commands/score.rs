//! `toolgate score`: production traces imported, scored with the checks that need no
//! scenario, and reported. The trace file is read as a stream; with `--sample N` only N
//! trajectories are held (reservoir sampling), without it none beyond the one being scored.

use std::io::{BufRead, BufReader, Write};

use anyhow::{Context as _, Result};

use crate::cli::{ScoreArgs, TraceFormat};
use crate::exit::Exit;
use crate::harness::ToolSet;
use crate::ingest::{Format, Trajectories, Trajectory};
use crate::score::production::{TraceScore, TraceSummary, TraceView, score_trace};

pub(super) fn score_command(args: &ScoreArgs, out: &mut dyn Write) -> Result<Exit> {
    let tools = match (&args.catalog, args.server.split_first()) {
        (Some(path), _) => Some(
            ToolSet::from_definitions(crate::mock::load::import_tools(path)?)
                .with_context(|| format!("in the catalog `{}`", path.display()))?,
        ),
        (None, Some((program, rest))) => {
            let source = crate::lint::Source::Command {
                program: program.clone(),
                args: rest.to_vec(),
            };
            let loaded = super::runtime()?.block_on(crate::lint::sources::load(&source))?;
            if let Some(problem) = loaded
                .findings
                .iter()
                .find(|finding| finding.severity == crate::lint::Severity::Error)
            {
                anyhow::bail!(
                    "failed to list the tools of `{program}`: {}",
                    problem.message
                );
            }
            let definitions = loaded
                .tools
                .into_iter()
                .map(|tool| tool.definition)
                .collect();
            Some(
                ToolSet::from_definitions(definitions)
                    .with_context(|| format!("in the tools of `{program}`"))?,
            )
        }
        (None, None) => None,
    };
    let file = std::fs::File::open(&args.traces)
        .with_context(|| format!("failed to open traces `{}`", args.traces.display()))?;
    let format = match args.format {
        TraceFormat::Toolgate => Format::Toolgate,
        TraceFormat::Openai => Format::Openai,
        TraceFormat::Otel => Format::Otel,
        TraceFormat::Langfuse => Format::Langfuse,
    };
    let source = args.traces.display().to_string();
    // On a terminal, how much of the file is read: a large file takes minutes.
    let size = file.metadata().map(|meta| meta.len()).unwrap_or(0);
    let progress = indicatif::ProgressBar::with_draw_target(
        Some(size),
        indicatif::ProgressDrawTarget::stderr(),
    );
    progress.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {bytes}/{total_bytes} read  {elapsed}  {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let trajectories = Trajectories::new(BufReader::new(progress.wrap_read(file)), &source, format);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("failed to create `{}`", args.out.display()))?;
    let scores_path = args.out.join("scores.jsonl");
    let mut scores = std::io::BufWriter::new(
        std::fs::File::create(&scores_path)
            .with_context(|| format!("failed to create `{}`", scores_path.display()))?,
    );
    // A trace may hold a secret of this environment (an agent's key in a call); it stays out.
    let environment = crate::redact::Redactor::from_env();
    let mut summary = TraceSummary::default();
    let mut scored = 0u64;
    let mut record = |trajectory: &mut Trajectory| -> Result<()> {
        let score = score_one(trajectory, tools.as_ref());
        summary.add(&score);
        scored += 1;
        if scored.is_multiple_of(1024) {
            progress.set_message(format!("{scored} trajectories scored"));
        }
        let line = environment.redact(&serde_json::to_string(&score).expect("a score is JSON"));
        writeln!(scores, "{line}")
            .with_context(|| format!("failed to write `{}`", scores_path.display()))
    };
    match args.sample {
        None => {
            for trajectory in trajectories {
                record(&mut trajectory?)?;
            }
        }
        Some(size) => {
            for mut trajectory in sample(trajectories, size, args.seed)? {
                record(&mut trajectory)?;
            }
        }
    }
    progress.finish_and_clear();
    scores
        .flush()
        .with_context(|| format!("failed to write `{}`", scores_path.display()))?;
    summary.finish();
    write_reports(args, &summary, &environment, out)?;
    Ok(Exit::Pass)
}

/// Writes `summary.json`, `report.md` and `report.html` into `args.out`, with this
/// environment's secrets redacted, and the terminal report to `out`.
///
/// Errors: a file that cannot be written, naming it.
fn write_reports(
    args: &ScoreArgs,
    summary: &TraceSummary,
    environment: &crate::redact::Redactor,
    out: &mut dyn Write,
) -> Result<()> {
    let summary_json = serde_json::to_string_pretty(summary).expect("a summary is JSON");
    crate::fs::write_atomic(
        &args.out.join("summary.json"),
        format!("{}\n", environment.redact(&summary_json)).as_bytes(),
    )?;
    let markdown = crate::report::traces::markdown(summary, args.trace_url.as_deref());
    crate::fs::write_atomic(
        &args.out.join("report.md"),
        environment.redact(&markdown).as_bytes(),
    )?;
    let page = crate::report::html::render_traces(summary, args.trace_url.as_deref());
    crate::fs::write_atomic(
        &args.out.join("report.html"),
        environment.redact(&page).as_bytes(),
    )?;
    write!(
        out,
        "{}",
        environment.redact(&crate::report::traces::text(summary))
    )?;
    writeln!(
        out,
        "written to {}: scores.jsonl (one line per trajectory), summary.json, report.md, report.html",
        args.out.display()
    )?;
    Ok(())
}

/// Scores one trajectory, its calls first annotated against `tools` when given. Without
/// `tools`, the catalog checks still decide when every call was already checked against the
/// catalog it was made with (a toolgate trace, whose lines say `checked`); otherwise they are
/// inconclusive.
fn score_one(trajectory: &mut Trajectory, tools: Option<&ToolSet>) -> TraceScore {
    if let Some(tools) = tools {
        for call in &mut trajectory.calls {
            tools.annotate(call);
        }
    }
    let checked = !trajectory.calls.is_empty() && trajectory.calls.iter().all(|c| c.checked);
    score_trace(&TraceView {
        trace_id: &trajectory.trace_id,
        prompt: trajectory.prompt.as_deref(),
        calls: &trajectory.calls,
        final_answer: trajectory.final_answer.as_deref(),
        has_results: trajectory.has.results,
        has_outcomes: trajectory.has.outcomes,
        has_durations: trajectory.has.durations,
        has_catalog: tools.is_some() || checked,
    })
}

/// A uniform sample of `size` trajectories (Algorithm R), in input order; the same input,
/// size and seed give the same sample.
///
/// Errors: the first import error.
fn sample<R: BufRead>(
    trajectories: Trajectories<R>,
    size: usize,
    seed: u64,
) -> Result<Vec<Trajectory>> {
    let mut random = SplitMix64(seed);
    let mut kept: Vec<(u64, Trajectory)> = Vec::with_capacity(size.min(1 << 16));
    for (seen, trajectory) in (0u64..).zip(trajectories) {
        let trajectory = trajectory?;
        if kept.len() < size {
            kept.push((seen, trajectory));
        } else {
            let slot = random.below(seen + 1);
            if let Some(entry) = usize::try_from(slot)
                .ok()
                .and_then(|slot| kept.get_mut(slot))
            {
                *entry = (seen, trajectory);
            }
        }
    }
    kept.sort_by_key(|(seen, _)| *seen);
    Ok(kept.into_iter().map(|(_, trajectory)| trajectory).collect())
}

/// SplitMix64 (Steele, Lea and Flood, 2014): a small seeded generator, enough for sampling.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound` > 0), by multiply-shift (Lemire's method, without the
    /// rejection step: the bias is below 2^-32 for bounds under 2^32).
    fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(bound)) >> 64) as u64
    }
}
