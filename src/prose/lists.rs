//! Enumerations: the items of a written list (`a, b and c`, or one bullet per line).

use super::Prose;
use std::ops::Range;

/// Words that join or end items rather than being part of one.
const JOINERS: [&str; 6] = ["and ", "or ", "plus ", "also ", "as well as ", "the "];

impl Prose {
    /// The items of the list holding byte `at`: the run of comma-, `;`-, `/`-, `and`- or
    /// `or`-separated items in its sentence and line, or, when its line is a bullet (`-`, `*`,
    /// `•`, `1.`), every item of the block of bullet lines around it. A label before a colon
    /// (`ERP: orders, invoices`) and parenthesised remarks are not items. Each span is trimmed
    /// and points into [`Prose::text`]; an empty text gives no items.
    pub fn enumeration(&self, at: usize) -> Vec<Range<usize>> {
        let line = self.line_of(at);
        if self.text[line.clone()].trim_start().starts_with('|') {
            return self.table_column(line, at);
        }
        let lines = if bullet(&self.text[line.clone()]).is_some() {
            self.block(line, |line| bullet(&self.text[line.clone()]).is_some())
        } else {
            let sentence = self
                .sentences()
                .get(self.sentence_of(at))
                .cloned()
                .unwrap_or(line.clone());
            std::iter::once(line.start.max(sentence.start)..line.end.min(sentence.end)).collect()
        };
        lines
            .into_iter()
            .flat_map(|line| self.items_of_line(line))
            .collect()
    }

    /// The cells of the column holding byte `at` in the table whose row is `line`, without
    /// the header row (the one above the `|---|` rule).
    fn table_column(&self, line: Range<usize>, at: usize) -> Vec<Range<usize>> {
        let row = |line: &Range<usize>| self.text[line.clone()].trim_start().starts_with('|');
        let rows = self.block(line.clone(), row);
        let column = self.text[line.start..at].matches('|').count();
        let rule =
            |line: &Range<usize>| self.text[line.clone()].chars().all(|c| "|-: ".contains(c));
        // The row above the rule is the header.
        let header = rows.iter().position(&rule).and_then(|i| i.checked_sub(1));
        rows.iter()
            .enumerate()
            .filter(|(i, line)| !rule(line) && Some(*i) != header)
            .filter_map(|(_, line)| {
                let text = &self.text[line.clone()];
                let mut offset = 0;
                for (index, cell) in text.split('|').enumerate() {
                    if index == column {
                        return trim_item(text, offset..offset + cell.len())
                            .map(|span| line.start + span.start..line.start + span.end);
                    }
                    offset += cell.len() + 1;
                }
                None
            })
            .collect()
    }

    /// The contiguous lines around `line` that `keep` accepts (`line` itself always).
    fn block(&self, line: Range<usize>, keep: impl Fn(&Range<usize>) -> bool) -> Vec<Range<usize>> {
        let mut block = vec![line.clone()];
        let mut start = line.start;
        while start > 0 {
            let previous = self.line_of(start - 1);
            if !keep(&previous) {
                break;
            }
            start = previous.start;
            block.insert(0, previous);
        }
        let mut end = line.end;
        while end < self.text.len() {
            let next = self.line_of(end + 1);
            if next.start <= end || !keep(&next) {
                break;
            }
            end = next.end;
            block.push(next);
        }
        block
    }

    /// The items written on one line: after its bullet and label, without remarks in
    /// parentheses, split at separators.
    fn items_of_line(&self, line: Range<usize>) -> Vec<Range<usize>> {
        let text = &self.text[line.clone()];
        let mut start = bullet(text).unwrap_or(0);
        if let Some(colon) = text[start..].rfind(": ") {
            start += colon + 2;
        } else if text[start..].trim_end().ends_with(':') {
            return Vec::new();
        }
        let mut items = Vec::new();
        let mut item_start = start;
        let mut depth = 0usize;
        let bytes = text.as_bytes();
        let mut i = start;
        let push = |from: usize, to: usize, items: &mut Vec<Range<usize>>| {
            if let Some(span) = trim_item(text, from..to) {
                items.push(line.start + span.start..line.start + span.end);
            }
        };
        while i < bytes.len() {
            match bytes[i] {
                b'(' | b'[' => {
                    if depth == 0 {
                        push(item_start, i, &mut items);
                    }
                    depth += 1;
                }
                b')' | b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        item_start = i + 1;
                    }
                }
                b',' | b';' | b'/' | b'&' if depth == 0 => {
                    push(item_start, i, &mut items);
                    item_start = i + 1;
                }
                b' ' if depth == 0 => {
                    let rest = &text[i + 1..];
                    if let Some(joiner) = ["and ", "or "].iter().find(|j| rest.starts_with(**j)) {
                        push(item_start, i, &mut items);
                        item_start = i + 1 + joiner.len();
                        i = item_start;
                        continue;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if depth == 0 {
            push(item_start, bytes.len(), &mut items);
        }
        items
    }
}

/// Where the item text starts after a bullet marker (`- `, `* `, `• `, `1. `, `1) `), if the
/// line is a bullet.
fn bullet(line: &str) -> Option<usize> {
    let trimmed = line.trim_start();
    let indent = line.len() - trimmed.len();
    for marker in ["- ", "* ", "• ", "+ "] {
        if trimmed.starts_with(marker) {
            return Some(indent + marker.len());
        }
    }
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &trimmed[digits..];
    (digits > 0 && (rest.starts_with(". ") || rest.starts_with(") ")))
        .then_some(indent + digits + 2)
}

/// `span` of `text` without surrounding spaces, joining words and end punctuation; `None`
/// when nothing is left.
fn trim_item(text: &str, span: Range<usize>) -> Option<Range<usize>> {
    let mut start = span.start;
    let mut end = span.end;
    loop {
        let item = &text[start..end];
        let trimmed = item.trim_start();
        start += item.len() - trimmed.len();
        match JOINERS.iter().find(|joiner| trimmed.starts_with(**joiner)) {
            Some(joiner) => start += joiner.len(),
            None => break,
        }
    }
    let item = &text[start..end];
    end = start
        + item
            .trim_end_matches(|c: char| c.is_whitespace() || ".!?:\"'`".contains(c))
            .len();
    let item = &text[start..end];
    let trimmed = item.trim_start_matches(['"', '\'', '`']);
    start += item.len() - trimmed.len();
    (start < end).then_some(start..end)
}
