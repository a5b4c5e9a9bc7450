//! Importers: toolgate, OpenAI, OTLP and Langfuse traces become trajectories; bad lines named.

use std::io::Cursor;

use serde_json::json;

use super::*;
use crate::trace::InvalidCallKind;

fn import(text: &str, format: Format) -> Result<Vec<Trajectory>> {
    Trajectories::new(Cursor::new(text.to_string()), "traces.jsonl", format).collect()
}

#[test]
fn toolgate_lines_of_one_run_make_one_trajectory_and_a_new_run_starts_another() {
    let text = [
        json!({"scenario": "s1", "tool": "find_user", "arguments": {"q": "ada"},
               "outcome": "success", "result": {"id": "u_1"}, "duration_us": 40}),
        json!({"scenario": "s1", "tool": "get_user", "arguments": {"id": "u_1"},
               "outcome": "tool_error", "error": "no such user", "duration_us": 7}),
        json!({"scenario": "s1", "final_answer": "done"}),
        json!({"scenario": "s1", "repeat": 1, "tool": "find_user", "arguments": {}}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let runs = import(&text, Format::Toolgate).expect("the import succeeds");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].trace_id, "s1#0");
    assert_eq!(runs[0].calls.len(), 2);
    assert_eq!(runs[0].calls[1].outcome, CallOutcome::ToolError);
    assert_eq!(runs[0].calls[1].error.as_deref(), Some("no such user"));
    assert_eq!(runs[0].calls[0].duration_us, 40);
    assert_eq!(runs[0].final_answer.as_deref(), Some("done"));
    assert!(runs[0].has.results && runs[0].has.outcomes);
    // A hand-written line has no outcome: results and outcomes are unknown, not successes.
    assert_eq!(runs[1].trace_id, "s1#1");
    assert!(!runs[1].has.results && !runs[1].has.outcomes && !runs[1].has.durations);
}

/// Issue case: two proxy sessions appending to one file interleave their lines; each line
/// became a trajectory of its own, so a session's three identical calls (a loop) were never
/// seen together.
#[test]
fn interleaved_sessions_are_grouped_by_run_id() {
    let line = |run: &str, id: u32| {
        json!({"run_id": run, "scenario": "memory", "tool": "read_graph",
               "arguments": {"id": id}, "outcome": "success", "result": {}})
        .to_string()
    };
    let text = [
        line("a", 1),
        line("b", 9),
        line("a", 1),
        line("b", 8),
        line("a", 1),
    ]
    .join("\n");
    let runs = import(&text, Format::Toolgate).expect("the import succeeds");
    let shape: Vec<(&str, Vec<&Value>)> = runs
        .iter()
        .map(|run| {
            let ids = run.calls.iter().map(|call| &call.arguments["id"]).collect();
            (run.trace_id.as_str(), ids)
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("b/memory#0", vec![&json!(9), &json!(8)]),
            ("a/memory#0", vec![&json!(1), &json!(1), &json!(1)]),
        ]
    );
}

#[test]
fn at_most_256_runs_stay_open_and_the_least_recent_is_finished_first() {
    let line = |run: usize| {
        json!({"run_id": format!("r{run}"), "scenario": "s", "tool": "t", "arguments": {}})
            .to_string()
    };
    // r0 is extended again after r1: r1 is then the least recent and is finished for r256.
    let mut lines = vec![line(0), line(1), line(0)];
    lines.extend((2..=256).map(line));
    // r1 came back after it was finished: a new trajectory with the same id.
    lines.push(line(1));
    let runs = import(&lines.join("\n"), Format::Toolgate).expect("the import succeeds");
    assert_eq!(runs.len(), 258);
    assert_eq!(runs[0].trace_id, "r1/s#0");
    assert_eq!(runs[0].calls.len(), 1);
    let r0 = runs
        .iter()
        .find(|run| run.trace_id == "r0/s#0")
        .expect("r0");
    assert_eq!(r0.calls.len(), 2);
    assert_eq!(runs.last().map(|run| run.trace_id.as_str()), Some("r1/s#0"));
}

