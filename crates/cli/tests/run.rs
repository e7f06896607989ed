//! The `tickwire-feed` binary as a user runs it: `run --config` against the
//! simulator over TLS (a config file, an environment override, a recording
//! and the latency log), stopped with SIGTERM: exit 0, everything flushed
//! and closed; then the recording replayed to the same books. And an
//! invalid configuration: exit 2 with the key named, before connecting. And
//! the example configurations the README points to, checked as shipped.

use crate::util::bin;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tickwire_feed::replay::{self, Connections, Pace, Venue};
use tickwire_sim::{self as sim, SimConfig, Simulator};
use tickwire_venues::{InstrumentSpec, Kind};

fn temp_dir(name: &str) -> PathBuf {
    crate::util::temp_dir(&format!("run-{name}"))
}

/// The Prometheus page served on 127.0.0.1:`port` (empty while the
/// feed is not serving yet).
fn scrape(port: u16) -> String {
    use std::io::{Read, Write};
    let Ok(mut conn) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut text = String::new();
    let _ = conn.read_to_string(&mut text);
    text.split_once("\r\n\r\n")
        .map_or(String::new(), |(_, body)| body.to_owned())
}

#[test]
fn run_against_the_simulator_then_sigterm_flushes_everything_and_exits_0() {
    let dir = temp_dir("sim");
    let (simulator, ca_file) = crate::util::tls_simulator(&dir, 2000);
    let port = simulator.addr().port();
    // A port that was free a moment ago, for the metrics page.
    let metrics_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = dir.join("feed.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[metrics]
hlog = "{hlog}"
interval_ms = 200
prometheus_port = {metrics_port}
[sinks]
jsonl = "{jsonl}"
[record]
path = "{rec}"
max_file_mb = 1
[tls]
ca_file = "{ca}"
[[venue]]
name = "sim"
venue = "binance-spot"
instruments = ["BTCUSDT:2:5:1000", "ETHUSDT:2:4:1000"]
endpoint = "wss://localhost:1"
rest = "https://localhost:{port}"
"#,
            hlog = dir.join("feed.hlog").display(),
            jsonl = dir.join("events.jsonl").display(),
            rec = dir.join("rec").display(),
            ca = ca_file.display(),
        ),
    )
    .unwrap();
    // The stream endpoint in the file is wrong on purpose: the environment
    // puts it right.
    let mut child = bin()
        .args(["run", "--config"])
        .arg(&config)
        .env(
            "TICKWIRE_FEED_VENUE_SIM_ENDPOINT",
            format!("wss://localhost:{port}"),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Run until at least one record file rotated past 1 MiB, at most 30 s.
    crate::util::wait_for(&mut child, "a rotation", 30, || {
        dir.join("rec.1.twrec").exists()
    });
    // Scraped while it runs: the venue's messages and both books valid,
    // and the JSON Lines sink's drops (checked against the summary below).
    let deadline = Instant::now() + Duration::from_secs(30);
    let page_dropped = loop {
        let page = scrape(metrics_port);
        let value = |sample: &str| {
            page.lines()
                .find_map(|l| l.strip_prefix(sample)?.trim().parse::<f64>().ok())
        };
        let messages = value("tickwire_messages_total{stream=\"sim\"}");
        let valid = value("tickwire_books_valid{venue=\"sim\"}");
        if messages > Some(0.0) && valid == Some(2.0) {
            break value("tickwire_sink_dropped_total");
        }
        assert!(
            Instant::now() < deadline,
            "messages {messages:?}, books valid {valid:?}:\n{page}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("stopped after"), "{stderr}");
    // None dropped in the end, so none by the time of the scrape either
    // (a counter only grows).
    assert!(stderr.contains("(0 dropped)"), "{stderr}");
    assert_eq!(page_dropped, Some(0.0));
    simulator.stop();

    // The JSON lines: both books valid, trades and quotes, nothing torn.
    let text = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
    let mut valid = 0;
    let mut trades = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("whole JSON lines");
        match v["type"].as_str().unwrap() {
            "book_valid" => valid += 1,
            "trade" => trades += 1,
            _ => {}
        }
    }
    assert_eq!(valid, 2, "{stderr}");
    assert!(trades > 10);
    // The summary counts every event, the shutdown's too, and each went to
    // the file (after its header line; a snapshot's levels in its line);
    // the feed's own stop is not a gap.
    let lines = text.lines().count() - 1;
    let levels: usize = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "book_snapshot")
        .map(|v| v["bids"].as_array().unwrap().len() + v["asks"].as_array().unwrap().len())
        .sum();
    let events = lines + levels;
    assert!(
        stderr.contains(&format!(
            " events, {lines} JSON lines (0 dropped), 0 gaps, 0 reconnects, 0 undecodable"
        )) && stderr.contains(&format!(", {events} events, ")),
        "{lines} lines; {stderr}"
    );
    // The last word: the connection closed, said for each of its
    // instruments, then each book ended.
    let last: Vec<String> = text
        .lines()
        .skip(lines + 1 - 4)
        .map(|l| {
            let v = serde_json::from_str::<serde_json::Value>(l).unwrap();
            format!("{} {}", v["type"], v["symbol"])
        })
        .collect();
    assert_eq!(
        last,
        [
            r#""disconnected" "BTCUSDT""#,
            r#""disconnected" "ETHUSDT""#,
            r#""gap" "BTCUSDT""#,
            r#""gap" "ETHUSDT""#
        ]
    );
    // The latency log was flushed: it parses and has the stages.
    let report = tickwire_tsc::Report::read(&dir.join("feed.hlog")).unwrap();
    assert!(report.table().contains("sim/total"), "{}", report.table());

    // The recording (closed cleanly, rotated) replays to the same events.
    let files = replay::files_for(&dir.join("rec"));
    assert!(files.len() >= 2, "{files:?}");
    let specs = [
        InstrumentSpec::new("BTCUSDT", 2, 5, 1000),
        InstrumentSpec::new("ETHUSDT", 2, 4, 1000),
    ];
    let mut replayed = Vec::new();
    let stats = replay::replay(
        &files,
        Venue::BinanceSpot,
        &specs,
        &Connections::OfVenue,
        Pace::Max,
        |e| replayed.push(e),
    )
    .unwrap();
    assert_eq!(stats.decode_errors, 0);
    assert_eq!(stats.responses, 2);
    let replay_valid = replayed
        .iter()
        .filter(|e| matches!(e.kind, Kind::BookValid { .. }))
        .count();
    assert_eq!(replay_valid, 2);
    let replay_trades = replayed
        .iter()
        .filter(|e| matches!(e.kind, Kind::Trade { .. }))
        .count();
    assert_eq!(replay_trades, trades);
    // Event for event, the shutdown's closes included.
    assert_eq!(replayed.len(), events);

    // The simulator serving that recording: a feed reaches the same books
    // and sees every recorded trade.
    served_recording_matches(&files, &specs, trades);
    let _ = std::fs::remove_dir_all(&dir);
}

