//! The sticky pull-request comment body: a hidden marker that finds the comment again, then
//! the Markdown report, within GitHub's comment limit.

use crate::report::markdown::{self, GITHUB_COMMENT_LIMIT};

/// The hidden marker for comments of gate `key`: `<!-- toolgate:sticky key=KEY -->`. Keys
/// keep `[A-Za-z0-9._-]` only, so a key cannot close the HTML comment.
pub(crate) fn marker(key: &str) -> String {
    let key: String = key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .collect();
    format!("<!-- toolgate:sticky key={key} -->")
}

/// The comment body: the marker line, then the report rendered to fit the rest of the limit.
pub(crate) fn render(key: &str, input: &markdown::Input<'_>) -> String {
    let marker = marker(key);
    let report = markdown::render(&markdown::Input {
        limit: GITHUB_COMMENT_LIMIT.min(input.limit) - marker.len() - 1,
        ..*input
    });
    format!("{marker}\n{report}")
}

#[cfg(test)]
mod tests {
    //! The PR comment: the body starts with its key's marker and fits GitHub's comment limit.

    use super::*;
    use crate::report::sample;

    #[test]
    fn comment_body_starts_with_the_marker_of_its_key() {
        let (report, baseline, verdict) =
            (sample::current(), sample::baseline(), sample::verdict());
        let body = render(
            "nightly -->x",
            &markdown::Input {
                report: &report,
                baseline: Some(&baseline),
                verdict: &verdict,
                limit: GITHUB_COMMENT_LIMIT,
                links: None,
                report_url: None,
            },
        );
        assert!(body.len() <= GITHUB_COMMENT_LIMIT);
        insta::assert_snapshot!(body);
    }
}
