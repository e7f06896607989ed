//! Payload masking (RFC 6455 section 5.3).
//!
//! ```text
//! j                   = i MOD 4
//! transformed-octet-i = original-octet-i XOR masking-key-octet-j
//! ```
//!
//! The key is held as one native-endian `u32`, rotated for the payload
//! offset, and the payload is processed as 32-byte blocks of `u32` lanes, a
//! shape LLVM turns into vector XORs against a broadcast register (SSE2 on
//! baseline x86-64, AVX2 when the target allows), with no `unsafe` and no
//! key pattern spilled to the stack. BENCHMARKS.md records the shapes tried.

const BLOCK: usize = 32;

/// The key as a native-endian word, rotated so that masking can resume at
/// payload position `offset`: byte `j` of the result is `key[(j + offset) % 4]`.
#[inline]
fn key_word(key: [u8; 4], offset: usize) -> u32 {
    let k = u32::from_ne_bytes(key);
    let bits = 8 * (offset & 3) as u32;
    if cfg!(target_endian = "little") {
        k.rotate_right(bits)
    } else {
        k.rotate_left(bits)
    }
}

/// XORs `buf` with the masking key in place.
///
/// `offset` is the position of `buf[0]` within the frame payload, so a payload
/// that arrives in pieces can be unmasked piece by piece. Masking is its own
/// inverse: the same call masks and unmasks.
#[inline]
pub fn apply_mask(buf: &mut [u8], key: [u8; 4], offset: usize) {
    let k = key_word(key, offset);
    let (blocks, tail) = buf.as_chunks_mut::<BLOCK>();
    for block in blocks {
        let (lanes, _) = block.as_chunks_mut::<4>();
        for lane in lanes {
            *lane = (u32::from_ne_bytes(*lane) ^ k).to_ne_bytes();
        }
    }
    // BLOCK is a multiple of 4, so the tail starts at key position 0.
    let k = k.to_ne_bytes();
    for (i, b) in tail.iter_mut().enumerate() {
        *b ^= k[i & 3];
    }
}

/// Copies `src` into `dst` and applies the mask in the same pass.
///
/// `dst` and `src` must have the same length. `offset` is the position of
/// `src[0]` within the frame payload.
#[inline]
pub(crate) fn copy_masked(dst: &mut [u8], src: &[u8], key: [u8; 4], offset: usize) {
    debug_assert_eq!(dst.len(), src.len());
    let k = key_word(key, offset);
    let (d_blocks, d_tail) = dst.as_chunks_mut::<BLOCK>();
    let (s_blocks, s_tail) = src.as_chunks::<BLOCK>();
    for (d, s) in d_blocks.iter_mut().zip(s_blocks) {
        let (d_lanes, _) = d.as_chunks_mut::<4>();
        let (s_lanes, _) = s.as_chunks::<4>();
        for (d, s) in d_lanes.iter_mut().zip(s_lanes) {
            *d = (u32::from_ne_bytes(*s) ^ k).to_ne_bytes();
        }
    }
    let k = k.to_ne_bytes();
    for (i, (d, s)) in d_tail.iter_mut().zip(s_tail).enumerate() {
        *d = *s ^ k[i & 3];
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
