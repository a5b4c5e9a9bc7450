//! Reading values and claims out of written English, as a person would: numbers in digits or
//! words (`6`, `six`, `$186K`, `1.2 million`), dates and times in their common written forms
//! (`2026-01-29`, `January 29, 2026`, `Thu 29 Jan`, `10 AM`), instants, and phrases together
//! with whether they are negated (`has not shipped`).
//!
//! Final answers and the text an agent writes into the world (a message, an email body) are
//! checked through this module, so the same rules hold wherever a value is looked for in text.
//! It is deterministic and knows no synonyms: it reads forms, not meaning.
//!
//! A [`Prose`] is the text lowercased and normalised (curly quotes and apostrophes straight,
//! dashes and the minus sign `-`, non-breaking spaces plain), cut into words, clauses (at `,`
//! and `;` followed by a space, and at `and`, `but`, `while`, `whereas`) and sentences (at `.`,
//! `!` and `?` followed by a space, and at line breaks). A clause also ends at a spaced `+`,
//! and `or` starts one. Spans are byte ranges into [`Prose::text`].

mod dates;
mod lists;
mod numbers;
mod pairing;
mod words;

use std::ops::Range;

pub(crate) use dates::{DateMention, TimeMention};
pub(crate) use numbers::NumberMention;
pub(crate) use pairing::{Ties, bound_to_other_noun, misattribution, paired};

/// A value to look for in text.
#[derive(Debug, Clone, PartialEq)]
pub enum Wanted {
    /// A number, matched by value: written in digits (with separators, a currency sign, a
    /// `K`/`M`/`B` suffix or a scale word) or in words. It matches when equal within half a
    /// cent; when written with two or more significant digits, also when the value rounds to
    /// it at the precision written (`$186K` for 186,420, `60,870` for 60,869.57); and, with a
    /// `tolerance`, when within that absolute difference.
    Number {
        /// The value.
        value: f64,
        /// The largest absolute difference accepted, when declared.
        tolerance: Option<f64>,
    },
    /// A calendar date (days since 1970-01-01), in any written form; a written form without a
    /// year matches any year, and one with a weekday must name the right weekday.
    Date(i64),
    /// A time of day in seconds after midnight (`10:00`, `10 AM`, `10am`, `noon`).
    Time(u32),
    /// An instant (seconds since the epoch, UTC): an RFC 3339 spelling of it, or its UTC date
    /// and time of day in one sentence.
    Instant(i64),
    /// Text, matched case-insensitively at word boundaries, with `_` read as a space.
    Text(String),
}

impl Wanted {
    /// What a JSON value asks for: a number is a [`Wanted::Number`] (without tolerance); a
    /// string is an instant when it is RFC 3339, a date when it is `YYYY-MM-DD`, a time when
    /// it is `HH:MM` or `HH:MM:SS`, and text otherwise; `true`/`false` are text. `None` for
    /// `null`, arrays and objects.
    pub fn from_json(value: &serde_json::Value) -> Option<Wanted> {
        match value {
            serde_json::Value::Number(number) => Some(Wanted::Number {
                value: number.as_f64()?,
                tolerance: None,
            }),
            serde_json::Value::String(text) => Some(Wanted::from_text(text)),
            serde_json::Value::Bool(flag) => Some(Wanted::Text(flag.to_string())),
            _ => None,
        }
    }

    /// What a string asks for (see [`Wanted::from_json`]).
    pub fn from_text(text: &str) -> Wanted {
        let trimmed = text.trim();
        if let Some(instant) = crate::calendar::parse_instant(trimmed) {
            return Wanted::Instant(instant.seconds);
        }
        if let Some(days) = crate::calendar::parse_date(trimmed) {
            return Wanted::Date(days);
        }
        if let Some(seconds) = dates::clock_time(trimmed) {
            return Wanted::Time(seconds);
        }
        Wanted::Text(text.to_owned())
    }

    /// The value as a person would read it in a message: `186000`, `2026-01-29`, `10:00`.
    pub fn describe(&self) -> String {
        match self {
            Wanted::Number { value, .. } if value.fract() == 0.0 && value.abs() < 1e15 => {
                format!("{value:.0}")
            }
            Wanted::Number { value, .. } => value.to_string(),
            Wanted::Date(days) => crate::calendar::format_date(*days),
            Wanted::Time(seconds) => format!("{:02}:{:02}", seconds / 3600, seconds % 3600 / 60),
            Wanted::Instant(seconds) => crate::calendar::Instant {
                seconds: *seconds,
                fraction: String::new(),
            }
            .canonical(),
            Wanted::Text(text) => format!("\"{text}\""),
        }
    }
}

