//! `subscribe --shm`: the ring read from another process, as JSON Lines
//! of the sink's schema; and what `subscribe` says when asked wrongly.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::{bin, signal, temp_dir, tls_simulator, wait_for};

/// Event lines (not `header`, not `dropped`) of a JSON Lines file, with
/// `recv_ns` left out (the sink and the reader each convert the stamp
/// through their own look at the clock calibration).
fn events(path: &std::path::Path) -> Vec<serde_json::Value> {
    crate::util::events_of(path)
        .into_iter()
        .map(|mut v| {
            v.as_object_mut().unwrap().remove("recv_ns");
            v
        })
        .collect()
}

#[test]
fn the_ring_read_by_subscribe_is_a_stretch_of_the_jsonl_sink_none_lost() {
    let dir = temp_dir("subscribe-shm");
    let (simulator, ca) = tls_simulator(&dir, 2000);
    let ring = dir.join("ring");
    let jsonl = dir.join("feed.jsonl");
    let config = dir.join("feed.toml");
    std::fs::write(
        &config,
        format!(
            "[sinks]\njsonl = \"{}\"\nshm = \"{}\"\n[tls]\nca_file = \"{}\"\n[[venue]]\nname = \"sim\"\n\
             venue = \"binance-spot\"\ninstruments = [\"BTCUSDT:2:5:20\"]\n\
             endpoint = \"wss://localhost:{port}\"\nrest = \"https://localhost:{port}\"\n",
            jsonl.display(),
            ring.display(),
            ca.display(),
            port = simulator.addr().port()
        ),
    )
    .unwrap();
    let mut feed = bin()
        .args(["run", "--config"])
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&mut feed, "the ring", 60, || ring.exists());
    let out = dir.join("sub.jsonl");
    let mut sub = bin()
        .arg("subscribe")
        .arg("--shm")
        .arg(&ring)
        .arg("--out")
        .arg(&out)
        .args(["--count", "2000"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = sub.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "subscribe never read 2000 events"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let said = std::io::read_to_string(sub.stderr.take().unwrap()).unwrap();
    assert!(status.success(), "{said}");
    assert!(
        said.contains("2000 events") && said.contains("laps lost 0"),
        "{said}"
    );
    signal(&feed, "-TERM");
    let deadline = Instant::now() + Duration::from_secs(60);
    while feed.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the feed did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (all, got) = (events(&jsonl), events(&out));
    // The reader starts at the ring's newest event: what it read is one
    // unbroken stretch of what the feed wrote (a snapshot it joined in
    // the middle of aside: its line needs the levels before).
    let first = got
        .iter()
        .position(|e| e["type"] != "book_delta" && e["type"] != "book_snapshot")
        .unwrap();
    let start = all
        .iter()
        .position(|e| *e == got[first])
        .expect("a line the feed wrote");
    let tail = &got[first..];
    assert!(tail.len() > 1000);
    assert_eq!(&all[start..start + tail.len()], tail);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn subscribe_without_a_source_or_without_aeron_says_what_to_do() {
    let o = bin().arg("subscribe").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("--shm") && said.contains("--aeron"), "{said}");
    let o = bin()
        .args([
            "subscribe",
            "--aeron",
            "aeron:ipc",
            "--stream",
            "7",
            "--dir",
        ])
        .arg(temp_dir("subscribe-no-driver"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let said = String::from_utf8_lossy(&o.stderr);
    if cfg!(feature = "aeron") {
        // No media driver runs there: said, with the way out.
        assert!(said.contains("no Aeron media driver"), "{said}");
    } else {
        assert!(said.contains("--features aeron"), "{said}");
    }
}
