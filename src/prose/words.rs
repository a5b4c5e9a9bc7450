//! Numbers written in English words: `six`, `twelve`, `forty-eight thousand`, `one hundred
//! and twenty`, `a million`, `a dozen`.

use std::ops::Range;

use super::{NumberMention, Prose};

const SMALL: [(&str, u64); 28] = [
    ("zero", 0),
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("thirteen", 13),
    ("fourteen", 14),
    ("fifteen", 15),
    ("sixteen", 16),
    ("seventeen", 17),
    ("eighteen", 18),
    ("nineteen", 19),
    ("twenty", 20),
    ("thirty", 30),
    ("forty", 40),
    ("fifty", 50),
    ("sixty", 60),
    ("seventy", 70),
    ("eighty", 80),
    ("ninety", 90),
];

const SCALE: [(&str, u64); 3] = [
    ("thousand", 1_000),
    ("million", 1_000_000),
    ("billion", 1_000_000_000),
];

fn small(word: &str) -> Option<u64> {
    SMALL
        .iter()
        .find(|(name, _)| *name == word)
        .map(|(_, n)| *n)
}

fn scale(word: &str) -> Option<u64> {
    SCALE
        .iter()
        .find(|(name, _)| *name == word)
        .map(|(_, n)| *n)
}

/// Every number written in words in `prose`, skipping words inside `taken`.
pub(super) fn number_words(prose: &Prose, taken: &[Range<usize>]) -> Vec<NumberMention> {
    let text = prose.text();
    let words = prose.words();
    let word = |i: usize| &text[words[i].span.clone()];
    let mut found = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let first = word(i);
        let starts = small(first).is_some()
            || (first == "a"
                && i + 1 < words.len()
                && (word(i + 1) == "hundred"
                    || scale(word(i + 1)).is_some()
                    || word(i + 1) == "dozen"));
        if !starts || super::overlaps(&words[i].span, taken) {
            i += 1;
            continue;
        }
        let start = i;
        let (mut total, mut current, mut any) = (0u64, 0u64, false);
        let mut last = i;
        while i < words.len() {
            let w = word(i);
            // Words of one number are separated by spaces or hyphens only.
            if i > start {
                let gap = &text[words[i - 1].span.end..words[i].span.start];
                if !(gap == " " || gap == "-") {
                    break;
                }
            }
            if let Some(n) = small(w) {
                current += n;
            } else if w == "a"
                && i + 1 < words.len()
                && matches!(
                    word(i + 1),
                    "hundred" | "dozen" | "thousand" | "million" | "billion"
                )
            {
                current = 1;
            } else if w == "hundred" && any {
                current = current.max(1) * 100;
            } else if w == "dozen" && any {
                current = current.max(1) * 12;
            } else if let Some(factor) = scale(w).filter(|_| any) {
                total += current.max(1) * factor;
                current = 0;
            } else if w == "and" && i + 1 < words.len() && small(word(i + 1)).is_some() && any {
                i += 1;
                continue;
            } else {
                break;
            }
            any = true;
            last = i;
            i += 1;
        }
        if !any {
            i = start + 1;
            continue;
        }
        let value = total + current;
        let end = words[last].span.end;
        found.push(NumberMention {
            span: words[start].span.start..end,
            readings: vec![(value as f64, 0.0)],
            significant: 0,
            percent: NumberMention::percent_after(text, end),
        });
        i = last + 1;
    }
    found
}

#[cfg(test)]
mod tests {
    //! Number words: `forty-eight thousand`, `a dozen` and the like make the right numbers.

    use super::super::Prose;

    fn values(text: &str) -> Vec<f64> {
        Prose::new(text)
            .numbers()
            .iter()
            .map(|number| number.readings[0].0)
            .collect()
    }

    #[test]
    fn words_make_numbers() {
        assert_eq!(values("six units"), [6.0]);
        assert_eq!(values("Forty-eight thousand US dollars"), [48_000.0]);
        assert_eq!(values("one hundred and twenty-five thousand"), [125_000.0]);
        assert_eq!(values("a million and a half"), [1_000_000.0]);
        assert_eq!(values("twenty (20) sensor kits"), [20.0, 20.0]);
        assert_eq!(values("a dozen"), [12.0]);
        assert_eq!(values("a hundred and 12"), [100.0, 12.0]);
        assert_eq!(values("two, three"), [2.0, 3.0]);
        assert_eq!(values("a plan"), Vec::<f64>::new());
    }
}