/// One word: a run of letters and digits (an apostrophe inside counts, as in `hasn't`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Its span in [`Prose::text`].
    pub span: Range<usize>,
    /// The sentence it is in (index into [`Prose::sentences`]).
    pub sentence: usize,
    /// The clause it is in (an index into the text's clauses, in order), counted across the
    /// whole text.
    pub clause: usize,
    /// The stretch a negation reaches across: a clause, except that `and`, `or` and a spaced
    /// `+` do not end it (`not shipped or delivered` negates both).
    pub scope: usize,
}

/// Text read once for every check that looks at it.
#[derive(Debug, Clone)]
pub struct Prose {
    text: String,
    words: Vec<Word>,
    sentences: Vec<Range<usize>>,
    clauses: Vec<Range<usize>>,
    numbers: Vec<NumberMention>,
    dates: Vec<DateMention>,
    times: Vec<TimeMention>,
    instants: Vec<(i64, Range<usize>)>,
}

/// Words that keep what follows them in the same clause from being asserted: negations (a
/// word ending in `n't` too), and conditions and hypotheticals (`if it is overdue`, `it would
/// have been deleted`).
const NEGATORS: [&str; 18] = [
    "not", "no", "never", "none", "nor", "neither", "without", "cannot", "nothing", "nobody",
    "barely", "if", "whether", "unless", "would", "might", "may", "could",
];

/// How many words before a phrase a negator reaches.
const NEGATION_REACH: usize = 4;

/// Conjunctions that start a new clause.
const CLAUSE_WORDS: [&str; 5] = ["and", "but", "or", "while", "whereas"];

impl Prose {
    /// Reads `text`.
    pub fn new(text: &str) -> Prose {
        let text = normalize(text);
        let (sentences, clauses, words) = segment(&text);
        let mut prose = Prose {
            text,
            words,
            sentences,
            clauses,
            numbers: Vec::new(),
            dates: Vec::new(),
            times: Vec::new(),
            instants: Vec::new(),
        };
        prose.instants = dates::instants(&prose.text);
        prose.dates = dates::dates(&prose);
        let instant_spans: Vec<Range<usize>> = prose
            .instants
            .iter()
            .map(|(_, span)| span.clone())
            .collect();
        prose.times = dates::times(&prose.text, &instant_spans);
        let taken: Vec<Range<usize>> = prose
            .instants
            .iter()
            .map(|(_, span)| span.clone())
            .chain(prose.dates.iter().map(|d| d.span.clone()))
            .chain(prose.times.iter().map(|t| t.span.clone()))
            .collect();
        prose.numbers = numbers::numbers(&prose, &taken);
        prose
    }

    /// The normalised, lowercased text every span points into.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The words, in order.
    pub fn words(&self) -> &[Word] {
        &self.words
    }

    /// Sentence spans, in order.
    pub fn sentences(&self) -> &[Range<usize>] {
        &self.sentences
    }

    /// Every number written in the text, in order (digits inside dates, times and identifiers
    /// such as `C-005` or `Q1` are not numbers).
    pub fn numbers(&self) -> &[NumberMention] {
        &self.numbers
    }

    /// Whether the number written at `span` is a percentage (`54%`, `54 percent`).
    pub fn is_percent(&self, span: &Range<usize>) -> bool {
        self.numbers
            .iter()
            .any(|number| number.span == *span && number.percent)
    }

    /// Every date written in the text, in order, with the weekday written beside it.
    pub fn dates(&self) -> &[DateMention] {
        &self.dates
    }

    /// The index of the word at or after byte `at`, or the number of words.
    pub fn word_at(&self, at: usize) -> usize {
        self.words.partition_point(|word| word.span.end <= at)
    }

