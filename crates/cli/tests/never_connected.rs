//! `run` when a venue never connects: with nothing connected, past the
//! configuration's `connect_deadline_s` it exits 3 with one line naming
//! each venue and why; with another venue connected, it says so once,
//! loudly, and runs on; its status and summary lines say "NEVER
//! CONNECTED", not reconnects. Every server is on loopback, started here.

use std::path::PathBuf;

use tickwire_sim::{self as sim, SimConfig, Simulator};

use crate::running::Run;

fn temp_dir(name: &str) -> PathBuf {
    crate::util::temp_dir(&format!("never-connected-{name}"))
}

/// A loopback port nothing listens on (it was free a moment ago).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A status line's count after `label` (`reconnects 0` gives 0).
fn figure(line: &str, label: &str) -> Option<u64> {
    line.split(&format!("{label} "))
        .nth(1)?
        .split_whitespace()
        .next()?
        .trim_end_matches(',')
        .parse()
        .ok()
}

#[test]
fn with_nothing_connected_run_exits_3_past_its_deadline_naming_each_venue_and_why() {
    let dir = temp_dir("none");
    let port = closed_port();
    // A simulator whose private CA the feed is not told to trust.
    let (tls, _ca) = sim::self_signed().unwrap();
    let simulator = Simulator::start(SimConfig {
        tls: Some(tls),
        ..SimConfig::default()
    })
    .unwrap();
    let sim_port = simulator.addr().port();
    let mut run = Run::start(
        &dir,
        &format!(
            // Room for the simulator's TLS refusal to be seen on a busy machine.
            "connect_deadline_s = 5\n\
             [[venue]]\nname = \"closed\"\nvenue = \"okx\"\ninstruments = [\"BTC-USDT\"]\n\
             endpoint = \"ws://127.0.0.1:{port}\"\n\
             [[venue]]\nname = \"sim\"\nvenue = \"binance-spot\"\n\
             instruments = [\"BTCUSDT:2:5:100\"]\n\
             endpoint = \"wss://localhost:{sim_port}\"\nrest = \"https://localhost:{sim_port}\"\n"
        ),
    );
    // The process's exit is the event.
    let code = run.exit_code();
    let said = run.seen.join("\n");
    assert_eq!(code, Some(3), "{said}");
    let last = run.seen.last().cloned().unwrap_or_default();
    assert!(
        last.starts_with("tickwire-feed: no venue connected in 5 s: ")
            && last.contains("venue closed never connected: socket error: connection refused")
            && last.contains("venue sim never connected: TLS failed: invalid peer certificate"),
        "{said}"
    );
    // No line counts a reconnect: nothing ever connected.
    for line in &run.seen {
        assert!(figure(line, "reconnects").is_none_or(|n| n == 0), "{line}");
    }
    simulator.stop();
}

#[test]
fn a_venue_that_never_connects_beside_one_that_did_is_said_once_and_the_run_goes_on() {
    let dir = temp_dir("some");
    let port = closed_port();
    let (tls, ca) = sim::self_signed().unwrap();
    let simulator = Simulator::start(SimConfig {
        tls: Some(tls),
        ..SimConfig::default()
    })
    .unwrap();
    let sim_port = simulator.addr().port();
    std::fs::write(dir.join("ca.pem"), ca).unwrap();
    let mut run = Run::start(
        &dir,
        &format!(
            // Room for the simulator's connection to open on a busy machine.
            "connect_deadline_s = 10\n[tls]\nca_file = \"ca.pem\"\n\
             [[venue]]\nname = \"closed\"\nvenue = \"okx\"\ninstruments = [\"BTC-USDT\"]\n\
             endpoint = \"ws://127.0.0.1:{port}\"\n\
             [[venue]]\nname = \"sim\"\nvenue = \"binance-spot\"\n\
             instruments = [\"BTCUSDT:2:5:100\"]\n\
             endpoint = \"wss://localhost:{sim_port}\"\nrest = \"https://localhost:{sim_port}\"\n"
        ),
    );
    run.wait_for("the loud line past the deadline", |l| {
        l.starts_with("tickwire-feed: VENUE closed HAS NOT CONNECTED in 10 s (socket error: connection refused)")
    });
    // A status line after it: the simulator's book valid, the closed
    // venue never connected, its failed attempts not counted reconnects.
    let status = run.wait_for("a status line with the sim's book valid", |l| {
        l.contains("books valid 1/2") && l.contains("| closed: NEVER CONNECTED, ")
    });
    assert_eq!(figure(&status, "reconnects"), Some(0), "{status}");
    assert!(
        figure(&status, "failed connects").is_some_and(|n| n >= 1),
        "{status}"
    );
    run.interrupt();
    let code = run.exit_code();
    let said = run.seen.join("\n");
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains(
            "tickwire-feed: venue closed NEVER CONNECTED: socket error: connection refused"
        ),
        "{said}"
    );
    let summary = run
        .seen
        .iter()
        .find(|l| l.starts_with("stopped after"))
        .unwrap_or_else(|| panic!("no summary: {said}"));
    assert!(summary.contains(" 0 reconnects, "), "{summary}");
    // Said loudly once, not at every status line.
    let loud = run
        .seen
        .iter()
        .filter(|l| l.contains("HAS NOT CONNECTED"))
        .count();
    assert_eq!(loud, 1, "{said}");
    simulator.stop();
}
