//! `toolgate schema NAME`: the JSON Schemas (draft 2020-12) of the files toolgate reads and
//! writes, derived with schemars from the very types serde reads and writes them with, so a
//! schema cannot promise what the parser refuses. The same texts are kept under `schemas/`
//! for editors (`# yaml-language-server: $schema=...`); a test checks that they match.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::{Value, json};

use std::io::Write;

use anyhow::{Context as _, Result, bail};

use crate::exit::Exit;
use crate::fs::write_atomic;

/// Where the published schemas live; each `$id` is this plus `<name>.schema.json`.
const BASE_ID: &str = "https://github.com/toolgate/toolgate/schemas/";

/// The schemas by name, with what each describes: the names `toolgate schema` takes.
pub(super) const NAMES: [(&str, &str); 5] = [
    ("scenario", "a scenario file (scenarios/*.yaml or .json)"),
    ("config", "the suite config, toolgate.yaml"),
    ("mock-catalog", "a declarative mock catalog (docs/mocks.md)"),
    (
        "results",
        "results.json, as `gate` writes it and reads it back as a baseline",
    ),
    ("verdict", "verdict.json, written by `gate`"),
];

/// The schema called `name` (one of [`NAMES`]), as a JSON value with `$id` and `title`;
/// `None` for any other name.
pub(super) fn schema(name: &str) -> Option<Value> {
    let (schema, title) = match name {
        "scenario" => (
            read::<crate::scenario::file::ScenarioFile>(),
            "toolgate scenario",
        ),
        "config" => (read::<crate::config::ConfigFile>(), "toolgate.yaml"),
        "mock-catalog" => (
            read::<crate::mock::file::CatalogFile>(),
            "toolgate mock catalog",
        ),
        "results" => (read::<crate::results::RunReport>(), "toolgate results.json"),
        "verdict" => (verdict(), "toolgate verdict.json"),
        _ => return None,
    };
    let mut value = schema.to_value();
    unwrap_descriptions(&mut value);
    if let Some(object) = value.as_object_mut() {
        // `$schema` first, then who this is, then the generated body.
        let mut ordered = serde_json::Map::new();
        if let Some(dialect) = object.remove("$schema") {
            ordered.insert("$schema".to_owned(), dialect);
        }
        ordered.insert(
            "$id".to_owned(),
            json!(format!("{BASE_ID}{name}.schema.json")),
        );
        ordered.insert("title".to_owned(), json!(title));
        object.remove("title");
        ordered.extend(std::mem::take(object));
        *object = ordered;
    }
    Some(value)
}

/// Doc comments are wrapped at 100 columns; an editor's hover wraps by itself, so each
/// description's line breaks become spaces (paragraph breaks stay).
fn unwrap_descriptions(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for (key, item) in object.iter_mut() {
                match item {
                    Value::String(text) if key == "description" => {
                        let paragraphs: Vec<String> = text
                            .split("\n\n")
                            .map(|paragraph| paragraph.split('\n').collect::<Vec<_>>().join(" "))
                            .collect();
                        *text = paragraphs.join("\n\n");
                    }
                    _ => unwrap_descriptions(item),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

/// A file toolgate reads: the schema of what serde accepts. `results.json` is one too, since
/// older results stay readable as baselines; what this build writes validates against it.
fn read<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// A file toolgate writes: the schema of what serde emits (no field left out as optional that
/// is always written).
fn written<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// `verdict.json` is the [`crate::gate::Verdict`] with the run's id added beside it
/// (`report::json::render_verdict`).
fn verdict() -> Schema {
    let mut schema = written::<crate::gate::Verdict>();
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            "run_id".to_owned(),
            json!({
                "description": "The run's id, as in results.json's `run.run_id`; absent when the run had none.",
                "type": "string"
            }),
        );
    }
    schema
}

pub(super) fn schema_command(args: &crate::cli::SchemaArgs, out: &mut dyn Write) -> Result<Exit> {
    if let Some(dir) = &args.write {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
        for (name, _) in NAMES {
            let path = dir.join(format!("{name}.schema.json"));
            let value = schema(name).expect("every listed name has a schema");
            write_atomic(&path, crate::json::pretty(&value).as_bytes())?;
            writeln!(out, "wrote {}", path.display())?;
        }
        return Ok(Exit::Pass);
    }
    let Some(name) = &args.name else {
        for (name, what) in NAMES {
            writeln!(out, "{name:<14} {what}")?;
        }
        return Ok(Exit::Pass);
    };
    let Some(value) = schema(name) else {
        let names: Vec<&str> = NAMES.iter().map(|(name, _)| *name).collect();
        bail!(
            "no schema called `{name}`; the schemas are {}",
            names.join(", ")
        );
    };
    out.write_all(crate::json::pretty(&value).as_bytes())?;
    Ok(Exit::Pass)
}

#[cfg(test)]
mod tests {
    //! `toolgate schema`: every name has a valid draft 2020-12 schema with its own `$id`.

    use super::*;

    #[test]
    fn every_name_has_a_schema_with_its_own_id() {
        for (name, _) in NAMES {
            let schema = schema(name).expect("a listed name has a schema");
            assert_eq!(
                schema["$id"],
                json!(format!("{BASE_ID}{name}.schema.json")),
                "{name}"
            );
            assert_eq!(
                schema["$schema"],
                json!("https://json-schema.org/draft/2020-12/schema")
            );
            assert!(jsonschema::validator_for(&schema).is_ok(), "{name}");
        }
        assert_eq!(schema("scenarios"), None);
    }
}
