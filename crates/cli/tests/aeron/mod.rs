//! The Aeron sink across processes (and hosts): the feed (`run`) with
//! `[sinks.aeron]`, and `subscribe` reading it back. Built with the
//! `aeron` feature only: `cargo test --release -p tickwire-feed-cli
//! --features aeron aeron`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub(crate) use crate::util::events_of;

mod hosts;
mod ipc;
mod slow;

/// A child that is killed if the test ends before it does, and a media
/// driver directory removed then (a killed driver leaves it).
pub(crate) struct Running {
    pub(crate) child: Child,
    pub(crate) driver: Option<PathBuf>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if let Some(d) = &self.driver {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A media driver directory of one test's own (removed by its driver).
pub(crate) fn driver_dir(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "/dev/shm/tickwire-aeron-{name}-{}",
        std::process::id()
    ))
}

/// A child's stderr, line by line, read on a thread of its own so the
/// child never blocks on a full pipe.
pub(crate) struct Lines {
    rx: mpsc::Receiver<String>,
    /// Every line read so far.
    pub(crate) seen: Vec<String>,
}

impl Lines {
    pub(crate) fn of(stderr: ChildStderr) -> Lines {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Lines {
            rx,
            seen: Vec::new(),
        }
    }

    /// Waits for a line holding `text` (a deadline for a loaded machine
    /// only); the line.
    pub(crate) fn wait_for(&mut self, text: &str, secs: u64) -> String {
        if let Some(l) = self.seen.iter().find(|l| l.contains(text)) {
            return l.clone();
        }
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "no line with {text:?} within {secs} s; seen:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }
}

/// Waits for `child` to exit (a deadline for a loaded machine only).
pub(crate) fn exit_of(child: &mut Child, secs: u64) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(Instant::now() < deadline, "the program did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A feed configuration against the simulator on `port`: JSON Lines to
/// `jsonl`, and `aeron` (the `[sinks.aeron]` table's lines).
pub(crate) fn feed_config(dir: &Path, port: u16, ca: &Path, jsonl: &Path, aeron: &str) -> PathBuf {
    let config = dir.join("feed.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[sinks]
jsonl = "{jsonl}"
[sinks.aeron]
{aeron}
[tls]
ca_file = "{ca}"
[[venue]]
name = "sim"
venue = "binance-spot"
instruments = ["BTCUSDT:2:5:1000", "ETHUSDT:2:4:1000"]
endpoint = "wss://localhost:{port}"
rest = "https://localhost:{port}"
"#,
            jsonl = jsonl.display(),
            ca = ca.display(),
        ),
    )
    .unwrap();
    config
}

/// Asserts two runs of event lines are the same events in the same
/// order: equal but for `recv_ns`, which the sink and the publisher each
/// take through their own look at the process's clock calibration (within
/// a millisecond of each other).
pub(crate) fn assert_same_events(feed: &[serde_json::Value], subscriber: &[serde_json::Value]) {
    assert_eq!(feed.len(), subscriber.len(), "as many events");
    for (n, (a, b)) in feed.iter().zip(subscriber).enumerate() {
        let (mut a, mut b) = (a.clone(), b.clone());
        let stamp = |v: &mut serde_json::Value| {
            v.as_object_mut()
                .and_then(|o| o.remove("recv_ns"))
                .and_then(|t| t.as_u64())
        };
        let (ta, tb) = (stamp(&mut a), stamp(&mut b));
        assert_eq!(a, b, "event {n}");
        if let (Some(ta), Some(tb)) = (ta, tb) {
            assert!(
                ta.abs_diff(tb) < 1_000_000,
                "event {n}: recv_ns {ta} and {tb}"
            );
        }
    }
}
