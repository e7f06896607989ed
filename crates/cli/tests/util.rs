//! What every test of the program needs: the binary, with the tests' own
//! environment kept out of it, and a fresh directory of its own.

use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The `tickwire-feed` binary this crate built. A `TICKWIRE_FEED_*`
/// variable in the tests' own environment must not override their files.
pub(crate) fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tickwire-feed"));
    for (k, _) in std::env::vars() {
        if k.starts_with("TICKWIRE_FEED_") {
            c.env_remove(k);
        }
    }
    c
}

/// A new, empty directory for one test (`name` is unique across the test
/// binary), under the system's temporary directory.
pub(crate) fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tickwire-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Sends `signal` (`-TERM`, `-STOP`, ...) to `child`, as `kill` does.
pub(crate) fn signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {signal}");
}

/// Waits for `done`, failing if `child` exits first or `secs` pass (a
/// deadline for a loaded machine only: the wait ends on the condition).
pub(crate) fn wait_for(child: &mut Child, what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the program exited while waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A simulator over TLS sending `rate` steps a second, its throw-away CA
/// written to `dir/ca.pem`: the simulator and that file.
pub(crate) fn tls_simulator(
    dir: &std::path::Path,
    rate: u32,
) -> (tickwire_sim::Simulator, PathBuf) {
    let (tls, ca) = tickwire_sim::self_signed().unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca).unwrap();
    let simulator = tickwire_sim::Simulator::start(tickwire_sim::SimConfig {
        tls: Some(tls),
        rate,
        ..tickwire_sim::SimConfig::default()
    })
    .unwrap();
    (simulator, ca_file)
}

/// The event lines of a JSON Lines file (its `header` and `dropped` lines
/// left out), parsed.
pub(crate) fn events_of(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| !matches!(v["type"].as_str(), Some("header" | "dropped")))
        .collect()
}
