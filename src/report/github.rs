//! GitHub Actions workflow text: step outputs for `$GITHUB_OUTPUT` and `::error` annotations
//! for the log, placed on the failing checks' scenario lines. Writing them to the runner's files happens in the caller.

use std::fmt::Write as _;
use std::path::Path;

use crate::results::RunReport;
use crate::score::Outcome;

/// GitHub shows at most this many error annotations per step.
pub(crate) const MAX_ANNOTATIONS: usize = 10;

/// An error annotation on a file and line of the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Annotation {
    /// Path relative to the repository root, `/`-separated.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// Short title.
    pub title: String,
    /// The message; may span lines.
    pub message: String,
}

/// `name<<DELIMITER` blocks for `$GITHUB_OUTPUT`, one per output, so any value (also
/// multi-line) is safe. `delimiter` must be random per run and appear in no value: a value
/// containing it could otherwise set other outputs. Returns `None` if it does.
pub(crate) fn render_outputs(outputs: &[(&str, String)], delimiter: &str) -> Option<String> {
    let mut out = String::new();
    for (name, value) in outputs {
        if value.contains(delimiter) || name.contains(delimiter) {
            return None;
        }
        let _ = writeln!(out, "{name}<<{delimiter}\n{value}\n{delimiter}");
    }
    Some(out)
}

/// `::error` workflow commands, at most [`MAX_ANNOTATIONS`]; when there are more, the last
/// one says how many were left out.
pub(crate) fn render_annotations(annotations: &[Annotation]) -> String {
    let mut out = String::new();
    let shown = if annotations.len() > MAX_ANNOTATIONS {
        MAX_ANNOTATIONS - 1
    } else {
        annotations.len()
    };
    for annotation in &annotations[..shown] {
        let _ = writeln!(
            out,
            "::error file={},line={},title={}::{}",
            escape_property(&annotation.file),
            annotation.line,
            escape_property(&annotation.title),
            escape_data(&annotation.message)
        );
    }
    if shown < annotations.len() {
        let _ = writeln!(
            out,
            "::error title=toolgate::{} more failing scenarios are not annotated; see the step summary",
            annotations.len() - shown
        );
    }
    out
}

/// Escapes a workflow command's message (`%`, CR, LF).
pub(crate) fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command property (also `:` and `,`).
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// One annotation per failing scenario, on its file at the line of its first failing check
/// (Tier 5 first), its message ending with where the run is in the HTML report
/// ([`crate::report::location`] with `report_url`).
pub(crate) fn annotations(
    report: &RunReport,
    root: &Path,
    report_url: Option<&str>,
) -> Vec<Annotation> {
    let Some(pins) = &report.pins else {
        return Vec::new();
    };
    let mut failing: Vec<_> = report
        .scenarios
        .iter()
        .filter(|r| r.outcome == Outcome::Fail)
        .collect();
    failing.sort_by_key(|r| std::cmp::Reverse(r.tier));
    failing
        .into_iter()
        .filter_map(|result| {
            let in_root = &pins.scenarios.get(&result.id)?.path;
            let file = repository_path(root, in_root);
            let check = result.checks.iter().find(|c| !c.passed);
            let line = check
                .and_then(|c| result.lines.get(&c.subject).copied())
                .unwrap_or(1);
            Some(Annotation {
                file,
                line,
                title: format!("toolgate: {} failed (tier {})", result.id, result.tier),
                message: format!(
                    "{}\nreport: {}",
                    check.map_or_else(
                        || "failed".to_string(),
                        |c| format!("{}: {}", c.subject, c.detail),
                    ),
                    super::location(report_url, &result.id, Some(result.repeat))
                ),
            })
        })
        .collect()
}

/// `path` (relative to the suite `root`) relative to the working directory, which is the
/// repository root on a runner: `evals` + `scenarios/a.json` -> `evals/scenarios/a.json`. An
/// absolute `root` stays absolute (`/tmp/suite/scenarios/a.json`, one leading slash); make it
/// relative to the workspace first (see [`relative_root`]) for links GitHub can resolve.
pub(crate) fn repository_path(root: &Path, path: &str) -> String {
    let mut text = String::new();
    for component in root.join(path).components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::RootDir => text.push('/'),
            other => {
                if !text.is_empty() && !text.ends_with('/') {
                    text.push('/');
                }
                text.push_str(&other.as_os_str().to_string_lossy());
            }
        }
    }
    text
}

