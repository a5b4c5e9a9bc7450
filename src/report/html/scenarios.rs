//! `<section id="scenarios">`: the filters, then every scenario folded, each run of it with
//! its timeline of turns and calls, final answer and checks.
//!
//! A scenario's `data-outcome` sums up its runs: `fail` when any run failed, else `errored`
//! when any errored, else `inconclusive` when the user simulator spoiled any, else `degraded`
//! when any was degraded, else `pass`.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::Input;
use super::calls::{push_call, serde_name};
use super::escape::{self, escape, push_capped, push_rich, token};
use super::runs::{self, Traces};
use crate::results::ScenarioResult;
use crate::score::Outcome;

/// What the filters and the summary line know of one scenario.
struct Facts<'a> {
    id: &'a str,
    tier: u8,
    kind: &'static str,
    outcome: &'static str,
    /// Tools called in any run, as tokens.
    tools: BTreeSet<String>,
    /// Kinds of the checks that failed in any run, as tokens.
    checks: BTreeSet<String>,
    /// Its runs, in repetition order.
    runs: &'a [ScenarioResult],
}

fn facts<'a>(runs: &'a [ScenarioResult], traces: &Traces<'a>) -> Facts<'a> {
    let first = &runs[0];
    let any = |outcome: Outcome| runs.iter().any(|run| run.outcome == outcome);
    let outcome = if any(Outcome::Fail) {
        "fail"
    } else if any(Outcome::Errored) {
        "errored"
    } else if any(Outcome::Inconclusive) {
        "inconclusive"
    } else if any(Outcome::Degraded) {
        "degraded"
    } else {
        "pass"
    };
    Facts {
        id: &first.id,
        tier: first.tier,
        kind: first.kind.as_str(),
        outcome,
        tools: traces.tools(&first.id).into_iter().map(token).collect(),
        checks: runs
            .iter()
            .flat_map(|run| run.checks.iter().filter(|check| !check.passed))
            .map(|check| serde_name(check.kind))
            .collect(),
        runs,
    }
}

/// Appends the section.
pub(super) fn push_section(out: &mut String, input: &Input<'_>) {
    let run_id = input
        .report
        .run
        .as_ref()
        .and_then(|run| run.run_id.as_deref());
    let traces = Traces::of(input.trace, run_id);
    let all: Vec<Facts<'_>> = input
        .report
        .scenarios
        .chunk_by(|a, b| a.id == b.id)
        .map(|runs| facts(runs, &traces))
        .collect();
    out.push_str("<section id=\"scenarios\">\n<h2>Scenarios</h2>\n<div class=\"filters\">");
    let tiers: BTreeSet<String> = all.iter().map(|f| f.tier.to_string()).collect();
    let kinds: BTreeSet<String> = all.iter().map(|f| f.kind.to_string()).collect();
    let mut outcomes: BTreeSet<String> = ["pass", "fail", "errored", "degraded"]
        .into_iter()
        .map(str::to_string)
        .collect();
    // Offered only when a run is inconclusive: a suite without simulated users never has one.
    if all.iter().any(|facts| facts.outcome == "inconclusive") {
        outcomes.insert("inconclusive".to_owned());
    }
    let tools: BTreeSet<String> = all.iter().flat_map(|f| f.tools.iter().cloned()).collect();
    let checks: BTreeSet<String> = all.iter().flat_map(|f| f.checks.iter().cloned()).collect();
    for (id, label, options) in [
        ("filter-tier", "tier", &tiers),
        ("filter-type", "type", &kinds),
        ("filter-outcome", "outcome", &outcomes),
        ("filter-tool", "tool called", &tools),
        ("filter-check", "failing check", &checks),
    ] {
        let _ = write!(
            out,
            "<label>{label} <select id=\"{id}\"><option value=\"\">all</option>"
        );
        for option in options {
            let option = escape(option);
            let _ = write!(out, "<option value=\"{option}\">{option}</option>");
        }
        out.push_str("</select></label> ");
    }
    let _ = writeln!(
        out,
        "<label>search <input id=\"search\" type=\"search\" placeholder=\"id, tool, any text\"></label> \
         <span class=\"count\"><span id=\"shown-count\">{}</span> of {} shown</span></div>",
        all.len(),
        all.len()
    );
    if !traces.available {
        out.push_str("<p class=\"warning\">This run's trace (<code>trace.jsonl</code>) is not available: the runs show their checks and answers, not their calls.</p>\n");
    }
    for facts in &all {
        push_scenario(out, facts, &traces);
    }
    out.push_str("</section>\n");
}

