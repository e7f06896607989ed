//! The wire's own latency, where the sender can say when it sent: a
//! board of send stamps (TSC ticks, on the feed's clock) that a sender in
//! the same process fills (the exchange simulator does), looked up by the
//! feed for each message's first event. The feed knows only this trait,
//! not who implements it.

/// Which of an instrument's streams a message is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireStream {
    /// Trades, keyed by trade id.
    Trade,
    /// Best bid and offer, keyed by update id.
    Quote,
    /// Book diffs, keyed by update id.
    Depth,
}

/// When each message was handed to the socket by its sender, if known.
pub trait WireStamps: Send + Sync {
    /// The TSC at which the message (`instrument` in the sender's order,
    /// `stream`, `id`) was sent, if it is still on the board.
    fn sent(&self, instrument: usize, stream: WireStream, id: u64) -> Option<u64>;
}