fn served_recording_matches(files: &[PathBuf], specs: &[InstrumentSpec], trades: usize) {
    use tickwire_feed::live::{Feed, FeedStats, Sinks, VenueSetup};
    let (tls, ca) = sim::self_signed().unwrap();
    let script = replay::script(files, false).unwrap();
    // Both snapshots are served where the recording had them: after some
    // of its messages, before the rest (the feed's diff buffer would
    // otherwise have to hold them all while it fetches).
    assert_eq!(script.snapshots.len(), 2);
    assert!(
        script
            .snapshots_by
            .is_some_and(|at| at > 0 && at < script.messages.len()),
        "{:?} of {}",
        script.snapshots_by,
        script.messages.len()
    );
    let simulator = Simulator::start(SimConfig {
        tls: Some(tls),
        script: Some(std::sync::Arc::new(script)),
        ..SimConfig::default()
    })
    .unwrap();
    let port = simulator.addr().port();
    let mut trust = tickwire_net::TlsConfig::empty();
    trust.add_ca_pem(ca.as_bytes()).unwrap();
    let (queue, events) = tickwire_feed::sink::queue(1 << 20);
    let mut feed = Feed::builder()
        .check_instruments(false)
        .setup({
            let mut s = VenueSetup::new("replayed", Venue::BinanceSpot, specs.to_vec());
            s.endpoint = Some(format!("wss://localhost:{port}"));
            s.rest = Some(format!("https://localhost:{port}"));
            s
        })
        .net(tickwire_net::Config {
            send_rate: None,
            ..tickwire_net::Config::default()
        })
        .tls(trust.clone())
        .metrics(tickwire_tsc::Metrics::new(tickwire_tsc::HistogramConfig::default()).clone())
        .sinks(Sinks::default().with_queue(queue))
        .build()
        .unwrap();
    let stats = feed.stats();
    // Done when the simulator has played the whole recording, both books
    // are valid (their REST snapshots come on connections of their own,
    // and may land after the last streamed message) and every recorded
    // trade has come out.
    let mut got = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while !(simulator.finished() && FeedStats::get(&stats.books_valid) == 2 && got >= trades) {
        assert!(
            Instant::now() < deadline,
            "the replay did not arrive: {got} of {trades} trades, {} books valid, {} snapshots, {} gaps",
            FeedStats::get(&stats.books_valid),
            FeedStats::get(&stats.snapshots),
            FeedStats::get(&stats.gaps),
        );
        feed.poll().unwrap();
        got += events
            .try_iter()
            .filter(|e| matches!(e.kind, Kind::Trade { .. }))
            .count();
    }
    assert_eq!(FeedStats::get(&stats.gaps), 0);
    assert_eq!(FeedStats::get(&stats.decode_errors), 0);
    let sinks = feed.shutdown(Duration::from_secs(1)).unwrap();
    drop(sinks);
    // Nothing more than was recorded.
    got += events
        .try_iter()
        .filter(|e| matches!(e.kind, Kind::Trade { .. }))
        .count();
    assert_eq!(got, trades);
    assert_eq!(simulator.stop().snapshots, 2);
}