#[test]
fn openai_conversations_pair_tool_messages_by_id_and_keep_prompt_and_answer() {
    let line = json!({"id": "conv-7", "messages": [
        {"role": "system", "content": "You help."},
        {"role": "user", "content": [{"type": "text", "text": "Find ada"}]},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "find_user", "arguments": "{\"q\":\"ada\"}"}},
            {"id": "c2", "type": "function", "function": {"name": "list", "arguments": ""}}
        ]},
        {"role": "tool", "tool_call_id": "c2", "content": "[]"},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"id\":\"u_1\"}"},
        {"role": "assistant", "tool_calls": [
            {"id": "c3", "type": "function", "function": {"name": "get_user", "arguments": "{\"id\":"}}
        ]},
        {"role": "assistant", "content": "Ada is u_1."}
    ]});
    let runs = import(&line.to_string(), Format::Openai).expect("the import succeeds");
    let run = &runs[0];
    assert_eq!(run.trace_id, "conv-7");
    assert_eq!(run.prompt.as_deref(), Some("You help.\nFind ada"));
    assert_eq!(run.final_answer.as_deref(), Some("Ada is u_1."));
    let tools: Vec<&str> = run.calls.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(tools, ["find_user", "list", "get_user"]);
    assert_eq!(run.calls[0].arguments, json!({"q": "ada"}));
    assert_eq!(run.calls[0].result, Some(json!({"id": "u_1"})));
    assert_eq!(run.calls[1].arguments, json!({}));
    assert_eq!(run.calls[1].result, Some(json!([])));
    assert_eq!(
        (run.calls[0].turn, run.calls[1].turn, run.calls[2].turn),
        (1, 1, 2)
    );
    assert_eq!(run.calls[2].outcome, CallOutcome::InvalidCall);
    assert_eq!(
        run.calls[2].invalid,
        Some(InvalidCallKind::UnparseableArguments)
    );
    assert!(run.has.results, "the invalid call needs no result");
    assert!(
        !run.has.outcomes,
        "tool messages do not say whether a call failed"
    );
}

#[test]
fn an_openai_call_without_its_tool_message_leaves_results_missing() {
    let line = json!([
        {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}}]}
    ]);
    let runs = import(&line.to_string(), Format::Openai).expect("the import succeeds");
    assert_eq!(runs[0].trace_id, "line 1");
    assert!(!runs[0].has.results);
}

#[test]
fn a_malformed_line_names_the_file_and_line_and_stops_the_import() {
    let text = format!("{}\n\n{{not json\n", json!({"messages": []}));
    let mut items = Trajectories::new(Cursor::new(text), "prod.jsonl", Format::Openai);
    assert!(items.next().expect("an item").is_ok());
    let error = format!(
        "{:#}",
        items
            .next()
            .expect("an item")
            .expect_err("the import fails")
    );
    assert!(error.contains("`prod.jsonl` line 3"), "{error}");
    assert!(items.next().is_none());

    let orphan = json!({"messages": [{"role": "tool", "tool_call_id": "zz", "content": "x"}]});
    let error = format!(
        "{:#}",
        import(&orphan.to_string(), Format::Openai).expect_err("the import fails")
    );
    assert!(
        error.contains("line 1") && error.contains("`zz`"),
        "{error}"
    );
    let nameless =
        json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "a", "function": {}}]}]});
    let error = format!(
        "{:#}",
        import(&nameless.to_string(), Format::Openai).expect_err("the import fails")
    );
    assert!(
        error.contains("`messages[0].tool_calls[0]` has no `function.name`"),
        "{error}"
    );
}

fn attr(key: &str, value: serde_json::Value) -> serde_json::Value {
    json!({"key": key, "value": value})
}

