//! Validating `identifiers`: each a `tool.argument` glob; a literal tool must be in the
//! catalog and a literal argument one of its arguments.

use super::super::identifiers::{Identifiers, glob};
use super::Problems;
use crate::catalog::Catalog;

/// Whether `text` holds a glob metacharacter, so it is a pattern rather than a name.
fn is_pattern(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

/// The scenario's declared identifier arguments; each bad pattern is reported.
pub(super) fn validate_identifiers(
    patterns: &[String],
    catalog: &Catalog,
    problems: &mut Problems<'_>,
) -> Identifiers {
    let mut builder = globset::GlobSetBuilder::new();
    for (index, pattern) in patterns.iter().enumerate() {
        let at = format!("identifiers[{index}]");
        match glob(pattern) {
            Ok(glob) => {
                builder.add(glob);
            }
            Err(message) => {
                problems.add(&at, Some(pattern), message);
                continue;
            }
        }
        let (tool, argument) = pattern.split_once('.').expect("checked by glob");
        if is_pattern(tool) {
            continue;
        }
        match catalog.tool(tool) {
            None => problems.add(&at, Some(pattern), catalog.unknown_tool_message(tool)),
            Some(def)
                if !is_pattern(argument) && !def.argument_names().iter().any(|a| a == argument) =>
            {
                problems.add(
                    &at,
                    Some(pattern),
                    format_args!("`{tool}` has no argument `{argument}`"),
                );
            }
            Some(_) => {}
        }
    }
    if patterns.is_empty() {
        return Identifiers::default();
    }
    builder.build().map(Identifiers::new).unwrap_or_default()
}
