//! Validating record sources: a JSONPath string into the run record, or an object that
//! captures a value out of what the path finds (`{from, regex}` or `{from, cel}`), or the
//! same written inline in a `reference_answer` placeholder (`$.calls[0].result | /re/`).

use serde_json::Value;
use serde_json_path::JsonPath;

use super::super::capture::{Capture, Placeholder, RecordSource};
use super::Problems;

/// The keys a capture object may have.
const CAPTURE_KEYS: [&str; 3] = ["from", "regex", "cel"];

/// Parses a record source as written in a file: a JSONPath string or a capture object. It
/// must read an expected call before `current` (`usize::MAX` for any).
///
/// Returns the source and the text to locate its line by.
pub(super) fn parse_source(
    value: &Value,
    current: usize,
) -> Result<RecordSource, (String, Option<String>)> {
    match value {
        Value::String(path) => parse_path(path, current, None).map_err(|error| (error, Some(path.clone()))),
        Value::Object(map) => {
            let from = map.get("from").and_then(Value::as_str);
            let needle = from.map(str::to_string);
            let fail = |message: String| (message, needle.clone());
            if let Some(key) = map.keys().find(|key| !CAPTURE_KEYS.contains(&key.as_str())) {
                return Err(fail(format!(
                    "unknown key `{key}`; a capture has `from` and one of `regex` or `cel`"
                )));
            }
            let Some(from) = from else {
                return Err(fail(
                    "a capture needs `from`, the JSONPath string (`$.calls[0].result`) of the value to capture from"
                        .to_string(),
                ));
            };
            let text = |key: &str| match map.get(key) {
                None => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.as_str())),
                Some(_) => Err(format!("`{key}` must be a string")),
            };
            let capture = match (text("regex").map_err(&fail)?, text("cel").map_err(&fail)?) {
                (Some(pattern), None) => Capture::regex(pattern),
                (None, Some(expression)) => Capture::cel(expression),
                (Some(_), Some(_)) => Err("a capture has `regex` or `cel`, not both".to_string()),
                (None, None) => Err(
                    "a capture needs `regex` or `cel` (or write the JSONPath alone to take the whole value)"
                        .to_string(),
                ),
            }
            .map_err(&fail)?;
            parse_path(from, current, Some(capture)).map_err(fail)
        }
        _ => Err((
            "must be a JSONPath string such as `$.calls[0].result.id`, or a capture `{from: <JSONPath>, regex: <pattern>}` or `{from: <JSONPath>, cel: <expression>}`"
                .to_string(),
            None,
        )),
    }
}

/// Parses an inline source, as in a `reference_answer` placeholder: a JSONPath, optionally
/// followed by `| /pattern/` or `| cel: expression`.
pub(super) fn parse_inline(text: &str, current: usize) -> Result<RecordSource, String> {
    let Some((path, capture)) = text.split_once('|') else {
        return parse_path(text.trim(), current, None);
    };
    let capture = capture.trim();
    let capture = if let Some(expression) = capture.strip_prefix("cel:") {
        Capture::cel(expression.trim())?
    } else if let Some(pattern) = capture
        .strip_prefix('/')
        .and_then(|rest| rest.strip_suffix('/'))
    {
        Capture::regex(pattern)?
    } else {
        return Err(format!(
            "`{capture}` is not a capture; write `/pattern/` or `cel: expression` after `|`"
        ));
    };
    parse_path(path.trim(), current, Some(capture))
}

/// The `{{ source }}` placeholders of `reference_answer`, in order; each may read any of the
/// `expected_calls`. A `{{` without its `}}`, or a source that does not parse, is reported.
pub(super) fn reference_placeholders(
    answer: Option<&str>,
    expected_calls: usize,
    problems: &mut Problems<'_>,
) -> Vec<Placeholder> {
    let mut placeholders = Vec::new();
    let mut rest = answer.unwrap_or_default();
    while let Some(start) = rest.find("{{") {
        let Some(length) = rest[start..].find("}}") else {
            problems.add(
                "reference_answer",
                Some(&rest[start..]),
                "a placeholder opens with `{{` but never closes with `}}`",
            );
            break;
        };
        let written = &rest[start..start + length + 2];
        match parse_inline(&written[2..written.len() - 2], expected_calls) {
            Ok(from) => placeholders.push(Placeholder {
                written: written.to_string(),
                from,
            }),
            Err(message) => problems.add(
                "reference_answer",
                Some(written),
                format_args!("placeholder `{written}`: {message}"),
            ),
        }
        rest = &rest[start + length + 2..];
    }
    placeholders
}

/// Parses a record path; it must read an expected call before `current`: `$.calls[i]...`
/// with `i < current`.
fn parse_path(
    source: &str,
    current: usize,
    capture: Option<Capture>,
) -> Result<RecordSource, String> {
    let (path, call_index) = parse_prior(source, current)?;
    let shown = match &capture {
        Some(capture) => format!("{source} | {}", capture.describe()),
        None => source.to_string(),
    };
    Ok(RecordSource {
        source: shown,
        path,
        call_index,
        capture,
    })
}

