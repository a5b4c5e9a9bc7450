//! Text pieces shared by the renderers: numbers with intervals, and neutralising model text
//! before it is quoted in Markdown.

use crate::gate::{Comparison, Rate};

/// `93.3% [78.7, 98.2]`: a rate in percent with its 95% Wilson interval.
pub fn rate(rate: &Rate) -> String {
    format!(
        "{:.1}% [{:.1}, {:.1}]",
        rate.rate * 100.0,
        rate.interval.low * 100.0,
        rate.interval.high * 100.0
    )
}

/// One line comparing the rates: current and baseline with intervals, the difference with
/// its interval, and the one-sided p-value.
pub fn comparison_line(comparison: &Comparison) -> String {
    format!(
        "pass rate {} ({}/{}) vs baseline {} ({}/{}): {:+.1} points, 95% CI [{:+.1}, {:+.1}], one-sided p = {}",
        rate(&comparison.current),
        comparison.current.passed,
        comparison.current.judged,
        rate(&comparison.baseline),
        comparison.baseline.passed,
        comparison.baseline.judged,
        comparison.delta_points,
        comparison.delta_interval_points.low,
        comparison.delta_interval_points.high,
        crate::gate::p_text(comparison.p_value),
    )
}

/// The most characters of model text quoted in one place.
pub const QUOTE_LIMIT: usize = 300;

/// Model (or provider) text made safe to quote inline in Markdown, also inside a table cell:
/// - `@name` cannot ping (a zero-width joiner follows the `@`);
/// - no raw HTML (`<`, `>`, `&` become entities);
/// - no table breakers or layout (`|` is escaped, line breaks become spaces);
/// - Markdown punctuation is backslash-escaped, so no links, images, emphasis or code;
/// - at most [`QUOTE_LIMIT`] characters, with `…` when cut.
pub fn neutralise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut previous_space = false;
    for (count, c) in text.chars().enumerate() {
        if count == QUOTE_LIMIT {
            out.push('…');
            break;
        }
        if c.is_whitespace() || c.is_control() {
            if !previous_space {
                out.push(' ');
            }
            previous_space = true;
            continue;
        }
        previous_space = false;
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' => out.push_str("@\u{200D}"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '!' | '|' | '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_html_and_table_breakers_are_neutralised() {
        assert_eq!(
            neutralise("cc @octocat <img src=x onerror=alert(1)> | a\nb ![x](http://t/p.png)"),
            "cc @\u{200D}octocat &lt;img src=x onerror=alert\\(1\\)&gt; \\| a b \\!\\[x\\]\\(http://t/p.png\\)"
        );
    }

    #[test]
    fn long_text_is_cut() {
        let quoted = neutralise(&"a".repeat(QUOTE_LIMIT + 5));
        assert_eq!(quoted.chars().count(), QUOTE_LIMIT + 1);
        assert!(quoted.ends_with('…'));
    }
}
