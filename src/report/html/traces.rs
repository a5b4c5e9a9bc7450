//! `report.html` of `toolgate score`: the production checks over imported trajectories as one
//! self-contained page, under the same policy as the gate's page (no script at all here).

use std::fmt::Write as _;

use super::escape::{SHOWN_BYTES, escape, push_capped};
use super::page::{STYLE, content_security_policy};
use crate::report::traces::{header, meaning, rows, trace_link};
use crate::score::production::{TraceCheckKind, TraceSummary};

/// The page: the totals, the checks table (what each holds, passed, failed, inconclusive,
/// failure rate), and per check the failing traces kept as examples, each linked through
/// `trace_url` (with `{trace_id}`) when given. Every text from the traces is escaped and cut
/// to 4 KiB.
pub fn render_traces(summary: &TraceSummary, trace_url: Option<&str>) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>toolgate score: {} of {} trajectories failed a check</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n\
         <section id=\"traces\"><h1>Production traces</h1>\n<p>{}.</p>\n",
        content_security_policy(),
        summary.failed,
        summary.trajectories,
        escape(&header(summary)),
    );
    out.push_str("<table class=\"checks\"><thead><tr><th>check</th><th>what it holds</th><th>passed</th><th>failed</th><th>inconclusive</th><th>failure rate</th></tr></thead><tbody>\n");
    for (kind, [name, passed, failed, inconclusive, rate]) in
        TraceCheckKind::ALL.iter().zip(rows(summary))
    {
        let _ = writeln!(
            out,
            "<tr><td><code>{name}</code></td><td>{}</td><td>{passed}</td><td>{failed}</td><td>{inconclusive}</td><td>{rate}</td></tr>",
            meaning(*kind)
        );
    }
    out.push_str("</tbody></table>\n<p>A check is inconclusive when the trace lacks its data (no catalog, results, outcomes or final answer); it never counts as passed.</p>\n");
    for kind in TraceCheckKind::ALL {
        let Some(tally) = summary
            .checks
            .get(kind.as_str())
            .filter(|tally| !tally.examples.is_empty())
        else {
            continue;
        };
        let _ = write!(
            out,
            "<details class=\"check\" id=\"check-{0}\" open><summary><code>{0}</code>: {1} failed (the first {2} shown)</summary>\n<ul>\n",
            kind.as_str(),
            tally.failed,
            tally.examples.len()
        );
        for (trace, detail) in &tally.examples {
            out.push_str("<li>");
            match trace_url {
                Some(url) => {
                    let _ = write!(
                        out,
                        "<a href=\"{}\" rel=\"noreferrer\"><code>",
                        escape(&trace_link(trace, url))
                    );
                    push_capped(&mut out, trace, SHOWN_BYTES);
                    out.push_str("</code></a>");
                }
                None => {
                    out.push_str("<code>");
                    push_capped(&mut out, trace, SHOWN_BYTES);
                    out.push_str("</code>");
                }
            }
            out.push_str(": ");
            push_capped(&mut out, detail, SHOWN_BYTES);
            out.push_str("</li>\n");
        }
        out.push_str("</ul></details>\n");
    }
    out.push_str("</section>\n</main>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    //! The production-traces page: totals, checks, escaped examples and links, strict policy.
    use super::*;
    use crate::score::production::CheckTally;

    #[test]
    fn the_page_lists_checks_and_escaped_examples_linked_to_their_traces() {
        let mut summary = TraceSummary::default();
        summary.trajectories = 2;
        summary.failed = 1;
        summary.calls = 4;
        summary.checks.insert(
            "no_false_success".to_owned(),
            CheckTally {
                passed: 1,
                failed: 1,
                examples: vec![(
                    "t<1>\"".to_owned(),
                    "said <script>alert(1)</script> done".to_owned(),
                )],
                ..CheckTally::default()
            },
        );
        summary.finish();
        let page = render_traces(&summary, Some("https://traces.example/{trace_id}"));
        assert!(page.contains("<title>toolgate score: 1 of 2 trajectories failed a check</title>"));
        assert!(page.contains(
            "<tr><td><code>no_false_success</code></td><td>no success claimed after an unrecovered failure</td><td>1</td><td>1</td><td>0</td><td>50.0%</td></tr>"
        ), "{page}");
        assert!(page.contains(
            "<li><a href=\"https://traces.example/t1\" rel=\"noreferrer\"><code>t&lt;1&gt;&quot;</code></a>: said &lt;script&gt;alert(1)&lt;/script&gt; done</li>"
        ), "{page}");
        assert!(!page.contains("<script"), "no script on this page: {page}");
        assert!(page.contains("default-src 'none'"));
    }
}
