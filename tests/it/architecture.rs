//! The crate's shape, checked from its source: which top-level module may use which, no
//! import cycle between modules, and each third-party crate in its one corner.
//!
//! Only production code counts. Comments and the insides of string, char and byte literals
//! are blanked first; then each item marked `#[cfg(test)]` (a `mod tests { ... }`, a
//! function, a `use`) is left out, and so is the file of a `#[cfg(test)] mod tests;` with
//! everything under it. Code after a test module is checked like any other.
//!
//! The checker reads a map from a path under `src/` to the file's text, so its own tests feed
//! it small planted sources.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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
    ("lint", &["catalog", "harness", "judge"]),
    ("mock", &["catalog", "harness", "lint", "scenario"]),
    (
        "runner",
        &["agent", "harness", "judge", "scenario", "score", "trace"],
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

/// Source files by their path under `src/` (`score/metrics/loops.rs`): the file's text, or,
/// once read by [`production`], its production code.
type Sources = BTreeMap<String, String>;

/// Top-level module -> the top-level modules it uses.
type Graph = BTreeMap<String, BTreeSet<String>>;

// ---------------------------------------------------------------------------------------------
// Reading the sources

/// Every `.rs` file under `src/`, as read from disk.
fn real_sources() -> Sources {
    let src = repo().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|path| {
            let relative = path
                .strip_prefix(&src)
                .expect("under src/")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path).expect("a source file is readable");
            (relative, text)
        })
        .collect()
}

/// Appends every `.rs` file under `dir` to `out`, descending into directories.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let entries = std::fs::read_dir(dir).expect("src/ is readable");
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Blanking comments and literals

/// `text` with every comment and every string, char and byte literal (raw strings too)
/// replaced by spaces, line breaks kept: what is left is code, on the same lines, so a brace
/// or a `crate::` left over is always code.
fn mask(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut at = 0;
    while at < bytes.len() {
        match literal_or_comment_end(bytes, at) {
            Some(end) => {
                blank(&mut out[at..end]);
                at = end;
            }
            None => at += 1,
        }
    }
    String::from_utf8(out).expect("only whole literals and comments are blanked")
}

/// Replaces every byte but line breaks with a space.
fn blank(bytes: &mut [u8]) {
    for byte in bytes.iter_mut().filter(|byte| **byte != b'\n') {
        *byte = b' ';
    }
}

/// Where the comment or literal that starts at `at` ends (exclusive), or `None` when none
/// starts there (a lifetime's `'` starts none).
fn literal_or_comment_end(bytes: &[u8], at: usize) -> Option<usize> {
    let rest = &bytes[at..];
    if rest.starts_with(b"//") {
        return Some(find(bytes, at, b"\n").unwrap_or(bytes.len()));
    }
    if rest.starts_with(b"/*") {
        return Some(block_comment_end(bytes, at));
    }
    let starts_token = at == 0 || !is_ident_byte(bytes[at - 1]);
    match rest[0] {
        b'"' => Some(string_end(bytes, at + 1)),
        b'\'' => char_literal_end(bytes, at),
        b'r' if starts_token => raw_string_end(bytes, at + 1),
        b'b' | b'c' if starts_token && rest.get(1) == Some(&b'r') => raw_string_end(bytes, at + 2),
        _ => None,
    }
}

/// The end of a block comment starting at `at`; block comments nest.
fn block_comment_end(bytes: &[u8], at: usize) -> usize {
    let mut depth = 0;
    let mut i = at;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
        } else if bytes[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    bytes.len()
}

/// The end of a string whose text starts at `from` (after the opening `"`), escapes skipped.
fn string_end(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The end of a char literal starting at `at` (`'{'`, `'\''`, `'\u{7b}'`), or `None` for a
/// lifetime or label (`'a`, `'static`).
fn char_literal_end(bytes: &[u8], at: usize) -> Option<usize> {
    let next = *bytes.get(at + 1)?;
    if next == b'\\' {
        // The escaped byte may itself be a quote; the literal closes at the next one after it.
        return find(bytes, at + 3, b"'").map(|close| close + 1);
    }
    let width = match next {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    (bytes.get(at + 1 + width) == Some(&b'\'')).then_some(at + 2 + width)
}

/// The end of a raw string whose `#`s (maybe none) start at `from`, right after its `r`;
/// `None` when no `"` follows them (a raw identifier such as `r#type`, or a plain word).
fn raw_string_end(bytes: &[u8], from: usize) -> Option<usize> {
    let hashes = bytes[from..].iter().take_while(|byte| **byte == b'#').count();
    if bytes.get(from + hashes) != Some(&b'"') {
        return None;
    }
    let mut close = b"\"".to_vec();
    close.extend(std::iter::repeat_n(b'#', hashes));
    let end = find(bytes, from + hashes + 1, &close).map_or(bytes.len(), |at| at + close.len());
    Some(end)
}

/// The first position at or after `from` where `needle` starts.
fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|at| from + at)
}

