//! The o200k encoder (GPT-4o and later) over the table build.rs lays out: tiktoken's
//! pre-tokenizer and byte-pair merge, reading the vocabulary in place from the binary. Nothing
//! is built at start-up but the pre-tokenizer's regex; tiktoken-rs builds a hash map of the
//! 200,000 tokens first (two, with the decoder), which took most of a `toolgate lint`.
//!
//! It gives exactly tiktoken's tokens for ordinary text (special tokens are not recognized):
//! the same pieces as tiktoken's pattern (`O200K_BASE_PAT_STR`; see [`PRE_TOKENIZER`] for how
//! its one look-ahead is kept without a backtracking engine), and the same merge, ported from tiktoken's `_byte_pair_merge` and, for pieces of 100 bytes or
//! more, `_byte_pair_merge_large`: join the adjacent pair whose joined bytes have the lowest
//! rank, the leftmost on a tie, until no joined pair is a token. The tests compare it with
//! tiktoken-rs on a large corpus.

use std::collections::BinaryHeap;
use std::sync::LazyLock;

use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

use super::o200k_layout as layout;

/// A token's rank (its id): lower ranks merge first.
pub(super) type Rank = u32;

/// The table build.rs writes: the bucket directory, then the records (see `o200k_layout`).
static TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k.table"));

/// Where the records start in [`TABLE`], after the directory's `BUCKETS + 1` offsets.
const RECORDS: usize = (layout::BUCKETS + 1) * 4;

/// tiktoken's o200k pre-tokenizer, `tiktoken_rs::O200K_BASE_PAT_STR` (a test checks they are
/// the same).
const PATTERN: &str = concat!(
    r#"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"#,
    "|",
    r#"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"#,
    "|",
    r#"\p{N}{1,3}"#,
    "|",
    r#" ?[^\s\p{L}\p{N}]+[\r\n/]*"#,
    "|",
    r#"\s*[\r\n]+"#,
    "|",
    r#"\s+(?!\S)"#,
    "|",
    r#"\s+"#
);

/// The pre-tokenizer, compiled at first use: [`PATTERN`] with its last two branches,
/// `\s+(?!\S)|\s+`, as one `\s+`, so that the `regex` crate's automata (no look-around, but
/// the same leftmost-first choice among branches as a backtracking engine) can run it.
/// [`Pieces`] gives back the character that the look-ahead would have left to the next piece.
/// Every character starts a match of some branch, so each piece starts where the last ended and
/// the search is anchored there: the forward automaton alone finds it, with no reverse pass.
static PRE_TOKENIZER: LazyLock<Regex> = LazyLock::new(|| {
    let branches = PATTERN
        .strip_suffix(r"|\s+(?!\S)|\s+")
        .expect("the o200k pattern ends with its two whitespace branches");
    Regex::new(&format!(r"{branches}|\s+")).expect("the o200k pattern compiles without look-ahead")
});

/// Compiles the pre-tokenizer now, so that threads counting in parallel do not each wait on it.
pub(super) fn warm_up() {
    LazyLock::force(&PRE_TOKENIZER);
}

/// The number of tokens of `text`: the length of [`encode`]'s result, without building it.
pub(super) fn count(text: &str) -> usize {
    pieces(text)
        .map(|piece| match rank(piece) {
            Some(_) => 1,
            None => boundaries(piece).len() - 1,
        })
        .sum()
}

/// The tokens of `text`, as tiktoken's `encode_ordinary` gives them.
#[cfg(test)]
pub(super) fn encode(text: &str) -> Vec<Rank> {
    let mut tokens = Vec::new();
    for piece in pieces(text) {
        match rank(piece) {
            Some(rank) => tokens.push(rank),
            None => {
                tokens.extend(boundaries(piece).windows(2).map(|part| {
                    rank(&piece[part[0]..part[1]]).expect("the merge leaves only tokens")
                }))
            }
        }
    }
    tokens
}

/// The pre-tokenizer's pieces of `text`, in order.
fn pieces(text: &str) -> Pieces<'_> {
    Pieces { text, at: 0 }
}

