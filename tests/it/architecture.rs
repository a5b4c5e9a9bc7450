//! The crate's shape, checked from its source:
//! - which top-level module may use which ([`ALLOWED`]; the [`NEUTRAL`] helpers use only each
//!   other, and only the [`GLUE`] is unchecked), and that the table in docs/architecture.md
//!   says the same;
//! - which modules a module must never reach, not even through others
//!   ([`FORBIDDEN_REACHES`], on the transitive closure of the module graph);
//! - no import cycle between modules;
//! - each third-party crate in its one corner ([`CORNERS`]), and `unsafe` allowed in one place;
//! - no function longer than [`MAX_FN_LINES`] lines but the [`KNOWN_LONG`] ones.
//!
//! A use is a `crate::` or `super::` path, use trees expanded. It reaches the module it names
//! and, through `pub use` re-exports, the module where its item lives: `crate::run_cli`
//! reaches `commands`.
//!
//! Only production code counts. Comments and the insides of string, char and byte literals
//! are blanked first; then each item marked `#[cfg(test)]` (a `mod tests { ... }`, a
//! function, a `use`) is left out, and so is the file of a `#[cfg(test)] mod tests;` with
//! everything under it. Code after a test module is checked like any other.
//!
//! The checker reads a map from a path under `src/` to the file's text, so its own tests
//! (at the end) plant small sources and assert what it reports.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use crate::support::repo;

/// Modules every layer may use: plain helpers that use only each other.
const NEUTRAL: [&str; 11] = [
    "json", "values", "calendar", "arith", "prose", "fs", "defaults", "exit", "tls", "redact",
    "process",
];

/// The glue that may use anything: the command implementations, the crate root and the
/// binary. Every other module is in [`NEUTRAL`] or [`ALLOWED`].
const GLUE: [&str; 3] = ["commands", "lib", "main"];

/// What each top-level module may use besides [`NEUTRAL`], in the order of the data flow.
const ALLOWED: &[(&str, &[&str])] = &[
    ("catalog", &[]),
    ("scenario", &["catalog"]),
    ("suite", &[]),
    ("world", &[]),
    ("trace", &["scenario"]),
    (
        "harness",
        &["scenario", "trace", "world", "catalog", "suite"],
    ),
    ("provider", &[]),
    ("agent", &["scenario", "trace", "provider"]),
    ("judge", &["scenario", "trace", "provider"]),
    ("ingest", &["trace"]),
    ("score", &["scenario", "trace", "catalog"]),
    ("plan", &["catalog", "harness", "mock", "scenario", "suite"]),
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
    ("gate", &["results", "scenario", "score"]),
    ("report", &["results", "score", "gate", "trace", "catalog"]),
    ("github", &["report"]),
    ("lint", &["catalog", "harness", "judge", "suite"]),
    ("mock", &["catalog", "harness", "scenario"]),
    (
        "verify",
        &["catalog", "harness", "runner", "scenario", "score", "trace"],
    ),
    // The command line (clap derive) names the option types it parses.
    (
        "cli",
        &["agent", "lint", "provider", "results", "runner", "score"],
    ),
    // `toolgate.yaml` fills in what the command line leaves out.
    // The validated settings build the run's products: agent, judge, options, pins subject.
    (
        "config",
        &[
            "agent", "cli", "judge", "provider", "results", "runner", "score", "suite",
        ],
    ),
];

/// Modules a module must never reach, not even through others: checked on the transitive
/// closure of the module graph (and of [`ALLOWED`], so the table cannot permit it either).
/// Data flows one way, and the pure layers never reach one that does I/O.
const FORBIDDEN_REACHES: &[(&str, &[&str])] = &[
    // The file formats are data: they run nothing and know nothing of a later stage.
    ("scenario", RUNS_OR_LATER),
    ("trace", RUNS_OR_LATER),
    // Scoring is pure and deterministic: no I/O, no judge, no mock state, no later stage.
    (
        "score",
        &[
            "harness", "agent", "runner", "provider", "judge", "world", "mock", "results", "gate",
            "report", "github",
        ],
    ),
    // The harness and the agents produce the trace; neither sees how it is scored or gated.
    (
        "harness",
        &[
            "agent", "runner", "score", "results", "gate", "report", "github",
        ],
    ),
    (
        "agent",
        &[
            "harness", "runner", "score", "results", "gate", "report", "github",
        ],
    ),
    // The run report, the verdict and the renderers never deliver, mock, or look ahead.
    ("results", &["gate", "report", "github", "mock"]),
    ("gate", &["report", "github", "mock"]),
    ("report", &["github", "mock"]),
    // Importers of production traces only parse.
    (
        "ingest",
        &["harness", "agent", "runner", "provider", "judge"],
    ),
];

