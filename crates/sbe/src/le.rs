//! Little-endian loads and stores at offsets fixed at compile time: an
//! offset that runs past the block fails the build (the `const` asserts
//! are evaluated for every offset a caller names, when the code is
//! generated: `cargo build` and `cargo test` say so, `cargo check` not).

#[inline(always)]
pub(crate) fn u8_at<const AT: usize, const N: usize>(b: &[u8; N]) -> u8 {
    const { assert!(AT < N) };
    b[AT]
}

#[inline(always)]
pub(crate) fn i8_at<const AT: usize, const N: usize>(b: &[u8; N]) -> i8 {
    i8::from_le_bytes([u8_at::<AT, N>(b)])
}

#[inline(always)]
pub(crate) fn u16_at<const AT: usize, const N: usize>(b: &[u8; N]) -> u16 {
    const { assert!(AT + 2 <= N) };
    u16::from_le_bytes([b[AT], b[AT + 1]])
}

#[inline(always)]
pub(crate) fn u32_at<const AT: usize, const N: usize>(b: &[u8; N]) -> u32 {
    const { assert!(AT + 4 <= N) };
    u32::from_le_bytes([b[AT], b[AT + 1], b[AT + 2], b[AT + 3]])
}

#[inline(always)]
pub(crate) fn i64_at<const AT: usize, const N: usize>(b: &[u8; N]) -> i64 {
    const { assert!(AT + 8 <= N) };
    let mut w = [0; 8];
    w.copy_from_slice(&b[AT..AT + 8]);
    i64::from_le_bytes(w)
}

/// Writes `v` at `at` (the caller has checked the room once).
#[inline(always)]
pub(crate) fn put(out: &mut [u8], at: usize, v: &[u8]) -> usize {
    out[at..at + v.len()].copy_from_slice(v);
    at + v.len()
}
