//! Renderers: pure functions from results and verdict to text, one file per format. Choosing
//! where the text goes (stdout, a file, the step summary, a pull-request comment) happens in
//! the caller.

pub(crate) mod catalog;
pub(crate) mod comment;
pub(crate) mod github;
pub mod html;
pub(crate) mod json;
pub(crate) mod junit;
pub(crate) mod markdown;
pub(crate) mod otel;
pub(crate) mod sanitize;
pub(crate) mod table;
pub(crate) mod text;
pub(crate) mod traces;

#[cfg(test)]
pub(crate) mod sample;

/// The HTML report's (`report.html`) anchor of a scenario, or of one run of it when `repeat`
/// is given: `s-` then the id, then `~` and the 0-based repetition for a run. Bytes of the id
/// outside `A-Z a-z 0-9 - _ .` are written `~XX` (two uppercase hex digits), so every anchor
/// is safe in a URL fragment and an HTML `id`, and no two scenarios or runs share one.
/// The PR comment, JUnit and annotations link to the same anchors.
#[allow(
    dead_code,
    reason = "the HTML report and the links to it are being wired"
)]
pub(crate) fn anchor(id: &str, repeat: Option<u32>) -> String {
    let mut anchor = String::from("s-");
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.') {
            anchor.push(char::from(byte));
        } else {
            anchor.push_str(&format!("~{byte:02X}"));
        }
    }
    if let Some(repeat) = repeat {
        anchor.push_str(&format!("~{repeat}"));
    }
    anchor
}

/// Where a scenario (or one run of it) is in the HTML report: `URL#ANCHOR` when the report
/// is published at `report_url` (`--report-url`, any fragment of it dropped), else
/// `report.html#ANCHOR`, relative to the results folder (the artifact as downloaded).
pub(crate) fn location(report_url: Option<&str>, id: &str, repeat: Option<u32>) -> String {
    let base = report_url.map_or("report.html", |url| {
        url.split_once('#').map_or(url, |(base, _)| base)
    });
    format!("{base}#{}", anchor(id, repeat))
}

#[cfg(test)]
mod tests {
    //! Anchors are unique and URL-safe; locations use the published address when there is one.
    use super::{anchor, location};

    #[test]
    fn locations_point_into_the_published_report_or_the_folder() {
        assert_eq!(location(None, "T1-001", Some(0)), "report.html#s-T1-001~0");
        assert_eq!(
            location(
                Some("https://ci.example/run/9/report.html#top"),
                "T5-001",
                None
            ),
            "https://ci.example/run/9/report.html#s-T5-001"
        );
    }

    #[test]
    fn anchors_escape_and_stay_apart() {
        assert_eq!(anchor("T1-001", None), "s-T1-001");
        assert_eq!(anchor("T1-001", Some(2)), "s-T1-001~2");
        assert_eq!(anchor("a b/<é>", None), "s-a~20b~2F~3C~C3~A9~3E");
        assert_eq!(anchor("x~1", None), "s-x~7E1");
        assert_ne!(anchor("x~1", None), anchor("x", Some(1)));
    }
}
