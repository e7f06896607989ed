//! Payload masking (RFC 6455 section 5.3).
//!
//! ```text
//! j                   = i MOD 4
//! transformed-octet-i = original-octet-i XOR masking-key-octet-j
//! ```
//!
//! The loops below work on 64-byte blocks against a precomputed 64-byte copy of
//! the key. That shape is what LLVM turns into full-width vector XORs (SSE2 on
//! baseline x86-64, AVX2/AVX-512 when enabled), without any `unsafe`.

const BLOCK: usize = 64;

/// Rotates the key so that masking can resume at payload position `offset`.
#[inline]
const fn rotated(key: [u8; 4], offset: usize) -> [u8; 4] {
    let s = offset & 3;
    [key[s], key[(s + 1) & 3], key[(s + 2) & 3], key[(s + 3) & 3]]
}

#[inline]
fn pattern(key: [u8; 4]) -> [u8; BLOCK] {
    let mut p = [0u8; BLOCK];
    let mut i = 0;
    while i < BLOCK {
        p[i] = key[i & 3];
        i += 1;
    }
    p
}

/// XORs `buf` with the masking key in place.
///
/// `offset` is the position of `buf[0]` within the frame payload, so a payload
/// that arrives in pieces can be unmasked piece by piece. Masking is its own
/// inverse: the same call masks and unmasks.
#[inline]
pub fn apply_mask(buf: &mut [u8], key: [u8; 4], offset: usize) {
    let key = rotated(key, offset);
    if buf.len() < 16 {
        for (i, b) in buf.iter_mut().enumerate() {
            *b ^= key[i & 3];
        }
        return;
    }
    let pat = pattern(key);
    let mut blocks = buf.chunks_exact_mut(BLOCK);
    for block in &mut blocks {
        for (b, k) in block.iter_mut().zip(pat.iter()) {
            *b ^= *k;
        }
    }
    // BLOCK is a multiple of 4, so the tail starts at key position 0 again.
    for (b, k) in blocks.into_remainder().iter_mut().zip(pat.iter()) {
        *b ^= *k;
    }
}

/// Copies `src` into `dst` and applies the mask in the same pass.
///
/// `dst` and `src` must have the same length. `offset` is the position of
/// `src[0]` within the frame payload.
#[inline]
pub(crate) fn copy_masked(dst: &mut [u8], src: &[u8], key: [u8; 4], offset: usize) {
    debug_assert_eq!(dst.len(), src.len());
    let key = rotated(key, offset);
    let pat = pattern(key);
    let mut d_blocks = dst.chunks_exact_mut(BLOCK);
    let mut s_blocks = src.chunks_exact(BLOCK);
    for (d, s) in (&mut d_blocks).zip(&mut s_blocks) {
        for ((d, s), k) in d.iter_mut().zip(s.iter()).zip(pat.iter()) {
            *d = *s ^ *k;
        }
    }
    let d_tail = d_blocks.into_remainder();
    let s_tail = s_blocks.remainder();
    for ((d, s), k) in d_tail.iter_mut().zip(s_tail.iter()).zip(pat.iter()) {
        *d = *s ^ *k;
    }
}

#[cfg(test)]
mod tests {
    use super::{apply_mask, copy_masked};

    fn naive(buf: &mut [u8], key: [u8; 4], offset: usize) {
        for (i, b) in buf.iter_mut().enumerate() {
            *b ^= key[(offset + i) % 4];
        }
    }

    #[test]
    fn matches_the_rfc_definition_for_every_length_and_offset() {
        let key = [0x37, 0xfa, 0x21, 0x3d];
        for len in 0..300 {
            for offset in 0..8 {
                let orig: [u8; 300] = core::array::from_fn(|i| (i * 7 + 3) as u8);
                let mut fast = orig;
                let mut slow = orig;
                apply_mask(&mut fast[..len], key, offset);
                naive(&mut slow[..len], key, offset);
                assert_eq!(fast, slow, "len {len} offset {offset}");

                let mut copied = [0u8; 300];
                copy_masked(&mut copied[..len], &orig[..len], key, offset);
                assert_eq!(copied[..len], slow[..len], "copy len {len} offset {offset}");
                assert!(copied[len..].iter().all(|&b| b == 0), "copy wrote past len");
            }
        }
    }

    #[test]
    fn piecewise_unmasking_equals_whole() {
        let key = [1, 2, 3, 4];
        let orig: [u8; 200] = core::array::from_fn(|i| i as u8);
        let mut whole = orig;
        apply_mask(&mut whole, key, 0);
        for split in 0..200 {
            let mut parts = orig;
            let (a, b) = parts.split_at_mut(split);
            apply_mask(a, key, 0);
            apply_mask(b, key, split);
            assert_eq!(parts, whole, "split at {split}");
        }
    }
}
