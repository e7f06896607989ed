//! `tickwire-feed record` as a user runs it, against the simulator over
//! TLS: killed (SIGKILL) at random moments, what it leaves replays up to
//! the cut and loses no more than the stated bound; a quiet recording is
//! on the disk within the flush interval; and `--out` with a relative path
//! writes into the run's directory, not the current one.

use crate::util::{bin, signal, wait_for};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::Duration;

use tickwire_feed::recording::{self, FILE_HEADER, FLUSH_BYTES, RECORD_HEADER, Reader};
use tickwire_sim::Simulator;

fn temp_dir(name: &str) -> PathBuf {
    crate::util::temp_dir(&format!("record-{name}"))
}

/// A simulator of Binance spot at `rate` steps a second, and a
/// configuration in `dir` for a feed of it (no other output).
fn simulator(dir: &Path, rate: u32) -> (Simulator, PathBuf) {
    let (simulator, ca_file) = crate::util::tls_simulator(dir, rate);
    let port = simulator.addr().port();
    let config = dir.join("feed.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[metrics]
interval_ms = 100
[tls]
ca_file = "{ca}"
[[venue]]
name = "sim"
venue = "binance-spot"
instruments = ["BTCUSDT:2:5:20", "ETHUSDT:2:4:20"]
endpoint = "wss://localhost:{port}"
rest = "https://localhost:{port}"
"#,
            ca = ca_file.display(),
        ),
    )
    .unwrap();
    (simulator, config)
}

/// `record --config config --out out`, run in `dir`, its standard error
/// to `dir/<name>.err` (a pipe nobody reads could fill and stall it).
fn record(dir: &Path, config: &Path, out: &Path, name: &str) -> Child {
    record_with(dir, config, out, name, None)
}

/// [`record`], its Prometheus page served on 127.0.0.1:`port` if given.
fn record_with(dir: &Path, config: &Path, out: &Path, name: &str, port: Option<u16>) -> Child {
    let mut command = bin();
    if let Some(port) = port {
        command.env("TICKWIRE_FEED_METRICS_PROMETHEUS_PORT", port.to_string());
    }
    command
        .current_dir(dir)
        .args(["record", "--max-file-mb", "1", "--config"])
        .arg(config)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join(format!("{name}.err"))).unwrap())
        .spawn()
        .unwrap()
}

/// The bytes of every file of the series at `base`.
fn recorded_bytes(base: &Path) -> u64 {
    recording::files(base)
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum()
}

/// A file read as far as it goes.
#[derive(Debug, Default)]
struct Read {
    /// Its whole records' bytes, with the file header.
    whole: u64,
    /// The received messages among them.
    received: u64,
    /// The smallest record of a received message, in bytes.
    smallest: Option<u64>,
    /// Where it was cut, if it was.
    cut: Option<u64>,
}

fn read_file(path: &Path) -> Read {
    let bytes = std::fs::read(path).unwrap();
    let mut reader = match Reader::new(&bytes[..]) {
        Ok(r) => r,
        Err(e) => {
            let cut = e
                .cut_at()
                .unwrap_or_else(|| panic!("{}: {e}", path.display()));
            return Read {
                cut: Some(cut),
                ..Read::default()
            };
        }
    };
    let mut read = Read {
        whole: FILE_HEADER as u64,
        ..Read::default()
    };
    loop {
        match reader.next_record() {
            Ok(Some(r)) => {
                let size = (RECORD_HEADER + r.payload.len()) as u64;
                read.whole += size;
                if r.kind == recording::Kind::Received {
                    read.received += 1;
                    read.smallest = Some(read.smallest.map_or(size, |s| s.min(size)));
                }
            }
            Ok(None) => return read,
            Err(e) => {
                let at = e
                    .cut_at()
                    .unwrap_or_else(|| panic!("{}: {e}", path.display()));
                assert_eq!(at, read.whole, "{}: {e}", path.display());
                read.cut = Some(at);
                return read;
            }
        }
    }
}

/// Whether every thread of process `pid` is stopped (SIGSTOP taken).
fn stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().all(|t| {
        std::fs::read_to_string(t.path().join("stat")).is_ok_and(|s| {
            // The state follows the command name's closing parenthesis.
            s.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('T') || rest.starts_with('t'))
        })
    })
}

