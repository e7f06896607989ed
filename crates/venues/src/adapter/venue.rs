//! The trait every venue adapter implements, and the macro that
//! implements it from an adapter's own methods.

use crate::DecodeError;
use crate::adapter::{Lead, Outcome};
use crate::book::Book;
use crate::event::{Event, InstrumentId};
use crate::sync::Line;

/// What every venue's adapter does, for code that handles several venues
/// alike (a feed handler, a test). Each adapter also has the same methods
/// inherently, generic over `emit` (no indirect call per event).
pub trait VenueAdapter: Lines {
    /// Decodes one text message, `buf[..len]` followed by
    /// [`INPUT_PADDING`](crate::json::INPUT_PADDING) writable bytes, and
    /// emits its events.
    fn on_message(
        &mut self,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Outcome, DecodeError>;

    /// The connection went down: `Disconnected`, then `Gap` and `Resync`
    /// for every book that was valid.
    fn on_disconnect(&mut self, recv_tsc: u64, emit: &mut dyn FnMut(Event));

    /// The instrument the venue calls `symbol`.
    fn instrument(&self, symbol: &str) -> Option<InstrumentId>;

    /// An instrument's book, while it is valid.
    fn book(&self, id: InstrumentId) -> Option<&Book>;

    /// The venue's own words on the last request it refused
    /// ([`Outcome::Rejected`]); empty before any.
    fn rejection(&self) -> &str;
}

/// The two lines an adapter's streams can come on ([`Line`]): what a feed
/// that opens a replacement or a standby connection tells the adapter, and
/// asks it. Every adapter implements it; [`VenueAdapter`] requires it.
pub trait Lines {
    /// The next messages come on `line` of the two connections
    /// that can carry the same subscriptions: a planned reconnect's
    /// replacement, or a warm standby line ([`crate::sync::lines`]).
    /// Messages are taken as [`Line::Primary`]'s until told otherwise.
    fn set_line(&mut self, line: Line);

    /// Which of the two lines carrying `instruments` (indices, as a
    /// connection plan lists them) are open now. A line that opens makes
    /// messages come twice, and duplicates are dropped; one that goes down
    /// leaves its books to the other, with no gap where the other can
    /// carry them. Neither open: `Disconnected`, then as
    /// [`on_disconnect`](crate::VenueAdapter::on_disconnect) for these books alone.
    fn lines_changed(
        &mut self,
        instruments: &[usize],
        open: [bool; 2],
        recv_tsc: u64,
        emit: &mut dyn FnMut(Event),
    );

    /// Whether `line` could carry every book of `instruments` alone: a
    /// replacement is in step, and the old line may be closed.
    fn line_ready(&self, instruments: &[usize], line: Line) -> bool;

    /// Whether `line`, the one the books of `instruments` do not follow,
    /// has lost a shadow book to a fault of its own (Kraken's checksum, a
    /// gap in Coinbase's `sequence_num`) and should be opened again to
    /// bring a snapshot of its own.
    fn line_broken(&self, instruments: &[usize], line: Line) -> bool;

    /// The lead of the latest message that came on both lines, taken.
    fn take_lead(&mut self) -> Option<Lead>;
}

macro_rules! venue_adapter {
    ($t:ty) => {
        $crate::adapter::venue_adapter!($t, |_a: &mut $t, _open: [bool; 2]| {});
    };
    ($t:ty, $on_lines:expr) => {
        impl $t {
            /// The instrument the venue calls `symbol`.
            pub fn instrument(&self, symbol: &str) -> Option<$crate::event::InstrumentId> {
                self.instruments.find(symbol)
            }

            /// An instrument's book, while it is valid.
            pub fn book(&self, id: $crate::event::InstrumentId) -> Option<&$crate::book::Book> {
                self.instruments.book(id)
            }
        }

        impl $crate::adapter::VenueAdapter for $t {
            fn on_message(
                &mut self,
                buf: &mut [u8],
                len: usize,
                recv_tsc: u64,
                mut emit: &mut dyn FnMut($crate::event::Event),
            ) -> Result<$crate::adapter::Outcome, $crate::DecodeError> {
                <$t>::on_message(self, buf, len, recv_tsc, &mut emit)
            }

            fn on_disconnect(
                &mut self,
                recv_tsc: u64,
                mut emit: &mut dyn FnMut($crate::event::Event),
            ) {
                <$t>::on_disconnect(self, recv_tsc, &mut emit)
            }

            fn instrument(&self, symbol: &str) -> Option<$crate::event::InstrumentId> {
                <$t>::instrument(self, symbol)
            }

            fn book(&self, id: $crate::event::InstrumentId) -> Option<&$crate::book::Book> {
                <$t>::book(self, id)
            }

            fn rejection(&self) -> &str {
                self.instruments.rejection()
            }
        }

        impl $crate::adapter::Lines for $t {
            fn set_line(&mut self, line: $crate::sync::Line) {
                self.instruments.set_line(line);
            }

            fn lines_changed(
                &mut self,
                instruments: &[usize],
                open: [bool; 2],
                recv_tsc: u64,
                mut emit: &mut dyn FnMut($crate::event::Event),
            ) {
                ($on_lines)(self, open);
                self.instruments
                    .lines_changed(instruments, open, recv_tsc, &mut emit);
            }

            fn line_ready(&self, instruments: &[usize], line: $crate::sync::Line) -> bool {
                self.instruments.line_ready(instruments, line)
            }

            fn line_broken(&self, instruments: &[usize], line: $crate::sync::Line) -> bool {
                self.instruments.line_broken(instruments, line)
            }

            fn take_lead(&mut self) -> Option<$crate::adapter::Lead> {
                self.instruments.take_lead()
            }
        }
    };
}
pub(crate) use venue_adapter;
