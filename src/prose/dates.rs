//! Dates, times of day and instants as people write them: `2026-01-29`, `2026/01/29`,
//! `1/29/2026`, `January 29, 2026`, `Thu 29 Jan`, `29th of January`; `10:00`, `10 AM`,
//! `9:30pm`, `noon`; `2026-01-16T09:00:00Z`.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::Prose;
use crate::calendar;

/// One date written in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct DateMention {
    /// Its span in [`Prose::text`].
    pub span: Range<usize>,
    /// The dates it can be: `(year, month, day)`, the year `None` when not written; two when
    /// a slashed date reads both ways (`02/01/2026`).
    pub readings: Vec<(Option<i64>, i64, i64)>,
    /// The weekday written next to it, if any (`monday` ... `sunday`).
    pub weekday: Option<&'static str>,
}

impl DateMention {
    /// Whether this mention stands for day number `days`: a reading with that month and day
    /// (and year, when written), and no weekday beside it that contradicts it.
    pub fn matches(&self, days: i64) -> bool {
        let (year, month, day) = calendar::civil_from_days(days);
        let weekday_ok = self
            .weekday
            .is_none_or(|named| calendar::weekday(days).eq_ignore_ascii_case(named));
        weekday_ok
            && self
                .readings
                .iter()
                .any(|(y, m, d)| *m == month && *d == day && y.is_none_or(|y| y == year))
    }
}

/// One time of day written in the text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TimeMention {
    /// Its span in [`Prose::text`].
    pub span: Range<usize>,
    /// Seconds after midnight.
    pub seconds: u32,
}

const MONTHS: [(&str, i64); 23] = [
    ("january", 1),
    ("jan", 1),
    ("february", 2),
    ("feb", 2),
    ("march", 3),
    ("mar", 3),
    ("april", 4),
    ("apr", 4),
    ("may", 5),
    ("june", 6),
    ("jun", 6),
    ("july", 7),
    ("jul", 7),
    ("august", 8),
    ("aug", 8),
    ("september", 9),
    ("sept", 9),
    ("sep", 9),
    ("october", 10),
    ("oct", 10),
    ("november", 11),
    ("nov", 11),
    ("december", 12),
];

const DEC: (&str, i64) = ("dec", 12);

const WEEKDAYS: [(&str, &str); 7] = [
    ("mon", "monday"),
    ("tue", "tuesday"),
    ("wed", "wednesday"),
    ("thu", "thursday"),
    ("fri", "friday"),
    ("sat", "saturday"),
    ("sun", "sunday"),
];

fn month(word: &str) -> Option<i64> {
    MONTHS
        .iter()
        .chain(std::iter::once(&DEC))
        .find(|(name, _)| *name == word)
        .map(|(_, m)| *m)
}

/// The full weekday name of `word` (`thu`, `thurs`, `thursday`, `thursdays`).
fn weekday(word: &str) -> Option<&'static str> {
    let word = word.trim_end_matches('s');
    WEEKDAYS
        .iter()
        .find(|(short, full)| {
            word == *short || (word.len() > 3 && full.starts_with(word)) || word == *full
        })
        .map(|(_, full)| *full)
}

/// A day of the month written as a word: `29`, `29th`, `1st`.
fn day_of_month(word: &str) -> Option<i64> {
    let digits = word
        .strip_suffix("st")
        .or_else(|| word.strip_suffix("nd"))
        .or_else(|| word.strip_suffix("rd"))
        .or_else(|| word.strip_suffix("th"))
        .unwrap_or(word);
    let day: i64 = digits.parse().ok()?;
    (digits.len() <= 2 && (1..=31).contains(&day)).then_some(day)
}

/// Days of the month written as ordinal words (`thirteenth`); `twenty`/`thirty` combine with
/// the first nine (`twenty-first`).
const ORDINALS: [(&str, i64); 21] = [
    ("first", 1),
    ("second", 2),
    ("third", 3),
    ("fourth", 4),
    ("fifth", 5),
    ("sixth", 6),
    ("seventh", 7),
    ("eighth", 8),
    ("ninth", 9),
    ("tenth", 10),
    ("eleventh", 11),
    ("twelfth", 12),
    ("thirteenth", 13),
    ("fourteenth", 14),
    ("fifteenth", 15),
    ("sixteenth", 16),
    ("seventeenth", 17),
    ("eighteenth", 18),
    ("nineteenth", 19),
    ("twentieth", 20),
    ("thirtieth", 30),
];