/// The messages the feed had handled, from its Prometheus page on
/// 127.0.0.1:`port` (rendered every 100 ms, so at most that old), if it
/// serves one yet.
fn messages_handled(port: u16) -> Option<u64> {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    conn.read_to_string(&mut text).ok()?;
    text.lines().find_map(|l| {
        l.strip_prefix("tickwire_messages_total{stream=\"sim\"}")?
            .trim()
            .parse::<f64>()
            .ok()
            .map(|v| v as u64)
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A small seeded generator (splitmix64), so a failing moment can be
/// chosen again.
fn moments(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[test]
fn a_recording_killed_at_random_moments_replays_up_to_the_cut() {
    let seed = std::env::var("TICKWIRE_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("kill moments from seed {seed} (TICKWIRE_CRASH_SEED={seed} chooses them again)");
    let mut next = moments(seed);
    let dir = temp_dir("kill");
    let (simulator, config) = simulator(&dir, 2000);
    for round in 0..3 {
        let base = dir.join(format!("rec{round}"));
        let port = free_port();
        let mut child = record_with(&dir, &config, &base, &format!("rec{round}"), Some(port));
        // Records flowing (both books' snapshots are in by then), then a
        // moment chosen at random: up to 3 s later (past a rotation, at times).
        wait_for(&mut child, "the first 100 KiB recorded", 60, || {
            recorded_bytes(&base) >= 100 << 10
        });
        let after = Duration::from_millis(next() % 3000);
        std::thread::sleep(after);
        // What it had handled by now, at the least (the page is up to
        // 100 ms old); then stopped and killed.
        let mut handled = None;
        wait_for(&mut child, "the metrics page", 30, || {
            handled = messages_handled(port);
            handled.is_some()
        });
        let handled = handled.unwrap();
        signal(&child, "-STOP");
        let pid = child.id();
        wait_for(&mut child, "the recorder to stop", 30, || stopped(pid));
        child.kill().unwrap();
        let status: ExitStatus = child.wait().unwrap();
        assert!(!status.success());

        // Every file before the last ends with a whole record; the last
        // is whole up to a cut inside its last record, if anywhere.
        let files = recording::files(&base);
        assert!(!files.is_empty());
        let (mut whole, mut messages, mut on_disk) = (0, 0, 0);
        let mut smallest = u64::MAX;
        let mut cut = None;
        for (i, f) in files.iter().enumerate() {
            let len = std::fs::metadata(f).unwrap().len();
            let read = read_file(f);
            if i + 1 < files.len() {
                assert_eq!((read.cut, read.whole), (None, len), "{}", f.display());
            } else if let Some(at) = read.cut {
                cut = Some((f.clone(), at, len - at));
            }
            whole += read.whole;
            messages += read.received;
            smallest = smallest.min(read.smallest.unwrap_or(u64::MAX));
            on_disk += len;
        }
        // What the OS had is all there, but for part of one record.
        if let Some((_, _, torn)) = &cut {
            assert!(*torn < RECORD_HEADER as u64 + (1 << 20), "{cut:?}");
        }
        assert_eq!(on_disk - whole, cut.as_ref().map_or(0, |c| c.2));
        // What it had handled but not handed to the OS: no more than the
        // buffer holds, `FLUSH_BYTES`, of the smallest records.
        let bound = FLUSH_BYTES as u64 / smallest;
        let missing = handled.saturating_sub(messages);
        eprintln!(
            "round {round}: killed {after:?} after 100 KiB; {handled} messages handled (at \
             least), {messages} on the disk in {} file(s), {on_disk} bytes; missing {missing} \
             (bound {bound}); cut {cut:?}",
            files.len(),
        );
        assert!(
            missing <= bound,
            "round {round}: {handled} messages handled, {messages} recorded: {missing} never \
             reached the OS"
        );

        // The replay command takes it all: exit 0, the cut said (file and
        // byte), both books valid from the recorded snapshots and never a
        // gap (no record is missing before the cut).
        let jsonl = dir.join(format!("rec{round}.jsonl"));
        let out = bin()
            .arg("replay")
            .arg(&base)
            .args([
                "--venue",
                "binance-spot",
                "--instrument",
                "BTCUSDT:2:5:20",
                "--instrument",
                "ETHUSDT:2:4:20",
                "--jsonl",
            ])
            .arg(&jsonl)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "round {round}: {stderr}");
        match &cut {
            Some((file, at, _)) => assert!(
                stderr.contains(&format!("warning: {}", file.display()))
                    && stderr.contains(&format!("byte {at}")),
                "round {round}: {stderr}"
            ),
            None => assert!(!stderr.contains("warning"), "round {round}: {stderr}"),
        }
        assert!(
            stderr.contains(&format!(" {messages} messages,")),
            "round {round}: {messages} messages recorded whole: {stderr}"
        );
        let lines = std::fs::read_to_string(&jsonl).unwrap();
        let kinds: Vec<String> = lines
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string())
            .collect();
        let count = |kind: &str| kinds.iter().filter(|k| k.trim_matches('"') == kind).count();
        assert_eq!(count("book_valid"), 2, "round {round}");
        assert_eq!(count("gap"), 0, "round {round}");
        assert!(count("trade") > 0, "round {round}");

        // The same recording as a power loss leaves it: the last file's
        // last 4 KiB block zeros. It replays up to the first record that
        // block reached, and says so; exit 0.
        let last = files.last().unwrap();
        let mut bytes = std::fs::read(last).unwrap();
        let block = (bytes.len() as u64).saturating_sub(1) / 4096 * 4096;
        bytes[block as usize..].fill(0);
        std::fs::write(last, &bytes).unwrap();
        let read = read_file(last);
        let at = read.cut.expect("a cut");
        assert!(
            at <= block,
            "round {round}: cut at {at}, zeros from {block}"
        );
        let out = bin()
            .arg("replay")
            .arg(&base)
            .args(["--venue", "binance-spot", "--instrument", "BTCUSDT:2:5:20"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "round {round}: {stderr}");
        assert!(
            stderr.contains(&format!("warning: {}", last.display()))
                && stderr.contains(&format!("cut at byte {at}: zeros from there on")),
            "round {round}: {stderr}"
        );
    }
    simulator.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_quiet_recording_is_on_the_disk_within_the_flush_interval() {
    let dir = temp_dir("quiet");
    // A few messages a second: nowhere near `FLUSH_BYTES`.
    let (simulator, config) = simulator(&dir, 5);
    let base = dir.join("quiet");
    let mut child = record(&dir, &config, &base, "quiet");
    // Only the flush interval puts them on the disk (the bound is 50 ms;
    // the deadline is for a loaded machine).
    wait_for(&mut child, "20 messages on the disk", 60, || {
        recording::files(&base)
            .iter()
            .map(|f| read_file(f).received)
            .sum::<u64>()
            >= 20
    });
    assert!(recorded_bytes(&base) < FLUSH_BYTES as u64);
    child.kill().unwrap();
    child.wait().unwrap();
    simulator.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn record_out_relative_lands_in_the_run_directory() {
    let dir = temp_dir("out");
    let (simulator, config) = simulator(&dir, 200);
    let mut child = record(&dir, &config, Path::new("rec/session"), "out");
    let in_run = dir.join("runs/latest-record/rec/session.0.twrec");
    let in_checkout = dir.join("rec/session.0.twrec");
    // A message recorded (so the venue was connected: a run stopped
    // before its first connection ends with exit 3), or the file in the
    // wrong place (said below).
    let base = dir.join("runs/latest-record/rec/session");
    wait_for(&mut child, "the recording's first message", 60, || {
        in_checkout.exists()
            || (in_run.exists()
                && recording::files(&base)
                    .iter()
                    .map(|f| read_file(f).received)
                    .sum::<u64>()
                    >= 1)
    });
    signal(&child, "-TERM");
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(dir.join("out.err")).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        in_run.exists() && !dir.join("rec").exists(),
        "the recording is not in the run directory: {stderr}"
    );
    assert!(stderr.contains("outputs in runs/"), "{stderr}");
    simulator.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
