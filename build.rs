//! Lays out tiktoken-rs's o200k vocabulary as a lookup table that `lint::o200k` reads in place.
//!
//! tiktoken-rs embeds each vocabulary as base64 text (3.6 MB for o200k) and builds a hash map of
//! its 200,000 tokens before the first count (a few hundred milliseconds of start-up). The
//! binary carries instead the hash table itself, built here: raw tokens with their ranks,
//! grouped by hash bucket behind a directory of offsets (the format is in
//! `src/lint/o200k_layout.rs`, which both sides include). The data comes from the tiktoken-rs
//! version in Cargo.lock, so the two cannot drift apart.

use std::{env, fs, path::PathBuf};

#[path = "src/lint/o200k_layout.rs"]
mod layout;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/lint/o200k_layout.rs");
    let bpe = tiktoken_rs::o200k_base().expect("tiktoken-rs parses its own o200k vocabulary");
    let special_tokens = bpe.special_tokens();
    let mut ordinary = Vec::new();
    while let Ok(token) = bpe.decode_bytes(&[ordinary.len() as u32]) {
        if special_tokens
            .iter()
            .any(|special| special.as_bytes() == token)
        {
            break;
        }
        ordinary.push(token);
    }
    assert!(
        ordinary.len() > 199_000 && ordinary.len() < 1 << layout::RANK_BITS,
        "o200k has about 200,000 tokens, read {}",
        ordinary.len()
    );

    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); layout::BUCKETS];
    for (rank, token) in ordinary.iter().enumerate() {
        buckets[layout::bucket(token)].push(rank as u32);
    }
    let mut directory = Vec::with_capacity((layout::BUCKETS + 1) * 4);
    let mut records = Vec::with_capacity(2 << 20);
    for ranks in &buckets {
        directory.extend_from_slice(&(records.len() as u32).to_le_bytes());
        for &rank in ranks {
            let token = &ordinary[rank as usize];
            let len = u8::try_from(token.len()).expect("o200k tokens are shorter than 256 bytes");
            let field = u32::from(len).min(layout::LONG);
            let header = rank | field << layout::RANK_BITS;
            records.extend_from_slice(&header.to_le_bytes()[..3]);
            if field == layout::LONG {
                records.push(len);
            }
            records.extend_from_slice(token);
        }
    }
    directory.extend_from_slice(&(records.len() as u32).to_le_bytes());
    directory.extend_from_slice(&records);
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out.join("o200k.table"), directory).expect("OUT_DIR is writable");
}