/// `root` relative to `workdir` when it lies inside it (an absolute `--root` on a runner is
/// under `$GITHUB_WORKSPACE`), else `root` unchanged.
pub(crate) fn relative_root(root: &Path, workdir: &Path) -> std::path::PathBuf {
    if root.is_absolute()
        && let Ok(inside) = root.strip_prefix(workdir)
    {
        return inside.to_path_buf();
    }
    root.to_path_buf()
}

#[cfg(test)]
mod tests {
    //! Actions text: annotations on recorded lines, escaped and capped; outputs refuse delimiters.

    use super::*;

    #[test]
    fn file_paths_have_one_slash_between_parts_whatever_the_root() {
        assert_eq!(
            repository_path(Path::new("."), "scenarios/a.json"),
            "scenarios/a.json"
        );
        assert_eq!(
            repository_path(Path::new("./evals/"), "scenarios/a.json"),
            "evals/scenarios/a.json"
        );
        assert_eq!(
            repository_path(Path::new("/tmp/suite"), "scenarios/a.json"),
            "/tmp/suite/scenarios/a.json"
        );
        assert_eq!(
            relative_root(
                Path::new("/home/runner/work/r/r/evals"),
                Path::new("/home/runner/work/r/r")
            ),
            Path::new("evals")
        );
        assert_eq!(
            relative_root(Path::new("/tmp/suite"), Path::new("/home/runner/work/r/r")),
            Path::new("/tmp/suite")
        );
    }

    #[test]
    fn annotations_sit_on_the_line_the_results_recorded_tier_5_first() {
        let mut report = crate::report::sample::current();
        for result in &mut report.scenarios {
            if result.id == "T2-007" {
                result.lines = [("expected_calls[1]".to_owned(), 14)].into();
            }
        }
        let annotations = annotations(&report, Path::new("./evals"), None);
        let placed: Vec<(&str, usize)> = annotations
            .iter()
            .map(|a| (a.file.as_str(), a.line))
            .collect();
        assert_eq!(placed[0].1, 1, "a result without lines points at line 1");
        assert!(annotations[0].title.contains("(tier 5)"), "{annotations:?}");
        let t2 = annotations
            .iter()
            .find(|a| a.title.contains("T2-007"))
            .expect("T2-007 failed");
        assert_eq!(t2.line, 14);
        assert!(t2.file.starts_with("evals/"), "{t2:?}");
        assert!(
            t2.message.ends_with("\nreport: report.html#s-T2-007~0"),
            "{t2:?}"
        );
    }

    #[test]
    fn annotation_paths_are_relative_to_the_repository() {
        assert_eq!(
            repository_path(Path::new("."), "scenarios/a.json"),
            "scenarios/a.json"
        );
        assert_eq!(
            repository_path(Path::new("./evals"), "scenarios/a.json"),
            "evals/scenarios/a.json"
        );
    }

    #[test]
    fn outputs_use_the_delimiter_and_refuse_values_containing_it() {
        let outputs = [
            ("verdict", "fail".to_string()),
            ("reasons", "a\nb".to_string()),
        ];
        insta::assert_snapshot!(render_outputs(&outputs, "ghadelim_0f3a").expect("safe"));
        assert_eq!(
            render_outputs(&[("x", "evil\nghadelim_0f3a\ny=1".into())], "ghadelim_0f3a"),
            None
        );
    }

    #[test]
    fn annotations_are_escaped_and_capped_at_ten() {
        let many: Vec<Annotation> = (1..=12)
            .map(|i| Annotation {
                file: format!("scenarios/tier1/T1-{i:03}.json"),
                line: i,
                title: format!("T1-{i:03} failed: a, b"),
                message: "100% wrong\nsecond line".into(),
            })
            .collect();
        let text = render_annotations(&many);
        assert_eq!(text.lines().count(), 10);
        insta::assert_snapshot!(text);
    }
}