/// One scenario as a folded `<details class="scenario">` with its data attributes.
fn push_scenario(out: &mut String, facts: &Facts<'_>, traces: &Traces<'_>) {
    let join = |set: &BTreeSet<String>| escape(&set.iter().cloned().collect::<Vec<_>>().join(" "));
    let passed = facts
        .runs
        .iter()
        .filter(|run| run.outcome.is_pass())
        .count();
    let _ = write!(
        out,
        "<details class=\"scenario\" id=\"{}\" data-scenario=\"{}\" data-tier=\"{}\" data-type=\"{}\" data-outcome=\"{}\" data-tools=\"{}\" data-checks=\"{}\">\
         <summary><span class=\"badge {}\">{}</span> <code>{}</code> tier {} · {} · passed {passed}/{} runs",
        crate::report::anchor(facts.id, None),
        escape(facts.id),
        facts.tier,
        facts.kind,
        facts.outcome,
        join(&facts.tools),
        join(&facts.checks),
        facts.outcome,
        facts.outcome,
        escape(facts.id),
        facts.tier,
        facts.kind,
        facts.runs.len(),
    );
    if let Some(divergence) = facts
        .runs
        .iter()
        .filter(|run| run.error.is_none())
        .find_map(|run| run.metrics.as_ref()?.first_divergence.as_deref())
    {
        out.push_str(" · first divergence: ");
        push_rich(out, divergence, escape::SHORT_BYTES);
    }
    out.push_str("</summary>\n");
    for run in facts.runs {
        push_run(out, run, traces);
    }
    out.push_str("</details>\n");
}

/// One run as a `<div class="run">`: its line, what stopped it, the first divergence, the
/// timeline of calls by turn, the final answer and the checks.
fn push_run(out: &mut String, run: &ScenarioResult, traces: &Traces<'_>) {
    let limit = escape::limit(out.len());
    let outcome = run.outcome.as_str();
    let _ = write!(
        out,
        "<div class=\"run {outcome}\" id=\"{}\"><h4>repeat {} · <span class=\"badge {outcome}\">{outcome}</span> · {} ms · {} calls{}{}</h4>",
        crate::report::anchor(&run.id, Some(run.repeat)),
        run.repeat,
        run.duration_ms,
        run.calls,
        run.turns
            .map_or_else(String::new, |turns| format!(" · {turns} turns")),
        run.usage.as_ref().map_or_else(String::new, |usage| format!(
            " · {} tokens ({} in, {} out) over {} model calls, {:.1} s waiting for the model",
            usage.prompt_tokens + usage.completion_tokens,
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.requests,
            usage.latency_ms as f64 / 1000.0
        )),
    );
    let mut stops: Vec<&str> = Vec::new();
    for (flag, text) in [
        (run.hit_turn_limit, "stopped at the turn limit"),
        (run.truncated, "the last reply was cut at the output limit"),
        (
            run.timed_out,
            "ran out of time while the model was generating",
        ),
        (
            run.call_as_text,
            "the final answer is a tool call written as text",
        ),
    ] {
        if flag {
            stops.push(text);
        }
    }
    if !stops.is_empty() {
        let _ = write!(out, "<p class=\"warning\">{}</p>", stops.join("; "));
    }
    if let Some(error) = &run.error {
        out.push_str("<pre class=\"error\">");
        push_capped(out, error, limit);
        out.push_str("</pre>");
    }
    let divergence = run
        .metrics
        .as_ref()
        .and_then(|metrics| metrics.first_divergence.as_deref())
        .filter(|_| run.error.is_none());
    if let Some(divergence) = divergence {
        out.push_str("<p class=\"divergence\">First divergence: ");
        push_rich(out, divergence, limit);
        out.push_str("</p>");
    }
    push_timeline(
        out,
        run,
        traces,
        divergence.and_then(runs::divergence_call),
        limit,
    );
    if let Some(conversation) = &run.conversation {
        push_conversation(out, conversation, limit);
    }
    out.push_str("<div class=\"answer\"><span class=\"label\">final answer</span> ");
    match &run.final_answer {
        Some(answer) => push_capped(out, answer, limit),
        None => out.push_str("<em>none</em>"),
    }
    out.push_str("</div>");
    if !run.state_diff.is_empty() {
        out.push_str("<div class=\"state\"><span class=\"label\">state changes</span><ul>");
        for change in &run.state_diff {
            out.push_str("<li>");
            push_capped(out, change, limit);
            out.push_str("</li>");
        }
        out.push_str("</ul></div>");
    }
    push_checks(out, run, limit);
    out.push_str("</div>\n");
}