/// The day of the month starting at word `i`, in digits or ordinal words, and the index of
/// its last word.
fn day_at(word: &dyn Fn(usize) -> String, i: usize) -> Option<(i64, usize)> {
    let first = word(i);
    if let Some(day) = day_of_month(&first) {
        return Some((day, i));
    }
    let ordinal = |w: &str| {
        ORDINALS
            .iter()
            .find(|(name, _)| *name == w)
            .map(|(_, d)| *d)
    };
    let tens = match first.as_str() {
        "twenty" => Some(20),
        "thirty" => Some(30),
        _ => None,
    };
    if let (Some(tens), Some(unit)) = (tens, ordinal(&word(i + 1)).filter(|d| *d < 10)) {
        let day = tens + unit;
        return (day <= 31).then_some((day, i + 1));
    }
    ordinal(&first).map(|day| (day, i))
}

fn year(word: &str) -> Option<i64> {
    let year: i64 = word.parse().ok()?;
    (word.len() == 4 && (1900..=2200).contains(&year)).then_some(year)
}

static INSTANT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b\d{4}-\d{2}-\d{2}t\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:z|[+-]\d{2}:\d{2})")
        .expect("a valid pattern")
});

static NUMERIC_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})\b|\b(\d{1,2})([/.])(\d{1,2})(?:[/.](\d{4}))?\b",
    )
    .expect("a valid pattern")
});

static CLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([ap])\.?m\b\.?)?|\b(\d{1,2})\s*([ap])\.?m\b\.?|\b(noon|midday|midnight)\b|\b(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+o['’]?\s?clock\b(?:\s+(?:in\s+the\s+)?(morning|afternoon|evening))?",
    )
    .expect("a valid pattern")
});

/// Every RFC 3339 instant in the (lowercased) text, with its seconds since the epoch.
pub(super) fn instants(text: &str) -> Vec<(i64, Range<usize>)> {
    INSTANT
        .find_iter(text)
        .filter_map(|found| {
            calendar::parse_instant(found.as_str()).map(|instant| (instant.seconds, found.range()))
        })
        .collect()
}

/// `HH:MM` or `HH:MM:SS` (24-hour) as seconds after midnight.
pub(super) fn clock_time(text: &str) -> Option<u32> {
    let parts: Vec<&str> = text.split(':').collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.is_empty() || p.len() > 2) {
        return None;
    }
    let numbers: Option<Vec<u32>> = parts.iter().map(|p| p.parse().ok()).collect();
    let numbers = numbers?;
    let (hour, minute, second) = (numbers[0], numbers[1], numbers.get(2).copied().unwrap_or(0));
    (hour < 24 && minute < 60 && second < 60).then_some(hour * 3600 + minute * 60 + second)
}

/// The hours written as words in `N o'clock`, one to twelve.
const HOUR_WORDS: [&str; 12] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];

/// Every time of day in the text outside the `instants` spans.
pub(super) fn times(text: &str, instants: &[Range<usize>]) -> Vec<TimeMention> {
    let mut found = Vec::new();
    for caps in CLOCK.captures_iter(text) {
        let whole = caps.get(0).expect("group 0 always matches");
        if super::overlaps(&whole.range(), instants) {
            continue;
        }
        let number = |i: usize| caps.get(i).and_then(|m| m.as_str().parse::<u32>().ok());
        let (hour, minute, second, meridiem) = if let Some(word) = caps.get(7) {
            match word.as_str() {
                "midnight" => (0, 0, 0, None),
                _ => (12, 0, 0, None),
            }
        } else if let Some(hour) = caps.get(8) {
            // `eleven o'clock`, `3 o'clock in the afternoon`: as written unless the part of
            // the day says afternoon or evening.
            let hour = HOUR_WORDS
                .iter()
                .position(|word| *word == hour.as_str())
                .map(|index| index as u32 + 1)
                .or_else(|| hour.as_str().parse().ok())
                .unwrap_or(99);
            let later = caps.get(9).is_some_and(|part| part.as_str() != "morning");
            (
                hour,
                0,
                0,
                Some(if later { "p" } else { "a" }).filter(|_| hour <= 12),
            )
        } else if let Some(hour) = number(1) {
            (
                hour,
                number(2).unwrap_or(0),
                number(3).unwrap_or(0),
                caps.get(4).map(|m| m.as_str()),
            )
        } else {
            (
                number(5).unwrap_or(99),
                0,
                0,
                caps.get(6).map(|m| m.as_str()),
            )
        };
        let hour = match meridiem {
            None if hour < 24 => hour,
            Some(half) if (1..=12).contains(&hour) => hour % 12 + if half == "p" { 12 } else { 0 },
            _ => continue,
        };
        if minute < 60 && second < 60 {
            found.push(TimeMention {
                span: whole.range(),
                seconds: hour * 3600 + minute * 60 + second,
            });
        }
    }
    found
}

