//! Network faults between the feed and each venue's simulator, injected
//! by `tickwire_testkit::proxy`: every scenario runs on every venue and
//! asserts the exact outcome.
//!
//! Two of a venue's instruments are two venues of the feed ("a" and "b"),
//! each on its own connection through its own proxy; Binance's REST
//! snapshots go straight to the simulator (through a third proxy for "a"
//! in the fetch scenarios). A fault on "a" must make "a" (and only "a")
//! disconnect, gap, resync and become valid again, ending equal to the
//! simulator's book; "b" must never notice. Faults that do not break the
//! stream (1-byte segments, delays) must change nothing at all.

use crate::common;

use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use common::{Rig, RigConfig, rest_venues, venues};
use tickwire_feed::live::{FeedStats, LostBy};
use tickwire_feed::recording;
use tickwire_net::Config as NetConfig;
use tickwire_sim::Venue;
use tickwire_testkit::proxy::Fault;
use tickwire_venues::Kind;
use tickwire_venues::sync::Resync;

/// After a fault on "a": it reconnected, its book gapped and came back
/// (after failed reconnects, if any, one snapshot: asked for once the
/// stream was back where it comes from REST, at once where it comes in
/// band), "b" saw nothing, and both books equal the simulator's.
fn recovered_from_a_fault_on_a(rig: &mut Rig) {
    rig.wait("a to reconnect and be valid again", 30, |r| {
        r.reconnects() >= 1 && r.valid() == 2 && r.book_valid_events(0) >= 1
    });
    let said = rig.said(0);
    let middle = &said[2.min(said.len())..said.len().saturating_sub(2)];
    assert!(
        matches!(
            said[..],
            [
                Kind::Disconnected,
                Kind::Gap {
                    why: Resync::Disconnected
                },
                ..,
                Kind::BookSnapshot { .. },
                Kind::BookValid { .. }
            ]
        ) && middle.iter().filter(|k| **k == Kind::Resync).count() == 1
            && middle
                .iter()
                .all(|k| matches!(k, Kind::Resync | Kind::Disconnected)),
        "{}: {said:?}",
        rig.venue
    );
    let rest = if rig.venue.rest_snapshots() { 3 } else { 0 };
    assert_eq!(
        FeedStats::get(&rig.stats.snapshots),
        rest,
        "{}: one REST snapshot per book at the start, one for a's after the fault",
        rig.venue
    );
    assert_eq!(
        rig.trouble(1),
        0,
        "{}: b was disturbed: {:?}",
        rig.venue,
        rig.seen[1]
    );
    assert_eq!(rig.book_valid_events(1), 0, "{}", rig.venue);
    assert_eq!(FeedStats::get(&rig.stats.decode_errors), 0, "{}", rig.venue);
    rig.run_messages(200, 30);
    rig.books_match_the_simulator();
}

/// Which count of lost connections a fault must move.
type Lost = fn(&LostBy) -> &AtomicU64;

/// `fault` on "a"'s connection, on every venue: "a" reconnects once, lost
/// for the reason `lost` counts, and recovers; "b" sees nothing.
fn a_fault_on_a_is_recovered(fault: Fault, lost: Lost) {
    for venue in venues() {
        let mut rig = Rig::start(venue);
        rig.proxies[0].set(fault);
        recovered_from_a_fault_on_a(&mut rig);
        rig.proxies[0].set(Fault::None);
        assert_eq!(rig.reconnects(), 1, "{venue} {fault:?}");
        assert_eq!(rig.lost(lost), 1, "{venue} {fault:?}");
        assert_eq!(rig.proxies[0].accepted(), 2, "{venue} {fault:?}");
        assert_eq!(rig.proxies[1].accepted(), 1, "{venue} {fault:?}");
    }
}

#[test]
fn a_connection_closed_without_a_close_frame_is_reconnected_and_only_its_book_resyncs() {
    a_fault_on_a_is_recovered(Fault::CloseAfter(0), |l| &l.closed);
}

