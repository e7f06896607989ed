//! A script served instead of a market ([`SimConfig::script`](crate::SimConfig::script)):
//! a recording played back, or a market made ahead of time sent as fast
//! as the clients take it.

use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use tickwire_tsc::Clock;

use super::{Shared, lock, write};
use crate::Script;
use crate::protocol::{Out, Protocol};
use crate::stamps::StreamKind;

/// Sends a script's messages to every client, as fast as they take them
/// `burst` to a write, or at the recording's pace. Waits for a first
/// client; before the message [`Script::snapshots_by`] names (or after the
/// first book message of every instrument), waits (up to 10 s) until
/// every instrument's REST snapshot has been written to its client (other
/// REST answers, such as the instrument listing a feed checks its symbols
/// against, do not count), so a client's diff buffer need not hold the
/// whole script. With [`SimConfig::script_hold`](crate::SimConfig::script_hold)
/// it sends only that many messages. Says whether the whole script went
/// out (not when held short, nor when stopped before it did).
pub(super) fn play<P: Protocol>(shared: &Shared<P>, script: &Script, clock: Clock) -> bool {
    while lock(&shared.clients).is_empty() {
        if shared.stop.load(Ordering::Acquire) {
            return false;
        }
        thread::sleep(Duration::from_millis(1));
    }
    let burst = if script.real_time {
        1
    } else {
        shared.config.burst.max(1) as usize
    };
    let symbols = script.snapshots.len() as u64;
    let due = script.snapshots_by.unwrap_or_else(|| {
        first_book_of_each(&script.messages, shared.config.instruments.len()) + 1
    });
    let mut waited = symbols == 0;
    let started = Instant::now();
    let first_wall = script.messages.first().map_or(0, |m| m.1);
    let mut out = Out::default();
    let sent = shared
        .config
        .script_hold
        .map_or(script.messages.len(), |h| h.min(script.messages.len()));
    for (k, chunk) in script.messages[..sent].chunks(burst).enumerate() {
        if !waited && k * burst >= due {
            waited = true;
            let deadline = Instant::now() + Duration::from_secs(10);
            while shared.counters.script_snapshots.load(Ordering::Acquire) < symbols
                && Instant::now() < deadline
            {
                thread::sleep(Duration::from_millis(1));
            }
        }
        if script.real_time {
            let due = Duration::from_nanos(chunk[0].1.saturating_sub(first_wall));
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                thread::sleep(wait);
            }
        }
        // Paused is read with the clients locked, as in `generate`.
        let mut clients = loop {
            if shared.stop.load(Ordering::Acquire) {
                return false;
            }
            let clients = lock(&shared.clients);
            if !shared.paused.load(Ordering::Acquire) {
                break clients;
            }
            drop(clients);
            thread::sleep(Duration::from_millis(1));
        };
        let mut gone = Vec::new();
        for (c, client) in clients.iter_mut().enumerate() {
            for (key, _, frame) in chunk {
                out.items.push((frame.clone(), *key));
            }
            if write(client, &mut out, &shared.stamps, &shared.counters, clock).is_err() {
                out.items.clear();
                gone.push(c);
            }
        }
        for c in gone.into_iter().rev() {
            clients.swap_remove(c);
            shared.counters.dropped.fetch_add(1, Ordering::Relaxed);
        }
        shared.counters.steps.fetch_add(1, Ordering::Relaxed);
    }
    sent == script.messages.len()
}

/// The index of the message by which each of the `instruments` has had a
/// book message (the last index if some never has).
fn first_book_of_each(messages: &[crate::ScriptMessage], instruments: usize) -> usize {
    let mut seen = vec![false; instruments];
    let mut left = instruments;
    for (i, (key, _, _)) in messages.iter().enumerate() {
        let Some((n, StreamKind::Depth, _)) = key else {
            continue;
        };
        let Some(seen) = seen.get_mut(*n) else {
            continue;
        };
        if !std::mem::replace(seen, true) {
            left -= 1;
            if left == 0 {
                return i;
            }
        }
    }
    messages.len().saturating_sub(1)
}