/// What the file formats (`scenario`, `trace`) must not reach.
const RUNS_OR_LATER: &[&str] = &[
    "harness", "agent", "runner", "provider", "judge", "score", "results", "gate", "report",
    "github",
];

/// Direct uses against [`ALLOWED`] that exist today and await a decision: allow the use (in
/// [`ALLOWED`] and docs/architecture.md) or remove it. The test requires this list to be exactly
/// today's violations, so an entry goes once its use does.
const KNOWN_VIOLATIONS: &[&str] = &[];

/// The most lines a function in production code may span, from the line with `fn` to the
/// line with its closing brace: most functions fit on a screen.
const MAX_FN_LINES: usize = 120;

/// Functions longer than [`MAX_FN_LINES`] today, as `path::fn` (path under `src/`), allowed
/// for now while they are split. The test requires this list to be exactly today's long
/// functions, so an entry goes once its function is short.
const KNOWN_LONG: &[&str] = &[];

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
/// or a `crate::` left over is always code. A string that holds nothing but a path is kept:
/// derives read it as code (`#[schemars(with = "Option<crate::suite::ServersSchema>")]`).
fn mask(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut at = 0;
    while at < bytes.len() {
        match literal_or_comment_end(bytes, at) {
            Some(end) if is_path_string(&bytes[at..end]) => at = end,
            Some(end) => {
                blank(&mut out[at..end]);
                at = end;
            }
            None => at += 1,
        }
    }
    String::from_utf8(out).expect("only whole literals and comments are blanked")
}

/// Whether `literal` is a plain string of a type or path in this crate: only words, `::`,
/// `<`, `>`, `,`, `&` and spaces, and a `crate::` or `super::` among them.
fn is_path_string(literal: &[u8]) -> bool {
    let Some(text) = literal
        .strip_prefix(b"\"")
        .and_then(|rest| rest.strip_suffix(b"\""))
    else {
        return false;
    };
    let names_crate = find(text, 0, b"crate::").is_some() || find(text, 0, b"super::").is_some();
    names_crate
        && text
            .iter()
            .all(|byte| is_ident_byte(*byte) || b":<>,& ".contains(byte))
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
    let hashes = bytes[from..]
        .iter()
        .take_while(|byte| **byte == b'#')
        .count();
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
        !test_modules.iter().any(|module| {
            *path == format!("{module}.rs") || path.starts_with(&format!("{module}/"))
        })
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
    let keyword = words.iter().find(|word| *word != "pub").map(String::as_str);
    // Items that end at their `;` even after braces: `use a::{b, c};`, `const X: S = S {};`.
    let ends_at_semicolon = matches!(keyword, Some("use" | "static" | "type" | "let"))
        || (keyword == Some("const") && !words.iter().any(|word| word == "fn"));
    let end = item_end(bytes, at, !ends_at_semicolon);
    let module = (keyword == Some("mod") && bytes[..end].ends_with(b";"))
        .then(|| {
            words
                .iter()
                .skip_while(|word| *word != "mod")
                .nth(1)
                .cloned()
        })
        .flatten();
    (end, module)
}

