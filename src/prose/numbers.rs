//! Numbers as people write them: `1,234.50`, `$186K`, `1.2 million`, `-3`, `€56,000`,
//! `forty-eight thousand`, `six`.

use std::ops::Range;

use super::{Prose, words};

/// One number written in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct NumberMention {
    /// Its span in [`Prose::text`].
    pub span: Range<usize>,
    /// The values it can be read as: one, or two for a suffix such as `m` (million, or a unit
    /// such as minutes), each with half the unit of its last written digit (`186K`: 500).
    pub readings: Vec<(f64, f64)>,
    /// Significant digits written (`186K`: 3, `0.5`: 1); 0 for numbers written in words.
    pub significant: u32,
    /// Whether a percent sign or the word `percent` follows it (`54%`, `54 percent`).
    pub percent: bool,
}

impl NumberMention {
    /// Whether the text right after `span` marks a percentage.
    pub(super) fn percent_after(text: &str, end: usize) -> bool {
        let rest = text[end..].trim_start();
        rest.starts_with('%') || rest.starts_with("percent") || rest.starts_with("per cent")
    }
}

/// Equal within half a cent (the rounding of amounts to cents), whatever was written.
const CENT: f64 = 0.005;

impl NumberMention {
    /// Whether this mention stands for `value`: within half a cent; or, for a number written
    /// with two or more significant digits, when `value` rounds to it at the precision
    /// written; or within `tolerance` when one is declared.
    pub fn matches(&self, value: f64, tolerance: Option<f64>) -> bool {
        let epsilon = value.abs() * 1e-12;
        self.readings.iter().any(|(found, half_unit)| {
            let difference = (found - value).abs();
            difference <= CENT + epsilon
                || (self.significant >= 2 && difference <= half_unit + epsilon)
                || tolerance.is_some_and(|tolerance| difference <= tolerance + epsilon)
        })
    }
}

/// Scale words and suffixes after a number, with their factor; single letters only when
/// attached (`186k`), and `m`/`b` also read as the bare number (minutes, bytes).
const SCALES: [(&str, f64, bool); 9] = [
    ("thousand", 1e3, false),
    ("million", 1e6, false),
    ("billion", 1e9, false),
    ("mn", 1e6, false),
    ("bn", 1e9, false),
    ("k", 1e3, false),
    ("m", 1e6, true),
    ("b", 1e9, true),
    ("mm", 1e6, false),
];

/// Every number in `prose`, skipping the bytes in `taken` (dates, times, instants).
pub(super) fn numbers(prose: &Prose, taken: &[Range<usize>]) -> Vec<NumberMention> {
    let text = prose.text();
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || super::overlaps(&(i..i + 1), taken) {
            i += 1;
            continue;
        }
        let start = i;
        // Digits glued to letters or to an identifier (`Q1`, `v3`, `C-005`, `SKU-100`) are
        // part of a name, not a number; a count written `x5` is a number, and so is the end
        // of a range (`5-480`).
        let in_name = start > 0
            && ((bytes[start - 1].is_ascii_alphabetic() && !is_times_sign(bytes, start - 1))
                || (matches!(bytes[start - 1], b'-' | b'_' | b'#' | b'/')
                    && start > 1
                    && word_has_letter(bytes, start - 1)));
        let (digits, end) = digits_at(bytes, start);
        i = end;
        if in_name {
            while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                i += 1;
            }
            continue;
        }
        let negative = sign_before(bytes, start);
        let Ok(base) = digits.replace(',', "").parse::<f64>() else {
            continue;
        };
        let decimals = digits.split_once('.').map_or(0, |(_, f)| f.len());
        let half_unit = 0.5 * 10f64.powi(-i32::try_from(decimals).unwrap_or(0));
        let significant = significant_digits(&digits);
        let sign = if negative { -1.0 } else { 1.0 };
        let (scale, scale_end) = scale_after(text, end);
        let mut readings = Vec::new();
        match scale {
            Some((factor, also_bare)) => {
                readings.push((sign * base * factor, half_unit * factor));
                if also_bare {
                    readings.push((sign * base, half_unit));
                }
                i = scale_end;
            }
            None => readings.push((sign * base, half_unit)),
        }
        let span_start = if negative { start - 1 } else { start };
        found.push(NumberMention {
            span: span_start..i,
            readings,
            significant,
            percent: NumberMention::percent_after(text, i),
        });
    }
    found.extend(words::number_words(prose, taken));
    found.sort_by_key(|number| number.span.start);
    found
}

/// The number at `start`: digits with `,` thousands groups (a comma followed by exactly three
/// digits) and one decimal point followed by a digit; returns it and where it ends.
fn digits_at(bytes: &[u8], start: usize) -> (String, usize) {
    let mut digits = String::new();
    let mut i = start;
    let mut seen_point = false;
    while i < bytes.len() {
        let byte = bytes[i];
        if byte.is_ascii_digit() {
            digits.push(char::from(byte));
            i += 1;
        } else if byte == b','
            && !seen_point
            && bytes.len() >= i + 4
            && bytes[i + 1..i + 4].iter().all(u8::is_ascii_digit)
            && bytes.get(i + 4).is_none_or(|b| !b.is_ascii_digit())
        {
            digits.push(',');
            i += 1;
        } else if byte == b'.' && !seen_point && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            seen_point = true;
            digits.push('.');
            i += 1;
        } else {
            break;
        }
    }
    (digits, i)
}