/// The pieces of tiktoken's pattern, from [`PRE_TOKENIZER`]'s matches.
///
/// A match of the merged `\s+` branch is a whole run of spaces with no line break (a run with
/// one is taken by `\s*[\r\n]+` first, and every other branch ends in a letter, mark, digit,
/// symbol, line break or `/`). tiktoken's `\s+(?!\S)` takes such a run but its last character
/// when something other than a space follows, and `\s+` takes a run of one: so a run of two or
/// more characters before a non-space gives its last character back.
struct Pieces<'t> {
    text: &'t str,
    /// Where the next search starts, in bytes.
    at: usize,
}

impl<'t> Iterator for Pieces<'t> {
    type Item = &'t [u8];

    fn next(&mut self) -> Option<&'t [u8]> {
        if self.at == self.text.len() {
            return None;
        }
        let input = Input::new(self.text)
            .range(self.at..)
            .anchored(Anchored::Yes);
        // Letters, marks, digits, spaces and everything else each start a branch.
        let found = PRE_TOKENIZER
            .find(input)
            .expect("every character starts a piece of the o200k pattern");
        let piece = &self.text[found.range()];
        let mut end = found.end();
        if end < self.text.len() {
            let mut chars = piece.chars();
            if let Some(last) = chars.next_back()
                && last.is_whitespace()
                && last != '\r'
                && last != '\n'
                && chars.next().is_some()
            {
                end -= last.len_utf8();
            }
        }
        self.at = end;
        Some(&self.text.as_bytes()[found.start()..end])
    }
}

/// The rank of the token whose bytes are `bytes`, if one is.
pub(super) fn rank(bytes: &[u8]) -> Option<Rank> {
    let bucket = layout::bucket(bytes);
    let mut records = &TABLE[RECORDS + offset(bucket)..RECORDS + offset(bucket + 1)];
    while !records.is_empty() {
        let (rank, token, rest) = record(records);
        if token == bytes {
            return Some(rank);
        }
        records = rest;
    }
    None
}

/// The offset of `bucket`'s first record (of the end, for `BUCKETS`), from the records' start.
fn offset(bucket: usize) -> usize {
    let at = bucket * 4;
    let bytes = [TABLE[at], TABLE[at + 1], TABLE[at + 2], TABLE[at + 3]];
    u32::from_le_bytes(bytes) as usize
}

/// The record at the front of `records`: its rank, its token's bytes and the records after it.
fn record(records: &[u8]) -> (Rank, &[u8], &[u8]) {
    let header = u32::from_le_bytes([records[0], records[1], records[2], 0]);
    let rank = header & ((1 << layout::RANK_BITS) - 1);
    let (len, start) = match header >> layout::RANK_BITS {
        layout::LONG => (usize::from(records[3]), 4),
        len => (len as usize, 3),
    };
    let (token, rest) = records[start..].split_at(len);
    (rank, token, rest)
}

/// Where `piece` (not itself a token, at least one byte) splits into tokens: the byte offsets
/// from 0 to `piece.len()`, both included.
fn boundaries(piece: &[u8]) -> Vec<usize> {
    match piece.len() {
        1 => vec![0, 1],
        2..100 => merge(piece).into_iter().map(|(start, _)| start).collect(),
        _ => merge_large(piece),
    }
}

/// tiktoken's `_byte_pair_merge`: `(start, rank of the pair starting there)` of each part,
/// then `(piece.len(), Rank::MAX)`.
fn merge(piece: &[u8]) -> Vec<(usize, Rank)> {
    let mut parts = Vec::with_capacity(piece.len() + 1);
    let mut min_rank: (Rank, usize) = (Rank::MAX, usize::MAX);
    for i in 0..piece.len() - 1 {
        let rank = rank(&piece[i..i + 2]).unwrap_or(Rank::MAX);
        if rank < min_rank.0 {
            min_rank = (rank, i);
        }
        parts.push((i, rank));
    }
    parts.push((piece.len() - 1, Rank::MAX));
    parts.push((piece.len(), Rank::MAX));

    // The rank of the part at `i` joined with the next, before `parts[i + 1]` is removed.
    let joined_rank = |parts: &[(usize, Rank)], i: usize| {
        if i + 3 < parts.len() {
            rank(&piece[parts[i].0..parts[i + 3].0]).unwrap_or(Rank::MAX)
        } else {
            Rank::MAX
        }
    };
    while min_rank.0 != Rank::MAX {
        let i = min_rank.1;
        if i > 0 {
            parts[i - 1].1 = joined_rank(&parts, i - 1);
        }
        parts[i].1 = joined_rank(&parts, i);
        parts.remove(i + 1);

        min_rank = (Rank::MAX, usize::MAX);
        for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
            if rank < min_rank.0 {
                min_rank = (rank, i);
            }
        }
    }
    parts
}

