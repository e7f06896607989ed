//! The receive buffer of a connection, and TLS over it.

use tickwire_codec::{Config as CodecConfig, Decoder, ProtocolError, Role};

use crate::payload::{Frame, PAYLOAD_PADDING, Restore, next_frame};
use crate::region::Region;
use crate::tls::record::MAX_RECORD;
use crate::tls::{Mode, TlsError, TlsSession};

/// The most left of a read that is moved to the buffer's front before the
/// next read only to keep the reads in the same memory ([`Incoming::compact`]).
const SMALL_TAIL: usize = 8 * 1024;

/// The receive side of a slot.
///
/// ```text
/// [ consumed | plaintext | gap | ciphertext | free | padding ]
///            ^start      ^end  ^cipher_start ^cipher_end ^cap
/// ```
///
/// Without TLS, `end == cipher_start == cipher_end`: bytes are read straight
/// into the plaintext. With TLS they are read into the ciphertext region and
/// decrypted in place to the end of the plaintext, closing the gap. Nothing
/// is read past `cap`, so every payload has `PAYLOAD_PADDING` bytes after it.
/// The positions are private: the driver reads into [`spare`](Self::spare),
/// says how much came ([`received`](Self::received)), and takes plaintext
/// and frames out, so the layout above holds whatever the driver does.
pub(crate) struct Incoming {
    buf: Box<[u8]>,
    cap: usize,
    start: usize,
    end: usize,
    cipher_start: usize,
    cipher_end: usize,
    decoder: Decoder<Box<[u8]>>,
    /// What a handler's padding covered, to put back after it.
    restore: Restore,
}

impl Incoming {
    /// A receive buffer of `cap` bytes (plus padding) and a decoder whose
    /// message buffer holds `max_message` bytes (plus padding).
    pub(crate) fn new(cap: usize, max_message: usize, max_fragments: u32) -> Incoming {
        let codec = CodecConfig {
            max_frame_size: max_message as u64,
            max_message_size: max_message,
            max_fragments,
            // Leave room for one whole TLS record behind a frame that waits
            // in place for the rest of itself.
            input_capacity: cap - MAX_RECORD,
        };
        Incoming {
            buf: vec![0u8; cap + PAYLOAD_PADDING].into_boxed_slice(),
            cap,
            start: 0,
            end: 0,
            cipher_start: 0,
            cipher_end: 0,
            decoder: Decoder::new(
                Role::Client,
                codec,
                vec![0u8; max_message + PAYLOAD_PADDING].into_boxed_slice(),
            ),
            restore: Restore::default(),
        }
    }

    fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
        self.cipher_start = 0;
        self.cipher_end = 0;
    }

    /// Empties the buffer and readies the decoder for a new connection in
    /// `role`.
    pub(crate) fn reset(&mut self, role: Role) {
        self.clear();
        self.decoder.reset_for(role);
    }

    /// Whether nothing more can be read: the ciphertext (or, without TLS,
    /// the plaintext) reaches the capacity.
    pub(crate) fn is_full(&self) -> bool {
        self.cipher_end == self.cap
    }

    /// Where the next read of at most `max_read` bytes goes (after
    /// [`compact`](Self::compact)); its length is what is offered.
    pub(crate) fn spare(&mut self, max_read: usize) -> &mut [u8] {
        let offered = (self.cap - self.cipher_end).min(max_read);
        &mut self.buf[self.cipher_end..self.cipher_end + offered]
    }

    /// `n` bytes were read into [`spare`](Self::spare).
    pub(crate) fn received(&mut self, n: usize) {
        self.cipher_end += n;
    }

    /// Without TLS: everything received is plaintext.
    pub(crate) fn received_in_clear(&mut self) {
        self.end = self.cipher_end;
        self.cipher_start = self.cipher_end;
    }

    /// The plaintext not yet consumed (writable: parsers work in place).
    pub(crate) fn plaintext(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..self.end]
    }

    /// Marks the first `n` bytes of the plaintext consumed.
    pub(crate) fn consume(&mut self, n: usize) {
        self.start += n;
    }

    /// Whether the plaintext not yet consumed leaves no room for one more
    /// TLS record: a response that is still incomplete can never complete.
    pub(crate) fn no_room_for_record(&self) -> bool {
        self.end - self.start + MAX_RECORD >= self.cap
    }

    /// `len` bytes at `offset` into the plaintext, with the
    /// `PAYLOAD_PADDING` writable bytes after them (the buffer always has
    /// them past its capacity; what they cover is plaintext or ciphertext
    /// no longer needed).
    pub(crate) fn padded(&mut self, offset: usize, len: usize) -> &mut [u8] {
        let at = self.start + offset;
        &mut self.buf[at..at + len + PAYLOAD_PADDING]
    }

    /// The next frame in the plaintext, consumed from it. After a protocol
    /// error the rest is discarded at once, not at the next read: a frame
    /// that filled the buffer (one announced larger than the limit) would
    /// leave no room for that read, and the slot would end before the peer
    /// could read the close frame. Once the decoder has failed, everything
    /// that arrives is discarded and no frame comes out.
    pub(crate) fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ProtocolError> {
        if self.decoder.error().is_some() {
            self.start = self.end;
            return Ok(None);
        }
        match next_frame(
            &mut self.decoder,
            &mut self.buf,
            self.start,
            self.end,
            &mut self.restore,
        ) {
            Ok((consumed, frame)) => {
                self.start += consumed;
                Ok(frame)
            }
            Err(e) => {
                self.start = self.end;
                Err(e)
            }
        }
    }

    /// Puts back what the handler may have written into the padding after
    /// the last payload.
    pub(crate) fn restore_padding(&mut self) {
        self.restore.apply(&mut self.buf);
    }

    /// Makes room to read at the end: drops consumed bytes, closes the gap.
    /// Called before every read of at most `max_read` bytes.
    pub(crate) fn compact(&mut self, max_read: usize) {
        if self.start == self.end && self.cipher_start == self.cipher_end {
            self.clear();
            return;
        }
        let free = self.cap - self.cipher_end;
        let kept = (self.end - self.start) + (self.cipher_end - self.cipher_start);
        // What is left of the last read is small (the start of a record or
        // a frame): moved to the front, so that every read lands in the same
        // few KiB, which stay in cache, rather than walking the buffer.
        let small = kept <= (max_read / 8).min(SMALL_TAIL) && self.start > 0;
        if !small {
            // Compact before the free end gets small, not when it is gone:
            // every read should be large (one read of 8 bytes at the end of
            // the buffer costs a whole system call).
            if free >= (self.cap / 4).min(max_read) {
                return;
            }
            let freed = self.start + (self.cipher_start - self.end);
            if free > 0 && freed < self.cap / 8 {
                return; // moving would free little: read into what is left
            }
        }
        let plain = self.end - self.start;
        self.buf.copy_within(self.start..self.end, 0);
        self.buf
            .copy_within(self.cipher_start..self.cipher_end, plain);
        self.cipher_end = plain + (self.cipher_end - self.cipher_start);
        self.start = 0;
        self.end = plain;
        self.cipher_start = plain;
    }
}

/// Runs the received ciphertext through TLS: the handshake while it lasts,
/// then in-place decryption onto the end of the plaintext. Returns whether
/// the peer sent close_notify.
pub(crate) fn open_tls(
    tls: &mut TlsSession,
    rx: &mut Incoming,
    out: &mut Region,
) -> Result<bool, TlsError> {
    if tls.mode() == Mode::Handshaking {
        let (used, done) = tls.handshake(&mut rx.buf[rx.cipher_start..rx.cipher_end], out)?;
        rx.cipher_start += used;
        if !done {
            return Ok(false);
        }
    }
    let opened = tls.open(&mut rx.buf, rx.end, rx.cipher_start..rx.cipher_end, out)?;
    rx.end = opened.plain_end;
    rx.cipher_start = opened.cipher_start;
    Ok(opened.close_notify)
}

