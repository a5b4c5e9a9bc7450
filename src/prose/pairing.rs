//! Pairing a value with what it describes: `7 contacts and 12 orders` pairs 7 with contacts,
//! so an answer that swaps the two figures fails. A value pairs with the nearest label in its
//! sentence, counted in words, where crossing into another clause (`,` `and` `or` ` + `) costs
//! more than any distance inside one, and crossing a `;` more still. When its sentence names
//! no label, the layout decides: in a Markdown table the header of its column; in a bulleted
//! list the line above the list; under a heading line ending in `:` (or a `#` heading) that
//! heading; else the sentence before it on the same line, for a value that must be stated or
//! in a sentence that opens with a pronoun (`That's Initech's invoice.`). Labels match the start of a word
//! (`contact` finds `contacts`).

use std::ops::Range;

use super::Prose;

/// Words of distance that crossing one clause boundary back to a label costs.
const CLAUSE_COST: usize = 100;

/// Words of distance that crossing one clause boundary forward to a label costs: in lists,
/// what describes a record follows its name (`Maria Garcia (C-005), buyer, maria@...`), so a
/// label in a later clause is a weaker claim than one in an earlier clause.
const FORWARD_CLAUSE_COST: usize = 300;

/// Words of distance that crossing a `;` costs.
const RECORD_COST: usize = 1000;

/// How a tie between an own label and another one, at the same distance, is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ties {
    /// A tie pairs the value with its own label (a value that must be stated).
    Own,
    /// A tie pairs it with neither (a value that must not appear, or need not).
    Neither,
}

/// Whether the mention at `span` pairs with one of `own` labels rather than another of
/// `all` labels; no label near it at all is no pairing.
pub(crate) fn paired(
    prose: &Prose,
    span: &Range<usize>,
    own: &[String],
    all: &[String],
    ties: Ties,
) -> bool {
    let sentence = prose.sentence_of(span.start);
    if let Some(pairing) = nearest(prose, span, sentence, own, all, ties) {
        return pairing.holds(ties);
    }
    let text = prose.text();
    let line = prose.line_of(span.start);
    if let Some(header) = table_header_cell(text, &line, span.start) {
        return labels_in(prose, &header, own, all).is_some_and(|p| p.holds(ties));
    }
    if let Some(heading) = heading_of(text, &line) {
        return labels_in(prose, &heading, own, all).is_some_and(|p| p.holds(ties));
    }
    // The sentence before, on the same line ("Ada is the CTO. Her email is ..."): only for a
    // value that must be stated; a value that must not appear, or need not, is not pinned on
    // a label it does not share a sentence with ("D-001 is in negotiation. D-002 is in
    // proposal.").
    let sentences = prose.sentences();
    let refers_back = starts_with_pronoun(prose, sentence);
    if (ties == Ties::Own || refers_back)
        && sentence > 0
        && sentences[sentence - 1].start >= line.start
    {
        return nearest(prose, span, sentence - 1, own, all, ties).is_some_and(|p| p.holds(ties));
    }
    false
}

/// Words that open a sentence about what the sentence before named.
const PRONOUNS: [&str; 19] = [
    "it", "its", "it's", "that", "that's", "this", "he", "he's", "she", "she's", "his", "her",
    "they", "they're", "their", "these", "those", "there's", "here's",
];

/// Whether `sentence` opens with a pronoun (`That's Initech's invoice.`).
fn starts_with_pronoun(prose: &Prose, sentence: usize) -> bool {
    let span = &prose.sentences()[sentence];
    let first = prose.word_at(span.start);
    prose
        .words()
        .get(first)
        .filter(|word| word.span.start < span.end)
        .is_some_and(|word| PRONOUNS.contains(&&prose.text()[word.span.clone()]))
}

