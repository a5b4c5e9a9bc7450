//! Pairing a value with what it describes: `7 contacts and 12 orders` pairs 7 with contacts,
//! so an answer that swaps the two figures fails. A value pairs with the nearest label in its
//! sentence, counted in words, where crossing into another clause (`,` `;` `and` `but`) costs
//! more than any distance inside one; a heading line ending in `:` lends its labels to the
//! lines under it. Labels match the start of a word (`contact` finds `contacts`).

use std::ops::Range;

use crate::prose::Prose;

/// Words of distance that crossing one clause boundary costs.
const CLAUSE_COST: usize = 100;

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
    // A heading line ending in `:` just above ("Q1 2026:" over "- forecast $186K").
    let text = prose.text();
    let sentences = prose.sentences();
    let heading = (0..sentence)
        .rev()
        .find(|&i| !text[sentences[i].clone()].trim().is_empty());
    match heading {
        Some(i) if text[sentences[i].clone()].trim_end().ends_with(':') => {
            nearest(prose, span, i, own, all).is_some_and(|pairing| pairing.holds(ties))
        }
        _ => false,
    }
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

/// Words strictly between two spans, plus [`CLAUSE_COST`] per clause boundary between them.
fn distance(prose: &Prose, a: &Range<usize>, b: &Range<usize>) -> usize {
    let (first, second) = if a.start <= b.start { (a, b) } else { (b, a) };
    let from = prose.word_at(first.end);
    let to = prose.word_at(second.start);
    let words = to.saturating_sub(from);
    let clauses = prose
        .clause_of(second.start)
        .abs_diff(prose.clause_of(first.start));
    words + clauses * CLAUSE_COST
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
    fn no_label_near_a_value_is_no_pairing() {
        assert!(!pairs(
            "The total is 7.",
            7.0,
            "contact",
            &["contact", "order"]
        ));
    }
}