/// Parses an `args_from_prior` path; it must read from an earlier expected call:
/// `$.calls[i]...` with `i < current`.
pub(super) fn parse_prior(
    source: &str,
    current: usize,
) -> std::result::Result<(JsonPath, usize), String> {
    let path =
        JsonPath::parse(source).map_err(|error| format!("invalid JSONPath `{source}`: {error}"))?;
    let call_index = source
        .strip_prefix("$.calls[")
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(digits, _)| digits.parse::<usize>().ok())
        .ok_or_else(|| {
            format!("`{source}` must start with `$.calls[N]`, the N-th expected call's record")
        })?;
    if call_index >= current {
        return Err(format!(
            "`{source}` reads calls[{call_index}], but only earlier expected calls (0..{current}) can feed this one"
        ));
    }
    // A call's record has four fields (`trace::run_record`); a misspelt one would find
    // nothing at run time and read as the agent's fault.
    let after = source.split_once(']').map_or("", |(_, rest)| rest);
    let field = after
        .strip_prefix('.')
        .map(|rest| rest.split(['.', '[']).next().unwrap_or_default())
        .or_else(|| {
            let quoted = after.strip_prefix("['")?;
            quoted.split_once("']").map(|(field, _)| field)
        });
    if let Some(field) = field
        && !RECORD_FIELDS.contains(&field)
    {
        return Err(format!(
            "`{source}`: a call's record has no field `{field}` (it has {})",
            RECORD_FIELDS.map(|f| format!("`{f}`")).join(", ")
        ));
    }
    Ok((path, call_index))
}

/// The fields of a call's record in `$.calls[i]`.
const RECORD_FIELDS: [&str; 4] = ["tool", "args", "result", "error"];

#[cfg(test)]
mod tests {
    //! Record sources: paths must read an earlier call; capture objects and inline captures
    //! are checked key by key and say what is wrong.

    use serde_json::json;

    use super::*;

    fn error(value: Value) -> String {
        parse_source(&value, 1).expect_err("invalid").0
    }

    #[test]
    fn a_misspelt_record_field_is_an_error_naming_the_fields() {
        assert_eq!(
            parse_prior("$.calls[0].reslt", 1).map(|(_, i)| i),
            Err("`$.calls[0].reslt`: a call's record has no field `reslt` (it has `tool`, `args`, `result`, `error`)".to_string())
        );
        assert!(parse_prior("$.calls[0]['arg'].id", 1).is_err());
        for fine in [
            "$.calls[0].result",
            "$.calls[0].args.id",
            "$.calls[0]['error']",
            "$.calls[0]",
        ] {
            assert_eq!(parse_prior(fine, 1).map(|(_, i)| i), Ok(0), "{fine}");
        }
    }

    #[test]
    fn prior_reference_must_point_at_an_earlier_call() {
        assert_eq!(
            parse_prior("$.calls[0].result.id", 1).map(|(_, i)| i),
            Ok(0)
        );
        assert_eq!(
            parse_prior("$.calls[1].result.id", 1).map(|(_, i)| i),
            Err("`$.calls[1].result.id` reads calls[1], but only earlier expected calls (0..1) can feed this one".to_string())
        );
        assert!(
            parse_prior("$.calls[0", 1)
                .expect_err("unclosed bracket")
                .starts_with("invalid JSONPath")
        );
        assert_eq!(
            parse_prior("$.result.id", 1).map(|(_, i)| i),
            Err(
                "`$.result.id` must start with `$.calls[N]`, the N-th expected call's record"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_capture_object_reads_like_its_placeholder() {
        let source = parse_source(
            &json!({"from": "$.calls[0].result", "regex": "Commit: (\\w+)"}),
            1,
        )
        .expect("valid capture");
        assert_eq!(source.source, r"$.calls[0].result | /Commit: (\w+)/");
        assert_eq!(source.call_index, 0);
        let record = json!({"calls": [{"result": "Commit: 15a52f7\nAuthor: A"}]});
        assert_eq!(source.read(&record), Ok(json!("15a52f7")));
        let inline = parse_inline(r" $.calls[0].result | cel: value.split(' ')[1] ", 1)
            .expect("valid inline capture");
        assert_eq!(
            inline.source,
            "$.calls[0].result | cel: value.split(' ')[1]"
        );
        assert_eq!(inline.read(&record), Ok(json!("15a52f7\nAuthor:")));
    }

    #[test]
    fn capture_objects_with_wrong_keys_say_which() {
        assert_eq!(
            error(json!({"regex": "x"})),
            "a capture needs `from`, the JSONPath string (`$.calls[0].result`) of the value to capture from"
        );
        assert_eq!(
            error(json!({"from": "$.calls[0].result", "regex": "x", "cel": "value"})),
            "a capture has `regex` or `cel`, not both"
        );
        assert_eq!(
            error(json!({"from": "$.calls[0].result"})),
            "a capture needs `regex` or `cel` (or write the JSONPath alone to take the whole value)"
        );
        assert_eq!(
            error(json!({"from": "$.calls[0].result", "regexp": "x"})),
            "unknown key `regexp`; a capture has `from` and one of `regex` or `cel`"
        );
        assert_eq!(
            error(json!({"from": "$.calls[0].result", "regex": 3})),
            "`regex` must be a string"
        );
        assert!(
            error(json!({"from": "$.calls[0].result", "regex": "("}))
                .starts_with("invalid regex `(`")
        );
        assert!(
            error(json!({"from": "$.calls[0].result", "cel": "value +"}))
                .starts_with("failed to parse assertion")
        );
        assert!(error(json!(3)).starts_with("must be a JSONPath string"));
        assert_eq!(
            error(json!({"from": "$.calls[1].result", "regex": "x"})),
            "`$.calls[1].result` reads calls[1], but only earlier expected calls (0..1) can feed this one"
        );
    }

    #[test]
    fn an_inline_capture_must_be_a_pattern_or_cel() {
        assert_eq!(
            parse_inline("$.calls[0].result | Commit", 1).expect_err("no slashes"),
            "`Commit` is not a capture; write `/pattern/` or `cel: expression` after `|`"
        );
    }
}