/// A candidate merge of the part starting at `start` with the next, for [`merge_large`]'s heap:
/// the lowest rank first, then the leftmost.
#[derive(PartialEq, Eq)]
struct Merge {
    start: usize,
    rank: Rank,
}

impl Ord for Merge {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other
            .rank
            .cmp(&self.rank)
            .then_with(|| other.start.cmp(&self.start))
    }
}

impl PartialOrd for Merge {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A part of [`merge_large`]: where it ends, where the next part ends, the rank of the two
/// joined, and the start of the part before.
struct Part {
    prev: usize,
    end: usize,
    next_end: usize,
    next_rank: Rank,
}

/// tiktoken's `_byte_pair_merge_large` (the same merges as [`merge`], with a heap for long
/// pieces), returning the boundaries as [`boundaries`] does.
fn merge_large(piece: &[u8]) -> Vec<usize> {
    let mut parts = Vec::with_capacity(piece.len());
    parts.push(Part {
        prev: usize::MAX,
        end: 1,
        next_end: 2,
        next_rank: Rank::MAX,
    });
    let mut heap = BinaryHeap::with_capacity(piece.len());
    for i in 0..piece.len() - 1 {
        if let Some(rank) = rank(&piece[i..i + 2]) {
            heap.push(Merge { start: i, rank });
            parts[i].next_rank = rank;
        }
        parts.push(Part {
            prev: i,
            end: i + 2,
            next_end: i + 3,
            next_rank: Rank::MAX,
        });
    }

    // Points the part at `start` at a new next part ending at `next_end`, and queues the merge
    // of the two when their bytes are a token.
    let potential_merge =
        |parts: &mut Vec<Part>, heap: &mut BinaryHeap<Merge>, start: usize, next_end: usize| {
            parts[start].next_end = next_end;
            parts[start].next_rank = Rank::MAX;
            if next_end <= piece.len()
                && let Some(rank) = rank(&piece[start..next_end])
            {
                heap.push(Merge { start, rank });
                parts[start].next_rank = rank;
            }
        };
    while let Some(left) = heap.pop() {
        if left.rank != parts[left.start].next_rank {
            continue; // invalidated by an earlier merge
        }
        let left_start = left.start;
        let right_start = parts[left_start].end;
        let right_end = parts[left_start].next_end;
        let right_next_end = parts[right_start].next_end;
        parts[left_start].end = right_end;
        potential_merge(&mut parts, &mut heap, left_start, right_next_end);
        if right_end < parts.len() {
            parts[right_end].prev = left_start;
        }
        if left_start > 0 {
            let prev_start = parts[left_start].prev;
            potential_merge(&mut parts, &mut heap, prev_start, right_end);
        }
        parts[right_start].next_rank = Rank::MAX;
    }

    let mut boundaries = vec![0];
    let mut i = 0;
    while i < parts.len() {
        i = parts[i].end;
        boundaries.push(i);
    }
    boundaries
}

#[cfg(test)]
mod tests {
    //! The o200k encoder: the packed table and a large corpus encode exactly as tiktoken-rs does.

    use std::path::Path;

    use super::*;

    fn reference() -> tiktoken_rs::CoreBPE {
        tiktoken_rs::o200k_base().expect("tiktoken-rs embeds o200k")
    }

    /// Every ordinary token of tiktoken-rs's o200k, with its rank, in the bucket its hash names.
    #[test]
    fn the_table_holds_every_ordinary_token_once_in_its_bucket() {
        let reference = reference();
        let mut ranks = Vec::new();
        for bucket in 0..layout::BUCKETS {
            let mut records = &TABLE[RECORDS + offset(bucket)..RECORDS + offset(bucket + 1)];
            while !records.is_empty() {
                let (rank, token, rest) = record(records);
                assert_eq!(layout::bucket(token), bucket, "rank {rank}");
                assert_eq!(reference.decode_bytes(&[rank]).ok().as_deref(), Some(token));
                assert_eq!(super::rank(token), Some(rank));
                ranks.push(rank);
                records = rest;
            }
        }
        ranks.sort_unstable();
        assert_eq!(ranks, (0..199_998).collect::<Vec<Rank>>());
        assert_eq!(RECORDS + offset(layout::BUCKETS), TABLE.len());
    }