/// Which labels occur in `span` (a header cell or a heading): own, other, or both.
fn labels_in(
    prose: &Prose,
    span: &Range<usize>,
    own: &[String],
    all: &[String],
) -> Option<Nearest> {
    let inside = |label: &String| {
        prose
            .label(label)
            .iter()
            .any(|found| found.start >= span.start && found.end <= span.end)
    };
    let has_own = own.iter().any(inside);
    let has_other = all.iter().filter(|label| !own.contains(label)).any(inside);
    (has_own || has_other).then_some(Nearest {
        cost: 0,
        own: has_own,
        other: has_other,
    })
}

fn is_table_row(text: &str) -> bool {
    text.trim_start().starts_with('|')
}

fn is_bullet(text: &str) -> bool {
    let trimmed = text.trim_start();
    trimmed.starts_with("- ")
        || trimmed.starts_with("* ")
        || trimmed.starts_with("• ")
        || trimmed.split_once(". ").is_some_and(|(number, _)| {
            !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())
        })
}

/// The previous lines above `line`, nearest first, as spans.
fn lines_above(text: &str, line: &Range<usize>) -> impl Iterator<Item = Range<usize>> {
    let mut end = line.start;
    std::iter::from_fn(move || {
        if end == 0 {
            return None;
        }
        let stop = end - 1;
        let start = text[..stop].rfind('\n').map_or(0, |i| i + 1);
        end = start;
        Some(start..stop)
    })
}

/// For a value in a Markdown table row, the header cell of its column.
fn table_header_cell(text: &str, line: &Range<usize>, at: usize) -> Option<Range<usize>> {
    if !is_table_row(&text[line.clone()]) {
        return None;
    }
    let column = text[line.start..at].matches('|').count();
    let header = lines_above(text, line)
        .take_while(|above| is_table_row(&text[above.clone()]))
        .last()?;
    let row = &text[header.clone()];
    let mut bars = row.match_indices('|').map(|(i, _)| header.start + i);
    let open = bars.nth(column.checked_sub(1)?)?;
    let close = bars.next().unwrap_or(header.end);
    Some(open + 1..close)
}

/// The heading a line sits under: for a bullet, the nearest line above that is not a bullet;
/// otherwise the nearest line above that ends with `:` or is a `#` heading, over plain lines
/// only (a blank line or a list ends a heading's reach).
fn heading_of(text: &str, line: &Range<usize>) -> Option<Range<usize>> {
    let heading_like = |span: &Range<usize>| {
        let content = text[span.clone()].trim();
        content.ends_with(':') || content.starts_with('#')
    };
    if is_bullet(&text[line.clone()]) {
        return lines_above(text, line).find(|above| {
            !text[above.clone()].trim().is_empty() && !is_bullet(&text[above.clone()])
        });
    }
    // A heading covers the plain lines under it, up to a blank line or a list.
    lines_above(text, line)
        .take_while(|above| {
            let content = &text[above.clone()];
            !content.trim().is_empty() && !is_bullet(content)
        })
        .find(heading_like)
}

/// The labels at the nearest distance: whether one of them is own, and whether one is not.
#[derive(Debug, Clone, Copy)]
struct Nearest {
    cost: usize,
    own: bool,
    other: bool,
}

impl Nearest {
    fn holds(self, ties: Ties) -> bool {
        self.own && (ties == Ties::Own || !self.other)
    }
}

