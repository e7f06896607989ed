//! The command line saying one thing and doing it, from the binary:
//! `run --check` refuses what `run` would refuse, with exit 2 and no run
//! directory; an environment override's error names the variable; the
//! demo's flags are checked before anything is made, its help and its
//! output agree with what it does.

use crate::util::bin;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn temp_dir(name: &str) -> PathBuf {
    crate::util::temp_dir(&format!("cli-{name}"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A configuration whose venue nothing listens for (port 1): whatever
/// fails, fails before a connection would.
const VENUE: &str = "[[venue]]\nvenue = \"binance-spot\"\ninstruments = [\"BTCUSDT\"]\n\
                     endpoint = \"wss://127.0.0.1:1\"\nrest = \"https://127.0.0.1:1\"\n";

/// `run --check` and `run` on `config` (in `cwd`): both exit 2 naming
/// `key`, and neither leaves a `runs/` behind.
fn both_refuse(cwd: &Path, config: &str, key: &str) {
    std::fs::write(cwd.join("feed.toml"), config).unwrap();
    for check in [true, false] {
        let mut cmd = bin();
        cmd.current_dir(cwd).args(["run", "--config", "feed.toml"]);
        if check {
            cmd.arg("--check");
        }
        let out = cmd.output().unwrap();
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "check {check}: {said}");
        assert!(said.contains(&format!("`{key}`")), "check {check}: {said}");
        assert!(
            !cwd.join("runs").exists(),
            "check {check}: a run directory was made: {said}"
        );
    }
}

#[test]
fn check_refuses_what_run_refuses_with_exit_2_and_no_run_directory() {
    let cwd = temp_dir("check");
    // A CA file that is not PEM certificates.
    std::fs::write(cwd.join("ca.pem"), "not a certificate\n").unwrap();
    both_refuse(
        &cwd,
        &format!("[tls]\nca_file = \"ca.pem\"\n[metrics]\nhlog = \"feed.hlog\"\n{VENUE}"),
        "tls.ca_file",
    );
    // A JSON Lines file whose directory cannot be made (a file is in
    // its way).
    std::fs::write(cwd.join("taken"), "").unwrap();
    let jsonl = cwd.join("taken/sub/events.jsonl");
    both_refuse(
        &cwd,
        &format!(
            "[sinks]\njsonl = {:?}\n[metrics]\nhlog = \"feed.hlog\"\n{VENUE}",
            jsonl.display().to_string()
        ),
        "sinks.jsonl",
    );
    // A directory that does not exist yet but can be made passes the
    // check, and the check makes nothing.
    let later = cwd.join("later/events.jsonl");
    std::fs::write(
        cwd.join("feed.toml"),
        format!(
            "[sinks]\njsonl = {:?}\n{VENUE}",
            later.display().to_string()
        ),
    )
    .unwrap();
    let out = bin()
        .current_dir(&cwd)
        .args(["run", "--config", "feed.toml", "--check"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!cwd.join("later").exists());
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn an_environment_override_that_is_wrong_is_blamed_on_its_variable() {
    let cwd = temp_dir("env");
    std::fs::write(cwd.join("ok.toml"), VENUE).unwrap();
    for (var, value, key) in [
        (
            "TICKWIRE_FEED_METRICS_INTERVAL_MS",
            "abc",
            "metrics.interval_ms",
        ),
        (
            "TICKWIRE_FEED_METRICS_INTERVAL_MS",
            "5",
            "metrics.interval_ms",
        ),
        // A list written as a bare word, not as TOML.
        (
            "TICKWIRE_FEED_VENUE_BINANCE_SPOT_INSTRUMENTS",
            "BTCUSDT",
            "venue[0].instruments",
        ),
    ] {
        let out = bin()
            .current_dir(&cwd)
            .env(var, value)
            .args(["run", "--config", "ok.toml", "--check"])
            .output()
            .unwrap();
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{var}={value}: {said}");
        assert!(
            said.contains(&format!("{var}=\"{value}\"")),
            "{var}={value}: {said}"
        );
        assert!(said.contains(key), "{var}={value}: {said}");
        assert!(!said.contains("ok.toml"), "the file is blamed: {said}");
    }
    // Written as TOML, the list is taken.
    let out = bin()
        .current_dir(&cwd)
        .env(
            "TICKWIRE_FEED_VENUE_BINANCE_SPOT_INSTRUMENTS",
            r#"["BTCUSDT", "ETHUSDT:20"]"#,
        )
        .args(["run", "--config", "ok.toml", "--check"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("2 instruments"), "{}", stderr(&out));
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn demo_values_it_cannot_run_are_refused_before_anything_is_made() {
    let cwd = temp_dir("demo-flags");
    for (args, said) in [
        (&["demo", "--core", "99"][..], "--core 99"),
        (
            &["demo", "--rest-weight-limit", "0"][..],
            "--rest-weight-limit",
        ),
        (
            &[
                "demo",
                "--venues",
                "binance-usdm",
                "--rest-weight-limit",
                "1",
            ][..],
            "--rest-weight-limit",
        ),
        (&["demo", "--seconds", "0"][..], "must be at least 1"),
        (&["demo", "--burst", "0"][..], "must be at least 1"),
    ] {
        let out = bin().current_dir(&cwd).args(args).output().unwrap();
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(said), "{args:?}: {e}");
        assert!(!e.contains("18446744073709551615"), "{args:?}: {e}");
        assert!(!cwd.join("runs").exists(), "{args:?} made a run directory");
    }
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn every_venue_replay_help_lists_is_one_replay_takes() {
    let help = bin().args(["replay", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let listed: Vec<String> = help
        .split("[possible values: ")
        .nth(1)
        .and_then(|l| l.split(']').next())
        .expect("the help lists the venues")
        .split(", ")
        .map(str::to_owned)
        .collect();
    assert_eq!(
        listed.len(),
        tickwire_feed::replay::Venue::ALL.len(),
        "{help}"
    );
    for name in &listed {
        // Taken: the refusal is about the missing recording, not the venue.
        let out = bin()
            .args(["replay", "no-such-recording", "--venue", name])
            .args(["--instrument", "BTCUSDT"])
            .output()
            .unwrap();
        let e = stderr(&out);
        assert!(e.contains("no such recording"), "--venue {name}: {e}");
    }
}

/// The counts of the summary's `exchange` rows, summed, and the
/// wire-stamped messages the summary line says.
fn exchange_and_wire_stamped(stdout: &str) -> (u64, u64) {
    let exchange = stdout
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|t| t.ends_with("/exchange"))
        })
        .map(|l| l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    let stamped = stdout
        .lines()
        .find(|l| l.starts_with("feed on core"))
        .and_then(|l| l.split(", ").find(|p| p.ends_with(" wire-stamped")))
        .and_then(|p| p.split(' ').next())
        .map(|n| n.parse().unwrap());
    (
        exchange,
        stamped.unwrap_or_else(|| panic!("no wire-stamped count: {stdout}")),
    )
}

#[test]
fn demo_of_several_venues_measures_the_wire_it_says_it_measured() {
    let cwd = temp_dir("demo-wire");
    let out = bin()
        .current_dir(&cwd)
        .args(["demo", "--venues", "okx,bybit-spot", "--seconds", "5"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", stderr(&out));
    let (exchange, stamped) = exchange_and_wire_stamped(&stdout);
    assert!(stamped > 0, "{stdout}");
    // Every exchange sample is a wire-stamped message (a sample may be
    // dropped, never made up from another clock).
    assert!(
        exchange > 0 && exchange <= stamped,
        "{exchange} > {stamped}: {stdout}"
    );
    // And the status lines say so as they go.
    let status = stderr(&out);
    let last = status
        .lines()
        .rev()
        .find_map(|l| l.split("wire-stamped ").nth(1))
        .unwrap_or_else(|| panic!("{status}"));
    assert_ne!(last.trim(), "0", "{status}");
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn demo_max_says_it_runs_until_its_steps_have_arrived() {
    let cwd = temp_dir("demo-max");
    let out = bin()
        .current_dir(&cwd)
        .args(["demo", "--max", "3000", "--seconds", "300"])
        .output()
        .unwrap();
    let said = stderr(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    let first = said.lines().next().unwrap_or_default();
    assert!(
        first.contains("3000 market steps") && first.contains("at most 300 s"),
        "{first}"
    );
    assert!(!first.contains("steps/s"), "{first}");
    let (exchange, stamped) = exchange_and_wire_stamped(&stdout);
    assert!(exchange <= stamped, "{exchange} > {stamped}: {stdout}");
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn an_injected_fault_is_named_on_the_lines_it_causes() {
    let cwd = temp_dir("demo-faults");
    let out = bin()
        .current_dir(&cwd)
        .args([
            "demo",
            "--venues",
            "binance-spot",
            "--faults",
            // The close comes second, about 4 s in (2 s of quiet before
            // each fault): 20 s leave a loaded machine room to get there.
            "--seconds",
            "20",
        ])
        .output()
        .unwrap();
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    // The demo says what it injects ...
    assert!(
        said.contains("venue binance-spot: injected fault: close ("),
        "{said}"
    );
    // ... and the feed's own line about the connection the close ended
    // names it.
    let feed: Vec<&str> = said
        .lines()
        .filter(|l| l.starts_with("tickwire-feed: venue binance-spot:"))
        .collect();
    assert!(
        feed.iter().any(|l| l.ends_with("[injected fault: close]")),
        "{said}"
    );
    // A TLS failure here is only ever an injected one, and says which.
    for l in feed.iter().filter(|l| l.contains("TLS failed")) {
        assert!(l.contains("[injected fault: "), "{l}");
    }
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn a_simulator_that_cannot_listen_leaves_no_run_directory() {
    let cwd = temp_dir("sim-taken");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = bin()
        .current_dir(&cwd)
        .args(["sim", "--listen", &addr, "--seconds", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let runs = cwd.join("runs");
    let left: Vec<String> = std::fs::read_dir(&runs)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n != ".gitignore")
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "left in runs/: {left:?}");
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn relative_outputs_in_subdirectories_land_in_the_run_directory() {
    let cwd = temp_dir("relative");
    std::fs::write(
        cwd.join("feed.toml"),
        format!("[metrics]\nhlog = \"m/feed.hlog\"\n[sinks]\njsonl = \"j/events.jsonl\"\n{VENUE}"),
    )
    .unwrap();
    let mut child = bin()
        .current_dir(&cwd)
        .args(["run", "--config", "feed.toml"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Started once both files are there (or it ended: said below).
    let latest = cwd.join("runs/latest-run");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !(latest.join("m/feed.hlog").exists() && latest.join("j/events.jsonl").exists())
        && child.try_wait().unwrap().is_none()
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let out = child.wait_with_output().unwrap();
    // Stopped with nothing ever connected (the venue's port is closed):
    // exit 3, as a run that never connected ends.
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(latest.join("m/feed.hlog").is_file(), "{}", stderr(&out));
    assert!(latest.join("j/events.jsonl").is_file());
    // Nothing beside the run directory.
    let mut here: Vec<String> = std::fs::read_dir(&cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    here.sort();
    assert_eq!(here, ["feed.toml", "runs"]);
    std::fs::remove_dir_all(&cwd).unwrap();
}

/// A later file of a recording series in the way (the writer would refuse
/// it at start) is refused by the checks, before any run directory is
/// made: `runs/latest-run` stays on the run before it, and the file is
/// untouched.
#[cfg(unix)]
#[test]
fn a_later_file_of_a_series_is_refused_before_a_run_directory_is_made() {
    let cwd = temp_dir("failed-start");
    let before = cwd.join("runs/20200101-000000-run");
    std::fs::create_dir_all(&before).unwrap();
    std::os::unix::fs::symlink("20200101-000000-run", cwd.join("runs/latest-run")).unwrap();
    std::fs::write(cwd.join("mine.3.twrec"), b"older").unwrap();
    std::fs::write(
        cwd.join("feed.toml"),
        format!(
            "[metrics]\nhlog = \"feed.hlog\"\n[record]\npath = {:?}\n{VENUE}",
            cwd.join("mine").display().to_string()
        ),
    )
    .unwrap();
    let out = bin()
        .current_dir(&cwd)
        .args(["run", "--config", "feed.toml"])
        .output()
        .unwrap();
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("mine.3.twrec exists"), "{said}");
    let mut runs: Vec<String> = std::fs::read_dir(cwd.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    runs.sort();
    // Nothing made under runs/ at all.
    assert_eq!(runs, ["20200101-000000-run", "latest-run"], "{said}");
    assert_eq!(
        std::fs::canonicalize(cwd.join("runs/latest-run")).unwrap(),
        std::fs::canonicalize(&before).unwrap()
    );
    assert_eq!(std::fs::read(cwd.join("mine.3.twrec")).unwrap(), b"older");
    std::fs::remove_dir_all(&cwd).unwrap();
}

/// Runs deleted to keep `runs/` within its retention are said, with how
/// many and how to keep more; the run the new one replaces as the oldest
/// is gone.
#[test]
fn runs_removed_by_the_retention_are_said() {
    let cwd = temp_dir("retention");
    let old = cwd.join("runs/20200101-000000-run");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::write(old.join("feed.hlog"), "old").unwrap();
    std::fs::write(
        cwd.join("feed.toml"),
        format!("connect_deadline_s = 1\ncheck_instruments = \"off\"\n[metrics]\nhlog = \"feed.hlog\"\n{VENUE}"),
    )
    .unwrap();
    // Nothing listens: the run ends by itself (exit 3) past its deadline.
    let out = bin()
        .current_dir(&cwd)
        .env("TICKWIRE_RUNS_KEEP", "1")
        .args(["run", "--config", "feed.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(!old.exists(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("removed the 1 oldest run(s) under runs/"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn check_prints_the_plan_each_thread_venue_and_memory() {
    let cwd = temp_dir("plan");
    std::fs::write(
        cwd.join("feed.toml"),
        "check_instruments = \"off\"\n\
         [[venue]]\nvenue = \"binance-spot\"\ninstruments = [\"BTCUSDT:2:8\", \"ETHUSDT:2:8\"]\n\
         endpoint = \"wss://127.0.0.1:1\"\n\
         [[venue]]\nname = \"okx-a\"\nvenue = \"okx\"\ninstruments = [\"BTC-USDT:1:8\"]\n",
    )
    .unwrap();
    let out = bin()
        .current_dir(&cwd)
        .args(["run", "--config", "feed.toml", "--check"])
        .output()
        .unwrap();
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(lines.len(), 4, "{said}");
    assert!(
        lines[0].starts_with("thread 0: core ")
            && lines[0].ends_with(", normal priority, venues binance-spot, okx-a"),
        "{said}"
    );
    assert_eq!(
        lines[1],
        "venue binance-spot (binance-spot): 2 instruments on 1 connection(s) to wss://127.0.0.1:1"
    );
    assert_eq!(
        lines[2],
        "venue okx-a (okx): 1 instruments on 1 connection(s)"
    );
    assert!(
        lines[3].starts_with("thread 0 memory: 16 connection slots ")
            && lines[3].contains(" 3 books ")
            && lines[3].ends_with(" MiB in all"),
        "{said}"
    );
    std::fs::remove_dir_all(&cwd).unwrap();
}
