//! The TLS 1.3 record layer (RFC 8446 section 5), run in place over the
//! connection's own buffers once rustls has finished the handshake.
//!
//! Receiving: every complete record in the ciphertext region is decrypted
//! with ring's `open_within`, which writes the plaintext over the gap left by
//! the records before it, so the application data of consecutive records
//! ends up contiguous at the end of the plaintext region, with no copy and
//! no allocation. Padding is stripped and the inner content type read:
//! application data stays, handshake messages (NewSessionTicket, KeyUpdate)
//! go to the [`KeySchedule`], alerts end the connection.
//!
//! Sending: plaintext is copied into the outgoing ciphertext buffer behind a
//! record header and sealed there (`seal_in_place_separate_tag`).
//!
//! This module knows nothing of rustls: keys come in as [`TrafficKey`]s and
//! key updates and tickets go out through [`KeySchedule`], which rustls's
//! `KernelConnection` implements in production and a stub does in tests and
//! fuzzing.

use std::ops::Range;

use ring::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};

use crate::region::Region;

/// The record header: type, legacy version, length.
pub(crate) const HEADER_LEN: usize = 5;
/// The AEAD tag of every suite supported here.
pub(crate) const TAG_LEN: usize = 16;
/// The largest TLSInnerPlaintext content (2^14 bytes).
pub(crate) const MAX_PLAINTEXT: usize = 1 << 14;
/// The largest encrypted record body (2^14 + 256 bytes).
pub(crate) const MAX_CIPHERTEXT: usize = MAX_PLAINTEXT + 256;
/// The largest record on the wire.
pub(crate) const MAX_RECORD: usize = HEADER_LEN + MAX_CIPHERTEXT;
/// Post-handshake messages (tickets) are reassembled up to this size.
pub(crate) const MAX_HANDSHAKE_MESSAGE: usize = 1 << 16;

const CHANGE_CIPHER_SPEC: u8 = 20;
const ALERT: u8 = 21;
const HANDSHAKE: u8 = 22;
const APPLICATION_DATA: u8 = 23;

const NEW_SESSION_TICKET: u8 = 4;
const KEY_UPDATE: u8 = 24;

/// The AEAD of a TLS 1.3 cipher suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Suite {
    /// TLS_AES_128_GCM_SHA256
    Aes128Gcm,
    /// TLS_AES_256_GCM_SHA384
    Aes256Gcm,
    /// TLS_CHACHA20_POLY1305_SHA256
    Chacha20Poly1305,
}

impl Suite {
    fn algorithm(self) -> &'static aead::Algorithm {
        match self {
            Suite::Aes128Gcm => &aead::AES_128_GCM,
            Suite::Aes256Gcm => &aead::AES_256_GCM,
            Suite::Chacha20Poly1305 => &aead::CHACHA20_POLY1305,
        }
    }

    /// Records that may be sealed under one key (the AEAD's confidentiality
    /// limit, as rustls uses it).
    pub(crate) fn confidentiality_limit(self) -> u64 {
        match self {
            Suite::Aes128Gcm | Suite::Aes256Gcm => 1 << 24,
            Suite::Chacha20Poly1305 => u64::MAX,
        }
    }
}

/// One direction's traffic key and IV.
#[derive(Clone)]
pub(crate) struct TrafficKey {
    pub(crate) suite: Suite,
    /// The key: 16 bytes for AES-128-GCM, 32 for the others.
    pub(crate) key: [u8; 32],
    pub(crate) iv: [u8; 12],
}

impl TrafficKey {
    fn key(&self) -> &[u8] {
        &self.key[..self.suite.algorithm().key_len()]
    }
}

/// The key schedule the record layer needs: what rustls's
/// `KernelConnection` provides after the handshake.
pub(crate) trait KeySchedule {
    /// The next receive key, after the peer's KeyUpdate.
    fn next_rx_key(&mut self) -> Result<TrafficKey, RecordError>;
    /// The next send key, after our KeyUpdate.
    fn next_tx_key(&mut self) -> Result<TrafficKey, RecordError>;
    /// A NewSessionTicket body (after its 4-byte header).
    fn new_session_ticket(&mut self, body: &[u8]) -> Result<(), RecordError>;
}