/// Whether the letter at `at` is an `x` standing alone as a times sign (`x5`, ` x 5`).
fn is_times_sign(bytes: &[u8], at: usize) -> bool {
    bytes[at] == b'x' && (at == 0 || !bytes[at - 1].is_ascii_alphanumeric())
}

/// Whether the run of letters and digits ending just before the separator at `at` holds a
/// letter (`C-005` names a record; `5-480` is a range).
fn word_has_letter(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .take_while(|byte| byte.is_ascii_alphanumeric())
        .any(u8::is_ascii_alphabetic)
}

/// Whether a minus sign stands before the number at `start` (`-3`, `-$130,000`), not a
/// hyphen inside a word or range (`C-5`, `5-6`).
fn sign_before(bytes: &[u8], start: usize) -> bool {
    let mut at = start;
    if at > 0 && matches!(bytes[at - 1], b'$') {
        at -= 1;
    }
    at > 0 && bytes[at - 1] == b'-' && (at < 2 || !bytes[at - 2].is_ascii_alphanumeric())
}

/// Significant digits of a written number: digits after leading zeros.
fn significant_digits(digits: &str) -> u32 {
    let all: String = digits.chars().filter(char::is_ascii_digit).collect();
    let trimmed = all.trim_start_matches('0');
    u32::try_from(trimmed.len()).unwrap_or(u32::MAX)
}

/// A scale word or suffix right after a number (`k`, `M`, ` million`), with its factor,
/// whether the bare number is another reading, and where it ends.
fn scale_after(text: &str, end: usize) -> (Option<(f64, bool)>, usize) {
    let rest = &text[end..];
    let attached = !rest.starts_with(' ');
    let trimmed = rest.strip_prefix(' ').unwrap_or(rest);
    let offset = rest.len() - trimmed.len();
    for (word, factor, also_bare) in SCALES {
        let single_letter = word.len() == 1 || word == "mn" || word == "bn" || word == "mm";
        if single_letter && !attached {
            continue;
        }
        if let Some(after) = trimmed.strip_prefix(word)
            && after.chars().next().is_none_or(|c| !c.is_alphanumeric())
        {
            return (Some((factor, also_bare)), end + offset + word.len());
        }
    }
    (None, end)
}

#[cfg(test)]
mod tests {
    //! Written numbers: separators, signs, currency, scales and words; names with digits are not.

    use super::*;

    fn values(text: &str) -> Vec<f64> {
        Prose::new(text)
            .numbers()
            .iter()
            .map(|number| number.readings[0].0)
            .collect()
    }

    #[test]
    fn digits_read_through_separators_signs_and_currency() {
        assert_eq!(
            values("Total: $1,234.50 (was -3, up 12%)."),
            [1234.5, -3.0, 12.0]
        );
        assert_eq!(values("−130,000 and -$5"), [-130_000.0, -5.0]);
        assert_eq!(values("1,2 and 1,2345"), [1.0, 2.0, 1.0, 2345.0]);
    }

    #[test]
    fn names_with_digits_are_not_numbers() {
        assert_eq!(values("ids C-005, SKU-100, Q1, v3 and 2026-Q1"), [2026.0]);
    }

    #[test]
    fn counts_written_with_x_and_the_ends_of_ranges_are_numbers() {
        assert_eq!(values("Battery module x5, Sensor kit x 20"), [5.0, 20.0]);
        assert_eq!(values("allowed range 5-480 minutes"), [5.0, 480.0]);
    }

    #[test]
    fn scale_suffixes_and_words_multiply() {
        assert_eq!(
            values("$186K, 1.2M, 3bn, 48 thousand, 2.5 million"),
            [186_000.0, 1_200_000.0, 3e9, 48_000.0, 2_500_000.0]
        );
        let prose = Prose::new("every 30m");
        let thirty = &prose.numbers()[0];
        assert!(thirty.matches(30.0, None) && thirty.matches(30e6, None));
        assert!(!Prose::new("30 m").numbers()[0].matches(30e6, None));
    }

    #[test]
    fn rounding_to_the_written_precision_needs_two_significant_digits() {
        let mention = |text: &str| Prose::new(text).numbers()[0].clone();
        assert!(mention("$186K").matches(186_420.0, None));
        assert!(mention("60,870").matches(60_869.57, None));
        assert!(mention("$60.9K").matches(60_869.57, None));
        assert!(!mention("60,869").matches(60_869.57, None));
        assert!(!mention("$0.2M").matches(186_000.0, None));
        assert!(!mention("7").matches(7.4, None));
        assert!(mention("about 60,869.57 USD").matches(60_869.565, None));
        assert!(
            mention("$17K").matches(17_215.0, Some(100.0)),
            "the written precision still holds"
        );
        assert!(!mention("$16K").matches(17_215.0, Some(100.0)));
        assert!(mention("$17.2K").matches(17_215.0, Some(100.0)));
    }
}