    /// Where `wanted` is mentioned: the spans of its mentions, in order; empty when it is not.
    pub fn mentions(&self, wanted: &Wanted) -> Vec<Range<usize>> {
        match wanted {
            Wanted::Number { value, tolerance } => self
                .numbers
                .iter()
                .filter(|number| number.matches(*value, *tolerance))
                .map(|number| number.span.clone())
                .collect(),
            Wanted::Date(days) => self
                .dates
                .iter()
                .filter(|date| date.matches(*days))
                .map(|date| date.span.clone())
                .chain(
                    self.instants
                        .iter()
                        .filter(|(seconds, _)| seconds.div_euclid(86_400) == *days)
                        .map(|(_, span)| span.clone()),
                )
                .collect(),
            Wanted::Time(seconds) => self
                .times
                .iter()
                .filter(|time| time.seconds == *seconds)
                .map(|time| time.span.clone())
                .chain(
                    self.instants
                        .iter()
                        .filter(|(at, _)| at.rem_euclid(86_400) == i64::from(*seconds))
                        .map(|(_, span)| span.clone()),
                )
                .collect(),
            Wanted::Instant(seconds) => self.instant_mentions(*seconds),
            Wanted::Text(text) => self.phrase_or_plural(text),
        }
    }

    /// Every number, date, time and instant written in the text, in no particular order.
    pub fn value_spans(&self) -> Vec<Range<usize>> {
        self.numbers
            .iter()
            .map(|n| n.span.clone())
            .chain(self.dates.iter().map(|d| d.span.clone()))
            .chain(self.times.iter().map(|t| t.span.clone()))
            .chain(self.instants.iter().map(|(_, span)| span.clone()))
            .collect()
    }

    /// Every mention of the same kind as `wanted`, whatever its value: numbers for a number,
    /// dates (and instants) for a date, times for a time, instants and dates for an instant,
    /// for an id (`R-001`) every id with the same prefix (`R-002`); nothing for other text.
    pub fn spans_of_kind(&self, wanted: &Wanted) -> Vec<Range<usize>> {
        let instants = self.instants.iter().map(|(_, span)| span.clone());
        let dates = self.dates.iter().map(|date| date.span.clone());
        match wanted {
            // The word `one` is as often a pronoun (`one at a time`) as a number: it states
            // nothing here.
            Wanted::Number { .. } => self
                .numbers
                .iter()
                .filter(|n| &self.text[n.span.clone()] != "one")
                .map(|n| n.span.clone())
                .collect(),
            Wanted::Date(_) | Wanted::Instant(_) => dates.chain(instants).collect(),
            Wanted::Time(_) => self
                .times
                .iter()
                .map(|time| time.span.clone())
                .chain(instants)
                .collect(),
            Wanted::Text(text) => match id_prefix(text) {
                Some(prefix) => self
                    .words
                    .iter()
                    .enumerate()
                    .filter_map(|(i, word)| {
                        // `r-002` is two words, `r` and `002`, with a hyphen between.
                        let next = self.words.get(i + 1)?;
                        let joined = &self.text[word.span.start..next.span.end];
                        let is_id = joined.len() > prefix.len()
                            && joined.starts_with(&prefix)
                            && joined[prefix.len()..].bytes().all(|b| b.is_ascii_digit());
                        is_id.then_some(word.span.start..next.span.end)
                    })
                    .collect(),
                None => Vec::new(),
            },
        }
    }

    /// An instant is mentioned by an RFC 3339 spelling, or by its date and its time of day in
    /// one sentence (the span then covers both).
    fn instant_mentions(&self, seconds: i64) -> Vec<Range<usize>> {
        let mut spans: Vec<Range<usize>> = self
            .instants
            .iter()
            .filter(|(at, _)| *at == seconds)
            .map(|(_, span)| span.clone())
            .collect();
        let day = seconds.div_euclid(86_400);
        let clock = u32::try_from(seconds.rem_euclid(86_400)).unwrap_or(0);
        for date in self.dates.iter().filter(|date| date.matches(day)) {
            let sentence = self.sentence_of(date.span.start);
            for time in self.times.iter().filter(|time| time.seconds == clock) {
                if self.sentence_of(time.span.start) == sentence {
                    spans.push(
                        date.span.start.min(time.span.start)..date.span.end.max(time.span.end),
                    );
                }
            }
        }
        spans
    }

    /// The sentence holding byte `at`.
    pub fn sentence_of(&self, at: usize) -> usize {
        self.sentences
            .partition_point(|sentence| sentence.end <= at)
            .min(self.sentences.len().saturating_sub(1))
    }

    /// Whether the clause at index `clause` ends at a `;` (a stronger break than a comma or a
    /// conjunction: it usually ends a whole record in a list).
    pub fn clause_ends_record(&self, clause: usize) -> bool {
        self.clauses
            .get(clause)
            .is_some_and(|span| self.text[span.clone()].trim_end().ends_with(';'))
    }