/// The nearest labels to `span` in `sentence`; `None` when the sentence holds none.
fn nearest(
    prose: &Prose,
    span: &Range<usize>,
    sentence: usize,
    own: &[String],
    all: &[String],
    ties: Ties,
) -> Option<Nearest> {
    let mut best: Option<Nearest> = None;
    let values = prose.value_spans();
    // A label right after another value ("14 days") is that value's noun, not this one's.
    let bound_elsewhere = |found: &Range<usize>| {
        values.iter().any(|other| {
            let elsewhere = other.end <= span.start || other.start >= span.end;
            elsewhere
                && other.end <= found.start
                && prose.clause_of(other.start) == prose.clause_of(found.start)
                && adjacent(prose, other, found)
        }) && !adjacent(prose, span, found)
    };
    let labels = all
        .iter()
        .map(|label| (label, own.contains(label)))
        .chain(own.iter().map(|label| (label, true)));
    for (label, is_own) in labels {
        for found in prose.label(label) {
            let overlaps = found.start < span.end && span.start < found.end;
            if overlaps || prose.sentence_of(found.start) != sentence || bound_elsewhere(&found) {
                continue;
            }
            // A value that need not or must not appear is only tied to a label before it or
            // in its own clause: "dated the 15th, and payable in 14 days" states no due date.
            let later_clause = found.start > span.start
                && prose.clause_of(found.start) != prose.clause_of(span.start);
            if ties == Ties::Neither && later_clause {
                continue;
            }
            let cost = distance(prose, span, &found);
            best = match best {
                Some(best) if best.cost < cost => Some(best),
                Some(best) if best.cost == cost => Some(Nearest {
                    cost,
                    own: best.own || is_own,
                    other: best.other || !is_own,
                }),
                _ => Some(Nearest {
                    cost,
                    own: is_own,
                    other: !is_own,
                }),
            };
        }
    }
    best
}

/// Whether no word stands between `a` and `b`.
fn adjacent(prose: &Prose, a: &Range<usize>, b: &Range<usize>) -> bool {
    let (first, second) = if a.start <= b.start { (a, b) } else { (b, a) };
    prose.word_at(second.start) <= prose.word_at(first.end)
}

/// Words strictly between the value at `a` and the label at `b`, plus [`CLAUSE_COST`] per
/// clause boundary between them when the label comes first ([`FORWARD_CLAUSE_COST`] when it
/// comes after; [`RECORD_COST`] for a `;` either way).
fn distance(prose: &Prose, a: &Range<usize>, b: &Range<usize>) -> usize {
    let label_after = b.start > a.start;
    let (first, second) = if a.start <= b.start { (a, b) } else { (b, a) };
    let from = prose.word_at(first.end);
    let to = prose.word_at(second.start);
    let words = to.saturating_sub(from);
    let (first_clause, second_clause) =
        (prose.clause_of(first.start), prose.clause_of(second.start));
    let boundaries: usize = (first_clause..second_clause)
        .map(|clause| {
            if prose.clause_ends_record(clause) {
                RECORD_COST
            } else if label_after {
                FORWARD_CLAUSE_COST
            } else {
                CLAUSE_COST
            }
        })
        .sum();
    words + boundaries
}

/// A record's field value stated next to another record: what [`misattribution`] finds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Misattribution {
    /// The value, as a person reads it (`"wei.chen@acme.example"`, `980`).
    pub value: String,
    /// The field it belongs to.
    pub field: String,
    /// The first name of the record it belongs to.
    pub owner: String,
    /// The first name of the record it was stated for.
    pub stated_for: String,
}

impl std::fmt::Display for Misattribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.owner.is_empty() {
            // A labelled field stated with a wrong value (`owner` holds nothing).
            write!(
                f,
                "states {} as the `{}` of {}",
                self.value, self.field, self.stated_for
            )
        } else {
            write!(
                f,
                "states {} (the `{}` of {}) for {}",
                self.value, self.field, self.owner, self.stated_for
            )
        }
    }
}

