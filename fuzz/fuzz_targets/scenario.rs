//! The scenario loader on arbitrary text, as JSON and as YAML: it may reject the input, never
//! panic. The first byte picks the format.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use toolgate::catalog::Catalog;

fuzz_target!(|data: &[u8]| {
    let Some((format, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let path = if format % 2 == 0 {
        Path::new("scenarios/fuzz.json")
    } else {
        Path::new("scenarios/fuzz.yaml")
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let _ = toolgate::scenario::load::parse(text, path, &root, Catalog::builtin());
});
