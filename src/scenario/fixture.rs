//! Fixtures: the seeded start state a scenario names in `seed_state`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

/// Fixtures read while loading one suite, by path: each file is read and parsed once, and every
/// scenario naming it shares the one parsed state (a suite of thousands of scenarios over a few
/// fixtures holds a few copies, not thousands). A fixture that failed keeps its error, so every
/// scenario naming it reports the same problem.
#[derive(Debug, Default)]
pub(super) struct Fixtures {
    loaded: HashMap<PathBuf, Result<Arc<Value>, String>>,
}

impl Fixtures {
    /// The state of the fixture at `path`, read with [`load_fixture`] the first time it is
    /// asked for. Errors: as [`load_fixture`], as the text of the error chain.
    pub(super) fn get(&mut self, path: &Path) -> Result<Arc<Value>, String> {
        self.loaded
            .entry(path.to_path_buf())
            .or_insert_with(|| {
                load_fixture(path)
                    .map(Arc::new)
                    .map_err(|error| format!("{error:#}"))
            })
            .clone()
    }
}

/// Reads a fixture: a JSON object whose values are collections (arrays of objects).
///
/// Errors: unreadable file, invalid JSON (with line and column), a top level that is not an
/// object, or a collection that is not an array of objects.
pub fn load_fixture(path: &Path) -> Result<Value> {
    let text = crate::fs::read_text(path, "fixture", crate::defaults::MAX_DATA_FILE_BYTES)?;
    let state: Value = serde_json::from_str(&text)
        .with_context(|| format!("fixture `{}` is not valid JSON", path.display()))?;
    let Some(collections) = state.as_object() else {
        bail!(
            "fixture `{}` must be a JSON object of collections",
            path.display()
        );
    };
    for (name, collection) in collections {
        let is_records = collection
            .as_array()
            .is_some_and(|records| records.iter().all(Value::is_object));
        if !is_records {
            bail!(
                "fixture `{}`: `{name}` must be an array of objects",
                path.display()
            );
        }
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    //! Fixtures: a fixture must be an object of record arrays; the error names file and key.

    use super::*;

    #[test]
    fn fixture_must_be_an_object_of_record_arrays() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f.json");
        std::fs::write(&path, r#"{"contacts": [1, 2]}"#).expect("write");
        let error = load_fixture(&path).expect_err("numbers are not records");
        assert_eq!(
            error.to_string(),
            format!(
                "fixture `{}`: `contacts` must be an array of objects",
                path.display()
            )
        );
    }
}
