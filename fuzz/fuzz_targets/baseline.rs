//! The baseline (results file) loader on arbitrary bytes, through a file as `--baseline`
//! reads it: it may reject the file, never panic. A loaded report is also compared with
//! itself, as the gate does with a baseline.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use toolgate::results::RunReport;

static FILE: LazyLock<std::path::PathBuf> = LazyLock::new(|| {
    std::env::temp_dir().join(format!("toolgate-fuzz-baseline-{}.json", std::process::id()))
});

fuzz_target!(|data: &[u8]| {
    std::fs::write(&*FILE, data).expect("write the input");
    if let Ok(report) = RunReport::load(&FILE) {
        let _ = report.restricted_to(&report);
        let _ = serde_json::to_string(&report);
    }
});
