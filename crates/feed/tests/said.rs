//! Failures an operator must see, said on standard error by `run` with
//! their cause as they happen: a port where nothing listens, and a server
//! whose certificate the configured trust anchors do not vouch for. Each is
//! said once, and the status line carries it.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tickwire_sim::{self as sim, SimConfig, Simulator};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tickwire-said-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `run` on a one-venue configuration (`venue` table lines), its standard
/// error read line by line.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    fn start(dir: &std::path::Path, venue: &str) -> Running {
        let config = dir.join("feed.toml");
        std::fs::write(&config, format!("[[venue]]\n{venue}\n")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_tickwire-feed"))
            .args(["run", "--config"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Running {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for a line `matches` accepts (the feed runs on; a generous
    /// deadline only so a broken feed fails the test rather than hang it).
    fn wait_for(&mut self, what: &str, matches: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if matches(&line) {
                        return line;
                    }
                }
                Err(_) => panic!("no {what} on stderr; it said:\n{}", self.seen.join("\n")),
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
    let mut run = Running::start(
        &dir,
        &format!(
            "name = \"closed\"\nvenue = \"okx\"\ninstruments = [\"BTC-USDT\"]\n\
             endpoint = \"ws://127.0.0.1:{port}\""
        ),
    );
    let said = run.wait_for("the refusal", |l| l.contains("connection refused"));
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
    let mut run = Running::start(
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