    /// The line (between line breaks) holding byte `at`, as a span without its break.
    pub fn line_of(&self, at: usize) -> Range<usize> {
        let start = self.text[..at.min(self.text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |i| start + i);
        start..end
    }

    /// The clause holding byte `at`.
    pub fn clause_of(&self, at: usize) -> usize {
        self.clauses
            .partition_point(|clause| clause.end <= at)
            .min(self.clauses.len().saturating_sub(1))
    }

    /// Where `phrase` occurs, case-insensitively, starting and ending at word boundaries
    /// (`shipped` is not in `unshipped`; a phrase ending in a letter also matches its plural
    /// or other endings only when written so). `_` in either text reads as a space.
    pub fn phrase(&self, phrase: &str) -> Vec<Range<usize>> {
        let wanted = normalize(phrase).trim().to_owned();
        if wanted.is_empty() {
            return Vec::new();
        }
        let bytes = self.text.as_bytes();
        let mut spans = Vec::new();
        let mut from = 0;
        while let Some(found) = self.text[from..].find(&wanted) {
            let start = from + found;
            let end = start + wanted.len();
            let before_ok = start == 0
                || !is_word_byte(bytes[start - 1])
                || !is_word_byte(wanted.as_bytes()[0]);
            let after_ok = end == bytes.len()
                || !is_word_byte(bytes[end])
                || !is_word_byte(wanted.as_bytes()[wanted.len() - 1]);
            if before_ok && after_ok {
                spans.push(start..end);
            }
            from = start + wanted.len().max(1);
            while !self.text.is_char_boundary(from) {
                from += 1;
            }
        }
        spans
    }

    /// [`Prose::phrase`], also where the phrase is followed by a plural ending (`Gateway hub`
    /// in `Gateway hubs`).
    fn phrase_or_plural(&self, phrase: &str) -> Vec<Range<usize>> {
        let mut spans = self.phrase(phrase);
        let ends_in_letter = phrase.chars().last().is_some_and(char::is_alphabetic);
        if ends_in_letter {
            for suffix in ["s", "es"] {
                spans.extend(self.phrase(&format!("{phrase}{suffix}")));
            }
            spans.sort_by_key(|span| span.start);
        }
        spans
    }

    /// Where `label` occurs as the start of a word (`contact` also finds `contacts`), for
    /// pairing values with what they describe.
    pub fn label(&self, label: &str) -> Vec<Range<usize>> {
        let wanted = normalize(label).trim().to_owned();
        if wanted.is_empty() {
            return Vec::new();
        }
        let bytes = self.text.as_bytes();
        let mut spans = Vec::new();
        let mut from = 0;
        while let Some(found) = self.text[from..].find(&wanted) {
            let start = from + found;
            let starts_word = start == 0
                || !is_word_byte(bytes[start - 1])
                || !is_word_byte(wanted.as_bytes()[0]);
            if starts_word {
                spans.push(start..start + wanted.len());
            }
            from = start + wanted.len().max(1);
            while !self.text.is_char_boundary(from) {
                from += 1;
            }
        }
        spans
    }

    /// Whether the words just before byte `at` in its clause negate what starts there (or make
    /// it a condition or a hypothetical): one of `not`, `no`, `never`, `without`, `if`,
    /// `whether`, `would`, ..., or a word ending in `n't`, at most four words before it and
    /// with no `:` or bracket between; `yet to` also negates (`has yet to ship`).
    pub fn is_negated(&self, at: usize) -> bool {
        let first = self.word_at(at);
        let Some(scope) = self
            .words
            .get(first)
            .map(|word| word.scope)
            .or_else(|| self.words.last().map(|word| word.scope))
        else {
            return false;
        };
        let reach = first.saturating_sub(NEGATION_REACH);
        let before = &self.words[reach..first.min(self.words.len())];
        before.iter().enumerate().any(|(i, word)| {
            // A colon or a bracket between them also ends the negator's reach.
            let between = &self.text[word.span.end..at.max(word.span.end)];
            if word.scope != scope || between.contains([':', '(', ')']) {
                return false;
            }
            let text = &self.text[word.span.clone()];
            NEGATORS.contains(&text)
                || text.ends_with("n't")
                || (text == "yet"
                    && before
                        .get(i + 1)
                        .is_some_and(|next| &self.text[next.span.clone()] == "to"))
        })
    }

    /// Whether `phrase` occurs at least once without being negated ([`Prose::is_negated`]),
    /// outside `ignored` spans.
    pub fn says(&self, phrase: &str, ignored: &[Range<usize>]) -> bool {
        self.phrase(phrase)
            .iter()
            .any(|span| !overlaps(span, ignored) && !self.is_negated(span.start))
    }
}

/// The lowercase prefix of an id such as `R-001` or `INV-004` (`r-`, `inv-`); `None` for other
/// text.
fn id_prefix(text: &str) -> Option<String> {
    let (letters, digits) = text.split_once('-')?;
    let is_id = (1..=5).contains(&letters.len())
        && letters.bytes().all(|b| b.is_ascii_alphabetic())
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit());
    is_id.then(|| format!("{}-", letters.to_lowercase()))
}