fn span(
    trace: &str,
    start: u64,
    attributes: Vec<serde_json::Value>,
    status: i64,
) -> serde_json::Value {
    json!({"traceId": trace, "spanId": format!("{start:016x}"), "name": "span",
           "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 2_500_000).to_string(),
           "attributes": attributes, "status": {"code": status, "message": if status == 2 { "boom" } else { "" }}})
}

#[test]
fn otlp_tool_spans_group_by_trace_order_by_start_and_dedupe_mcp_client_spans() {
    let execute = |trace: &str, start: u64, tool: &str, id: &str, status: i64| {
        span(
            trace,
            start,
            vec![
                attr(
                    "gen_ai.operation.name",
                    json!({"stringValue": "execute_tool"}),
                ),
                attr("gen_ai.tool.name", json!({"stringValue": tool})),
                attr("gen_ai.tool.call.id", json!({"stringValue": id})),
                attr(
                    "gen_ai.tool.call.arguments",
                    json!({"stringValue": "{\"n\":1}"}),
                ),
                attr(
                    "gen_ai.tool.call.result",
                    json!({"stringValue": "{\"ok\":true}"}),
                ),
            ],
            status,
        )
    };
    let mcp_client = span(
        "t1",
        1_100,
        vec![
            attr("mcp.method.name", json!({"stringValue": "tools/call"})),
            attr("gen_ai.tool.name", json!({"stringValue": "alpha"})),
            attr("gen_ai.tool.call.id", json!({"stringValue": "k1"})),
        ],
        0,
    );
    let chat = span(
        "t1",
        10,
        vec![attr(
            "gen_ai.operation.name",
            json!({"stringValue": "chat"}),
        )],
        0,
    );
    let request = json!({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "x"}, "spans": [
        execute("t1", 5_000, "beta", "k2", 2), chat, execute("t2", 20, "gamma", "k3", 0),
        execute("t1", 1_000, "alpha", "k1", 0), mcp_client
    ]}]}]});
    let runs = import(&request.to_string(), Format::Otel).expect("the import succeeds");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].trace_id, "t1");
    let tools: Vec<&str> = runs[0].calls.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(tools, ["alpha", "beta"]);
    assert_eq!(runs[0].calls[0].arguments, json!({"n": 1}));
    assert_eq!(runs[0].calls[0].result, Some(json!({"ok": true})));
    assert_eq!(runs[0].calls[0].duration_us, 2_500);
    assert_eq!(runs[0].calls[1].outcome, CallOutcome::ToolError);
    assert_eq!(runs[0].calls[1].error.as_deref(), Some("boom"));
    assert_eq!(runs[1].trace_id, "t2");
    assert!(runs[0].has.results && runs[0].has.durations);
}

/// Issue case: a 61 MB line with 200,000 trace ids took over a minute (each trace id was
/// searched for in a list, each span of a trace filtered from all spans). The grouping is now
/// one pass; here 5,000 traces, interleaved, come out whole and in order of first appearance.
#[test]
fn an_otlp_line_of_many_interleaved_traces_is_grouped_whole_and_in_order() {
    let tool = |trace: usize, start: u64| {
        span(
            &format!("t{trace}"),
            start,
            vec![
                attr("gen_ai.tool.name", json!({"stringValue": "lookup"})),
                attr(
                    "gen_ai.operation.name",
                    json!({"stringValue": "execute_tool"}),
                ),
                attr(
                    "gen_ai.tool.call.id",
                    json!({"stringValue": format!("c{trace}-{start}")}),
                ),
            ],
            0,
        )
    };
    let traces = 5_000;
    let spans: Vec<serde_json::Value> = (0..2)
        .flat_map(|round| (0..traces).map(move |trace| tool(trace, 10 - round)))
        .collect();
    let request = json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]});
    let runs = import(&request.to_string(), Format::Otel).expect("the import succeeds");
    assert_eq!(runs.len(), traces);
    assert!(
        runs.iter()
            .enumerate()
            .all(|(i, run)| run.trace_id == format!("t{i}")
                && run.calls.len() == 2
                && run.calls[0].duration_us == 2_500)
    );
}