/// Every date written in the text, in order.
pub(super) fn dates(prose: &Prose) -> Vec<DateMention> {
    let text = prose.text();
    let mut found: Vec<DateMention> = Vec::new();
    for caps in NUMERIC_DATE.captures_iter(text) {
        let whole = caps.get(0).expect("group 0 always matches");
        let number = |i: usize| caps.get(i).and_then(|m| m.as_str().parse::<i64>().ok());
        let readings = if let Some(y) = number(1) {
            vec![(Some(y), number(2).unwrap_or(0), number(3).unwrap_or(0))]
        } else {
            let (a, b, y) = (number(4).unwrap_or(0), number(6).unwrap_or(0), number(7));
            let dotted = caps.get(5).is_some_and(|m| m.as_str() == ".");
            match (dotted, y) {
                // `1.5` without a year is a number, not a date.
                (true, None) => continue,
                (true, Some(_)) => vec![(y, b, a)],
                (false, _) => vec![(y, a, b), (y, b, a)],
            }
        };
        let readings: Vec<_> = readings
            .into_iter()
            .filter(|(y, m, d)| calendar::date(y.unwrap_or(2000), *m, *d).is_some())
            .collect();
        if !readings.is_empty() {
            found.push(DateMention {
                span: whole.range(),
                weekday: None,
                readings,
            });
        }
    }
    found.extend(word_dates(prose));
    found.sort_by_key(|date| date.span.start);
    for date in &mut found {
        date.weekday = weekday_beside(prose, &date.span);
    }
    found
}

/// Dates with a month name: `January 29, 2026`, `Jan 29`, `29 January 2026`, `29th of Jan`.
fn word_dates(prose: &Prose) -> Vec<DateMention> {
    let text = prose.text();
    let words = prose.words();
    let word = |i: usize| words.get(i).map_or("", |w| &text[w.span.clone()]);
    let owned = |i: usize| word(i).to_owned();
    let mut found = Vec::new();
    for i in 0..words.len() {
        let Some(m) = month(word(i)) else {
            continue;
        };
        // Month first: `January 29[, 2026]`, `January thirteenth`.
        if let Some((d, day_end)) = day_at(&owned, i + 1) {
            let (y, last) = match year(word(day_end + 1)) {
                Some(y) => (Some(y), day_end + 1),
                None => (None, day_end),
            };
            found.push(DateMention {
                span: words[i].span.start..words[last].span.end,
                readings: vec![(y, m, d)],
                weekday: None,
            });
            continue;
        }
        // Day first: `29 January[ 2026]`, `29th of January`, `the fifteenth of January`.
        let before = if i >= 2 && word(i - 1) == "of" {
            i - 2
        } else if i >= 1 {
            i - 1
        } else {
            continue;
        };
        let day = [before.checked_sub(1), Some(before)]
            .into_iter()
            .flatten()
            .find_map(|start| {
                day_at(&owned, start)
                    .filter(|(_, end)| *end == before)
                    .map(|(d, _)| (d, start))
            });
        if let Some((d, day_at)) = day {
            let (y, last) = match year(word(i + 1)) {
                Some(y) => (Some(y), i + 1),
                None => (None, i),
            };
            found.push(DateMention {
                span: words[day_at].span.start..words[last].span.end,
                readings: vec![(y, m, d)],
                weekday: None,
            });
        }
    }
    found
        .into_iter()
        .filter(|date| {
            date.readings
                .iter()
                .any(|(y, m, d)| calendar::date(y.unwrap_or(2000), *m, *d).is_some())
        })
        .collect()
}

