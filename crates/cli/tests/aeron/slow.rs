//! A subscriber that is absent, then stopped, never holds the feed up:
//! its events are counted drops, the feed's books stay valid with no gap,
//! its JSON Lines sink keeps writing, and the subscriber sees the drops
//! as gaps in the sequence, then gets every book again.

use std::process::Stdio;

use super::{Lines, Running, driver_dir, events_of, exit_of, feed_config};
use crate::util::{bin, signal, temp_dir, tls_simulator, wait_for};

/// Event lines written so far to `path` (a file being written: a line
/// may be cut at the end, so only whole ones count).
fn lines(path: &std::path::Path) -> usize {
    std::fs::read(path).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
}

#[test]
fn an_absent_or_stopped_subscriber_costs_counted_drops_and_never_stalls_the_feed() {
    let dir = temp_dir("aeron-slow");
    let (simulator, ca) = tls_simulator(&dir, 2000);
    let driver = driver_dir("slow");
    // A 256 KiB term: its window (half) holds ~1000 events, so a stopped
    // subscriber pushes back within a fraction of a second, and a book of
    // ~400 levels fits it whole (sent again after the drops).
    let channel = "aeron:ipc?term-length=256k";
    let jsonl = dir.join("feed.jsonl");
    let config = feed_config(
        &dir,
        simulator.addr().port(),
        &ca,
        &jsonl,
        &format!(
            "channel = \"{channel}\"\nstream = 1002\ndir = \"{}\"",
            driver.display()
        ),
    );
    // Killed (the subscriber first: it may be stopped) if the test fails.
    let mut feed = Running {
        child: bin()
            .args(["run", "--config"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        driver: Some(driver.clone()),
    };
    let mut feed_said = Lines::of(feed.child.stderr.take().unwrap());
    // Absent: nobody subscribes, the feed writes on.
    wait_for(&mut feed.child, "events with no subscriber", 60, || {
        lines(&jsonl) > 3000
    });
    feed_said.wait_for("no subscriber connected", 10);

    // Present, then stopped.
    let out = dir.join("subscriber.jsonl");
    let mut subscriber = Running {
        child: bin()
            .args(["subscribe", "--aeron", channel, "--stream", "1002"])
            .arg("--dir")
            .arg(&driver)
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        driver: None,
    };
    let mut said = Lines::of(subscriber.child.stderr.take().unwrap());
    said.wait_for("media driver in", 60);
    wait_for(
        &mut subscriber.child,
        "the subscriber's first events",
        60,
        || lines(&out) > 500,
    );
    signal(&subscriber.child, "-STOP");
    let before = lines(&jsonl);
    wait_for(
        &mut feed.child,
        "events while the subscriber is stopped",
        60,
        || lines(&jsonl) > before + 3000,
    );
    feed_said.wait_for("back pressure", 10);
    signal(&subscriber.child, "-CONT");
    let resumed = lines(&out);
    wait_for(
        &mut subscriber.child,
        "the subscriber reading on",
        60,
        || lines(&out) > resumed + 2000,
    );

    signal(&feed.child, "-TERM");
    assert!(exit_of(&mut feed.child, 60).success());
    let stopped = feed_said.wait_for("stopped after", 10);
    assert!(stopped.contains(" 0 gaps"), "{stopped}");
    let aeron = feed_said.wait_for("aeron:", 10);
    let dropped: u64 = aeron
        .split(" dropped")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{aeron}"));
    assert!(dropped > 3000, "{aeron}");

    // The feed's driver went with it: the subscriber ends on its own
    // stop.
    signal(&subscriber.child, "-TERM");
    assert!(exit_of(&mut subscriber.child, 60).success());
    let end = said.wait_for("events in", 10);
    assert!(!end.contains("gaps 0 "), "the stop shows as a gap: {end}");
    // What it got is the feed's events in the feed's order, some missing,
    // and the books sent again from the feed's state (update id 0) when it
    // joined and after its stop: a subscriber that lost events has its
    // books back without waiting for a venue's snapshot.
    let (all, got) = (events_of(&jsonl), events_of(&out));
    let resent = |v: &serde_json::Value| {
        matches!(v["type"].as_str(), Some("book_snapshot" | "book_valid")) && v["update_id"] == 0
    };
    let books_again = got
        .iter()
        .filter(|v| resent(v) && v["type"] == "book_snapshot")
        .count();
    assert!(
        books_again >= 4,
        "two books, sent again at least twice: {books_again}"
    );
    let got: Vec<_> = got.into_iter().filter(|v| !resent(v)).collect();
    let strip = |v: &serde_json::Value| {
        let mut v = v.clone();
        v.as_object_mut().unwrap().remove("recv_ns");
        v
    };
    let mut at = 0;
    for (n, e) in got.iter().map(strip).enumerate() {
        while at < all.len() && strip(&all[at]) != e {
            at += 1;
        }
        assert!(
            at < all.len(),
            "event {n} of the subscriber is not in the feed's order"
        );
        at += 1;
    }
    assert!(got.len() + 3000 < all.len());
    let _ = std::fs::remove_dir_all(&dir);
}
