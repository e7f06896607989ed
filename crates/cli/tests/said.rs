//! Failures an operator must see, said on standard error by `run` with
//! their cause as they happen: a port where nothing listens, and a server
//! whose certificate the configured trust anchors do not vouch for. Each is
//! said once, and the status line carries it.

use std::path::PathBuf;

use tickwire_sim::{self as sim, SimConfig, Simulator};

use crate::running::Run;

fn temp_dir(name: &str) -> PathBuf {
    crate::util::temp_dir(&format!("said-{name}"))
}

/// `run` on a one-venue configuration (`venue` table lines).
fn start(dir: &std::path::Path, venue: &str) -> Run {
    Run::start(dir, &format!("[[venue]]\n{venue}\n"))
}

#[test]
fn a_port_where_nothing_listens_is_said_once_with_its_cause() {
    let dir = temp_dir("closed");
    // A port that was just free: nothing listens there now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut run = start(
        &dir,
        &format!(
            "name = \"closed\"\nvenue = \"okx\"\ninstruments = [\"BTC-USDT\"]\n\
             endpoint = \"ws://127.0.0.1:{port}\""
        ),
    );
    // The streams' refusal (the instrument list's, said before it, is
    // another failure).
    let said = run.wait_for("the refusal", |l| {
        l.contains("connection refused") && !l.contains("instruments not checked")
    });
    assert!(
        said.starts_with("tickwire-feed: venue closed: ws://127.0.0.1:")
            && said.contains(&format!(":{port}/"))
            && said.contains("the venue has never connected; trying again with backoff"),
        "{said}"
    );
    // The status line names it too; the refusals that followed were not
    // said again.
    // A status line naming the cause, once the feed has been refused at
    // least three times: failed attempts of a venue that never
    // connected, not reconnects.
    run.wait_for("a status line with the cause, after 3 refusals", |l| {
        let failed = l
            .split("| closed: NEVER CONNECTED, ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok());
        failed >= Some(3)
            && l.contains("reconnects 0 ")
            && l.contains("failed attempts: socket error: connection refused")
    });
    let repeats = run
        .seen
        .iter()
        .filter(|l| l.starts_with("tickwire-feed: venue closed:"))
        .count();
    assert_eq!(repeats, 1, "{:#?}", run.seen);
}

#[test]
fn a_certificate_the_trust_anchors_do_not_vouch_for_is_said_with_the_name_and_anchors() {
    let dir = temp_dir("ca");
    let (tls, _ca) = sim::self_signed().unwrap();
    let simulator = Simulator::start(SimConfig {
        tls: Some(tls),
        ..SimConfig::default()
    })
    .unwrap();
    let port = simulator.addr().port();
    // No `tls.ca_file`: the simulator's private CA is not trusted.
    let mut run = start(
        &dir,
        &format!(
            "name = \"sim\"\nvenue = \"binance-spot\"\ninstruments = [\"BTCUSDT:2:5:100\"]\n\
             endpoint = \"wss://localhost:{port}\"\nrest = \"https://localhost:{port}\""
        ),
    );
    let said = run.wait_for("the certificate failure", |l| {
        l.contains("venue sim: wss://localhost:") && l.contains("certificate")
    });
    assert!(
        said.contains("TLS failed: invalid peer certificate")
            && said.contains("checked for the name \"localhost\"")
            && said.contains("from the Mozilla roots of webpki-roots")
            && said.contains("tls.ca_file"),
        "{said}"
    );
    simulator.stop();
}