/// A weekday named right before the date (`Thursday, January 29`, `on Thu 29 Jan`) or just
/// after it (`2026-01-29, a Friday`, `January 29 (Thursday)`), within its sentence.
fn weekday_beside(prose: &Prose, span: &Range<usize>) -> Option<&'static str> {
    let text = prose.text();
    let words = prose.words();
    let first = prose.word_at(span.start);
    let sentence = words.get(first).map(|w| w.sentence)?;
    let last = prose.word_at(span.end).min(words.len());
    let before = first.saturating_sub(1);
    if first > 0
        && words[before].sentence == sentence
        && let Some(day) = weekday(&text[words[before].span.clone()])
    {
        return Some(day);
    }
    for word in words.iter().skip(last).take(3) {
        if word.sentence != sentence {
            break;
        }
        if let Some(day) = weekday(&text[word.span.clone()]) {
            return Some(day);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    //! Written dates and times: each common form reads, alone or as an instant across a sentence.

    use super::super::{Prose, Wanted};
    use crate::calendar::parse_date;

    fn day(text: &str) -> i64 {
        parse_date(text).expect("a date")
    }

    fn mentions_date(answer: &str, date: &str) -> bool {
        !Prose::new(answer)
            .mentions(&Wanted::Date(day(date)))
            .is_empty()
    }

    #[test]
    fn dates_in_written_forms() {
        for answer in [
            "It is due 2026-01-29.",
            "Due on January 29, 2026.",
            "Due Jan 29.",
            "Due 29 January 2026",
            "due on the 29th of January",
            "Thursday, January 29",
            "Thu 29 Jan 2026",
            "on January twenty-ninth, 2026",
            "the twenty-ninth of January",
            "on 1/29",
            "1/29/2026",
            "29/01/2026",
            "29.01.2026",
            "2026/01/29",
            "at 2026-01-29T10:00:00Z",
        ] {
            assert!(mentions_date(answer, "2026-01-29"), "{answer}");
        }
        for answer in [
            "due 2026-01-28",
            "due January 30",
            "Friday, January 29",
            "2026-01-29, a Friday",
            "January 29, 2025",
            "in 29 days",
        ] {
            assert!(!mentions_date(answer, "2026-01-29"), "{answer}");
        }
    }

    #[test]
    fn times_in_written_forms() {
        let ten = Wanted::Time(10 * 3600);
        for answer in [
            "at 10:00",
            "at 10 AM",
            "10am UTC",
            "10:00:00",
            "at 10 a.m.",
            "at ten o'clock",
            "from 10 o’clock UTC",
        ] {
            assert!(!Prose::new(answer).mentions(&ten).is_empty(), "{answer}");
        }
        for answer in ["at 10 PM", "10:30", "at 11:00"] {
            assert!(Prose::new(answer).mentions(&ten).is_empty(), "{answer}");
        }
        assert!(
            !Prose::new("at noon")
                .mentions(&Wanted::Time(12 * 3600))
                .is_empty()
        );
        assert!(
            !Prose::new("at three o'clock in the afternoon")
                .mentions(&Wanted::Time(15 * 3600))
                .is_empty()
        );
        assert!(
            Prose::new("at ten o'clock in the evening")
                .mentions(&ten)
                .is_empty()
        );
    }

    #[test]
    fn instants_as_spelled_or_as_date_and_time_in_one_sentence() {
        let instant = Wanted::from_text("2026-01-16T10:00:00Z");
        for answer in [
            "Booked for 2026-01-16T10:00:00+00:00.",
            "Booked on January 16 at 10:00 UTC.",
            "Friday, Jan 16, 10 AM",
        ] {
            assert!(
                !Prose::new(answer).mentions(&instant).is_empty(),
                "{answer}"
            );
        }
        for answer in [
            "Booked on January 16. It starts at 10:00.",
            "January 16 at 9:30",
        ] {
            assert!(Prose::new(answer).mentions(&instant).is_empty(), "{answer}");
        }
    }
}
