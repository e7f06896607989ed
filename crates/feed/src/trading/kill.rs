//! [`KillSwitch`]: when the feed cancels every order of a trading venue
//! on its own, without the bot asking.

use std::time::Duration;

/// When every order of a trading venue is cancelled (each cause on by
/// default). A cancel-all the kill switch sends is the session's
/// `Request::CancelAll`: its answers reach the bot in
/// `Update::orders` like any other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct KillSwitch {
    /// At the feed's end (`Feed::shutdown`,
    /// `Feed::into_handler`, the end of
    /// `Feed::run`): cancel-all, then the feed waits
    /// up to `shutdown_wait` for the session to hold no working order
    /// before it closes the connections.
    pub on_shutdown: bool,
    /// How long the shutdown waits for the cancel-all's answers.
    pub shutdown_wait: Duration,
    /// On the loss of the trading session: cancel-all as soon as the
    /// session is ready again (reconnected and reconciled); and the
    /// venue's own cancel-on-disconnect where it has one (Deribit's
    /// `private/enable_cancel_on_disconnect`), which cancels at once.
    pub on_session_loss: bool,
    /// On the loss of the venue's market data (every one of its books
    /// invalid: gaps, resyncs, its lines down): cancel-all once, armed
    /// again when a book is valid again. A venue whose market data keeps
    /// no book never trips it.
    pub on_market_loss: bool,
}

impl Default for KillSwitch {
    fn default() -> KillSwitch {
        KillSwitch {
            on_shutdown: true,
            shutdown_wait: super::SHUTDOWN_WAIT,
            on_session_loss: true,
            on_market_loss: true,
        }
    }
}

impl KillSwitch {
    /// Never cancels on its own.
    pub fn off() -> KillSwitch {
        KillSwitch {
            on_shutdown: false,
            shutdown_wait: Duration::ZERO,
            on_session_loss: false,
            on_market_loss: false,
        }
    }
}
