//! The verdict cache: one JSON file per judgement, named by the hash of everything the judge
//! saw. A cache that cannot be read or written is skipped, never an error.

use std::path::Path;

use serde_json::Value;

use super::JudgeVerdict;

/// The cache key: lowercase hex SHA-256 over the model, the rubric and the messages.
pub(super) fn key(model: &str, rubric: &str, messages: &[Value]) -> String {
    let material = serde_json::json!({"model": model, "rubric": rubric, "messages": messages});
    crate::config::sha256_hex(&material.to_string())
}

pub(super) fn load(dir: &Path, key: &str) -> Option<JudgeVerdict> {
    let text = std::fs::read_to_string(dir.join(format!("{key}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

pub(super) fn store(dir: &Path, key: &str, verdict: &JudgeVerdict) {
    if let Ok(text) = serde_json::to_string_pretty(verdict) {
        let _ = crate::results::write_atomic(&dir.join(format!("{key}.json")), text.as_bytes());
    }
}