/// Whether `byte` may be part of an identifier.
fn is_ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

// ---------------------------------------------------------------------------------------------
// Leaving test code out

/// The attribute that marks test-only items.
const TEST_ATTRIBUTE: &str = "#[cfg(test)]";

/// The production code of every file: masked ([`mask`]), each `#[cfg(test)]` item blanked
/// ([`without_test_items`]), and the files of test modules declared as `mod name;` left out
/// with everything under them.
fn production(sources: &Sources) -> Sources {
    let mut code = Sources::new();
    let mut test_modules = Vec::new();
    for (path, text) in sources {
        let (kept, declared) = without_test_items(&mask(text));
        let dir = child_dir(path);
        test_modules.extend(declared.into_iter().map(|name| format!("{dir}{name}")));
        code.insert(path.clone(), kept);
    }
    code.retain(|path, _| {
        !test_modules
            .iter()
            .any(|module| *path == format!("{module}.rs") || path.starts_with(&format!("{module}/")))
    });
    code
}

/// Where the files of the modules that `path` declares live: `score/mod.rs` -> `score/`,
/// `gate/verdict.rs` -> `gate/verdict/`, `lib.rs` -> ``.
fn child_dir(path: &str) -> String {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let dir = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    match file {
        "mod.rs" | "lib.rs" | "main.rs" => dir,
        _ => format!("{dir}{}/", file.trim_end_matches(".rs")),
    }
}

/// Masked `code` with each item after a `#[cfg(test)]` blanked (lines kept), and the names
/// of the test modules it declares without a body (`#[cfg(test)] mod tests;`).
fn without_test_items(code: &str) -> (String, Vec<String>) {
    let bytes = code.as_bytes();
    let mut out = bytes.to_vec();
    let mut declared = Vec::new();
    let mut from = 0;
    while let Some(start) = find(bytes, from, TEST_ATTRIBUTE.as_bytes()) {
        let (end, module) = test_item_end(bytes, start + TEST_ATTRIBUTE.len());
        blank(&mut out[start..end]);
        declared.extend(module);
        from = end;
    }
    let kept = String::from_utf8(out).expect("only whole items are blanked");
    (kept, declared)
}

/// The end of the item that starts at `from` (its further attributes first), and its name
/// when it is a module declared without a body.
fn test_item_end(bytes: &[u8], from: usize) -> (usize, Option<String>) {
    let mut at = skip_space(bytes, from);
    while bytes.get(at) == Some(&b'#') {
        let open = skip_space(bytes, at + 1);
        at = skip_space(bytes, close_of(bytes, open));
    }
    let words = leading_words(bytes, at);
    let keyword = words
        .iter()
        .find(|word| !matches!(word.as_str(), "pub" | "crate" | "super" | "in"))
        .map(String::as_str);
    // Items that end at their `;` even after braces: `use a::{b, c};`, `const X: S = S {};`.
    let ends_at_semicolon = matches!(keyword, Some("use" | "static" | "type" | "let"))
        || (keyword == Some("const") && !words.iter().any(|word| word == "fn"));
    let end = item_end(bytes, at, !ends_at_semicolon);
    let module = (keyword == Some("mod") && bytes[..end].ends_with(b";"))
        .then(|| words.iter().skip_while(|word| *word != "mod").nth(1).cloned())
        .flatten();
    (end, module)
}

/// The words (identifiers) at `at`, up to the first other token but a visibility's `(...)`:
/// `pub(crate) async fn name(` -> `pub`, `crate`, `async`, `fn`, `name`.
fn leading_words(bytes: &[u8], mut at: usize) -> Vec<String> {
    let mut words = Vec::new();
    loop {
        at = skip_space(bytes, at);
        let len = bytes[at..].iter().take_while(|byte| is_ident_byte(**byte)).count();
        if len > 0 {
            words.push(String::from_utf8_lossy(&bytes[at..at + len]).into_owned());
            at += len;
        } else if bytes.get(at) == Some(&b'(') && words.last().is_some_and(|word| word == "pub") {
            at += 1;
        } else if bytes.get(at) == Some(&b')') && words.first().is_some_and(|word| word == "pub") {
            at += 1;
        } else {
            return words;
        }
    }
}

