//! The feed and a subscriber in two processes on one host, over
//! `aeron:ipc` through one media driver: every event arrives, in order,
//! equal to what the feed's own JSON Lines sink wrote.

use std::process::Stdio;

use super::{Lines, Running, assert_same_events, driver_dir, events_of, exit_of, feed_config};
use crate::util::{bin, signal, temp_dir, tls_simulator, wait_for};

#[test]
fn a_subscriber_in_another_process_gets_every_event_in_order_equal_to_the_jsonl_sink() {
    let dir = temp_dir("aeron-ipc");
    let (simulator, ca) = tls_simulator(&dir, 2000);
    let driver = driver_dir("ipc");
    let channel = "aeron:ipc?term-length=16m";
    // The subscriber first, with the host's media driver in it; the feed
    // then uses that driver (`driver = "external"`).
    let out = dir.join("subscriber.jsonl");
    // Killed (and the driver's directory removed) if the test fails.
    let mut subscriber = Running {
        child: bin()
            .args(["subscribe", "--aeron", channel, "--stream", "1001"])
            .arg("--dir")
            .arg(&driver)
            .args(["--embedded-driver", "--idle", "5s"])
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        driver: Some(driver.clone()),
    };
    let mut said = Lines::of(subscriber.child.stderr.take().unwrap());
    said.wait_for("media driver in", 60);

    let jsonl = dir.join("feed.jsonl");
    let config = feed_config(
        &dir,
        simulator.addr().port(),
        &ca,
        &jsonl,
        &format!(
            "channel = \"{channel}\"\nstream = 1001\ndriver = \"external\"\ndir = \"{}\"",
            driver.display()
        ),
    );
    let mut feed = Running {
        child: bin()
            .args(["run", "--config"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        driver: None,
    };
    let mut feed_said = Lines::of(feed.child.stderr.take().unwrap());
    // Until the subscriber has written a few thousand lines.
    wait_for(&mut feed.child, "events through Aeron", 60, || {
        std::fs::metadata(&out).is_ok_and(|m| m.len() > 400_000)
    });
    signal(&feed.child, "-TERM");
    assert!(exit_of(&mut feed.child, 60).success());
    let summary = feed_said.wait_for("aeron:", 10);
    assert!(summary.contains(" 0 dropped"), "{summary}");
    // The subscriber stops 5 s after the last event.
    assert!(exit_of(&mut subscriber.child, 60).success());
    let end = said.wait_for("events in", 10);
    assert!(end.contains("gaps 0  lost 0  bad 0"), "{end}");

    let (feed_events, got) = (events_of(&jsonl), events_of(&out));
    assert!(feed_events.len() > 1000, "{} events", feed_events.len());
    assert_same_events(&feed_events, &got);
    assert!(!driver.exists(), "the driver removed its directory");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A subscriber on a channel or stream nobody publishes on (a typo) is
/// told so, once, rather than waiting in silence.
#[test]
fn a_subscriber_with_no_publisher_says_so() {
    let driver = driver_dir("lonely");
    let mut subscriber = Running {
        child: bin()
            .args(["subscribe", "--aeron", "aeron:ipc", "--stream", "4242"])
            .arg("--dir")
            .arg(&driver)
            .args(["--embedded-driver", "--duration", "60s"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        driver: Some(driver.clone()),
    };
    let mut said = Lines::of(subscriber.child.stderr.take().unwrap());
    let line = said.wait_for("no publisher on", 60);
    assert!(line.contains("aeron:ipc stream 4242"), "{line}");
    signal(&subscriber.child, "-TERM");
    assert!(exit_of(&mut subscriber.child, 60).success());
    let end = said.wait_for("events in", 10);
    assert!(end.contains(" 0 events"), "{end}");
    assert_eq!(
        said.seen
            .iter()
            .filter(|l| l.contains("no publisher on"))
            .count(),
        1
    );
}
