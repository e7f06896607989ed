//! What the simulator's integration tests share.

use std::time::{Duration, Instant};

use tickwire_net::{Driver, Handler};

/// Polls `driver` until `done` holds of its handler, 60 s at most (a debug
/// build on a loaded machine): a wait on a condition, never on time.
pub(crate) fn wait<H: Handler>(driver: &mut Driver<H>, what: &str, done: impl Fn(&H) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done(driver.handler()) {
        assert!(Instant::now() < deadline, "{what}: not within 60 s");
        driver.poll_timeout(Duration::from_millis(10)).unwrap();
    }
}
