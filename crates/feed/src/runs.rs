//! Where a command's outputs go when the command line does not say: one
//! new directory per run, `runs/<UTC time>-<command>/` under the current
//! directory, never reused, so no run overwrites another's files.
//!
//! - `runs/latest-<command>` is a symbolic link to the newest run of that
//!   command (replaced atomically), so a second program can find, say,
//!   the CA certificate of the simulator that is running now
//!   (`runs/latest-sim/sim-ca.pem`, as `examples/sim.toml` does).
//! - `runs/.gitignore` ignores everything under `runs/`, so a run inside
//!   any git checkout leaves `git status` clean.
//! - An absolute output path (in the configuration, or `record --out`),
//!   and the demo's `--hlog`, are used as given; a relative output path in
//!   a configuration file, or given to `record --out`, goes inside the
//!   run's directory.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use tickwire_venues::time::Utc;

/// The directory under which every run's directory is made.
pub const ROOT: &str = "runs";

/// Makes a new run directory for `command` under [`ROOT`] (in the current
/// directory) and points `runs/latest-<command>` at it.
pub fn create(command: &str) -> io::Result<PathBuf> {
    create_in(Path::new(ROOT), command, SystemTime::now())
}

/// [`create`] under `root`, stamped with `now`.
pub fn create_in(root: &Path, command: &str, now: SystemTime) -> io::Result<PathBuf> {
    std::fs::create_dir_all(root)?;
    let ignore = root.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(
            &ignore,
            "# Outputs of tickwire-feed runs; see its README.\n*\n",
        )?;
    }
    let stamp = utc_stamp(now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()));
    // Two runs in one second get `-2`, `-3`, ...: `create_dir` fails on a
    // directory that exists, so none is ever shared.
    let mut n = 1u32;
    let dir = loop {
        let name = match n {
            1 => format!("{stamp}-{command}"),
            _ => format!("{stamp}-{command}-{n}"),
        };
        let dir = root.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => break dir,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e),
        }
    };
    point_latest(root, command, &dir)?;
    Ok(dir)
}

/// Undoes [`create`] for a run that did not start: removes `dir` (made
/// by `create`, so it holds only what the failed start left) and points
/// `runs/latest-<command>` back at the newest run of `command` left, or
/// removes the link if there is none.
pub fn discard(command: &str, dir: &Path) -> io::Result<()> {
    discard_in(Path::new(ROOT), command, dir)
}

/// [`discard`] under `root`.
pub fn discard_in(root: &Path, command: &str, dir: &Path) -> io::Result<()> {
    std::fs::remove_dir_all(dir)?;
    // Run directories are `<stamp>-<command>[-<n>]`: the newest sorts
    // last by (stamp, n).
    let newest = std::fs::read_dir(root)?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|name| {
            let (stamp, rest) = name.split_at_checked(15)?;
            let rest = rest.strip_prefix('-')?.strip_prefix(command)?;
            let n: u32 = match rest {
                "" => 1,
                r => r.strip_prefix('-')?.parse().ok()?,
            };
            let stamp = stamp.to_owned();
            stamp
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'-')
                .then_some((stamp, n, name))
        })
        .max();
    match newest {
        Some((_, _, name)) => point_latest(root, command, &root.join(name)),
        None => match std::fs::remove_file(root.join(format!("latest-{command}"))) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
    }
}

/// Replaces `root/latest-<command>` with a link to `dir`: a new link is
/// made beside it and renamed over it, so a reader never finds none.
#[cfg(unix)]
fn point_latest(root: &Path, command: &str, dir: &Path) -> io::Result<()> {
    let Some(name) = dir.file_name() else {
        return Ok(());
    };
    let link = root.join(format!("latest-{command}"));
    let temp = root.join(format!(".latest-{command}.{}", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    std::os::unix::fs::symlink(name, &temp)?;
    std::fs::rename(&temp, &link)
}

#[cfg(not(unix))]
fn point_latest(_root: &Path, _command: &str, _dir: &Path) -> io::Result<()> {
    Ok(())
}

/// `YYYYMMDD-HHMMSS` (UTC) of seconds since the Unix epoch.
fn utc_stamp(secs: u64) -> String {
    let t = Utc::from_secs(secs);
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn stamps_are_utc_dates() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        // 2024-02-29 23:59:59 UTC: a leap day.
        assert_eq!(utc_stamp(1_709_251_199), "20240229-235959");
        assert_eq!(utc_stamp(1_709_251_200), "20240301-000000");
    }

    #[test]
    fn runs_never_share_a_directory_and_latest_follows() {
        let root = std::env::temp_dir().join(format!("tickwire-runs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let at = UNIX_EPOCH + Duration::from_secs(1_709_251_200);
        let a = create_in(&root, "demo", at).unwrap();
        std::fs::write(a.join("out"), "first").unwrap();
        let b = create_in(&root, "demo", at).unwrap();
        assert_ne!(a, b);
        assert!(b.ends_with("20240301-000000-demo-2"), "{}", b.display());
        assert_eq!(std::fs::read_to_string(a.join("out")).unwrap(), "first");
        #[cfg(unix)]
        assert_eq!(
            std::fs::canonicalize(root.join("latest-demo")).unwrap(),
            std::fs::canonicalize(&b).unwrap()
        );
        assert_eq!(
            std::fs::read_to_string(root.join(".gitignore"))
                .unwrap()
                .lines()
                .last(),
            Some("*")
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_discarded_run_leaves_no_directory_and_latest_where_it_was() {
        let root = std::env::temp_dir().join(format!("tickwire-discard-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let at = UNIX_EPOCH + Duration::from_secs(1_709_251_200);
        let kept = create_in(&root, "run", at).unwrap();
        let failed = create_in(&root, "run", at + Duration::from_secs(1)).unwrap();
        discard_in(&root, "run", &failed).unwrap();
        assert!(!failed.exists());
        #[cfg(unix)]
        assert_eq!(
            std::fs::canonicalize(root.join("latest-run")).unwrap(),
            std::fs::canonicalize(&kept).unwrap()
        );
        // The only run discarded: no link is left pointing nowhere.
        let only = create_in(&root, "sim", at).unwrap();
        discard_in(&root, "sim", &only).unwrap();
        assert!(std::fs::symlink_metadata(root.join("latest-sim")).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
