//! The assertion language: arbitrary source text is parsed and, when it parses, evaluated
//! against the CRM fixture as both the seeded and the final state. Either may fail with a
//! message, never panic.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolgate::scenario::assertion::Assertion;

static STATE: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../../fixtures/crm_baseline.json"))
        .expect("the fixture is JSON")
});

fuzz_target!(|source: &str| {
    let roots: Vec<String> = STATE
        .as_object()
        .map(|state| state.keys().cloned().collect())
        .unwrap_or_default();
    if let Ok(assertion) = Assertion::parse(source, &roots) {
        let _ = assertion.evaluate(&STATE, &STATE);
    }
});