/// The words (identifiers and keywords) at `at`, up to the first other token; a visibility's
/// parentheses are skipped: `pub(crate) async fn name(` -> `pub`, `async`, `fn`, `name`.
fn leading_words(bytes: &[u8], mut at: usize) -> Vec<String> {
    let mut words = Vec::new();
    loop {
        at = skip_space(bytes, at);
        if let Some(word) = word_at(bytes, at) {
            words.push(word.to_owned());
            at += word.len();
        } else if bytes.get(at) == Some(&b'(') && words == ["pub"] {
            at = close_of(bytes, at);
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

/// A path from the crate root: `crate::score::metrics::Check` -> `score`, `metrics`, `Check`.
type ItemPath = Vec<String>;

/// Each name a `pub use` makes -> the path it stands for: `agent::CallNote` -> `trace::CallNote`
/// (`pub use crate::trace::CallNote;` in `agent/mod.rs`), `run_cli` -> `commands::run_cli`.
type Reexports = BTreeMap<ItemPath, ItemPath>;

/// The module path of a file: `score/metrics/mod.rs` -> `score`, `metrics`; `lib.rs` -> none.
fn module_path(relative: &str) -> ItemPath {
    let without = relative.trim_end_matches(".rs");
    let mut path: ItemPath = without.split('/').map(str::to_owned).collect();
    if matches!(path.last().map(String::as_str), Some("mod" | "lib")) {
        path.pop();
    }
    path
}

/// Every path in `code` that starts at the crate root or climbs to it (`crate::`, `super::`),
/// use trees expanded, from the crate root; `at` is the module the code is in.
fn crate_paths(code: &str, at: &[String]) -> Vec<ItemPath> {
    let bytes = code.as_bytes();
    let mut paths = Vec::new();
    for start in word_starts(bytes) {
        let word = word_at(bytes, start).unwrap_or_default();
        let next = skip_space(bytes, start + word.len());
        let inside_a_path = bytes[..start].trim_ascii_end().ends_with(b"::");
        if !matches!(word, "crate" | "super") || !bytes[next..].starts_with(b"::") || inside_a_path
        {
            continue;
        }
        let mut leaves = Vec::new();
        use_tree(bytes, start, Vec::new(), &mut leaves);
        paths.extend(leaves.iter().filter_map(|(path, _)| absolute(at, path)));
    }
    paths
}

/// Every `pub use` in `code` (any visibility: `pub(crate) use` too), written in module `at`.
/// Globs (`pub use x::*`) and `as _` make no name and are not mapped.
fn reexports_in(code: &str, at: &[String]) -> Reexports {
    let bytes = code.as_bytes();
    let mut reexports = Reexports::new();
    for start in word_starts(bytes) {
        if word_at(bytes, start) != Some("pub") {
            continue;
        }
        let mut next = skip_space(bytes, start + "pub".len());
        if bytes.get(next) == Some(&b'(') {
            next = skip_space(bytes, close_of(bytes, next));
        }
        if word_at(bytes, next) != Some("use") {
            continue;
        }
        let mut leaves = Vec::new();
        use_tree(bytes, next + "use".len(), Vec::new(), &mut leaves);
        for (path, alias) in leaves {
            let name = alias.or_else(|| path.last().cloned()).unwrap_or_default();
            let Some(target) = absolute(at, &path) else {
                continue;
            };
            if !matches!(name.as_str(), "*" | "_" | "" | "self") {
                reexports.insert([at, &[name]].concat(), target);
            }
        }
    }
    reexports
}

/// The positions in `bytes` where a word (an identifier or keyword) starts.
fn word_starts(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    (0..bytes.len())
        .filter(|at| is_ident_byte(bytes[*at]) && (*at == 0 || !is_ident_byte(bytes[*at - 1])))
}

/// The identifier or keyword at `at` (after spaces), if one starts there.
fn word_at(bytes: &[u8], at: usize) -> Option<&str> {
    let at = skip_space(bytes, at);
    let len = bytes
        .get(at..)?
        .iter()
        .take_while(|byte| is_ident_byte(**byte))
        .count();
    let word = std::str::from_utf8(&bytes[at..at + len]).ok()?;
    (len > 0 && !word.as_bytes()[0].is_ascii_digit()).then_some(word)
}

/// Appends the leaves of the use tree or plain path at `at` to `out`, each after `prefix` and
/// with its alias (`as name`, or `*` for a glob): `a::{b as c, d::{self, e}}` -> `a::b` (`c`),
/// `a::d`, `a::d::e`. A path in an expression (`crate::trace::run(`, `crate::x::f::<T>`) is a
/// single leaf. Returns where the tree ends.
fn use_tree(
    bytes: &[u8],
    at: usize,
    prefix: ItemPath,
    out: &mut Vec<(ItemPath, Option<String>)>,
) -> usize {
    let mut path = prefix;
    let mut at = skip_space(bytes, at);
    loop {
        if bytes.get(at) == Some(&b'{') {
            return use_group(bytes, at + 1, &path, out);
        }
        if bytes.get(at) == Some(&b'*') {
            out.push((path, Some("*".to_owned())));
            return at + 1;
        }
        let Some(word) = word_at(bytes, at) else {
            out.push((path, None));
            return at;
        };
        at = skip_space(bytes, at) + word.len();
        if word != "self" || path.is_empty() {
            path.push(word.to_owned());
        }
        let next = skip_space(bytes, at);
        if bytes[next..].starts_with(b"::") {
            at = skip_space(bytes, next + 2);
            continue;
        }
        if word_at(bytes, next) == Some("as") {
            let alias = word_at(bytes, next + 2).map(str::to_owned);
            out.push((path, alias.clone()));
            return skip_space(bytes, next + 2) + alias.map_or(0, |alias| alias.len());
        }
        out.push((path, None));
        return at;
    }
}

/// The trees of a `{ ... }` group whose first tree starts at `at`, each after `prefix`;
/// returns just after the closing brace.
fn use_group(
    bytes: &[u8],
    mut at: usize,
    prefix: &ItemPath,
    out: &mut Vec<(ItemPath, Option<String>)>,
) -> usize {
    loop {
        at = skip_space(bytes, at);
        match bytes.get(at) {
            None => return at,
            Some(b'}') => return at + 1,
            Some(b',') => at += 1,
            Some(_) => {
                let end = use_tree(bytes, at, prefix.clone(), out);
                if end == at {
                    return at;
                }
                at = end;
            }
        }
    }
}

/// `path`, written in module `at`, from the crate root: `crate::` drops, each `super::` climbs
/// one module, `self::` stays, any other first word is a child of `at` (or an external crate,
/// which then matches no module). `None` for a `super` above the root.
fn absolute(at: &[String], path: &[String]) -> Option<ItemPath> {
    match path.first()?.as_str() {
        "crate" => Some(path[1..].to_vec()),
        "self" => Some([at, &path[1..]].concat()),
        "super" => {
            let climbs = path.iter().take_while(|word| *word == "super").count();
            let base = at.len().checked_sub(climbs)?;
            Some([&at[..base], &path[climbs..]].concat())
        }
        _ => Some([at, path].concat()),
    }
}

/// Where the item at `path` really lives: the longest prefix that a `pub use` made is replaced
/// by the path it stands for, again until none applies.
fn resolve(path: &[String], reexports: &Reexports) -> ItemPath {
    let mut path = path.to_vec();
    // A re-export chain is short; the bound only stops a cycle, which rustc would reject.
    for _ in 0..16 {
        let Some(len) = (1..=path.len())
            .rev()
            .find(|len| reexports.contains_key(&path[..*len]))
        else {
            break;
        };
        let mut target = reexports[&path[..len]].clone();
        target.extend_from_slice(&path[len..]);
        path = target;
    }
    path
}

/// The module graph of the production code of `sources`. A path reaches the module it names
/// and the module where its item really lives ([`resolve`]): `crate::agent::CallNote` reaches
/// `agent` and `trace`, `crate::run_cli` reaches `commands`. `main.rs` is its own crate and
/// names the library as `toolgate::`; it is glue and has no edges.
fn module_graph(sources: &Sources) -> Graph {
    let code = production(sources);
    let modules: BTreeSet<String> = code
        .keys()
        .map(|relative| module_of(relative))
        .filter(|module| !matches!(module.as_str(), "lib" | "main"))
        .collect();
    let reexports: Reexports = code
        .iter()
        .flat_map(|(relative, code)| reexports_in(code, &module_path(relative)))
        .collect();
    let mut graph = Graph::new();
    for (relative, code) in &code {
        let module = module_of(relative);
        let uses = graph.entry(module.clone()).or_default();
        if relative == "main.rs" {
            continue;
        }
        for path in crate_paths(code, &module_path(relative)) {
            let home = resolve(&path, &reexports);
            for used in [path.first(), home.first()].into_iter().flatten() {
                if *used != module && modules.contains(used) {
                    uses.insert(used.clone());
                }
            }
        }
    }
    graph
}

// ---------------------------------------------------------------------------------------------
// Function length

/// Each function with a body in masked `code`: its name and the lines it spans, from the line
/// with `fn` to the line with its closing brace. A nested function is counted on its own
/// too; a declaration without a body (`fn f();`) and a pointer type (`fn(u8)`) are none.
fn function_lengths(code: &str) -> Vec<(String, usize)> {
    let bytes = code.as_bytes();
    let mut functions = Vec::new();
    for start in word_starts(bytes) {
        if word_at(bytes, start) != Some("fn") {
            continue;
        }
        let Some(name) = word_at(bytes, start + "fn".len()) else {
            continue;
        };
        let Some(open) = body_start(bytes, start) else {
            continue;
        };
        let close = close_of(bytes, open);
        let lines = 1 + bytes[start..close]
            .iter()
            .filter(|byte| **byte == b'\n')
            .count();
        functions.push((name.to_owned(), lines));
    }
    functions
}

/// Where the body of the function whose `fn` is at `at` opens: the first `{` outside
/// parentheses and brackets, unless a `;` comes first (no body).
fn body_start(bytes: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0_i32;
    for (i, byte) in bytes.iter().enumerate().skip(at) {
        match byte {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'{' if depth == 0 => return Some(i),
            b';' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// Each function in the production code longer than `max` lines, as `path::fn`, sorted.
fn long_functions(code: &Sources, max: usize) -> Vec<String> {
    let mut long = Vec::new();
    for (path, code) in code {
        for (name, lines) in function_lengths(code) {
            if lines > max {
                long.push(format!("{path}::{name}"));
            }
        }
    }
    long.sort();
    long
}

// ---------------------------------------------------------------------------------------------
// The documented table

/// The `| module | owns | may use |` table in `markdown`: each module (`` `scenario/` ``,
/// `` `trace.rs` `` -> `scenario`, `trace`) -> the modules its "may use" cell lists (backticked
/// names separated by commas, or `-` for none). An error names a cell that is neither.
fn documented_uses(markdown: &str) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let mut lines = markdown.lines();
    lines
        .by_ref()
        .find(|line| table_cells(line) == ["module", "owns", "may use"])
        .ok_or("no `| module | owns | may use |` table")?;
    let rows = lines.skip(1).take_while(|line| line.starts_with('|'));
    let mut table = BTreeMap::new();
    for row in rows {
        let cells = table_cells(row);
        let (Some(module), Some(uses)) = (cells.first(), cells.last()) else {
            continue;
        };
        let module = backticked(module)
            .ok_or(format!("a module cell is not one backticked name: {row}"))?
            .trim_end_matches('/')
            .trim_end_matches(".rs")
            .to_owned();
        let uses = if *uses == "-" {
            BTreeSet::new()
        } else {
            uses.split(',')
                .map(|used| backticked(used).map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or(format!(
                    "the may-use cell of `{module}` is not a list of modules: {row}"
                ))?
        };
        table.insert(module, uses);
    }
    Ok(table)
}

/// The trimmed cells of a Markdown table row.
fn table_cells(row: &str) -> Vec<&str> {
    let inner = row.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(str::trim).collect()
}

/// The name inside one code span that is all of `cell`: `` `score` `` -> `score`.
fn backticked(cell: &str) -> Option<&str> {
    let name = cell.trim().strip_prefix('`')?.strip_suffix('`')?;
    (!name.is_empty() && !name.contains('`')).then_some(name)
}

// ---------------------------------------------------------------------------------------------
// The rules

/// Each use of a module that `allowed` does not permit (and that is not in `neutral`), as
/// `module -> used`. A module in `neutral` may use only `neutral` ones; modules in neither
/// (the glue) are not checked.
fn direct_violations(graph: &Graph, allowed: &[(&str, &[&str])], neutral: &[&str]) -> Vec<String> {
    let mut allowed: BTreeMap<&str, &[&str]> = allowed.iter().copied().collect();
    allowed.extend(neutral.iter().map(|module| (*module, &[] as &[&str])));
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

/// Each reach that `forbidden` rules out, as the shortest path of uses that makes it
/// (`gate -> results -> runner -> harness`).
fn reach_violations(graph: &Graph, forbidden: &[(&str, &[&str])]) -> Vec<String> {
    let mut violations = Vec::new();
    for (module, banned) in forbidden {
        for target in *banned {
            if let Some(path) = path_between(graph, module, target) {
                violations.push(path.join(" -> "));
            }
        }
    }
    violations
}

/// The shortest path of uses from `from` to `to`, both ends included, if `from` reaches `to`
/// (breadth-first search).
fn path_between(graph: &Graph, from: &str, to: &str) -> Option<Vec<String>> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([from]);
    while let Some(node) = queue.pop_front() {
        for next in graph.get(node).into_iter().flatten() {
            if next == from || came_from.contains_key(next.as_str()) {
                continue;
            }
            came_from.insert(next, node);
            queue.push_back(next);
        }
        if came_from.contains_key(to) {
            break;
        }
    }
    let mut path = vec![to.to_owned()];
    while path.last().map(String::as_str) != Some(from) {
        let previous = came_from.get(path.last()?.as_str())?;
        path.push((*previous).to_owned());
    }
    path.reverse();
    Some(path)
}

/// The graph that `allowed` permits at most: each module -> what it may use.
fn allowed_graph(allowed: &[(&str, &[&str])]) -> Graph {
    allowed
        .iter()
        .map(|(module, uses)| {
            let uses = uses.iter().map(|used| (*used).to_owned()).collect();
            ((*module).to_owned(), uses)
        })
        .collect()
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

// ---------------------------------------------------------------------------------------------
// The checks on src/

#[test]
fn modules_use_only_what_the_data_flow_allows() {
    let graph = module_graph(&real_sources());
    assert_eq!(
        direct_violations(&graph, ALLOWED, &NEUTRAL),
        KNOWN_VIOLATIONS,
        "uses against ALLOWED (left) other than the known ones (right): remove the use, or \
         allow it in ALLOWED and docs/architecture.md; a known one that is gone leaves the list"
    );
}

#[test]
fn no_module_reaches_what_the_data_flow_forbids() {
    let graph = module_graph(&real_sources());
    assert_eq!(
        reach_violations(&graph, FORBIDDEN_REACHES),
        Vec::<String>::new()
    );
}

#[test]
fn the_allowed_table_permits_no_forbidden_reach() {
    assert_eq!(
        reach_violations(&allowed_graph(ALLOWED), FORBIDDEN_REACHES),
        Vec::<String>::new()
    );
}

#[test]
fn the_tables_name_only_real_modules() {
    let graph = module_graph(&real_sources());
    let named = ALLOWED
        .iter()
        .chain(FORBIDDEN_REACHES)
        .flat_map(|(module, uses)| std::iter::once(module).chain(uses.iter()))
        .chain(NEUTRAL.iter())
        .chain(GLUE.iter());
    let unknown: BTreeSet<&str> = named
        .copied()
        .filter(|module| !graph.contains_key(*module))
        .collect();
    assert_eq!(unknown, BTreeSet::new());
}

#[test]
fn the_documented_table_says_what_allowed_says() {
    let markdown = std::fs::read_to_string(repo().join("docs/architecture.md"))
        .expect("docs/architecture.md is readable");
    let documented = documented_uses(&markdown).expect("the table parses");
    let allowed = allowed_graph(ALLOWED);
    let mismatches: Vec<String> = documented
        .iter()
        .filter(|(module, uses)| allowed.get(*module) != Some(uses))
        .map(|(module, uses)| {
            format!(
                "{module}: the docs say {uses:?}, ALLOWED says {:?}",
                allowed.get(module)
            )
        })
        .collect();
    assert_eq!(mismatches, Vec::<String>::new());
    // The docs call cli.rs and config.rs glue, in the prose under the table.
    let undocumented: Vec<&str> = ALLOWED
        .iter()
        .map(|(module, _)| *module)
        .filter(|module| !documented.contains_key(*module))
        .collect();
    assert_eq!(undocumented, ["cli", "config"]);
}

#[test]
fn every_module_but_the_glue_is_checked() {
    let graph = module_graph(&real_sources());
    let unchecked: Vec<&String> = graph
        .keys()
        .filter(|module| {
            let module = module.as_str();
            !NEUTRAL.contains(&module)
                && !GLUE.contains(&module)
                && !ALLOWED.iter().any(|(name, _)| *name == module)
        })
        .collect();
    assert_eq!(
        unchecked,
        Vec::<&String>::new(),
        "add them to ALLOWED or NEUTRAL"
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

#[test]
fn no_function_is_longer_than_a_screenful_but_the_known_ones() {
    assert_eq!(
        long_functions(&production(&real_sources()), MAX_FN_LINES),
        KNOWN_LONG,
        "functions over MAX_FN_LINES lines (left) other than the known ones (right): split a \
         new one; a known one that is short now leaves KNOWN_LONG"
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

// ---------------------------------------------------------------------------------------------
// The checker itself, on planted sources

#[test]
fn the_checker_sees_uses_and_skips_comments_and_tests() {
    let code = "use crate::score::{Check, metrics::{self, Loop as L}};\n\
                let x = crate::trace::run_record::<A>(&a, &b);\n\
                use super::super::harness::Harness;";
    let at = module_path("score/metrics/loops.rs");
    assert_eq!(at, ["score", "metrics", "loops"]);
    let paths: Vec<String> = crate_paths(code, &at)
        .iter()
        .map(|path| path.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "score::Check",
            "score::metrics",
            "score::metrics::Loop",
            "trace::run_record",
            "score::harness::Harness"
        ]
    );
    assert_eq!(module_of("score/metrics/loops.rs"), "score");
    assert_eq!(module_of("runner.rs"), "runner");
    assert_eq!(module_path("lib.rs"), Vec::<String>::new());
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
    assert!(
        masked.contains("fn f<'a>(s: &'a str) -> &'a str { s }"),
        "{masked}"
    );
    assert!(masked.contains("let h = r#type;"), "{masked}");
    let derive = "#[schemars(with = \"Option<crate::suite::ServersSchema>\")]";
    assert_eq!(mask(derive), derive);
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

#[test]
fn pub_use_lines_map_each_name_to_where_it_lives() {
    let code = "pub use crate::trace::{CallNote, InvalidCallKind as Kind};\n\
                pub(crate) use backend::Backend;\n\
                pub use super::Sibling;\n\
                pub use serde_json::*;\n\
                use crate::private::Hidden;";
    let reexports = reexports_in(code, &module_path("agent/mod.rs"));
    let shown: Vec<String> = reexports
        .iter()
        .map(|(name, path)| format!("{} = {}", name.join("::"), path.join("::")))
        .collect();
    assert_eq!(
        shown,
        [
            "agent::Backend = agent::backend::Backend",
            "agent::CallNote = trace::CallNote",
            "agent::Kind = trace::InvalidCallKind",
            "agent::Sibling = Sibling"
        ]
    );
    let path = |text: &str| -> ItemPath { text.split("::").map(str::to_owned).collect() };
    assert_eq!(
        resolve(&path("agent::Kind::Variant"), &reexports),
        path("trace::InvalidCallKind::Variant")
    );
}

#[test]
fn a_use_through_a_reexport_reaches_where_the_item_lives() {
    let sources = planted(&[
        ("lib.rs", "mod commands;\npub use commands::run_cli;\n"),
        ("commands.rs", "pub fn run_cli() {}"),
        ("report/mod.rs", "use crate::results::ScenarioKind;\n"),
        (
            "results/mod.rs",
            "mod kinds;\npub use kinds::ScenarioKind;\n",
        ),
        (
            "results/kinds.rs",
            "pub(crate) use crate::scenario::{Other, ScenarioKind};\n",
        ),
        ("scenario/mod.rs", "pub enum ScenarioKind {}"),
        ("github/mod.rs", "fn deliver() { crate::run_cli(); }"),
    ]);
    let graph = module_graph(&sources);
    assert_eq!(
        graph["report"],
        BTreeSet::from(["results".to_owned(), "scenario".to_owned()])
    );
    assert_eq!(graph["github"], BTreeSet::from(["commands".to_owned()]));
    let allowed: [(&str, &[&str]); 4] = [
        ("report", &["results"]),
        ("results", &["scenario"]),
        ("scenario", &[]),
        ("github", &["report"]),
    ];
    assert_eq!(
        direct_violations(&graph, &allowed, &[]),
        ["github -> commands", "report -> scenario"]
    );
}

#[test]
fn a_neutral_helper_may_use_only_neutral_helpers_and_glue_anything() {
    let sources = planted(&[
        (
            "json.rs",
            "use crate::calendar::Date;\nuse crate::score::Check;\n",
        ),
        ("calendar.rs", ""),
        ("score/mod.rs", ""),
        (
            "commands.rs",
            "use crate::score::Check;\nuse crate::json::Value;\n",
        ),
    ]);
    let graph = module_graph(&sources);
    assert_eq!(
        direct_violations(&graph, &[("score", &[])], &["json", "calendar"]),
        ["json -> score"]
    );
}

#[test]
fn a_reach_through_another_module_is_a_violation() {
    let sources = planted(&[
        ("score/mod.rs", "use crate::trace::CallRecord;\n"),
        ("trace.rs", "pub fn run() { crate::harness::serve(); }\n"),
        ("harness/mod.rs", "pub fn serve() {}"),
    ]);
    let graph = module_graph(&sources);
    let allowed: [(&str, &[&str]); 3] = [
        ("score", &["trace"]),
        ("trace", &["harness"]),
        ("harness", &[]),
    ];
    assert_eq!(
        direct_violations(&graph, &allowed, &[]),
        Vec::<String>::new()
    );
    assert_eq!(
        reach_violations(&graph, &[("score", &["harness", "agent"])]),
        ["score -> trace -> harness"]
    );
    assert_eq!(
        reach_violations(&allowed_graph(&allowed), &[("score", &["harness"])]),
        ["score -> trace -> harness"]
    );
}

#[test]
fn a_function_is_counted_from_its_fn_line_to_its_closing_brace() {
    let body = |lines: usize| "    let x = 1;\n".repeat(lines);
    let text = format!(
        "pub(crate) async fn at_the_limit(a: [u8; 2]) -> u8 {{\n{}}}\n\
         fn one_over<'a>(\n    s: &'a str,\n) -> &'a str\nwhere\n    'a: 'a,\n{{\n    \
         let brace = \"}}\";\n    let ch = '}}';\n    // }}\n{}}}\n\
         trait T {{\n    fn declared(&self);\n}}\n\
         type Callback = fn(u8) -> u8;\n\
         #[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{}    }}\n}}\n",
        body(118),
        body(111),
        body(200),
    );
    let code = production(&planted(&[("score/run.rs", &text)]));
    assert_eq!(
        function_lengths(&code["score/run.rs"]),
        [
            ("at_the_limit".to_owned(), 120),
            ("one_over".to_owned(), 121)
        ]
    );
    assert_eq!(long_functions(&code, 120), ["score/run.rs::one_over"]);
}

#[test]
fn the_documented_table_is_read_cell_by_cell() {
    let markdown = "# Architecture\n\n| module | owns | may use |\n|---|---|---|\n\
                    | `scenario/` | the format (`scenario/assertion/`) | `catalog` |\n\
                    | `trace.rs` | records | `scenario`, `catalog` |\n\
                    | `catalog/` | tools | - |\n\nAfter the table.\n| not | a | row |\n";
    let table = documented_uses(markdown).expect("parses");
    let shown: Vec<String> = table
        .iter()
        .map(|(module, uses)| format!("{module}: {uses:?}"))
        .collect();
    assert_eq!(
        shown,
        [
            "catalog: {}",
            "scenario: {\"catalog\"}",
            "trace: {\"catalog\", \"scenario\"}"
        ]
    );
    let vague = markdown.replace("`scenario`, `catalog`", "the run's producers");
    assert_eq!(
        documented_uses(&vague),
        Err("the may-use cell of `trace` is not a list of modules: \
             | `trace.rs` | records | the run's producers |"
            .to_owned())
    );
}