/// The end of the item starting at `at`: just after its `;` at nesting depth 0, or, when
/// `body_ends`, just after the `}` that closes its body, whichever comes first. A bracket that
/// closes the enclosing block ends it too (at that bracket).
fn item_end(bytes: &[u8], at: usize, body_ends: bool) -> usize {
    let mut depth = 0_i32;
    for (i, byte) in bytes.iter().enumerate().skip(at) {
        match byte {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth < 0 {
                    return i;
                }
                if depth == 0 && *byte == b'}' && body_ends {
                    return i + 1;
                }
            }
            b';' if depth == 0 => return i + 1,
            _ => {}
        }
    }
    bytes.len()
}

/// Just after the bracket that closes the one at `open` (masked code: brackets balance).
fn close_of(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0_i32;
    for (i, byte) in bytes.iter().enumerate().skip(open) {
        match byte {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    bytes.len()
}

/// The first position at or after `at` that is not whitespace.
fn skip_space(bytes: &[u8], at: usize) -> usize {
    at + bytes
        .get(at..)
        .unwrap_or_default()
        .iter()
        .take_while(|byte| byte.is_ascii_whitespace())
        .count()
}

// ---------------------------------------------------------------------------------------------
// The module graph

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

/// The module graph of the production code of `sources`.
fn module_graph(sources: &Sources) -> Graph {
    let mut graph = Graph::new();
    for (relative, code) in production(sources) {
        let module = module_of(&relative);
        let uses: Vec<String> = crate_uses(&code)
            .into_iter()
            .filter(|used| *used != module)
            .collect();
        graph.entry(module).or_default().extend(uses);
    }
    graph
}

// ---------------------------------------------------------------------------------------------
// The rules

/// Each use of a module that `allowed` does not permit (and that is not in `neutral`), as
/// `module -> used`; modules missing from `allowed` are not checked.
fn direct_violations(graph: &Graph, allowed: &[(&str, &[&str])], neutral: &[&str]) -> Vec<String> {
    let allowed: BTreeMap<&str, &[&str]> = allowed.iter().copied().collect();
    let mut violations = Vec::new();
    for (module, uses) in graph {
        let Some(permitted) = allowed.get(module.as_str()) else {
            continue;
        };
        for used in uses {
            if !permitted.contains(&used.as_str()) && !neutral.contains(&used.as_str()) {
                violations.push(format!("{module} -> {used}"));
            }
        }
    }
    violations
}

/// An import cycle, as the path that closes it (`a`, `b`, `a`), if the graph has one.
fn cycle(graph: &Graph) -> Option<Vec<String>> {
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|module| back_edge(module, graph, &mut Vec::new(), &mut done))
}

/// Depth-first search from `node` for a back edge; the path shows the cycle.
fn back_edge(
    node: &str,
    graph: &Graph,
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
        if let Some(cycle) = back_edge(next, graph, path, done) {
            return Some(cycle);
        }
    }
    path.pop();
    done.insert(node.to_owned());
    None
}

/// Each third-party crate named outside its corner, as `crate in src/path`.
fn corner_strays(code: &Sources) -> Vec<String> {
    let mut strays = Vec::new();
    for (relative, code) in code {
        for (krate, corner) in CORNERS {
            let names_it =
                code.contains(&format!("{krate}::")) || code.contains(&format!("use {krate}"));
            if names_it && !corner.iter().any(|prefix| relative.starts_with(prefix)) {
                strays.push(format!("{krate} in src/{relative}"));
            }
        }
    }
    strays
}

#[test]
fn modules_use_only_what_the_data_flow_allows() {
    let graph = module_graph(&real_sources());
    assert_eq!(
        direct_violations(&graph, &ALLOWED, &NEUTRAL),
        Vec::<String>::new()
    );
}

#[test]
fn no_import_cycle_between_modules() {
    let graph = module_graph(&real_sources());
    assert_eq!(cycle(&graph), None, "an import cycle between modules");
}

#[test]
fn each_third_party_crate_stays_in_its_corner() {
    assert_eq!(
        corner_strays(&production(&real_sources())),
        Vec::<String>::new()
    );
}