#[cfg(test)]
mod tests {
    use tickwire_codec::Role;

    use super::{Incoming, SMALL_TAIL};
    use crate::payload::Frame;

    /// A buffer of `cap` whose plaintext is `plain` and ciphertext `cipher`
    /// (as offsets), each byte its offset's low bits.
    fn incoming(cap: usize, plain: (usize, usize), cipher: (usize, usize)) -> Incoming {
        let mut rx = Incoming::new(cap, 64 * 1024, 16);
        for (i, b) in rx.buf.iter_mut().enumerate() {
            *b = i as u8;
        }
        (rx.start, rx.end) = plain;
        (rx.cipher_start, rx.cipher_end) = cipher;
        rx
    }

    #[test]
    fn a_small_tail_moves_to_the_front_before_the_next_read() {
        let cap = 256 * 1024;
        // A read of 32 KiB left 10 bytes of plaintext and 200 of a record.
        let mut rx = incoming(cap, (40_000, 40_010), (40_100, 40_300));
        rx.compact(32 * 1024);
        assert_eq!((rx.start, rx.end), (0, 10));
        assert_eq!((rx.cipher_start, rx.cipher_end), (10, 210));
        let expect: Vec<u8> = (40_000..40_010)
            .chain(40_100..40_300)
            .map(|i: usize| i as u8)
            .collect();
        assert_eq!(&rx.buf[..210], &expect[..]);
    }

    #[test]
    fn a_large_remainder_stays_while_a_read_fits() {
        let cap = 256 * 1024;
        let kept = SMALL_TAIL + 1;
        let mut rx = incoming(cap, (1000, 1000), (1000, 1000 + kept));
        rx.compact(32 * 1024);
        assert_eq!((rx.cipher_start, rx.cipher_end), (1000, 1000 + kept));
        // Less free than a read: moved.
        let end = cap - 16 * 1024;
        let mut rx = incoming(cap, (end - kept, end - kept), (end - kept, end));
        rx.compact(32 * 1024);
        assert_eq!((rx.start, rx.end, rx.cipher_start), (0, 0, 0));
        assert_eq!(rx.cipher_end, kept);
    }

    /// Puts `bytes` into `rx` as a plain `ws://` read does.
    fn read_in_clear(rx: &mut Incoming, bytes: &[u8]) {
        rx.compact(32 * 1024);
        rx.spare(32 * 1024)[..bytes.len()].copy_from_slice(bytes);
        rx.received(bytes.len());
        rx.received_in_clear();
    }

    #[test]
    fn after_a_protocol_error_everything_received_is_discarded() {
        let mut rx = Incoming::new(64 * 1024, 64 * 1024, 16);
        // "hi", then a frame with a reserved opcode, then "ok".
        read_in_clear(&mut rx, b"\x81\x02hi\x83\x00\x81\x02ok");
        let Ok(Some(Frame::Data(first))) = rx.next_frame() else {
            panic!("the first message");
        };
        assert_eq!(first.as_bytes(), b"hi");
        rx.restore_padding();
        assert!(rx.next_frame().is_err());
        assert!(rx.plaintext().is_empty(), "the rest is dropped at once");
        // The decoder has failed: what comes later is dropped too.
        read_in_clear(&mut rx, b"\x81\x02ok");
        assert!(matches!(rx.next_frame(), Ok(None)));
        assert!(rx.plaintext().is_empty());
        // A new connection starts clean.
        rx.reset(Role::Client);
        read_in_clear(&mut rx, b"\x81\x02ok");
        let Ok(Some(Frame::Data(again))) = rx.next_frame() else {
            panic!("a message after the reset");
        };
        assert_eq!(again.as_bytes(), b"ok");
    }

    #[test]
    fn everything_consumed_starts_over_at_the_front() {
        let mut rx = incoming(64 * 1024, (5000, 5000), (5000, 5000));
        rx.compact(32 * 1024);
        assert_eq!(
            (rx.start, rx.end, rx.cipher_start, rx.cipher_end),
            (0, 0, 0, 0)
        );
    }
}