/// Why the record layer failed the connection (RFC 8446 alert names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordError {
    /// bad_record_mac: a record did not authenticate.
    BadRecordMac,
    /// record_overflow: a record or its content is too long.
    RecordOverflow,
    /// unexpected_message: a record type or message not allowed here.
    UnexpectedMessage,
    /// unexpected_message: another record came between the fragments of a
    /// post-handshake message (RFC 8446 5.1; see [`RecordLayer::open`]).
    InterleavedHandshake,
    /// decode_error: a malformed record content or message.
    DecodeError,
    /// The peer sent this fatal alert.
    Alert(u8),
    /// A sequence number would wrap.
    SequenceExhausted,
    /// rustls refused a key update or a ticket.
    KeySchedule,
    /// The outgoing buffer has no room for a record.
    NoRoom,
}

struct Direction {
    key: LessSafeKey,
    iv: [u8; 12],
    seq: u64,
}

impl Direction {
    fn new(k: &TrafficKey, seq: u64) -> Result<Direction, RecordError> {
        let key =
            UnboundKey::new(k.suite.algorithm(), k.key()).map_err(|_| RecordError::KeySchedule)?;
        Ok(Direction {
            key: LessSafeKey::new(key),
            iv: k.iv,
            seq,
        })
    }

    /// The per-record nonce: the IV XOR the sequence number (RFC 8446 5.3).
    fn nonce(&self) -> Nonce {
        let mut n = self.iv;
        for (b, s) in n[4..].iter_mut().zip(self.seq.to_be_bytes()) {
            *b ^= s;
        }
        Nonce::assume_unique_for_key(n)
    }
}

/// Counters, for observability and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RecordStats {
    pub(crate) records_in: u64,
    pub(crate) records_out: u64,
    pub(crate) tickets: u32,
    pub(crate) key_updates_in: u32,
    pub(crate) key_updates_out: u32,
}

/// What [`RecordLayer::open`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Opened {
    /// The new end of the plaintext region.
    pub(crate) plain_end: usize,
    /// The first ciphertext byte not processed: a partial record, or the end.
    pub(crate) cipher_start: usize,
    /// The peer sent close_notify; nothing after it was processed.
    pub(crate) close_notify: bool,
}

/// The TLS 1.3 record layer of one connection.
pub(crate) struct RecordLayer {
    suite: Suite,
    rx: Direction,
    tx: Direction,
    /// Post-handshake message bytes not yet complete.
    handshake: Vec<u8>,
    pub(crate) stats: RecordStats,
}

impl RecordLayer {
    pub(crate) fn new(
        rx: &TrafficKey,
        rx_seq: u64,
        tx: &TrafficKey,
        tx_seq: u64,
    ) -> Result<RecordLayer, RecordError> {
        Ok(RecordLayer {
            suite: rx.suite,
            rx: Direction::new(rx, rx_seq)?,
            tx: Direction::new(tx, tx_seq)?,
            handshake: Vec::with_capacity(1024),
            stats: RecordStats::default(),
        })
    }