/// A scripted conversation as an ordered list: each user message, the calls the agent made
/// before replying, its reply; then how the conversation ended when it ended early.
fn push_conversation(
    out: &mut String,
    conversation: &crate::score::conversation::Conversation,
    limit: usize,
) {
    use crate::score::conversation::Ended;
    out.push_str("<div class=\"conversation\"><span class=\"label\">conversation</span><ol>");
    for exchange in &conversation.exchanges {
        out.push_str("<li><b>user</b> ");
        push_capped(out, &exchange.user, limit);
        let _ = write!(
            out,
            " <span class=\"meta\">· {} call{}</span><br><b>agent</b> ",
            exchange.calls,
            if exchange.calls == 1 { "" } else { "s" }
        );
        match &exchange.reply {
            Some(reply) => push_capped(out, reply, limit),
            None => out.push_str("<em>no reply</em>"),
        }
        out.push_str("</li>");
    }
    out.push_str("</ol>");
    let ended = match &conversation.ended {
        Ended::Finished => None,
        Ended::NotAsked { turn } => Some(format!(
            "ended before user_turns[{turn}]: the reply asked nothing, so the user had no more to say"
        )),
        Ended::NotWaited { turn, detail } => Some(format!(
            "stopped at user_turns[{turn}]: the agent had to wait for it, but {detail}"
        )),
        Ended::Cut { turn } => Some(format!(
            "cut before user_turns[{turn}]: the agent's play ended first"
        )),
        Ended::Unfinished { messages } => Some(format!(
            "cut after the simulated user's message {}: the agent's play ended while the user \
             had more to say",
            messages + 1
        )),
        Ended::MessageLimit { messages } => Some(format!(
            "ended at the simulated user's limit of {messages} messages after the prompt"
        )),
        Ended::SimulatorMistake {
            mistake,
            said,
            detail,
        } => Some(match said {
            Some(said) => format!(
                "inconclusive: the user simulator's next message was a mistake ({}: {detail}) \
                 and was not sent: {said:?}",
                mistake.as_str()
            ),
            None => format!(
                "inconclusive: the user simulator made a mistake ({}: {detail})",
                mistake.as_str()
            ),
        }),
    };
    if let Some(ended) = ended {
        out.push_str("<p class=\"meta\">");
        push_capped(out, &ended, limit);
        out.push_str("</p>");
    }
    out.push_str("</div>");
}

/// The run's calls in order, a mark where each new turn starts, the call the first
/// divergence names marked `first-divergence`.
fn push_timeline(
    out: &mut String,
    run: &ScenarioResult,
    traces: &Traces<'_>,
    diverged_at: Option<usize>,
    limit: usize,
) {
    if !traces.available {
        return;
    }
    let Some(trace) = traces
        .run(&run.id, run.repeat)
        .filter(|trace| !trace.calls.is_empty())
    else {
        out.push_str("<p class=\"meta\">No tool calls.</p>");
        return;
    };
    out.push_str("<div class=\"timeline\">");
    let mut turn = None;
    for (position, line) in trace.calls.iter().enumerate() {
        if line.turn.is_some() && line.turn != turn {
            turn = line.turn;
            let _ = write!(
                out,
                "<div class=\"turn-mark\">turn {}</div>",
                line.turn.unwrap_or_default()
            );
        }
        let index = line.index.unwrap_or(position);
        let class = if diverged_at == Some(index) {
            "first-divergence"
        } else {
            ""
        };
        push_call(out, line, position, class, limit);
    }
    out.push_str("</div>");
}

/// The checks as a table (pass or fail, kind, subject, detail), then the judge's word, the
/// parser notes and output-schema violations the metrics hold.
fn push_checks(out: &mut String, run: &ScenarioResult, limit: usize) {
    if !run.checks.is_empty() {
        out.push_str("<table class=\"checks\"><thead><tr><th></th><th>check</th><th>subject</th><th>detail</th></tr></thead><tbody>");
        for check in &run.checks {
            let (class, mark) = if check.passed {
                ("pass", "✓")
            } else {
                ("fail", "✗")
            };
            let _ = write!(
                out,
                "<tr class=\"{class}\"><td>{mark}</td><td>{}</td><td><code>",
                serde_name(check.kind)
            );
            push_capped(out, &check.subject, limit);
            out.push_str("</code></td><td>");
            push_rich(out, &check.detail, limit);
            out.push_str("</td></tr>");
        }
        out.push_str("</tbody></table>");
    }
    let mut notes: Vec<String> = Vec::new();
    if let Some(judge) = &run.judge {
        notes.push(format!(
            "judge {}: {}",
            if judge.flagged {
                "flagged the answer"
            } else {
                "found no fault"
            },
            judge.reason
        ));
    }
    if let Some(error) = &run.judge_error {
        notes.push(format!("judge gave no verdict: {error}"));
    }
    if let Some(metrics) = &run.metrics {
        notes.extend(
            metrics
                .parser_notes
                .iter()
                .map(|noted| format!("parser note: {}", noted.render())),
        );
        notes.extend(
            metrics
                .output_violations
                .iter()
                .map(|v| format!("output schema: {v}")),
        );
    }
    if notes.is_empty() {
        return;
    }
    out.push_str("<ul class=\"flags\">");
    for note in notes {
        out.push_str("<li>");
        push_capped(out, &note, limit);
        out.push_str("</li>");
    }
    out.push_str("</ul>");
}
