//! The crate's shape, checked from its source: which top-level module may use which, no
//! import cycle between modules, and each third-party crate in its one corner.
//!
//! Only production code counts: comment lines, `#[cfg(test)]` modules (everything from that
//! line to the end of a file) and test-only files (`tests.rs`, `*_tests.rs`) are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::repo;

/// Modules every layer may use: plain helpers with no dependency of their own.
const NEUTRAL: [&str; 11] = [
    "json", "values", "calendar", "arith", "prose", "fs", "defaults", "exit", "tls", "redact",
    "process",
];

/// What each top-level module may use besides [`NEUTRAL`]; a module not listed here (the
/// CLI glue: `commands`, `lib`, `main`) may use anything.
const ALLOWED: [(&str, &[&str]); 25] = [
    ("catalog", &[]),
    ("redact", &[]),
    ("json", &[]),
    ("fs", &[]),
    ("defaults", &[]),
    ("exit", &[]),
    ("tls", &[]),
    ("provider", &[]),
    ("trace", &["scenario"]),
    ("ingest", &["trace"]),
    ("scenario", &["catalog"]),
    ("world", &[]),
    ("suite", &[]),
    (
        "harness",
        &["scenario", "trace", "world", "catalog", "suite"],
    ),
    ("score", &["scenario", "trace", "catalog"]),
    ("agent", &["scenario", "trace", "provider"]),
    ("judge", &["scenario", "trace", "provider"]),
    ("lint", &["catalog", "harness", "judge", "suite"]),
    ("mock", &["catalog", "harness", "scenario"]),
    (
        "runner",
        &[
            "agent", "catalog", "harness", "judge", "mock", "scenario", "score", "suite", "trace",
        ],
    ),
    (
        "results",
        &[
            "agent", "catalog", "judge", "lint", "runner", "scenario", "score", "trace",
        ],
    ),
    ("gate", &["results", "score"]),
    ("report", &["results", "score", "gate", "trace", "catalog"]),
    ("github", &["report"]),
    (
        "verify",
        &["catalog", "harness", "runner", "scenario", "score", "trace"],
    ),
];

/// Third-party crates and the only source paths (prefixes under `src/`) that may name them.
const CORNERS: [(&str, &[&str]); 3] = [
    ("rmcp", &["harness/"]),
    ("octocrab", &["github/"]),
    (
        "reqwest",
        &[
            "provider/",
            "harness/client.rs",
            "harness/wire_tap.rs",
            "tls.rs",
        ],
    ),
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).expect("src/ is readable");
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// Each production source file under `src/`, as (path relative to `src/`, code lines).
fn production_code() -> Vec<(String, String)> {
    let src = repo().join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let relative = path
                .strip_prefix(&src)
                .expect("under src/")
                .to_string_lossy()
                .replace('\\', "/");
            let name = path.file_stem()?.to_string_lossy().into_owned();
            if name == "tests" || name.ends_with("_tests") {
                return None;
            }
            let text = std::fs::read_to_string(&path).expect("a source file is readable");
            let code: Vec<&str> = text
                .lines()
                .take_while(|line| line.trim() != "#[cfg(test)]")
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect();
            Some((relative, code.join("\n")))
        })
        .collect()
}

/// The top-level module a file belongs to: `score/metrics/loops.rs` -> `score`.
fn module_of(relative: &str) -> String {
    let first = relative.split('/').next().unwrap_or(relative);
    first.trim_end_matches(".rs").to_owned()
}

/// Every `crate::NAME` that `code` mentions.
fn crate_uses(code: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = code[at + "crate::".len()..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            used.insert(name);
        }
    }
    used
}

/// The module graph of production code: module -> the modules it uses.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (relative, code) in production_code() {
        let module = module_of(&relative);
        let uses: Vec<String> = crate_uses(&code)
            .into_iter()
            .filter(|used| *used != module)
            .collect();
        graph.entry(module).or_default().extend(uses);
    }
    graph
}

#[test]
fn modules_use_only_what_the_data_flow_allows() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.into_iter().collect();
    let mut violations = Vec::new();
    for (module, uses) in module_graph() {
        let Some(permitted) = allowed.get(module.as_str()) else {
            continue;
        };
        for used in uses {
            if !permitted.contains(&used.as_str()) && !NEUTRAL.contains(&used.as_str()) {
                violations.push(format!("{module} -> {used}"));
            }
        }
    }
    assert_eq!(violations, Vec::<String>::new());
}

#[test]
fn no_import_cycle_between_modules() {
    let graph = module_graph();
    // Depth-first search for a back edge; the path shows the cycle.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        let cycle = visit(module, &graph, &mut Vec::new(), &mut done);
        assert_eq!(cycle, None, "an import cycle between modules");
    }
}

#[test]
fn each_third_party_crate_stays_in_its_corner() {
    let mut strays = Vec::new();
    for (relative, code) in production_code() {
        for (krate, corner) in CORNERS {
            let names_it =
                code.contains(&format!("{krate}::")) || code.contains(&format!("use {krate}"));
            if names_it && !corner.iter().any(|prefix| relative.starts_with(prefix)) {
                strays.push(format!("{krate} in src/{relative}"));
            }
        }
    }
    assert_eq!(strays, Vec::<String>::new());
}

/// `unsafe_code` is denied crate-wide; the one exception is the `pre_exec` that sets the
/// parent-death signal of child processes.
#[test]
fn unsafe_code_is_allowed_in_one_place_only() {
    let mut allowed = Vec::new();
    for path in {
        let mut files = Vec::new();
        sources(&repo().join("src"), &mut files);
        files
    } {
        let text = std::fs::read_to_string(&path).expect("readable");
        let count = text.matches("allow(unsafe_code)").count();
        if count > 0 {
            let relative = path.strip_prefix(repo().join("src")).expect("under src");
            allowed.push(format!("{} x{count}", relative.display()));
        }
    }
    assert_eq!(allowed, vec!["process.rs x1".to_owned()]);
}

#[test]
fn the_checker_sees_uses_and_skips_comments_and_tests() {
    let code = "use crate::score::Check;\nlet x = crate::trace::run_record(&a, &b);";
    assert_eq!(
        crate_uses(code),
        BTreeSet::from(["score".to_owned(), "trace".to_owned()])
    );
    assert_eq!(module_of("score/metrics/loops.rs"), "score");
    assert_eq!(module_of("runner.rs"), "runner");
    let graph = module_graph();
    assert!(graph["runner"].contains("harness"), "{graph:?}");
    assert!(
        !graph["score"].contains("harness"),
        "score's tests use the harness"
    );
}