#[test]
fn an_invalid_config_exits_2_naming_the_key_before_connecting() {
    let dir = temp_dir("bad");
    let config = dir.join("feed.toml");
    std::fs::write(
        &config,
        "[[venue]]\nvenue = \"binance-spot\"\ninstruments = [\"BTCUSDT:2:99\"]\n",
    )
    .unwrap();
    let out = bin()
        .args(["run", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`venue[0].instruments[0]`"), "{stderr}");
    assert!(stderr.contains("size decimals must be 0 to 18"), "{stderr}");

    let out = bin()
        .args(["run", "--config"])
        .arg(&config)
        .env("TICKWIRE_FEED_SINKS_QUEUE", "3")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = bin()
        .args(["run", "--config"])
        .arg(dir.join("missing.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_recording_is_served_as_one_venue_only() {
    let out = bin()
        .args(["sim", "--venues", "okx,kraken", "--replay", "anything"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("one venue's recording"), "{stderr}");
}

#[test]
fn the_example_configs_check_clean() {
    // What the README tells a new user to run first, before connecting.
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    // sim.toml trusts the CA that `tickwire-feed sim` writes in its run
    // directory.
    let dir = temp_dir("examples");
    std::fs::create_dir_all(dir.join("runs/latest-sim")).unwrap();
    std::fs::write(
        dir.join("runs/latest-sim/sim-ca.pem"),
        sim::self_signed().unwrap().1,
    )
    .unwrap();
    for name in ["feed.toml", "sim.toml"] {
        let mut cmd = bin();
        cmd.current_dir(&dir)
            .args(["run", "--check", "--config"])
            .arg(examples.join(name));
        // The files as shipped, whatever overrides this shell has.
        for (key, _) in std::env::vars().filter(|(k, _)| k.starts_with("TICKWIRE_FEED_")) {
            cmd.env_remove(key);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "configuration ok\n");
        assert!(stderr.contains("venue "), "{name}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
