//! Pairing a value with what it describes: `7 contacts and 12 orders` pairs 7 with contacts,
//! so an answer that swaps the two figures fails. A value pairs with the nearest label in its
//! sentence, counted in words, where crossing into another clause (`,` `and` `or` ` + `) costs
//! more than any distance inside one, and crossing a `;` more still. When its sentence names
//! no label, the layout decides: in a Markdown table the header of its column; in a bulleted
//! list the line above the list; under a heading line ending in `:` (or a `#` heading) that
//! heading; else, for a value that must be stated, the sentence before it on the same line. Labels match the start of a word
//! (`contact` finds `contacts`).

use std::ops::Range;

use crate::prose::Prose;

/// Words of distance that crossing one clause boundary costs.
const CLAUSE_COST: usize = 100;

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
pub fn paired(
    prose: &Prose,
    span: &Range<usize>,
    own: &[String],
    all: &[String],
    ties: Ties,
) -> bool {
    let sentence = prose.sentence_of(span.start);
    if let Some(pairing) = nearest(prose, span, sentence, own, all) {
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
    if ties == Ties::Own && sentence > 0 && sentences[sentence - 1].start >= line.start {
        return nearest(prose, span, sentence - 1, own, all).is_some_and(|p| p.holds(ties));
    }
    false
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
) -> Option<Nearest> {
    let mut best: Option<Nearest> = None;
    let labels = all
        .iter()
        .map(|label| (label, own.contains(label)))
        .chain(own.iter().map(|label| (label, true)));
    for (label, is_own) in labels {
        for found in prose.label(label) {
            let overlaps = found.start < span.end && span.start < found.end;
            if overlaps || prose.sentence_of(found.start) != sentence {
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

/// Words strictly between two spans, plus [`CLAUSE_COST`] per clause boundary between them
/// ([`RECORD_COST`] for a `;`).
fn distance(prose: &Prose, a: &Range<usize>, b: &Range<usize>) -> usize {
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
            } else {
                CLAUSE_COST
            }
        })
        .sum();
    words + boundaries
}

#[cfg(test)]
mod tests {
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
