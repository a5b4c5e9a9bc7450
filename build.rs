//! Packs tiktoken-rs's o200k vocabulary for embedding, deflated.
//!
//! tiktoken-rs embeds each vocabulary as base64 text (3.6 MB for o200k). The binary carries the
//! same tokens as raw bytes in rank order, deflated (about a quarter of that), and
//! `lint::tokens` rebuilds the encoder from them at first use. The data comes from the
//! tiktoken-rs version in Cargo.lock, so the two cannot drift apart.
//!
//! Format, before deflate: `u32` count of ordinary tokens, then each token as a `u8` length and
//! its bytes (ranks are implicit: 0, 1, 2, ...); then `u32` count of special tokens, each as a
//! `u8` length, its bytes and its `u32` rank. Integers are little-endian.

use std::{env, fs, io::Write as _, path::PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
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
    let mut specials: Vec<(String, u32)> = special_tokens
        .into_iter()
        .map(|special| {
            let ranks = bpe.encode_with_special_tokens(special);
            assert_eq!(ranks.len(), 1, "special token `{special}` is one token");
            (special.to_owned(), ranks[0])
        })
        .collect();
    specials.sort_by_key(|(_, rank)| *rank);
    assert!(
        ordinary.len() > 199_000,
        "o200k has about 200,000 tokens, read {}",
        ordinary.len()
    );

    let mut packed = Vec::with_capacity(2 << 20);
    packed.extend_from_slice(&(ordinary.len() as u32).to_le_bytes());
    for token in &ordinary {
        let len = u8::try_from(token.len()).expect("o200k tokens are shorter than 256 bytes");
        packed.push(len);
        packed.extend_from_slice(token);
    }
    packed.extend_from_slice(&(specials.len() as u32).to_le_bytes());
    for (text, rank) in &specials {
        packed.push(u8::try_from(text.len()).expect("special tokens are short"));
        packed.extend_from_slice(text.as_bytes());
        packed.extend_from_slice(&rank.to_le_bytes());
    }

    let mut deflate = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    deflate
        .write_all(&packed)
        .expect("writing to memory cannot fail");
    let deflated = deflate.finish().expect("writing to memory cannot fail");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out.join("o200k.bin.deflate"), deflated).expect("OUT_DIR is writable");
}