/// Whether `span` overlaps any of `spans`.
pub(crate) fn overlaps(span: &Range<usize>, spans: &[Range<usize>]) -> bool {
    spans
        .iter()
        .any(|other| span.start < other.end && other.start < span.end)
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte >= 0x80
}

/// Lowercases `text` and writes typographic variants plainly: curly quotes and apostrophes
/// straight, en and em dashes and the minus sign as `-`, non-breaking spaces as spaces, `_`
/// as a space, `**` markup removed.
pub(crate) fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{2018}' | '\u{2019}' | '\u{02bc}' => out.push('\''),
            '\u{201c}' | '\u{201d}' => out.push('"'),
            '\u{2010}'..='\u{2015}' | '\u{2212}' => out.push('-'),
            '\u{00a0}' | '\u{202f}' | '\u{2009}' | '_' => out.push(' '),
            '*' => {}
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// Sentences, clauses and words of normalised text.
fn segment(text: &str) -> (Vec<Range<usize>>, Vec<Range<usize>>, Vec<Word>) {
    let bytes = text.as_bytes();
    let mut sentences = Vec::new();
    let mut clauses = Vec::new();
    let mut words = Vec::new();
    let (mut sentence_start, mut clause_start) = (0, 0);
    let mut scope = 0;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        let next = bytes.get(i + 1).copied();
        let ends_sentence = byte == b'\n'
            || (matches!(byte, b'.' | b'!' | b'?')
                && next.is_none_or(|n| n == b' ' || n == b'\n' || n == b')' || n == b'"'));
        let spaced = |n: Option<u8>| n.is_none_or(|n| n == b' ' || n == b'\n');
        // The comma of a written date (`January 3, 2026`) ends nothing.
        let date_comma = byte == b','
            && i > 0
            && bytes[i - 1].is_ascii_digit()
            && bytes
                .get(i + 2..i + 6)
                .is_some_and(|year| year.iter().all(u8::is_ascii_digit))
            && bytes.get(i + 6).is_none_or(|b| !b.is_ascii_digit());
        let ends_scope = matches!(byte, b',' | b';') && spaced(next) && !date_comma;
        let ends_clause =
            ends_scope || (byte == b'+' && i > 0 && bytes[i - 1] == b' ' && spaced(next));
        if is_word_byte(byte) {
            let start = i;
            while i < bytes.len()
                && (is_word_byte(bytes[i])
                    || (bytes[i] == b'\''
                        && i + 1 < bytes.len()
                        && bytes[i + 1].is_ascii_alphabetic()
                        && i > start))
            {
                i += 1;
            }
            while !text.is_char_boundary(i) {
                i += 1;
            }
            let word = &text[start..i];
            if CLAUSE_WORDS.contains(&word) && start > clause_start {
                clauses.push(clause_start..start);
                clause_start = start;
                if !matches!(word, "and" | "or") {
                    scope += 1;
                }
            }
            words.push(Word {
                span: start..i,
                sentence: sentences.len(),
                clause: clauses.len(),
                scope,
            });
            continue;
        }
        if ends_sentence {
            clauses.push(clause_start..i + 1);
            sentences.push(sentence_start..i + 1);
            sentence_start = i + 1;
            clause_start = i + 1;
            scope += 1;
        } else if ends_clause {
            clauses.push(clause_start..i + 1);
            clause_start = i + 1;
            if ends_scope {
                scope += 1;
            }
        }
        i += 1;
    }
    if sentence_start < bytes.len() || sentences.is_empty() {
        clauses.push(clause_start..bytes.len());
        sentences.push(sentence_start..bytes.len());
    }
    (sentences, clauses, words)
}

#[cfg(test)]
mod tests;