/// The first value of one record's `fields` that `prose` states next to another record (paired
/// with that record's name, as values pair with labels; ties pair with neither); `None` when
/// every stated value sits with its own record. Records are named by their `by` fields; a
/// value inside a record's name ("Hoshi Robotics" in "Hoshi Robotics analytics") is part of
/// the name, and a value that is also one of the record's own (in any listed field) is its.
pub(crate) fn misattribution(
    prose: &Prose,
    records: &[&serde_json::Map<String, serde_json::Value>],
    by: &[String],
    fields: &[String],
    labels: &std::collections::BTreeMap<String, Vec<String>>,
) -> Option<Misattribution> {
    let text_of = |value: &serde_json::Value| match value {
        serde_json::Value::String(text) => Some(text.clone()),
        serde_json::Value::Number(number) => Some(number.to_string()),
        _ => None,
    };
    let names: Vec<Vec<String>> = records
        .iter()
        .map(|record| {
            by.iter()
                .filter_map(|field| record.get(field).and_then(text_of))
                .collect()
        })
        .collect();
    let all_names: Vec<String> = names.iter().flatten().cloned().collect();
    let name_spans: Vec<Range<usize>> = all_names
        .iter()
        .flat_map(|name| prose.label(name))
        .collect();
    let first = |names: &[String], otherwise: &str| {
        names
            .first()
            .cloned()
            .unwrap_or_else(|| otherwise.to_owned())
    };
    for (i, record) in records.iter().enumerate() {
        // A value that is one of the record's own (in any of the fields) may be that field.
        let own_values: Vec<&serde_json::Value> = fields
            .iter()
            .filter_map(|field| record.get(field))
            .collect();
        for field in fields {
            for (j, other) in records.iter().enumerate() {
                let Some(value) = other.get(field).filter(|_| i != j) else {
                    continue;
                };
                let same = own_values
                    .iter()
                    .any(|own| crate::values::matches(own, value, "", false).is_ok());
                let Some(wanted) = super::Wanted::from_json(value).filter(|_| !same) else {
                    continue;
                };
                let misplaced = prose.mentions(&wanted).iter().any(|span| {
                    !name_spans
                        .iter()
                        .any(|name| name.start <= span.start && span.end <= name.end)
                        && paired(prose, span, &names[i], &all_names, Ties::Neither)
                });
                if misplaced {
                    return Some(Misattribution {
                        value: wanted.describe(),
                        field: field.clone(),
                        owner: first(&names[j], "another record"),
                        stated_for: first(&names[i], "a record"),
                    });
                }
            }
        }
    }
    labelled_mismatch(prose, records, &names, &all_names, &name_spans, labels)
}

/// Whether a word right after the value at `span` (`2 reserved`), or right before it with only
/// a space between (`reorder point 10`, `expansion 84,000`), is a word of no label: the value
/// describes that, not a labelled field or value.
/// Words that sit next to a value without being what it counts: articles, prepositions,
/// verbs of being and having, hedges.
const FUNCTION_WORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "of",
    "on",
    "in",
    "at",
    "to",
    "for",
    "by",
    "with",
    "from",
    "and",
    "or",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "has",
    "have",
    "had",
    "it",
    "its",
    "about",
    "around",
    "roughly",
    "approximately",
    "approx",
    "nearly",
    "almost",
    "over",
    "under",
    "only",
    "just",
    "some",
    "all",
    "than",
    "more",
    "less",
    "up",
    "down",
    "total",
    "totaling",
    "totalling",
    "plus",
    "minus",
    "another",
    "still",
    "now",
    "currently",
    "so",
    "that",
    "which",
    "there",
    "these",
    "those",
    "this",
    "each",
    "per",
    "every",
    "exactly",
    "least",
    "most",
    "another",
    "we",
    "you",
    "they",
    "he",
    "she",
    "i",
    "them",
    "our",
    "your",
    "their",
    "his",
    "her",
    "will",
    "would",
    "can",
    "could",
    "should",
    "may",
    "might",
    "must",
    "do",
    "does",
    "did",
    "not",
    "no",
    "as",
    "into",
    "out",
    "off",
    "if",
    "then",
    "also",
    "too",
];