    /// Decrypts every complete record in `buf[cipher]`, appending their
    /// application data at `buf[plain_end..]`. `plain_end` MUST NOT exceed
    /// `cipher.start`: plaintext is never longer than its record, so it never
    /// overtakes the ciphertext still to be read.
    ///
    /// A KeyUpdate that asks for ours gets its answer sealed into `out`.
    pub(crate) fn open(
        &mut self,
        buf: &mut [u8],
        mut plain_end: usize,
        cipher: Range<usize>,
        keys: &mut dyn KeySchedule,
        out: &mut Region,
    ) -> Result<Opened, RecordError> {
        debug_assert!(plain_end <= cipher.start && cipher.end <= buf.len());
        let mut pos = cipher.start;
        while cipher.end - pos >= HEADER_LEN {
            let header = [
                buf[pos],
                buf[pos + 1],
                buf[pos + 2],
                buf[pos + 3],
                buf[pos + 4],
            ];
            let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
            if len > MAX_CIPHERTEXT {
                return Err(RecordError::RecordOverflow);
            }
            match header[0] {
                APPLICATION_DATA => {}
                // After the handshake every record is encrypted; a stray
                // change_cipher_spec or plaintext alert is not allowed.
                CHANGE_CIPHER_SPEC | ALERT | HANDSHAKE => {
                    return Err(RecordError::UnexpectedMessage);
                }
                _ => return Err(RecordError::UnexpectedMessage),
            }
            if cipher.end - pos < HEADER_LEN + len {
                break; // a partial record: wait for the rest
            }
            if len < TAG_LEN + 1 {
                return Err(RecordError::BadRecordMac);
            }
            if self.rx.seq == u64::MAX {
                return Err(RecordError::SequenceExhausted);
            }
            let record_end = pos + HEADER_LEN + len;
            let nonce = self.rx.nonce();
            let plain = self
                .rx
                .key
                .open_within(
                    nonce,
                    Aad::from(header),
                    &mut buf[plain_end..record_end],
                    (pos + HEADER_LEN - plain_end)..,
                )
                .map_err(|_| RecordError::BadRecordMac)?;
            self.rx.seq += 1;
            self.stats.records_in += 1;
            // The content type is the last non-zero byte; zeros after it are padding.
            let Some(type_at) = plain.iter().rposition(|&b| b != 0) else {
                return Err(RecordError::UnexpectedMessage);
            };
            if type_at > MAX_PLAINTEXT {
                return Err(RecordError::RecordOverflow);
            }
            let inner = plain[type_at];
            pos = record_end;
            // RFC 8446 5.1: "Handshake messages MUST NOT be interleaved
            // with other record types. That is, if a handshake message is
            // split over two or more records, there MUST NOT be any other
            // records between them." Bytes waiting in `self.handshake` are
            // such a split message (complete ones are drained), so a record
            // of any other content type now is "an inappropriate message",
            // for which RFC 8446 6.2 (and 5, for an unexpected record)
            // names the unexpected_message alert. rustls's own deframer
            // refuses the same (`MessageInterleavedWithHandshakeMessage`).
            if inner != HANDSHAKE && !self.handshake.is_empty() {
                return Err(RecordError::InterleavedHandshake);
            }
            match inner {
                APPLICATION_DATA => plain_end += type_at,
                HANDSHAKE => {
                    if type_at == 0 {
                        return Err(RecordError::UnexpectedMessage);
                    }
                    let content = plain_end..plain_end + type_at;
                    self.handshake_bytes(&buf[content], keys, out)?;
                }
                ALERT => {
                    let [level, description] = buf[plain_end..plain_end + type_at] else {
                        return Err(RecordError::DecodeError);
                    };
                    let _ = level; // TLS 1.3 treats every alert but close_notify as fatal.
                    if description == 0 {
                        return Ok(Opened {
                            plain_end,
                            cipher_start: pos,
                            close_notify: true,
                        });
                    }
                    return Err(RecordError::Alert(description));
                }
                _ => return Err(RecordError::UnexpectedMessage),
            }
        }
        Ok(Opened {
            plain_end,
            cipher_start: pos,
            close_notify: false,
        })
    }

    /// Collects post-handshake messages and acts on the complete ones.
    fn handshake_bytes(
        &mut self,
        content: &[u8],
        keys: &mut dyn KeySchedule,
        out: &mut Region,
    ) -> Result<(), RecordError> {
        if self.handshake.len() + content.len() > MAX_HANDSHAKE_MESSAGE + 4 {
            return Err(RecordError::DecodeError);
        }
        self.handshake.extend_from_slice(content);
        while let [typ, a, b, c, ..] = self.handshake[..] {
            let len = u32::from_be_bytes([0, a, b, c]) as usize;
            if len > MAX_HANDSHAKE_MESSAGE {
                return Err(RecordError::DecodeError);
            }
            if self.handshake.len() < 4 + len {
                break;
            }
            match typ {
                NEW_SESSION_TICKET => {
                    keys.new_session_ticket(&self.handshake[4..4 + len])?;
                    self.stats.tickets += 1;
                }
                KEY_UPDATE => {
                    let requested = match self.handshake[4..4 + len] {
                        [0] => false,
                        [1] => true,
                        _ => return Err(RecordError::DecodeError),
                    };
                    // A key change must fall on a record boundary (RFC 8446 5.1).
                    if self.handshake.len() != 4 + len {
                        return Err(RecordError::UnexpectedMessage);
                    }
                    self.rx = Direction::new(&keys.next_rx_key()?, 0)?;
                    self.stats.key_updates_in += 1;
                    if requested {
                        self.update_tx_key(keys, out)?;
                    }
                }
                _ => return Err(RecordError::UnexpectedMessage),
            }
            self.handshake.drain(..4 + len);
        }
        Ok(())
    }

