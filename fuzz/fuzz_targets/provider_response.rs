//! The provider response parsers on arbitrary JSON: OpenAI chat completions, Anthropic
//! messages and Anthropic streams (a JSON array read as the stream's events). They may report
//! a bad response, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolgate::agent::{anthropic, openai};

fuzz_target!(|data: &[u8]| {
    let Some((max_tokens, rest)) = data.split_first() else {
        return;
    };
    let Ok(body) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    let limit = (*max_tokens > 0).then_some(u32::from(*max_tokens));
    let _ = openai::parse::parse_response(&body, limit);
    let _ = anthropic::parse::parse_message(&body);
    if let Some(events) = body.as_array()
        && let Ok(joined) = anthropic::parse::join_stream(events)
    {
        let _ = anthropic::parse::parse_stream(joined);
    }
});