pub(crate) fn bound_to_other_noun(
    prose: &Prose,
    span: &Range<usize>,
    field_words: &[String],
) -> bool {
    let text = prose.text();
    let label_words: Vec<String> = field_words
        .iter()
        .flat_map(|label| {
            super::normalize(label)
                .split(|c: char| !c.is_alphanumeric())
                .filter(|word| !word.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    let unlabelled = |word: &super::Word| {
        let word_text = &text[word.span.clone()];
        let singular = word_text.strip_suffix('s').unwrap_or(word_text);
        !FUNCTION_WORDS.contains(&word_text)
            && word_text.chars().next().is_some_and(char::is_alphabetic)
            && prose.clause_of(word.span.start) == prose.clause_of(span.start)
            && !label_words.iter().any(|label| {
                label == word_text || label == singular || label.starts_with(word_text)
            })
    };
    let words = prose.words();
    // The noun right after it (`2 reserved`) ...
    let next = prose.word_at(span.end);
    let after = words.get(next).is_some_and(|word| {
        text.get(span.end..word.span.start)
            .is_some_and(|between| between.trim().is_empty())
            && unlabelled(word)
    });
    // ... or right before it, with nothing but a space between (`reorder point 10`).
    let before = prose
        .word_at(span.start)
        .checked_sub(1)
        .and_then(|i| words.get(i))
        .is_some_and(|word| {
            text.get(word.span.end..span.start)
                .is_some_and(|between| !between.is_empty() && between.chars().all(|c| c == ' '))
                && unlabelled(word)
        });
    // ... or it explains the value before it, in brackets (`84,000 (120,000 at 70%)`).
    let explains = text.get(..span.start).is_some_and(|before| {
        let before = before.trim_end();
        before.ends_with('(')
            && before[..before.len() - 1]
                .trim_end()
                .chars()
                .last()
                .is_some_and(|c| c.is_ascii_digit() || c == 'k' || c == '%')
    });
    after || before || explains
}

/// A value stated next to a record and a field's label that is not the record's value of
/// that field; `None` when there is none.
fn labelled_mismatch(
    prose: &Prose,
    records: &[&serde_json::Map<String, serde_json::Value>],
    names: &[Vec<String>],
    all_names: &[String],
    name_spans: &[Range<usize>],
    labels: &std::collections::BTreeMap<String, Vec<String>>,
) -> Option<Misattribution> {
    let field_words: Vec<String> = labels.values().flatten().cloned().collect();
    let within = |a: &Range<usize>, b: &Range<usize>| b.start <= a.start && a.end <= b.end;
    for (i, record) in records.iter().enumerate() {
        for (field, words) in labels {
            // The kind of value the field holds, from this record or, when it has none,
            // from another record's.
            let present = |value: &&serde_json::Value| !value.is_null();
            let sample = record.get(field).filter(present).or_else(|| {
                records
                    .iter()
                    .find_map(|other| other.get(field).filter(present))
            });
            let Some(kind) = sample.and_then(super::Wanted::from_json) else {
                continue;
            };
            let own = record
                .get(field)
                .filter(present)
                .and_then(super::Wanted::from_json)
                .map(|wanted| match wanted {
                    super::Wanted::Instant(seconds) => {
                        super::Wanted::Date(seconds.div_euclid(86_400))
                    }
                    other => other,
                });
            let right: Vec<Range<usize>> = own
                .as_ref()
                .map(|own| prose.mentions(own))
                .unwrap_or_default();
            let name_words: Vec<String> = all_names.to_vec();
            let binding_words: Vec<String> =
                field_words.iter().chain(&name_words).cloned().collect();
            let wrong = prose.spans_of_kind(&kind).into_iter().find(|span| {
                !prose.is_percent(span)
                    && !bound_to_other_noun(prose, span, &binding_words)
                    && !right.iter().any(|ok| within(span, ok) || within(ok, span))
                    && !name_spans.iter().any(|name| within(span, name))
                    && paired(prose, span, &names[i], all_names, Ties::Neither)
                    && paired(prose, span, words, &field_words, Ties::Neither)
            });
            if let Some(span) = wrong {
                return Some(Misattribution {
                    value: prose.text()[span].to_owned(),
                    field: field.clone(),
                    owner: String::new(),
                    stated_for: names[i]
                        .first()
                        .cloned()
                        .unwrap_or_else(|| "a record".to_owned()),
                });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    //! Pairing: values take the nearest label in their clause, under headings and by layout.

    use super::*;
    use crate::prose::Wanted;

    fn pairs(answer: &str, value: f64, own: &str, all: &[&str]) -> bool {
        let prose = Prose::new(answer);
        let own = vec![own.to_owned()];
        let all: Vec<String> = all.iter().map(|s| (*s).to_owned()).collect();
        prose
            .mentions(&Wanted::Number {
                value,
                tolerance: None,
            })
            .iter()
            .any(|span| paired(&prose, span, &own, &all, Ties::Own))
    }

    #[test]
    fn values_pair_with_the_nearest_label_in_their_clause() {
        let labels = ["contact", "order"];
        assert!(pairs(
            "Acme has 7 contacts and 12 orders.",
            7.0,
            "contact",
            &labels
        ));
        assert!(pairs(
            "Acme has 7 contacts and 12 orders.",
            12.0,
            "order",
            &labels
        ));
        assert!(!pairs(
            "Acme has 12 contacts and 7 orders.",
            7.0,
            "contact",
            &labels
        ));
        assert!(pairs("Contacts: 7, orders: 12", 7.0, "contact", &labels));
        assert!(!pairs("Contacts: 12, orders: 7", 7.0, "contact", &labels));
        assert!(pairs(
            "| contacts | 7 |\n| orders | 12 |",
            7.0,
            "contact",
            &labels
        ));
        assert!(pairs(
            "There are 12 orders. Contacts number 7.",
            7.0,
            "contact",
            &labels
        ));
    }

    #[test]
    fn a_heading_lends_its_label_to_the_lines_under_it() {
        let labels = ["q1", "q2"];
        let answer = "Q1 2026:\n- forecast $186K\nQ2 2026:\n- forecast $86K";
        assert!(pairs(answer, 186_000.0, "q1", &labels));
        assert!(pairs(answer, 86_000.0, "q2", &labels));
        assert!(!pairs(answer, 86_000.0, "q1", &labels));
    }

    #[test]
    fn table_columns_bullets_and_records_pair_by_layout() {
        let labels = ["q1", "q2"];
        let table = "| | Q1 | Q2 |\n|---|---|---|\n| Forecast | 186,000 | 86,000 |";
        assert!(pairs(table, 186_000.0, "q1", &labels));
        assert!(pairs(table, 86_000.0, "q2", &labels));
        assert!(!pairs(table, 86_000.0, "q1", &labels));
        let bullets =
            "**Q1 2026**\n- closed won: $75K\n- forecast: $186K\n\n**Q2 2026**\n- forecast: $86K";
        assert!(pairs(bullets, 186_000.0, "q1", &labels));
        assert!(pairs(bullets, 86_000.0, "q2", &labels));
        let names = ["ada", "grace"];
        // A `;` ends a record: 120 is two commas from Ada and one `;` from Grace.
        let records = "Ada Lovelace, CTO, 120 open items; Grace Hopper, Engineer, 7 open items";
        assert!(pairs(records, 120.0, "ada", &names));
        assert!(!pairs(records, 120.0, "grace", &names));
        assert!(pairs(records, 7.0, "grace", &names));
        assert!(pairs(
            "Ada Lovelace is the CTO. She has 3 open deals.",
            3.0,
            "ada",
            &names
        ));
    }

    #[test]
    fn no_label_near_a_value_is_no_pairing() {
        assert!(!pairs(
            "The total is 7.",
            7.0,
            "contact",
            &["contact", "order"]
        ));
    }
}
