//! How a feed ends: its connections closed after the kill switch's
//! cancel-all (`close_all`), on every way out (`Feed::shutdown`,
//! `into_handler`, `run`'s end, also on a poll's error or a handler's
//! panic, and a trading feed dropped without any of them).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tickwire_net::{CloseCode, ConnId};

use super::{Feed, OnEvent};

/// Dropped without [`Feed::shutdown`], [`Feed::into_handler`] or the end of
/// [`Feed::run`], a feed that trades winds down as they do: the kill
/// switch's cancel-all, its answers waited for (bounded by its
/// `shutdown_wait`), then the closes (up to a second), so that no order
/// of a venue without cancel-on-disconnect is left working. Once only.
impl<H: OnEvent> Drop for Feed<H> {
    fn drop(&mut self) {
        if !self.ended && self.driver.handler().trading.any() {
            let _ = self.close_all(Duration::from_secs(1));
        }
    }
}

impl<H: OnEvent> Feed<H> {
    /// Polls until `stop` is set; on a poll's error or a handler's panic,
    /// the kill switch and the closes (`close_all`) before the error is
    /// returned or the panic goes on.
    pub(crate) fn poll_until(
        &mut self,
        stop: &AtomicBool,
        linger: Duration,
    ) -> std::io::Result<()> {
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            while !stop.load(Ordering::Relaxed) {
                self.poll()?;
            }
            Ok(())
        }));
        match ran {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                let _ = self.close_all(linger);
                Err(e)
            }
            Err(panic) => {
                let _ = self.close_all(linger);
                std::panic::resume_unwind(panic)
            }
        }
    }

    /// Closes every connection (1000) and polls until every close
    /// handshake has ended (and been recorded), or `linger` is up.
    pub(super) fn close_all(&mut self, linger: Duration) -> std::io::Result<()> {
        self.ended = true;
        // The kill switch's cancel-all first, answered (or its wait up).
        let killed = self.kill_on_shutdown();
        self.driver.handler_mut().stopping = true;
        let ids: Vec<ConnId> = self.driver.handler().links.keys().copied().collect();
        for id in &ids {
            let _ = self.driver.close(*id, CloseCode::NORMAL, "");
        }
        let deadline = Instant::now() + linger;
        let mut polled = Ok(());
        while polled.is_ok()
            && Instant::now() < deadline
            && ids.iter().any(|id| self.driver.is_live(*id))
        {
            polled = self.driver.poll_timeout(Duration::from_millis(5));
        }
        self.driver.handler_mut().flush_recorders();
        killed.and(polled)
    }
}