#[test]
fn a_reconnect_is_recorded_as_a_new_opening_of_the_same_endpoint() {
    for venue in venues() {
        let dir = std::env::temp_dir().join(format!(
            "tickwire-faults-rec-{}-{venue}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let base = dir.join("rec");
        let header = recording::Header {
            created_unix_ns: 1,
            ticks_per_second: 1e9,
        };
        let writer = recording::Writer::create(&base, 1 << 30, header).unwrap();
        let mut rig = Rig::with(RigConfig {
            recording: Some(writer),
            ..RigConfig::new(venue)
        });
        let ports = rig
            .proxies
            .each_ref()
            .map(|p| format!(":{}/", p.addr().port()));
        rig.proxies[0].set(Fault::CloseAfter(0));
        recovered_from_a_fault_on_a(&mut rig);
        let sinks = rig.feed.shutdown(Duration::from_millis(500)).unwrap();
        sinks.recording.unwrap().finish().unwrap();
        // Each stream's records, by kind: a letter each (o: opened, s:
        // sent, r: received, c: closed), repeats of s and r as one.
        let mut streams: [String; 2] = Default::default();
        let mut conns = [None, None];
        for file in recording::files(&base) {
            let mut reader = recording::Reader::new(std::fs::File::open(file).unwrap()).unwrap();
            while let Some(r) = reader.next_record().unwrap() {
                let payload = String::from_utf8_lossy(r.payload);
                for v in 0..2 {
                    if r.kind == recording::Kind::Opened && payload.contains(&ports[v]) {
                        conns[v] = Some(r.conn);
                    }
                    if conns[v] == Some(r.conn) {
                        let letter = match r.kind {
                            recording::Kind::Opened => 'o',
                            recording::Kind::Sent => 's',
                            recording::Kind::Received => 'r',
                            recording::Kind::Closed => 'c',
                            recording::Kind::Response => 'R',
                        };
                        if !streams[v].ends_with(letter) || letter == 'o' || letter == 'c' {
                            streams[v].push(letter);
                        }
                    }
                }
            }
        }
        // "a": opened, subscribed, received (answering the venue's
        // heartbeats, where it asks), dropped, opened again on the same
        // endpoint, subscribed, received, closed at the end; "b" once.
        let shape = |s: &str, opened: usize| {
            s.starts_with("os")
                && s.ends_with('c')
                && s.matches('o').count() == opened
                && s.matches('c').count() == opened
                && s.chars().all(|c| "osrc".contains(c))
        };
        assert!(
            shape(&streams[0], 2) && streams[0].contains("cos"),
            "{venue}: {}",
            streams[0]
        );
        assert!(shape(&streams[1], 1), "{venue}: {}", streams[1]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_snapshot_fetch_reset_mid_response_is_retried_and_the_book_recovers() {
    for venue in rest_venues() {
        let mut rig = Rig::with(RigConfig {
            rest_proxy: true,
            ..RigConfig::new(venue)
        });
        let rest = rig.rest.take().unwrap();
        // One fetch so far, "a"'s first snapshot: its TLS handshake and
        // tickets (about 1.1 KB; a resumed one is shorter) and its
        // response (about 1.3 KB, give or take 200 bytes as the book
        // changes): 2.3 to 2.8 KB in all. The next one is reset at 60 %
        // of that, past any handshake and well before the response's end.
        assert_eq!(rest.accepted(), 1);
        let one_fetch = rest.downstream_bytes();
        rest.set(Fault::ResetAfter(one_fetch * 6 / 10));
        rig.proxies[0].set(Fault::CloseAfter(0));
        recovered_from_a_fault_on_a(&mut rig);
        assert_eq!(FeedStats::get(&rig.stats.fetch_failures), 1, "{venue}");
        assert_eq!(
            rest.accepted(),
            3,
            "{venue}: the first, the reset one, its retry"
        );
        assert_eq!(rig.reconnects(), 1, "{venue}");
    }
}

#[test]
fn a_stalled_snapshot_fetch_times_out_and_is_retried() {
    for venue in rest_venues() {
        // A fetch must finish within the handshake timeout: 3 s here (a
        // loopback handshake of the streams takes milliseconds, even in a
        // debug build under load), not the rig's generous 10 s.
        let mut rig = Rig::with(RigConfig {
            rest_proxy: true,
            net: NetConfig {
                handshake_timeout: Duration::from_secs(3),
                ..common::net()
            },
            ..RigConfig::new(venue)
        });
        let rest = rig.rest.take().unwrap();
        rest.set(Fault::Stall);
        rig.proxies[0].set(Fault::CloseAfter(0));
        rig.wait("the stalled fetch to time out", 30, |r| {
            FeedStats::get(&r.stats.fetch_failures) >= 1
        });
        // The retry waits out its backoff in a later poll, on this thread:
        // it goes through.
        rest.set(Fault::None);
        recovered_from_a_fault_on_a(&mut rig);
        assert_eq!(FeedStats::get(&rig.stats.fetch_failures), 1, "{venue}");
        assert_eq!(
            rest.accepted(),
            3,
            "{venue}: the first, the stalled one, its retry"
        );
        assert_eq!(
            rig.lost(|l| &l.timeout),
            0,
            "{venue}: the stream was never timed out"
        );
        assert_eq!(rig.reconnects(), 1, "{venue}");
    }
}

#[test]
fn a_reset_in_the_middle_of_a_record_is_recovered() {
    a_fault_on_a_is_recovered(Fault::ResetAfter(777), |l| &l.socket);
}

#[test]
fn a_corrupted_byte_is_caught_by_tls_and_recovered() {
    a_fault_on_a_is_recovered(Fault::CorruptAt(1500), |l| &l.tls);
}

#[test]
fn a_duplicated_range_is_caught_by_tls_and_recovered() {
    let fault = Fault::Duplicate {
        start: 2000,
        len: 100,
    };
    a_fault_on_a_is_recovered(fault, |l| &l.tls);
}

#[test]
fn a_dropped_range_is_caught_by_tls_and_recovered() {
    let fault = Fault::Drop {
        start: 2000,
        len: 100,
    };
    a_fault_on_a_is_recovered(fault, |l| &l.tls);
}

#[test]
fn one_byte_segments_and_delays_change_nothing() {
    for venue in venues() {
        // A quarter of the usual rate: a write per byte must keep up in a
        // debug build on a loaded 2-core machine, or the pong deadline
        // (rightly) reconnects, and that is not what this test is about.
        let mut rig = Rig::with(RigConfig {
            rate: 500,
            ..RigConfig::new(venue)
        });
        rig.proxies[0].set(Fault::Split);
        rig.proxies[1].set(Fault::Delay(Duration::from_millis(30)));
        // Hundreds of messages through each fault, however long they take.
        let through = |r: &Rig| [0, 1].map(|v| FeedStats::get(&r.stats.venues[v].messages));
        let before = through(&rig);
        rig.wait("500 messages on each connection", 60, |r| {
            (0..2).all(|v| through(r)[v] >= before[v] + 500)
        });
        rig.proxies[0].set(Fault::None);
        rig.proxies[1].set(Fault::None);
        rig.run_messages(100, 30);
        rig.assert_untroubled(0);
        rig.books_match_the_simulator();
    }
}

#[test]
fn a_half_open_connection_is_detected_by_the_pong_deadline() {
    for venue in venues() {
        // A tight pong deadline, and no stale-data deadline: only the pong
        // deadline can notice the stall. A tenth of the usual rate, so that
        // "b"'s pongs never queue behind a second of market data the feed
        // (debug, on a loaded machine) has not read yet: the feed reads
        // what is ready before it looks at its deadlines, so its thread
        // being descheduled alone cannot fail "b". Pings every 600 ms, not
        // faster: Binance counts them among the 5 messages a second a spot
        // connection may send, and the simulator counts them as it reads
        // them: at 600 ms only a simulator stalled for over 2.4 s reads
        // more than 5 in a second's worth.
        let mut rig = Rig::with(RigConfig {
            rate: 200,
            net: NetConfig {
                ping_interval: Some(Duration::from_millis(600)),
                pong_timeout: Duration::from_secs(1),
                stale_timeout: None,
                ..common::net()
            },
            ..RigConfig::new(venue)
        });
        // Bytes are accepted and nothing comes back: no data, no pongs.
        rig.proxies[0].set(Fault::Stall);
        rig.wait("the stall to be noticed", 30, |r| r.reconnects() >= 1);
        rig.proxies[0].set(Fault::None);
        recovered_from_a_fault_on_a(&mut rig);
        assert_eq!(rig.reconnects(), 1, "{venue}");
        assert_eq!(rig.lost(|l| &l.timeout), 1, "{venue}");
    }
}

#[test]
fn a_quiet_but_alive_stream_is_kept() {
    for venue in venues() {
        // A stale-data deadline of 3 s, pinged every 600 ms: the pongs (and
        // the venue's own heartbeats) are the only bytes while the market
        // is still, and they must keep the connection. (A spurious timeout
        // would need the feed's thread, or the simulator's, to stall for
        // 2.4 s.) No faster: Binance spot counts pings among the 5
        // messages a second a connection may send, as the simulator reads
        // them (a stall of 2.4 s to read 5 at once).
        let stale = Duration::from_secs(3);
        let mut rig = Rig::with(RigConfig {
            net: NetConfig {
                ping_interval: Some(Duration::from_millis(600)),
                stale_timeout: Some(stale),
                ..common::net()
            },
            ..RigConfig::new(venue)
        });
        // The market paused and everything in: from here, no market data
        // for half as long again as the stale deadline.
        rig.quiet();
        let seen = rig.seen.each_ref().map(Vec::len);
        rig.run_for(stale * 3 / 2);
        // Nothing new, but on Bybit, which repeats its level-1 snapshot (a
        // quote, the same again) after 3 s without a change.
        let repeats = venue.bybit_category().is_some();
        for (all, before) in rig.seen.iter().zip(seen) {
            let during = &all[before..];
            assert!(
                during
                    .iter()
                    .all(|k| repeats && matches!(k, Kind::Quote { .. })),
                "{venue}: the market was not quiet: {during:?}"
            );
        }
        rig.simulator.pause(false);
        rig.run_messages(200, 30);
        rig.assert_untroubled(0);
        rig.books_match_the_simulator();
    }
}

#[test]
fn refused_reconnects_back_off_and_then_succeed() {
    // Attempts refused before the proxy lets one through.
    const REFUSED: u64 = 4;
    let backoff = common::net().backoff;
    for venue in venues() {
        let mut rig = Rig::start(venue);
        rig.proxies[0].refuse_for(Duration::from_secs(3600));
        let dropped = Instant::now();
        rig.proxies[0].reset_all();
        // The feed connects only in its polls, on this thread, and an
        // attempt is counted refused before its reset is sent: once the
        // feed has seen the 4th refusal, no 5th attempt is under way.
        rig.wait("the refused attempts", 30, |r| {
            r.proxies[0].refused() >= REFUSED
        });
        let refusing = dropped.elapsed();
        rig.proxies[0].refuse_for(Duration::ZERO);
        recovered_from_a_fault_on_a(&mut rig);
        assert_eq!(rig.proxies[0].refused(), REFUSED, "{venue}");
        assert_eq!(
            rig.proxies[0].accepted(),
            2,
            "{venue}: the first connection and the one let through"
        );
        // The drop is a reconnect; the refused attempts never opened, and
        // are counted as failed attempts, not reconnects.
        assert_eq!(rig.reconnects(), 1, "{venue}: the drop");
        assert_eq!(
            FeedStats::get(&rig.stats.connect_failures),
            REFUSED,
            "{venue}: each refusal"
        );
        assert_eq!(rig.lost(|l| &l.socket), REFUSED + 1, "{venue}: resets");
        // Each attempt waited out its backoff, growing: 50, 100, 200 and
        // 400 ms, less their jitter at most. The sum is a floor a loaded
        // machine can only add to; retries without backoff (or without
        // growth) come sooner.
        let floor: Duration = (1..=REFUSED as u32).map(|n| backoff.delay(n, 0.0)).sum();
        assert!(
            refusing >= floor,
            "{venue}: {REFUSED} attempts after {refusing:?}, sooner than their backoff ({floor:?})"
        );
    }
}

/// A valid message of a channel the venue's adapter does not normalise.
/// None for Coinbase: every frame of a Coinbase connection carries the
/// connection's next `sequence_num`, and one that does not is (rightly) a
/// gap; the simulator injects the same text on both connections, whose
/// numbers differ, so no injected frame of another channel can be valid
/// on both. (A frame without a number is an error frame: a refusal, which
/// venues.rs tests.)
fn unexpected(venue: Venue) -> Option<&'static str> {
    Some(match venue {
        Venue::BinanceSpot | Venue::BinanceSpotSbe | Venue::BinanceUsdM | Venue::BinanceCoinM => {
            r#"{"stream":"btcusdt@kline_1m","data":{"e":"kline","E":1,"s":"BTCUSDT"}}"#
        }
        Venue::Okx => r#"{"arg":{"channel":"tickers","instId":"BTC-USDT"},"data":[{}]}"#,
        Venue::BybitSpot | Venue::BybitLinear | Venue::BybitInverse => {
            r#"{"topic":"tickers.BTCUSDT","type":"snapshot","ts":1,"data":{}}"#
        }
        Venue::Kraken => r#"{"channel":"ohlc","type":"update","data":[]}"#,
        Venue::Deribit => {
            r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"ticker.BTC-PERPETUAL.100ms","data":{}}}"#
        }
        Venue::Coinbase => return None,
    })
}

#[test]
fn undecodable_and_unexpected_messages_are_counted_logged_once_and_the_connection_kept() {
    for venue in venues() {
        let mut rig = Rig::start(venue);
        let ignored_before = FeedStats::get(&rig.stats.ignored);
        let truncated = r#"{"stream":"btcusdt@trade","data":{"e":"trade","E":1,"s":"BTCUSDT","t":"#;
        let mut sent = vec![truncated, truncated];
        sent.extend(unexpected(venue));
        for text in &sent {
            // Both connections ("a" and "b") are the simulator's clients.
            assert_eq!(rig.simulator.inject(text), 2, "{venue}");
        }
        // Two of each on the two connections, the unexpected one last.
        let unexpected_count = if unexpected(venue).is_some() { 2 } else { 0 };
        rig.wait("the injected messages", 30, |r| {
            FeedStats::get(&r.stats.decode_errors) >= 4
                && FeedStats::get(&r.stats.ignored) >= ignored_before + unexpected_count
        });
        // Then more of the market: nothing else counted.
        rig.run_messages(200, 30);
        // One line per venue: the second truncated message is only counted.
        assert_eq!(FeedStats::get(&rig.stats.logged), 2, "{venue}");
        assert_eq!(
            FeedStats::get(&rig.stats.ignored) - ignored_before,
            unexpected_count,
            "{venue}"
        );
        rig.assert_untroubled(4);
        rig.books_match_the_simulator();
    }
}

/// The resident set size of this process, in bytes (Linux).
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in /proc/self/status: {status}"));
    kib * 1024
}

/// The long run: the feed against the simulator at a high rate for
/// `TICKWIRE_SOAK_SECS` (default 180) seconds, a fault every few seconds
/// on one venue or the other. Every fault must be recovered from (both
/// books valid again, equal to the simulator's), the receive path must not
/// allocate between faults, and the resident set must stay flat after the
/// warm-up. `.ci/run` runs it by name, in release mode.
#[test]
#[ignore = "a long run: cargo test --release -p tickwire-feed --test tests -- --ignored faults::soak"]
fn soak() {
    let secs: u64 = std::env::var("TICKWIRE_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(180);
    let mut rig = Rig::with(RigConfig {
        rate: 20_000,
        ..RigConfig::new(Venue::BinanceSpot)
    });
    rig.keep_seen = false;
    let started = Instant::now();
    let faults = [
        ("close without a close frame", Fault::CloseAfter(5000)),
        ("reset mid-record", Fault::ResetAfter(3333)),
        ("corrupted byte", Fault::CorruptAt(4000)),
        ("1-byte segments", Fault::Split),
        (
            "dropped range",
            Fault::Drop {
                start: 6000,
                len: 50,
            },
        ),
        ("half-open", Fault::Stall),
        (
            "duplicated range",
            Fault::Duplicate {
                start: 7000,
                len: 70,
            },
        ),
        ("delay", Fault::Delay(Duration::from_millis(20))),
    ];
    // The resident set after 20 s (a third of a shorter run), when every
    // buffer has been grown and the allocator has its pools.
    let warmup = Duration::from_secs(20).min(Duration::from_secs(secs) / 3);
    let mut injected = 0;
    let mut steady_allocations = 0;
    let mut steady_messages = 0;
    let mut steady_windows = 0;
    // Windows in which something other than the steady flow happened (a
    // reconnect the machine's load caused, a resync): their handshakes
    // and snapshots allocate by design, so they are reported apart, with
    // what happened, and not counted as steady.
    let mut disturbed: Vec<String> = Vec::new();
    let mut rss_after_warmup = None;
    let mut rss_max = 0;
    while started.elapsed() < Duration::from_secs(secs) {
        // A steady stretch: nothing on the receive path allocates.
        let before = FeedStats::get(&rig.stats.messages);
        let events = |r: &Rig| {
            let s = &r.stats;
            [
                r.reconnects(),
                FeedStats::get(&s.gaps),
                FeedStats::get(&s.resyncs),
                FeedStats::get(&s.snapshots),
                FeedStats::get(&s.fetch_failures),
            ]
        };
        let at_start = events(&rig);
        let ((), allocations) =
            tickwire_testkit::allocations(|| rig.run_for(Duration::from_secs(2)));
        let at_end = events(&rig);
        if at_end != at_start {
            let d: Vec<u64> = at_end.iter().zip(at_start).map(|(e, s)| e - s).collect();
            disturbed.push(format!(
                "{allocations} allocations with {} reconnects, {} gaps, {} resyncs, \
                 {} snapshots, {} failed fetches (lost so far: {} timeout, {} closed, {} socket)",
                d[0],
                d[1],
                d[2],
                d[3],
                d[4],
                rig.lost(|l| &l.timeout),
                rig.lost(|l| &l.closed),
                rig.lost(|l| &l.socket),
            ));
        } else {
            steady_windows += 1;
            steady_allocations += allocations;
        }
        if std::env::var_os("TICKWIRE_SOAK_DEBUG").is_some() {
            eprintln!(
                "window: {allocations} allocations, {} messages, snapshots {}, reconnects {}",
                FeedStats::get(&rig.stats.messages) - before,
                FeedStats::get(&rig.stats.snapshots),
                rig.reconnects()
            );
        }
        if at_end == at_start {
            steady_messages += FeedStats::get(&rig.stats.messages) - before;
        }
        if rss_after_warmup.is_none() && started.elapsed() > warmup {
            rss_after_warmup = Some(rss());
        }
        rss_max = rss_max.max(rss());
        // A fault on "a" or "b", in turn.
        let (what, fault) = faults[injected % faults.len()];
        let v = injected % 2;
        let reconnects = rig.reconnects();
        rig.proxies[v].set(fault);
        injected += 1;
        match fault {
            Fault::Split | Fault::Delay(_) => {
                rig.run_for(Duration::from_secs(1));
                rig.proxies[v].set(Fault::None);
            }
            _ => {
                rig.wait(what, 30, |r| r.reconnects() > reconnects);
                rig.proxies[v].set(Fault::None);
            }
        }
        rig.wait(&format!("recovery from: {what}"), 30, |r| r.valid() == 2);
        rig.run_for(Duration::from_millis(200));
        rig.books_match_the_simulator();
        assert_eq!(FeedStats::get(&rig.stats.decode_errors), 0);
    }
    let rss_end = rss();
    let s = &rig.stats;
    eprintln!(
        "soak: {:.0} s, {} faults injected and recovered from, {} reconnects \
         (lost: {} closed, {} tls, {} protocol, {} timeout, {} socket), {} messages, {} events, \
         {} gaps; {} allocations over {} steady messages in {} steady windows of 2 s, \
         {} windows disturbed; RSS after warm-up {} KiB, max {} KiB, end {} KiB",
        started.elapsed().as_secs_f64(),
        injected,
        rig.reconnects(),
        FeedStats::get(&s.lost.closed),
        FeedStats::get(&s.lost.tls),
        FeedStats::get(&s.lost.protocol),
        FeedStats::get(&s.lost.timeout),
        FeedStats::get(&s.lost.socket),
        FeedStats::get(&s.messages),
        FeedStats::get(&s.events),
        FeedStats::get(&s.gaps),
        steady_allocations,
        steady_messages,
        steady_windows,
        disturbed.len(),
        rss_after_warmup.unwrap_or(0) / 1024,
        rss_max / 1024,
        rss_end / 1024,
    );
    for d in &disturbed {
        eprintln!("soak: a disturbed window: {d}");
    }
    assert!(injected >= 2, "too short to inject faults");
    assert!(steady_messages > 0);
    // Enough steady windows to mean something: a quarter of them (a
    // loaded machine disturbs a few; one that disturbs nearly all proves
    // nothing about the receive path, and says so).
    let windows = steady_windows + disturbed.len();
    assert!(
        steady_windows >= windows.div_ceil(4).max(1),
        "{steady_windows} steady windows of {windows}"
    );
    assert_eq!(steady_allocations, 0, "the receive path allocated");
    // One REST snapshot per book at the start and at most one per
    // reconnect: none fetched before its stream was back (it would be
    // stale, and fetched again).
    assert!(
        FeedStats::get(&s.snapshots) <= 2 + rig.reconnects(),
        "{} snapshots for {} reconnects",
        FeedStats::get(&s.snapshots),
        rig.reconnects()
    );
    let warm = rss_after_warmup.expect("the run ended before its warm-up did");
    assert!(warm > 0);
    // Flat: within 16 MiB of the size after warm-up.
    assert!(
        rss_end < warm + (16 << 20),
        "RSS grew from {} KiB to {} KiB",
        warm / 1024,
        rss_end / 1024
    );
}