/// `unsafe_code` is denied crate-wide; the one exception is the `pre_exec` that sets the
/// parent-death signal of child processes.
#[test]
fn unsafe_code_is_allowed_in_one_place_only() {
    let allowed: Vec<String> = real_sources()
        .iter()
        .filter_map(|(path, text)| {
            let count = text.matches("allow(unsafe_code)").count();
            (count > 0).then(|| format!("{path} x{count}"))
        })
        .collect();
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
    let graph = module_graph(&real_sources());
    assert!(graph["runner"].contains("harness"), "{graph:?}");
    assert!(
        !graph["score"].contains("harness"),
        "score's tests use the harness"
    );
}

/// Planted sources: path under `src/` -> text.
fn planted(files: &[(&str, &str)]) -> Sources {
    files
        .iter()
        .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
        .collect()
}

#[test]
fn masking_blanks_comments_and_literals_and_keeps_lines() {
    let text = "let a = \"{ crate::x }\"; // crate::y {\n\
                let b = '{'; let c = '\\''; let d = b'}';\n\
                fn f<'a>(s: &'a str) -> &'a str { s }\n\
                let e = r#\"}\" crate::z\"#; /* { /* } */ crate::w */ let g = br\"{\";\n\
                let h = r#type;";
    let masked = mask(text);
    assert_eq!(masked.lines().count(), text.lines().count());
    assert_eq!(masked.len(), text.len());
    assert!(!masked.contains("crate::"), "{masked}");
    let braces: String = masked.chars().filter(|c| "{}".contains(*c)).collect();
    assert_eq!(braces, "{}", "only fn f's body is code: {masked}");
    assert!(masked.contains("fn f<'a>(s: &'a str) -> &'a str { s }"), "{masked}");
    assert!(masked.contains("let h = r#type;"), "{masked}");
}

#[test]
fn production_code_after_a_test_module_is_checked() {
    let sources = planted(&[
        (
            "score.rs",
            "use crate::trace::CallRecord;\n\
             #[cfg(test)]\n\
             mod tests {\n    use crate::harness::Harness;\n    fn inner() { if true { } }\n}\n\
             pub fn after() { crate::runner::run(); }\n",
        ),
        ("trace.rs", ""),
        ("harness/mod.rs", ""),
        ("runner.rs", ""),
    ]);
    let graph = module_graph(&sources);
    assert_eq!(
        graph["score"],
        BTreeSet::from(["runner".to_owned(), "trace".to_owned()])
    );
}

#[test]
fn a_brace_in_a_test_modules_string_does_not_end_the_skip() {
    let sources = planted(&[
        (
            "score.rs",
            "#[cfg(test)]\n\
             mod tests {\n    const OPEN: &str = \"}\";\n    const CLOSE: char = '}';\n    \
             // } a brace in a comment\n    const RAW: &str = r#\"}\"#;\n    \
             use crate::harness::Harness;\n}\n\
             fn after() { crate::trace::x(); }\n",
        ),
        ("trace.rs", ""),
        ("harness/mod.rs", ""),
    ]);
    let graph = module_graph(&sources);
    assert_eq!(graph["score"], BTreeSet::from(["trace".to_owned()]));
}

#[test]
fn single_test_items_and_test_module_files_are_left_out() {
    let sources = planted(&[
        (
            "score/mod.rs",
            "#[cfg(test)]\nmod tests;\n\
             #[cfg(test)]\n#[allow(dead_code)]\npub(crate) fn helper(a: [u8; 2]) { crate::harness::x(); }\n\
             #[cfg(test)]\nuse crate::runner::{a, b};\n\
             pub fn kept() { crate::trace::x(); }\n",
        ),
        ("score/tests.rs", "use crate::agent::Agent;"),
        ("score/tests/deep.rs", "use crate::agent::Agent;"),
        ("score/tests_not.rs", "use crate::judge::Judge;"),
        ("trace.rs", ""),
        ("harness/mod.rs", ""),
        ("runner.rs", ""),
        ("agent/mod.rs", ""),
        ("judge/mod.rs", ""),
    ]);
    let code = production(&sources);
    assert_eq!(
        code.keys().collect::<Vec<_>>(),
        [
            "agent/mod.rs",
            "harness/mod.rs",
            "judge/mod.rs",
            "runner.rs",
            "score/mod.rs",
            "score/tests_not.rs",
            "trace.rs"
        ]
    );
    let graph = module_graph(&sources);
    assert_eq!(
        graph["score"],
        BTreeSet::from(["judge".to_owned(), "trace".to_owned()])
    );
    assert_eq!(child_dir("gate/verdict.rs"), "gate/verdict/");
    assert_eq!(child_dir("lib.rs"), "");
}