#[test]
fn an_otlp_tool_span_without_a_tool_name_is_an_error_with_its_path() {
    let request = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        span("t", 1, vec![attr("mcp.method.name", json!({"stringValue": "tools/call"}))], 0)
    ]}]}]});
    let error = format!(
        "{:#}",
        import(&request.to_string(), Format::Otel).expect_err("the import fails")
    );
    assert!(error.contains("`traces.jsonl` line 1"), "{error}");
    assert!(
        error.contains("`resourceSpans[0].scopeSpans[0].spans[0]`"),
        "{error}"
    );
    assert!(error.contains("`gen_ai.tool.name`"), "{error}");
}

#[test]
fn langfuse_tool_observations_group_by_consecutive_trace_and_read_errors_and_durations() {
    let observation = |trace: &str, kind: &str, name: &str, extra: serde_json::Value| {
        let mut value = json!({"id": name, "traceId": trace, "type": kind, "name": name,
            "startTime": "2026-12-02T10:00:00.000Z", "endTime": "2026-12-02T10:00:00.250Z"});
        value
            .as_object_mut()
            .expect("an object")
            .extend(extra.as_object().expect("an object").clone());
        value.to_string()
    };
    let text = [
        observation("tr-1", "GENERATION", "chat", json!({})),
        observation(
            "tr-1",
            "TOOL",
            "find_user",
            json!({"input": {"q": "ada"}, "output": {"id": "u_1"}}),
        ),
        observation(
            "tr-1",
            "TOOL",
            "get_user",
            json!({"input": "{\"id\":\"u_9\"}", "level": "ERROR", "statusMessage": "not found"}),
        ),
        observation("tr-2", "TOOL", "list", json!({"input": {}})),
    ]
    .join("\n");
    let runs = import(&text, Format::Langfuse).expect("the import succeeds");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].trace_id, "tr-1");
    assert_eq!(runs[0].calls.len(), 2);
    assert_eq!(runs[0].calls[0].result, Some(json!({"id": "u_1"})));
    assert_eq!(runs[0].calls[0].duration_us, 250_000);
    assert_eq!(runs[0].calls[1].arguments, json!({"id": "u_9"}));
    assert_eq!(runs[0].calls[1].outcome, CallOutcome::ToolError);
    assert_eq!(runs[0].calls[1].error.as_deref(), Some("not found"));
    assert!(runs[0].has.results);
    assert_eq!(runs[1].trace_id, "tr-2");
    assert!(
        !runs[1].has.results,
        "a tool observation without output has no result"
    );

    let bad = json!({"traceId": "t", "type": "TOOL", "name": "x", "startTime": "yesterday",
                     "endTime": "2026-12-02T10:00:00Z"});
    let error = format!(
        "{:#}",
        import(&bad.to_string(), Format::Langfuse).expect_err("the import fails")
    );
    assert!(
        error.contains("line 1") && error.contains("`startTime` `yesterday`"),
        "{error}"
    );
}

#[test]
fn a_line_longer_than_the_limit_is_an_error_not_a_whole_load() {
    let text = format!(
        "{{\"scenario\": \"S\", \"tool\": \"t\", \"note\": \"{}\"}}\n",
        "x".repeat(200)
    );
    let mut read = Trajectories::new(
        Cursor::new(text.into_bytes()),
        "big.jsonl",
        Format::Toolgate,
    )
    .with_max_line(100);
    let error = read.next().expect("an item").expect_err("refused");
    assert_eq!(
        error.to_string(),
        "`big.jsonl` line 1 is longer than 100 bytes; one line holds one trace record"
    );
    assert!(read.next().is_none(), "the import stops at the error");
}
