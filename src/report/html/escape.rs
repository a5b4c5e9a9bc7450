//! Text made inert for HTML: every character that means something to the parser becomes an
//! entity, control and bidirectional characters are shown as `\u{..}` escapes, and long text
//! is cut with a note saying how much was left out.

use std::fmt::Write as _;

use crate::report::sanitize::is_unsafe;

/// Most bytes of one text (arguments, a tool result, an answer, a check detail) shown while
/// the page is small.
pub(super) const SHOWN_BYTES: usize = 4 * 1024;

/// Most bytes of one text shown once the page has passed [`ROOMY_PAGE_BYTES`].
pub(super) const SHORT_BYTES: usize = 512;

/// Page size in bytes up to which texts are shown up to [`SHOWN_BYTES`]; past it, only up to
/// [`SHORT_BYTES`], so that a run of long results cannot grow the page without bound.
pub(super) const ROOMY_PAGE_BYTES: usize = 3 * 1024 * 1024;

/// Most bytes of one text shown when the page already holds `page_bytes` bytes.
pub(super) fn limit(page_bytes: usize) -> usize {
    if page_bytes > ROOMY_PAGE_BYTES {
        SHORT_BYTES
    } else {
        SHOWN_BYTES
    }
}

/// Appends `text` escaped for HTML text and for a double- or single-quoted attribute value:
/// `& < > " '` become entities; line breaks and tabs stay (they are text); every other control
/// character and the bidirectional overrides and isolates become visible `\u{..}` escapes.
pub(super) fn push(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
}

/// `text` escaped as [`push`] does.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push(&mut out, text);
    out
}

/// `text` cut to at most `limit` bytes at a character boundary, and how many bytes were cut.
fn cut(text: &str, limit: usize) -> (&str, usize) {
    if text.len() <= limit {
        return (text, 0);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], text.len() - end)
}

/// Appends `… N more bytes` when `left_out` is not 0.
fn push_more(out: &mut String, left_out: usize) {
    if left_out > 0 {
        let _ = write!(out, "<span class=\"more\">… {left_out} more bytes</span>");
    }
}

/// Appends the first `limit` bytes of `text` (cut back to a character boundary), escaped,
/// then `… N more bytes` when it was cut.
pub(super) fn push_capped(out: &mut String, text: &str, limit: usize) {
    let (shown, left_out) = cut(text, limit);
    push(out, shown);
    push_more(out, left_out);
}

/// Appends one of toolgate's own messages (a reason, a note, a check detail), cut as
/// [`push_capped`] cuts: each `` `name` `` span becomes `<code>`, the rest is escaped text. With
/// an odd number of backticks in what is shown, all of it is escaped text.
pub(super) fn push_rich(out: &mut String, text: &str, limit: usize) {
    let (shown, left_out) = cut(text, limit);
    if shown.matches('`').count() % 2 == 1 {
        push(out, shown);
    } else {
        for (i, part) in shown.split('`').enumerate() {
            if i % 2 == 1 {
                out.push_str("<code>");
                push(out, part);
                out.push_str("</code>");
            } else {
                push(out, part);
            }
        }
    }
    push_more(out, left_out);
}

/// A name as one token of a space-separated attribute (`data-tools`, `data-checks`) and an
/// option value: whitespace becomes `_`, so a name cannot split into two. Not escaped.
pub(super) fn token(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    //! Escaping leaves no markup and shows what cannot be seen; cutting says what it cut.
    use super::*;

    #[test]
    fn markup_quotes_controls_and_bidi_are_inert() {
        assert_eq!(
            escape("<b a=\"x\" c='y'>&</b>"),
            "&lt;b a=&quot;x&quot; c=&#39;y&#39;&gt;&amp;&lt;/b&gt;"
        );
        assert_eq!(
            escape("a\u{0}b\u{202e}c\u{1b}[31m\n"),
            "a\\u{0}b\\u{202e}c\\u{1b}[31m\n"
        );
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary_with_the_rest_counted() {
        let mut out = String::new();
        push_capped(&mut out, "ééé", 3);
        assert_eq!(out, "é<span class=\"more\">… 4 more bytes</span>");
    }

    #[test]
    fn backtick_spans_become_code_and_an_odd_one_stays_text() {
        let mut out = String::new();
        push_rich(&mut out, "expected `a<b>`, got `c`", 100);
        assert_eq!(out, "expected <code>a&lt;b&gt;</code>, got <code>c</code>");
        out.clear();
        push_rich(&mut out, "a ` b", 100);
        assert_eq!(out, "a ` b");
    }

    #[test]
    fn tokens_never_split() {
        assert_eq!(token("send mail\tnow"), "send_mail_now");
    }
}
