//! The judges' cache: one JSON file per judgement, named by the hash of everything the judge
//! saw. A cache that cannot be read or written is skipped, never an error. The scoring judge
//! and the description judge of `toolgate lint` share it; their material never collides
//! because each is a different JSON shape.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::provider::Api;

/// The cache key: lowercase hex SHA-256 over the provider, the model and `material` (what the
/// judge is shown: the rubric and messages, or a tool's description and schema).
pub(crate) fn key(provider: Api, model: &str, material: &Value) -> String {
    let material =
        serde_json::json!({"provider": provider.as_str(), "model": model, "material": material});
    crate::fs::sha256_hex(material.to_string())
}

/// The entry stored under `key`, if there is a readable one.
pub(crate) fn load<T: DeserializeOwned>(dir: &Path, key: &str) -> Option<T> {
    let text = crate::fs::read_text(
        &dir.join(format!("{key}.json")),
        "judge cache entry",
        crate::defaults::MAX_SMALL_FILE_BYTES,
    )
    .ok()?;
    serde_json::from_str(&text).ok()
}

/// Stores `entry` under `key`; failures are ignored.
pub(crate) fn store<T: Serialize>(dir: &Path, key: &str, entry: &T) {
    if let Ok(text) = serde_json::to_string_pretty(entry) {
        let _ = crate::fs::write_atomic(&dir.join(format!("{key}.json")), text.as_bytes());
    }
}