    /// Announces a new send key with a KeyUpdate (not requesting the peer's),
    /// sealed under the old one, then switches to it.
    fn update_tx_key(
        &mut self,
        keys: &mut dyn KeySchedule,
        out: &mut Region,
    ) -> Result<(), RecordError> {
        self.seal_record(HANDSHAKE, &[KEY_UPDATE, 0, 0, 1, 0], out)?;
        self.tx = Direction::new(&keys.next_tx_key()?, 0)?;
        self.stats.key_updates_out += 1;
        Ok(())
    }

    /// Seals `plaintext` as application data records (at most 2^14 bytes
    /// each) into `out`. Returns how many plaintext bytes were sealed; less
    /// than all when `out` filled up.
    pub(crate) fn seal(
        &mut self,
        plaintext: &[u8],
        keys: &mut dyn KeySchedule,
        out: &mut Region,
    ) -> Result<usize, RecordError> {
        let mut sealed = 0;
        for chunk in plaintext.chunks(MAX_PLAINTEXT) {
            // Leave one record under the old key for the KeyUpdate itself.
            if self.tx.seq >= self.suite.confidentiality_limit().saturating_sub(2) {
                self.update_tx_key(keys, out)?;
            }
            match self.seal_record(APPLICATION_DATA, chunk, out) {
                Ok(()) => sealed += chunk.len(),
                Err(RecordError::NoRoom) if sealed > 0 => break,
                Err(RecordError::NoRoom) => return Ok(0),
                Err(e) => return Err(e),
            }
        }
        Ok(sealed)
    }

    /// Seals a close_notify alert into `out`.
    pub(crate) fn seal_close_notify(&mut self, out: &mut Region) -> Result<(), RecordError> {
        self.seal_record(ALERT, &[1, 0], out)
    }

    fn seal_record(
        &mut self,
        content_type: u8,
        content: &[u8],
        out: &mut Region,
    ) -> Result<(), RecordError> {
        self.seal_inner(content, &[content_type], out)
    }

    /// Seals the inner plaintext `head` followed by `tail` (the content
    /// type, then any padding) as one record.
    fn seal_inner(
        &mut self,
        head: &[u8],
        tail: &[u8],
        out: &mut Region,
    ) -> Result<(), RecordError> {
        if self.tx.seq == u64::MAX {
            return Err(RecordError::SequenceExhausted);
        }
        let inner = head.len() + tail.len();
        let body = inner + TAG_LEN;
        let total = HEADER_LEN + body;
        let rec = out.reserve(total).map_err(|_| RecordError::NoRoom)?;
        let [hi, lo] = (body as u16).to_be_bytes();
        let header = [APPLICATION_DATA, 3, 3, hi, lo];
        rec[..HEADER_LEN].copy_from_slice(&header);
        rec[HEADER_LEN..HEADER_LEN + head.len()].copy_from_slice(head);
        rec[HEADER_LEN + head.len()..HEADER_LEN + inner].copy_from_slice(tail);
        let nonce = self.tx.nonce();
        let tag = self
            .tx
            .key
            .seal_in_place_separate_tag(
                nonce,
                Aad::from(header),
                &mut rec[HEADER_LEN..HEADER_LEN + inner],
            )
            .map_err(|_| RecordError::SequenceExhausted)?;
        rec[total - TAG_LEN..].copy_from_slice(tag.as_ref());
        out.commit(total);
        self.tx.seq += 1;
        self.stats.records_out += 1;
        Ok(())
    }

