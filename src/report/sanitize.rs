//! Neutralises untrusted text before a renderer shows it: anything a model, a provider or a
//! tool server wrote (final answers quoted in check details, tool names a model chose, judge
//! reasons, provider error bodies) may hold terminal escape sequences, line breaks, bidi
//! overrides or a megabyte of text.

use std::borrow::Cow;

/// Most characters of one untrusted field that the terminal report shows.
pub(crate) const MAX_TERMINAL_CHARS: usize = 500;

/// `text` made safe for one line of a terminal.
///
/// Control characters (C0 and C1, so ANSI escapes, carriage returns, line breaks and NUL) and
/// the bidirectional overrides and isolates (U+202A..=U+202E, U+2066..=U+2069, the "Trojan
/// Source" characters, CVE-2021-42574) are shown as `\u{..}` escapes, so the text cannot move
/// the cursor, recolour the log, forge a line or reorder what is read. Text longer than
/// `max_chars` characters is cut there, with `... (N more characters)` after it. Borrows when
/// nothing needs changing.
pub(crate) fn terminal_line(text: &str, max_chars: usize) -> Cow<'_, str> {
    let total = text.chars().count();
    if total <= max_chars && !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(max_chars * 2));
    for c in text.chars().take(max_chars) {
        if is_unsafe(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    if total > max_chars {
        out.push_str(&format!("... ({} more characters)", total - max_chars));
    }
    Cow::Owned(out)
}

/// Whether `c` is a control character (C0, C1), a bidirectional override or isolate, or a
/// bidirectional mark (LRM, RLM, ALM, which reorder the neutral characters around them): a
/// character that must be shown as an escape, never as itself.
pub(crate) fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
        )
}

#[cfg(test)]
mod tests {
    //! Sanitizing: escapes, line breaks and bidi are shown, not obeyed; cuts keep characters whole.

    use super::*;

    #[test]
    fn bidirectional_marks_are_unsafe_like_overrides() {
        for c in [
            '\u{200e}', '\u{200f}', '\u{061c}', '\u{202e}', '\u{2067}', '\u{0}',
        ] {
            assert!(is_unsafe(c), "{:x}", u32::from(c));
        }
        for c in ['a', 'é', '\u{200d}', '\u{05d0}'] {
            assert!(!is_unsafe(c), "{:x}", u32::from(c));
        }
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = "expected_calls[0]: answer \"Ada | <b>@here</b>\"";
        assert!(matches!(terminal_line(text, 100), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn escape_sequences_and_line_breaks_are_shown_not_obeyed() {
        assert_eq!(
            terminal_line("ok\u{1b}[2J\u{1b}]0;pwned\u{7}\r\nverdict: PASS", 100),
            "ok\\u{1b}[2J\\u{1b}]0;pwned\\u{7}\\u{d}\\u{a}verdict: PASS"
        );
        assert_eq!(terminal_line("a\0b\u{9b}c", 100), "a\\u{0}b\\u{9b}c");
    }

    #[test]
    fn bidi_overrides_are_escaped() {
        assert_eq!(
            terminal_line("user\u{202e}gnp.exe\u{2066}", 100),
            "user\\u{202e}gnp.exe\\u{2066}"
        );
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary_saying_how_much_is_left_out() {
        let megabyte = "é".repeat(1 << 20);
        let cut = terminal_line(&megabyte, 10);
        assert_eq!(
            cut,
            format!("{}... (1048566 more characters)", "é".repeat(10))
        );
    }

    #[test]
    fn text_of_exactly_the_limit_is_kept_whole() {
        assert_eq!(terminal_line("abcde", 5), "abcde");
        assert_eq!(terminal_line("abcdef", 5), "abcde... (1 more characters)");
    }
}
