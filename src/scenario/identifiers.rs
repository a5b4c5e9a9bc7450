//! Declared identifier arguments: `tool.argument` globs (`git_show.revision`, `*.target`)
//! whose values must have been seen before they are sent, like every `id`/`*_id` argument.

use globset::GlobSet;

/// The arguments a scenario declares identifiers (`identifiers` in the file), as
/// `tool.argument` globs; empty when it declares none.
#[derive(Debug, Clone, Default)]
pub struct Identifiers {
    /// The globs, compiled; `None` when there are none.
    set: Option<GlobSet>,
}

impl Identifiers {
    /// The globs of `set` (each matched against `tool.argument`).
    pub fn new(set: GlobSet) -> Identifiers {
        Identifiers { set: Some(set) }
    }

    /// Whether argument `argument` (top level) of `tool` is a declared identifier.
    pub fn declares(&self, tool: &str, argument: &str) -> bool {
        self.set
            .as_ref()
            .is_some_and(|set| set.is_match(format!("{tool}.{argument}")))
    }
}

/// One `tool.argument` glob, compiled; `Err` says what is wrong with it.
pub(crate) fn glob(pattern: &str) -> Result<globset::Glob, String> {
    let Some((tool, argument)) = pattern.split_once('.') else {
        return Err(format!(
            "`{pattern}` must be `tool.argument` (a glob on each side, e.g. `*.revision`)"
        ));
    };
    if tool.is_empty() || argument.is_empty() || argument.contains('.') {
        return Err(format!(
            "`{pattern}` must be `tool.argument` with one `.` and a name or glob on each side"
        ));
    }
    globset::Glob::new(pattern).map_err(|error| format!("`{pattern}` is not a glob: {error}"))
}

#[cfg(test)]
mod tests {
    //! Identifier globs: tool and argument each matched, malformed patterns named.

    use super::*;

    fn identifiers(patterns: &[&str]) -> Identifiers {
        let mut builder = globset::GlobSetBuilder::new();
        for pattern in patterns {
            builder.add(glob(pattern).expect("valid"));
        }
        Identifiers::new(builder.build().expect("builds"))
    }

    #[test]
    fn globs_match_tool_and_argument() {
        let declared = identifiers(&["git_show.revision", "*.target"]);
        assert!(declared.declares("git_show", "revision"));
        assert!(declared.declares("git_reset", "target"));
        assert!(!declared.declares("git_log", "revision"));
        assert!(!declared.declares("git_show", "target_branch"));
        assert!(!Identifiers::default().declares("git_show", "revision"));
    }

    #[test]
    fn malformed_patterns_say_why() {
        assert_eq!(
            glob("revision").expect_err("no dot"),
            "`revision` must be `tool.argument` (a glob on each side, e.g. `*.revision`)"
        );
        assert_eq!(
            glob("git.show.revision").expect_err("two dots"),
            "`git.show.revision` must be `tool.argument` with one `.` and a name or glob on each side"
        );
        assert!(
            glob("git_show.[rev")
                .expect_err("bad glob")
                .starts_with("`git_show.[rev` is not a glob")
        );
    }
}
