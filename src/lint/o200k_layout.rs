//! The layout of the o200k table that build.rs writes and `lint::o200k` reads in place, shared
//! by both (build.rs includes this file) so that the two cannot disagree.
//!
//! The table is a directory of `BUCKETS + 1` little-endian `u32` offsets into the records that
//! follow it; bucket `b`'s records run from offset `b` to offset `b + 1`. Each record is one
//! ordinary token: a 3-byte little-endian header (the rank in the low [`RANK_BITS`] bits, the
//! length in the high 6 bits, or [`LONG`] and then the length in one more byte) and the token's
//! bytes. A token lives in the bucket of its [`bucket`] hash; within a bucket, by rank. Nothing
//! is built at run time: a lookup hashes the bytes and scans one bucket (about six records).

/// Bits of the bucket number: 32,768 buckets for o200k's 199,998 tokens.
pub(crate) const BUCKET_BITS: u32 = 15;

/// The number of buckets.
pub(crate) const BUCKETS: usize = 1 << BUCKET_BITS;

/// Bits of the rank in a record's header (o200k's ranks are below 2^18).
pub(crate) const RANK_BITS: u32 = 18;

/// The header's length field when the length (64 or more) follows in its own byte.
pub(crate) const LONG: u32 = 63;

/// The bucket of a token's bytes: FNV-1a (64-bit), finished with MurmurHash3's `fmix64` so that
/// the top bits, which pick the bucket, depend on every byte.
pub(crate) fn bucket(bytes: &[u8]) -> usize {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    hash ^= hash >> 33;
    (hash >> (64 - BUCKET_BITS)) as usize
}
