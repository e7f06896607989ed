//! What the `checksum` of a simulated `books` message carries.
//!
//! OKX, "OKX Order Book Channels Checksum Field Deprecation" (21 May
//! 2026; demo trading from 2 June 2026, production from 23 June 2026): on
//! `books`, `books-l2-tbt` and `books50-l2-tbt`, "the checksum field will
//! remain present in push messages but will always return 0 and must no
//! longer be used for data integrity validation"; a client checks that
//! `prevSeqId` equals the previous message's `seqId` (D-BOOK, "Sequence
//! ID"), which the simulated chain keeps whatever the checksum. (Issue
//! 27: 339 live `books` frames checked since, all 0.)
//!
//! So the simulator sends 0 by default ([`Checksums::Zero`]); the CRC32
//! OKX sent before ([`Checksums::Crc32`], D-BOOK "Calculate Checksum", as
//! the recorded days carry it) is an option, for the tests of a client's
//! checksum guard over a whole stream.

use crate::market::SimInstrument;

use super::window::Window;

/// What the `checksum` of the `books` messages carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Checksums {
    /// 0, always: OKX since June 2026.
    #[default]
    Zero,
    /// The CRC32 of the window's top 25 levels, as OKX sent it before.
    // Chosen by this crate's tests only, until `SimConfig` carries it.
    #[cfg_attr(not(test), allow(dead_code))]
    Crc32,
}

impl Checksums {
    /// The checksum of a message after which the client's window is
    /// `window`.
    pub(super) fn of(self, window: &Window, spec: &SimInstrument) -> i32 {
        match self {
            Checksums::Zero => 0,
            Checksums::Crc32 => window.checksum(spec),
        }
    }
}

/// A wrong checksum for `window` (`VenueFault::BadChecksum`): not the
/// window's CRC32, and never 0, which clients read as no checksum. With
/// [`Checksums::Zero`] it is the one message of the stream that carries a
/// checksum, one the book does not match.
pub(super) fn wrong(window: &Window, spec: &SimInstrument) -> i32 {
    match window.checksum(spec).wrapping_add(1) {
        0 => 1,
        wrong => wrong,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::super::tests::{ask, client, json, market};
    use super::super::{Client, Okx, window};
    use super::Checksums;
    use crate::market::Step;
    use crate::protocol::{Market, Out, Protocol};

    /// Subscribes `c` to BTC-USDT's `books`: its snapshot's checksum.
    fn subscribe(okx: &Okx, c: &mut Client, m: &mut Market) -> i64 {
        let replies = ask(
            okx,
            c,
            m,
            r#"{"op":"subscribe","args":[{"channel":"books","instId":"BTC-USDT"}]}"#,
        );
        assert_eq!(replies.len(), 2, "{replies:?}");
        let snapshot = json(&replies[1]);
        assert_eq!(snapshot["action"], "snapshot");
        snapshot["data"][0]["checksum"]
            .as_i64()
            .expect("a checksum")
    }

    /// The checksum OKX computed of BTC-USDT's book before June 2026.
    fn real(m: &Market) -> i64 {
        let (bids, asks) = m.books[0].levels(25);
        i64::from(window::checksum(&bids, &asks, &m.instruments[0]))
    }

    /// 300 steps of BTC-USDT, the 200th with a bad checksum: each update's
    /// checksum and the real one after its step.
    fn updates(okx: &Okx, c: &mut Client, m: &mut Market) -> Vec<(i64, i64)> {
        let mut rng = StdRng::seed_from_u64(7);
        let mut step = Step::default();
        let mut seen = Vec::new();
        for k in 0..300 {
            m.step(0, &mut rng, k % 2 == 0, &mut step);
            step.faults.bad_checksum = k == 200;
            let mut out = Out::default();
            okx.on_step(c, &step, m, &mut out);
            assert_eq!(out.items.len(), 1, "step {k}");
            let v = json(out.items[0].0.text());
            seen.push((
                v["data"][0]["checksum"].as_i64().expect("a checksum"),
                real(m),
            ));
        }
        seen
    }

    /// The 60 s keep-alive's checksum.
    fn keep_alive(okx: &Okx, c: &mut Client) -> i64 {
        let mut out = Out::default();
        let later = c.books[0].pushed + Duration::from_secs(61);
        okx.on_tick(c, later, Duration::ZERO, &mut out);
        assert_eq!(out.items.len(), 1);
        json(out.items[0].0.text())["data"][0]["checksum"]
            .as_i64()
            .expect("a checksum")
    }

    /// By default the simulated OKX is OKX since June 2026: `"checksum":0`
    /// in the snapshot, every update and the keep-alive (the field still
    /// there). A `BadChecksum` fault sends one that is neither 0 nor the
    /// book's.
    #[test]
    fn okx_sends_checksum_0_by_default() {
        let (okx, mut m) = (Okx::new(), market());
        let mut c = client(&okx, &m);
        assert_eq!(subscribe(&okx, &mut c, &mut m), 0, "the snapshot");
        for (k, (sent, real)) in updates(&okx, &mut c, &mut m).into_iter().enumerate() {
            if k == 200 {
                assert!(sent != 0 && sent != real, "the bad one: {sent} ({real})");
            } else {
                assert_eq!(sent, 0, "step {k}");
            }
        }
        assert_eq!(keep_alive(&okx, &mut c), 0, "the keep-alive");
    }

    /// With [`Checksums::Crc32`], as OKX sent before June 2026: the
    /// snapshot, every update and the keep-alive carry the book's CRC32; a
    /// `BadChecksum` fault sends one that is neither 0 nor the book's.
    #[test]
    fn real_checksums_are_an_option() {
        let (okx, mut m) = (Okx::with_checksums(Checksums::Crc32), market());
        let mut c = client(&okx, &m);
        let snapshot = subscribe(&okx, &mut c, &mut m);
        assert!(snapshot != 0 && snapshot == real(&m), "the snapshot");
        for (k, (sent, real)) in updates(&okx, &mut c, &mut m).into_iter().enumerate() {
            if k == 200 {
                assert!(sent != 0 && sent != real, "the bad one: {sent} ({real})");
            } else {
                assert_eq!(sent, real, "step {k}");
            }
        }
        assert_eq!(keep_alive(&okx, &mut c), real(&m), "the keep-alive");
        assert_ne!(real(&m), 0);
    }
}