    /// Seals an inner plaintext exactly as given (content, type, padding).
    #[cfg(any(fuzzing, feature = "internals"))]
    pub(crate) fn seal_raw(&mut self, inner: &[u8], out: &mut Region) -> Result<(), RecordError> {
        self.seal_inner(inner, &[], out)
    }

    /// Switches the send key, for a fuzzed peer's key update.
    #[cfg(any(fuzzing, feature = "internals"))]
    pub(crate) fn set_tx_key(&mut self, key: &TrafficKey) {
        if let Ok(tx) = Direction::new(key, 0) {
            self.tx = tx;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{
        HEADER_LEN, KeySchedule, MAX_CIPHERTEXT, RecordError, RecordLayer, Suite, TrafficKey,
    };
    use crate::region::Region;

    /// Derives successive keys deterministically: enough to test the record
    /// layer's handling of updates without a handshake.
    struct Schedule {
        suite: Suite,
        rx: u8,
        tx: u8,
        tickets: Vec<Vec<u8>>,
    }

    fn key(suite: Suite, seed: u8) -> TrafficKey {
        TrafficKey {
            suite,
            key: core::array::from_fn(|i| seed.wrapping_mul(31).wrapping_add(i as u8)),
            iv: [seed; 12],
        }
    }

    impl KeySchedule for Schedule {
        fn next_rx_key(&mut self) -> Result<TrafficKey, RecordError> {
            self.rx += 1;
            Ok(key(self.suite, self.rx))
        }
        fn next_tx_key(&mut self) -> Result<TrafficKey, RecordError> {
            self.tx += 1;
            Ok(key(self.suite, 100 + self.tx))
        }
        fn new_session_ticket(&mut self, body: &[u8]) -> Result<(), RecordError> {
            self.tickets.push(body.to_vec());
            Ok(())
        }
    }

    /// A sender and a receiver whose keys mirror each other.
    fn pair(suite: Suite) -> (RecordLayer, RecordLayer, Schedule, Schedule) {
        let a = RecordLayer::new(&key(suite, 0), 0, &key(suite, 100), 0).unwrap();
        let b = RecordLayer::new(&key(suite, 100), 0, &key(suite, 0), 0).unwrap();
        let sa = Schedule {
            suite,
            rx: 0,
            tx: 0,
            tickets: vec![],
        };
        // The peer's tx keys are our rx keys and the other way round.
        let sb = Schedule {
            suite,
            rx: 100,
            tx: 0,
            tickets: vec![],
        };
        (a, b, sa, sb)
    }

    /// Opens everything in `wire` and returns the application data.
    fn open_all(
        rl: &mut RecordLayer,
        keys: &mut dyn KeySchedule,
        wire: &[u8],
        out: &mut Region,
    ) -> Result<(Vec<u8>, bool), RecordError> {
        let mut buf = wire.to_vec();
        let opened = rl.open(&mut buf, 0, 0..wire.len(), keys, out)?;
        assert_eq!(
            opened.cipher_start,
            wire.len(),
            "a complete stream is consumed"
        );
        Ok((buf[..opened.plain_end].to_vec(), opened.close_notify))
    }

    #[test]
    fn records_round_trip_in_place_for_every_suite() {
        for suite in [Suite::Aes128Gcm, Suite::Aes256Gcm, Suite::Chacha20Poly1305] {
            let (mut b, mut a, mut sb, mut sa) = pair(suite);
            let mut wire = Region::new(1 << 16);
            let msg: Vec<u8> = (0..40_000u32).map(|i| i as u8).collect();
            assert_eq!(b.seal(&msg, &mut sb, &mut wire), Ok(msg.len()));
            assert_eq!(b.stats.records_out, 3, "40 000 bytes make 3 records");
            let mut out = Region::new(1024);
            let (plain, closed) = open_all(&mut a, &mut sa, wire.pending(), &mut out).unwrap();
            assert_eq!(plain, msg, "{suite:?}");
            assert!(!closed);
        }
    }

    #[test]
    fn partial_records_wait_and_resume() {
        let (mut b, _, mut sb, _) = pair(Suite::Aes128Gcm);
        let mut wire = Region::new(4096);
        b.seal(b"hello", &mut sb, &mut wire).unwrap();
        b.seal(b"world", &mut sb, &mut wire).unwrap();
        let bytes = wire.pending().to_vec();
        let mut out = Region::new(1024);
        for cut in 0..=bytes.len() {
            let (_, mut a, _, mut sa) = pair(Suite::Aes128Gcm);
            let mut buf = bytes.clone();
            let first = a.open(&mut buf, 0, 0..cut, &mut sa, &mut out).unwrap();
            let all = first.cipher_start..bytes.len();
            let second = a
                .open(&mut buf, first.plain_end, all, &mut sa, &mut out)
                .unwrap();
            assert_eq!(&buf[..second.plain_end], b"helloworld", "cut at {cut}");
            assert_eq!(second.cipher_start, bytes.len());
        }
    }

    #[test]
    fn tampering_and_bad_records_fail_with_their_alert() {
        let (mut b, _, mut sb, _) = pair(Suite::Chacha20Poly1305);
        let mut wire = Region::new(4096);
        b.seal(b"payload", &mut sb, &mut wire).unwrap();
        let good = wire.pending().to_vec();
        let mut out = Region::new(1024);
        let fresh = || {
            (
                RecordLayer::new(
                    &key(Suite::Chacha20Poly1305, 100),
                    0,
                    &key(Suite::Chacha20Poly1305, 0),
                    0,
                )
                .unwrap(),
                Schedule {
                    suite: Suite::Chacha20Poly1305,
                    rx: 100,
                    tx: 0,
                    tickets: vec![],
                },
            )
        };
        let mut flipped = good.clone();
        flipped[HEADER_LEN + 2] ^= 1;
        let (mut a, mut sa) = fresh();
        assert_eq!(
            open_all(&mut a, &mut sa, &flipped, &mut out).err(),
            Some(RecordError::BadRecordMac)
        );
        let mut wrong_type = good.clone();
        wrong_type[0] = 22;
        let (mut a, mut sa) = fresh();
        assert_eq!(
            open_all(&mut a, &mut sa, &wrong_type, &mut out).err(),
            Some(RecordError::UnexpectedMessage)
        );
        let mut too_long = good.clone();
        too_long[3..5].copy_from_slice(&((MAX_CIPHERTEXT + 1) as u16).to_be_bytes());
        let (mut a, mut sa) = fresh();
        assert_eq!(
            open_all(&mut a, &mut sa, &too_long, &mut out).err(),
            Some(RecordError::RecordOverflow)
        );
        // A replayed record fails: the sequence number has moved on.
        let replay = [good.clone(), good].concat();
        let (mut a, mut sa) = fresh();
        assert_eq!(
            open_all(&mut a, &mut sa, &replay, &mut out).err(),
            Some(RecordError::BadRecordMac)
        );
    }

    #[test]
    fn tickets_key_updates_and_close_notify() {
        let (mut b, mut a, mut sb, mut sa) = pair(Suite::Aes256Gcm);
        let mut wire = Region::new(8192);
        // A ticket split across two records, then data, then a KeyUpdate
        // that requests ours, then data under the new key, then close_notify.
        let ticket = [4u8, 0, 0, 6, 1, 2, 3, 4, 5, 6];
        b.seal_record(22, &ticket[..3], &mut wire).unwrap();
        b.seal_record(22, &ticket[3..], &mut wire).unwrap();
        b.seal(b"before", &mut sb, &mut wire).unwrap();
        b.seal_record(22, &[24, 0, 0, 1, 1], &mut wire).unwrap();
        b.tx = super::Direction::new(&sb.next_tx_key().unwrap(), 0).unwrap();
        b.seal(b"-after", &mut sb, &mut wire).unwrap();
        b.seal_close_notify(&mut wire).unwrap();
        b.seal(b"ignored", &mut sb, &mut wire).unwrap();
        // The receiver's schedule must produce the sender's next key.
        sa.rx = 100;
        let mut answer = Region::new(1024);
        let mut buf = wire.pending().to_vec();
        let n = buf.len();
        let opened = a.open(&mut buf, 0, 0..n, &mut sa, &mut answer).unwrap();
        assert_eq!(&buf[..opened.plain_end], b"before-after");
        assert!(opened.close_notify);
        assert!(
            opened.cipher_start < buf.len(),
            "nothing after close_notify is read"
        );
        assert_eq!(sa.tickets, [vec![1, 2, 3, 4, 5, 6]]);
        assert_eq!((a.stats.key_updates_in, a.stats.key_updates_out), (1, 1));
        // Our answer is a KeyUpdate(update_not_requested) the peer can open
        // with its current receive key.
        let mut peer_buf = answer.pending().to_vec();
        let mut none = Region::new(64);
        let before = b.stats.key_updates_in;
        let mut sb2 = Schedule {
            suite: Suite::Aes256Gcm,
            rx: 0,
            tx: 0,
            tickets: vec![],
        };
        let n = peer_buf.len();
        let o = b.open(&mut peer_buf, 0, 0..n, &mut sb2, &mut none).unwrap();
        assert_eq!(o.plain_end, 0);
        assert_eq!(b.stats.key_updates_in, before + 1);
        assert_eq!(
            none.pending().len(),
            0,
            "update_not_requested needs no answer"
        );
    }

    /// RFC 8446 5.1: a post-handshake message split over records may have
    /// no other record between its fragments; without one it is fine.
    #[test]
    fn split_handshake_messages_refuse_interleaved_records() {
        let ticket: &[u8] = &[4, 0, 0, 6, 1, 2, 3, 4, 5, 6];
        let key_update: &[u8] = &[24, 0, 0, 1, 0];
        for message in [ticket, key_update] {
            // Nothing between, application data between, an alert between.
            for between in [None, Some(23u8), Some(21)] {
                let (mut b, mut a, mut sb, mut sa) = pair(Suite::Aes128Gcm);
                let mut wire = Region::new(4096);
                b.seal(b"first-", &mut sb, &mut wire).unwrap();
                b.seal_record(22, &message[..2], &mut wire).unwrap();
                match between {
                    Some(23) => drop(b.seal(b"between", &mut sb, &mut wire).unwrap()),
                    Some(typ) => b.seal_record(typ, &[1, 0], &mut wire).unwrap(),
                    None => {}
                }
                b.seal_record(22, &message[2..], &mut wire).unwrap();
                if message[0] == 24 {
                    b.tx = super::Direction::new(&sb.next_tx_key().unwrap(), 0).unwrap();
                }
                b.seal(b"last", &mut sb, &mut wire).unwrap();
                let mut out = Region::new(1024);
                let opened = open_all(&mut a, &mut sa, wire.pending(), &mut out);
                let what = format!("message {message:?}, between {between:?}");
                if between.is_some() {
                    assert_eq!(
                        opened.err(),
                        Some(RecordError::InterleavedHandshake),
                        "{what}"
                    );
                    continue;
                }
                assert_eq!(opened, Ok((b"first-last".to_vec(), false)), "{what}");
                let handled = (sa.tickets.len(), a.stats.key_updates_in);
                let want = if message[0] == 4 { (1, 0) } else { (0, 1) };
                assert_eq!(handled, want, "{what}");
            }
        }
    }

    #[test]
    fn malformed_handshake_messages_and_alerts_are_errors() {
        let cases: [(u8, &[u8], RecordError); 5] = [
            (22, &[24, 0, 0, 1, 2], RecordError::DecodeError),
            (22, &[24, 0, 0, 1, 0, 4], RecordError::UnexpectedMessage),
            (22, &[2, 0, 0, 0], RecordError::UnexpectedMessage),
            (21, &[2, 40], RecordError::Alert(40)),
            (21, &[2], RecordError::DecodeError),
        ];
        for (typ, content, err) in cases {
            let (mut b, mut a, _sb, mut sa) = pair(Suite::Aes128Gcm);
            let mut wire = Region::new(4096);
            b.seal_record(typ, content, &mut wire).unwrap();
            let mut out = Region::new(1024);
            assert_eq!(
                open_all(&mut a, &mut sa, wire.pending(), &mut out).err(),
                Some(err),
                "{content:?}"
            );
        }
    }
}
