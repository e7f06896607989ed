//! A first run as a new user makes it, from the binary: every output goes
//! into a new run directory under `runs/` (ignored by git, never reused),
//! nothing lands beside it, and a recording is never overwritten.

use crate::util::bin;
use std::path::{Path, PathBuf};

fn temp_dir(name: &str) -> PathBuf {
    crate::util::temp_dir(&format!("first-{name}"))
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn two_demos_write_into_two_run_directories_and_nowhere_else() {
    let cwd = temp_dir("demo");
    // `--max`: each demo ends once its pregenerated market has all
    // arrived (300 s is a deadline only).
    for _ in 0..2 {
        let out = bin()
            .current_dir(&cwd)
            .args(["demo", "--max", "3000", "--seconds", "300"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
    }
    assert_eq!(names(&cwd), ["runs"]);
    let runs = cwd.join("runs");
    let all = names(&runs);
    // `<time>-demo`, `<time>-demo-2`: beside `latest-demo` and `.gitignore`.
    let demos: Vec<&String> = all
        .iter()
        .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()) && n.contains("-demo"))
        .collect();
    assert_eq!(demos.len(), 2, "{all:?}");
    for d in &demos {
        assert_eq!(names(&runs.join(d)), ["demo.hlog", "demo.svg"], "{d}");
    }
    assert!(all.contains(&".gitignore".to_string()), "{all:?}");
    assert!(all.contains(&"latest-demo".to_string()), "{all:?}");
    // `latest-demo` is the newer of the two (names sort by time, then by
    // `-2` for a second run in the same second).
    let newest = demos
        .iter()
        .max_by_key(|n| (n.len(), n.to_string()))
        .unwrap();
    assert_eq!(
        std::fs::canonicalize(runs.join("latest-demo")).unwrap(),
        std::fs::canonicalize(runs.join(newest)).unwrap()
    );
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn record_never_overwrites_a_recording() {
    let cwd = temp_dir("record");
    std::fs::write(cwd.join("mine.0.twrec"), b"yesterday's").unwrap();
    let config = cwd.join("feed.toml");
    // Nothing listens there: the recording is opened before any connection.
    std::fs::write(
        &config,
        "[[venue]]\nvenue = \"binance-spot\"\ninstruments = [\"BTCUSDT\"]\n\
         endpoint = \"wss://127.0.0.1:1\"\nrest = \"https://127.0.0.1:1\"\n\
         [record]\npath = \"elsewhere\"\n",
    )
    .unwrap();
    // `record --out <dir>/mine` refuses, naming the file in its way and
    // blaming `--out` (not the file's `record.path` line it replaced), and
    // starts none of its own (a relative `--out` goes into a new run
    // directory, where nothing is in its way).
    let refused = |taken: &str| {
        let out = bin()
            .current_dir(&cwd)
            .args(["record", "--config", "feed.toml", "--out"])
            .arg(cwd.join("mine"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(&format!("{taken} exists")), "{stderr}");
        assert!(stderr.contains("record: --out "), "{stderr}");
        assert!(!stderr.contains("feed.toml"), "{stderr}");
    };
    refused("mine.0.twrec");
    assert_eq!(
        std::fs::read(cwd.join("mine.0.twrec")).unwrap(),
        b"yesterday's"
    );
    // A later file of a series under the name is refused too: a rotation
    // would meet it.
    std::fs::remove_file(cwd.join("mine.0.twrec")).unwrap();
    std::fs::write(cwd.join("mine.3.twrec"), b"older").unwrap();
    refused("mine.3.twrec");
    assert!(!cwd.join("mine.0.twrec").exists());
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn demo_flags_that_make_no_sense_are_refused_and_zero_rate_is_explained() {
    for args in [
        ["demo", "--seconds", "0"],
        ["demo", "--burst", "0"],
        ["demo", "--max", "0"],
    ] {
        let out = bin().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(args[1]), "{args:?}: {stderr}");
    }
    let help = bin().args(["demo", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("0: unlimited"), "{help}");
}

#[test]
fn report_into_a_closed_pipe_ends_quietly() {
    use std::process::Stdio;
    let dir = temp_dir("report");
    let log = dir.join("t.hlog");
    // A latency log to report on, written by a short demo.
    let out = bin()
        .current_dir(&dir)
        .args(["demo", "--max", "3000", "--seconds", "300", "--hlog"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut child = bin()
        .args(["report", "--no-svg"])
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader is gone before the report has read its log, let alone
    // written its table, as `| head -n 0` would leave it.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