    #[test]
    fn the_pattern_is_tiktoken_rs_s() {
        assert_eq!(PATTERN, tiktoken_rs::O200K_BASE_PAT_STR);
    }

    /// Texts of every kind a catalog holds and more: the built-in tools as they are counted,
    /// the repository's docs, scenarios and fixtures, and generated edge cases.
    fn corpus() -> Vec<String> {
        let mut texts: Vec<String> = crate::catalog::Catalog::builtin()
            .definitions()
            .iter()
            .flat_map(|tool| {
                [
                    tool.to_string(),
                    serde_json::to_string_pretty(tool).expect("plain JSON"),
                    tool["description"].as_str().unwrap_or_default().to_owned(),
                ]
            })
            .collect();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for dir in ["docs", "scenarios", "fixtures", "schemas", "src/lint"] {
            let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
                .expect("a directory of the repository")
                .map(|entry| entry.expect("a directory entry").path())
                .filter(|path| path.is_file())
                .collect();
            paths.sort();
            texts.extend(paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
        }
        for n in 0..40 {
            for ws in [" ", "\t", "\n", "\r\n", "\u{a0}", "\u{3000}"] {
                texts.push(format!("a{}b", ws.repeat(n)));
                texts.push(format!("{}x {}", ws.repeat(n), " ".repeat(n)));
                texts.push(format!("1{}\n{}", ws.repeat(n), ws.repeat(n)));
            }
            texts.push("9".repeat(n));
            texts.push(format!("{}{}", "1,000.5 ".repeat(n), "٣٤٥Ⅻ½"));
        }
        // Pieces of 100 bytes or more go through the heap merge.
        texts.extend([
            "a".repeat(500),
            "=-".repeat(300),
            " ".repeat(1_000) + "x",
            "東京".repeat(120),
            "🚀".repeat(80),
            "aGVsbG8gd29ybGQ_".repeat(40),
            "Supercalifragilisticexpialidocious".repeat(9),
            "\n".repeat(150) + &"\t".repeat(150),
        ]);
        texts.extend(generated(4_000));
        texts
    }

    /// `count` texts made of edge-case fragments from a seeded generator: every letter, mark
    /// and number class of the pattern, contractions in both cases, and every kind of space.
    fn generated(count: usize) -> Vec<String> {
        const FRAGMENTS: [&str; 56] = [
            "a",
            "Z",
            "é",
            "É",
            "東",
            "京",
            "🚀",
            "ß",
            "İ",
            "ǅ",
            "ʰ",
            "\u{301}",
            "٣",
            "Ⅻ",
            "½",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\r",
            "\u{a0}",
            "\u{3000}",
            "\u{85}",
            "\u{2028}",
            "\u{200b}",
            "\u{feff}",
            "'s",
            "'S",
            "'ll",
            "'LL",
            "'d",
            "'Re",
            "'",
            "\"",
            "{",
            "}",
            "/",
            "_",
            "-",
            "1",
            "12",
            "123",
            "1234",
            ".",
            ",",
            "!?",
            "<|endoftext|>",
            "HTTPServer",
            "camelCase",
            "snake_case",
            "x",
            "Ünïcödé",
            "한국어",
            "ทดสอบ",
            "\\u00e9",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        (0..count)
            .map(|_| {
                (0..1 + next(60))
                    .map(|_| FRAGMENTS[next(FRAGMENTS.len())])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn encodes_a_large_varied_corpus_as_tiktoken_rs_does() {
        let reference = reference();
        let corpus = corpus();
        let mut tokens = 0;
        for text in &corpus {
            let expected = reference.encode_ordinary(text);
            assert_eq!(encode(text), expected, "text {text:?}");
            assert_eq!(count(text), expected.len(), "text {text:?}");
            tokens += expected.len();
        }
        assert!(tokens > 300_000, "a large corpus: {tokens} tokens");
    }

    #[test]
    fn the_heap_merge_splits_as_the_short_merge_does() {
        for text in generated(500) {
            for piece in pieces(&text) {
                if piece.len() > 1 {
                    let short: Vec<usize> = merge(piece).into_iter().map(|(at, _)| at).collect();
                    assert_eq!(merge_large(piece), short, "piece {piece:?}");
                }
            }
        }
    }
}
