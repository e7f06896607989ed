//! `demo --max N` and `demo --max N --compare ROUNDS`, as a user runs
//! them: both encodings in every round, taking turns, each run whole, the
//! ratios said, every latency log in the one run directory; a market cut
//! short by the deadline said and failed, not measured as if whole; and
//! the flags they cannot be combined with refused before anything runs.

use std::path::{Path, PathBuf};

use crate::util::{bin, temp_dir};

/// The run directories under `runs` (not the `latest-` links).
fn run_dirs(runs: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.is_symlink())
        .collect()
}

#[test]
fn both_encodings_run_in_turn_and_their_ratio_is_said() {
    let cwd = temp_dir("compare");
    // 300 s is a deadline only: each run ends once its market has arrived.
    // 20 000 steps: enough for the demo's looks (2 ms apart) to see each
    // run's span in a release build too.
    let out = bin()
        .current_dir(&cwd)
        .args([
            "demo",
            "--max",
            "20000",
            "--seconds",
            "300",
            "--compare",
            "2",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let rounds: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("round ") && l.contains("messages/s"))
        .collect();
    // JSON first in the first round, SBE first in the second.
    let order: Vec<(&str, &str)> = rounds
        .iter()
        .map(|l| {
            let (head, _) = l.split_once(':').unwrap();
            let (round, name) = head.trim_start_matches("round ").split_once(',').unwrap();
            (round, name.trim())
        })
        .collect();
    assert_eq!(
        order,
        [("1", "JSON"), ("1", "SBE"), ("2", "SBE"), ("2", "JSON")],
        "{stdout}"
    );
    for l in &rounds {
        assert!(
            l.contains("books valid 2/2") && l.contains("arrived"),
            "{l}"
        );
    }
    // Each round's ratio, then their medians.
    for round in ["round 1: SBE / JSON ", "round 2: SBE / JSON "] {
        assert!(stdout.lines().any(|l| l.starts_with(round)), "{stdout}");
    }
    // Each encoding's message size: SBE's well under JSON's.
    let bytes = |name: &str| -> u64 {
        let l = rounds.iter().find(|l| l.contains(name)).unwrap();
        let words: Vec<&str> = l.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "bytes").unwrap();
        words[at - 1].parse().unwrap()
    };
    assert!(bytes("SBE") * 2 < bytes("JSON"), "{stdout}");
    let ratio = stdout
        .lines()
        .find(|l| l.starts_with("medians of 2 rounds: SBE / JSON "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let x: f64 = ratio
        .split_whitespace()
        .find_map(|w| w.strip_suffix('x')?.parse().ok())
        .unwrap();
    assert!(x > 0.0, "{ratio}");
    // The four latency logs, in the one run directory of its own kind
    // (`latest-demo` stays a plain demo's; no plot: the comparison is the
    // point).
    let runs = cwd.join("runs");
    let dirs = run_dirs(&runs);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    assert!(
        dirs[0].to_string_lossy().ends_with("-demo-compare"),
        "{dirs:?}"
    );
    assert!(!runs.join("latest-demo").exists(), "{dirs:?}");
    let mut logs: Vec<String> = std::fs::read_dir(&dirs[0])
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    logs.sort();
    assert_eq!(
        logs,
        ["json-1.hlog", "json-2.hlog", "sbe-1.hlog", "sbe-2.hlog"]
    );
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn compare_needs_max_and_refuses_what_it_cannot_run_with() {
    let cwd = temp_dir("compare-refused");
    for (args, said) in [
        (&["demo", "--compare", "2"][..], "--max"),
        (&["demo", "--hold-after", "5"], "--max"),
        (
            &["demo", "--max", "100", "--compare", "2", "--sbe"],
            "--sbe",
        ),
        (
            &["demo", "--max", "100", "--compare", "2", "--busy-poll"],
            "--busy-poll",
        ),
        (
            &["demo", "--max", "100", "--compare", "2", "--venues", "okx"],
            "--venues",
        ),
        (
            &["demo", "--max", "100", "--compare", "2", "--hlog", "x.hlog"],
            "--hlog",
        ),
        (&["demo", "--max", "100", "--compare", "0"], "at least 1"),
        (&["demo", "--max", "100", "--venues", "okx"], "--venues"),
    ] {
        let out = bin().current_dir(&cwd).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
    // Nothing was made.
    assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 0);
    std::fs::remove_dir_all(&cwd).unwrap();
}

/// A run the deadline cut short is not measured: the comparison fails,
/// names the run and leaves no run directory behind.
#[test]
fn a_run_cut_short_by_its_deadline_fails_the_comparison() {
    let (cwd, stderr) = cut_short("compare-cut", &["--compare", "1"]);
    assert!(
        stderr.contains("round 1, JSON: not every message arrived before the deadline"),
        "{stderr}"
    );
    let runs = cwd.join("runs");
    assert_eq!(run_dirs(&runs), Vec::<PathBuf>::new(), "{stderr}");
    // Nor a link to the run thrown away.
    assert!(
        std::fs::symlink_metadata(runs.join("latest-demo-compare")).is_err(),
        "{stderr}"
    );
    std::fs::remove_dir_all(&cwd).unwrap();
}

/// The plain `--max` cut short by its deadline: its figures are printed,
/// then it is said that they are of part of the market, and it fails.
#[test]
fn a_plain_max_cut_short_by_its_deadline_is_said_and_fails() {
    let (cwd, stderr) = cut_short("max-cut", &[]);
    assert!(
        stderr.contains("not every message of the market arrived within --seconds"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&cwd).unwrap();
}

/// `demo --max 2000 --seconds 1` and `more`, in a new directory named
/// for `name`, the simulator holding all but its first 500 messages
/// (`--hold-after`, hidden from `--help`): the run misses its deadline
/// however fast the machine (without the hold, a debug build reads this
/// market well within the second). It must fail (exit 1); the directory
/// and what it said on stderr.
fn cut_short(name: &str, more: &[&str]) -> (PathBuf, String) {
    let cwd = temp_dir(name);
    let out = bin()
        .current_dir(&cwd)
        .args([
            "demo",
            "--max",
            "2000",
            "--hold-after",
            "500",
            "--seconds",
            "1",
        ])
        .args(more)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    (cwd, stderr)
}
