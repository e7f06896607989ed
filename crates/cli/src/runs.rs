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
//! - **Retention**: before a new run is made, the oldest runs are deleted
//!   until the new one will make at most [`Retention::keep`] runs (20
//!   unless `TICKWIRE_RUNS_KEEP` says) and those left take at most
//!   [`Retention::max_bytes`] (1024 MiB unless `TICKWIRE_RUNS_MAX_MB`
//!   says); `0` turns a limit off. A run a `runs/latest-<command>` link
//!   points to (a simulator still running, the last recording of each
//!   command) is never deleted, so every link stays valid (and a failed
//!   start's [`discard`] finds the run before it). Put what must be kept
//!   outside `runs/` (`--out` with an absolute path).

use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use tickwire_venues::time::Utc;

/// The directory under which every run's directory is made.
pub(crate) const ROOT: &str = tickwire_feed::RUNS_ROOT;

/// How much of `runs/` is kept when a run starts (see the
/// [module](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Retention {
    /// Runs kept, the new one included (0: no limit).
    pub(crate) keep: usize,
    /// Bytes kept, the new run's included (0: no limit).
    pub(crate) max_bytes: u64,
}

impl Default for Retention {
    /// 20 runs, 1024 MiB: a morning of trying things (the demo, `sim`,
    /// a few runs) stays in a few hundred MB.
    fn default() -> Retention {
        Retention {
            keep: 20,
            max_bytes: 1 << 30,
        }
    }
}

/// The variable that sets [`Retention::keep`].
pub(crate) const KEEP_VAR: &str = "TICKWIRE_RUNS_KEEP";
/// The variable that sets [`Retention::max_bytes`], in MiB.
pub(crate) const MAX_MB_VAR: &str = "TICKWIRE_RUNS_MAX_MB";

impl Retention {
    /// The default, with [`KEEP_VAR`] and [`MAX_MB_VAR`] applied; an
    /// error names the variable and its value.
    pub(crate) fn from_env() -> io::Result<Retention> {
        Retention::from_vars(|name| std::env::var(name).ok())
    }

    /// [`from_env`](Self::from_env) with the variables `var` gives.
    fn from_vars(var: impl Fn(&str) -> Option<String>) -> io::Result<Retention> {
        let mut r = Retention::default();
        let var = |name: &str| -> io::Result<Option<u64>> {
            match var(name) {
                None => Ok(None),
                Some(v) => v.trim().parse().map(Some).map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{name}={v:?}: not a whole number (0 for no limit)"),
                    )
                }),
            }
        };
        if let Some(keep) = var(KEEP_VAR)? {
            r.keep = usize::try_from(keep).unwrap_or(usize::MAX);
        }
        if let Some(mb) = var(MAX_MB_VAR)? {
            r.max_bytes = mb.saturating_mul(1 << 20);
        }
        Ok(r)
    }
}

/// What [`prune`] deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pruned {
    /// Run directories deleted.
    pub(crate) runs: usize,
    /// Their bytes.
    pub(crate) bytes: u64,
}

/// Makes a new run directory for `command` under [`ROOT`] (in the current
/// directory) and points `runs/latest-<command>` at it, once the
/// [retention](Retention::from_env) has made room for it.
pub(crate) fn create(command: &str) -> io::Result<PathBuf> {
    let retention = Retention::from_env()?;
    let pruned = prune(Path::new(ROOT), retention)?;
    // Deleting a user's files is said, with how to keep more.
    if pruned.runs > 0 {
        log::info!(
            target: tickwire_feed::live::LOG_TARGET,
            "removed the {} oldest run(s) under {ROOT}/ ({:.1} MiB) to keep the last {} and {} MiB \
             ({KEEP_VAR}, {MAX_MB_VAR}; 0: no limit)",
            pruned.runs,
            pruned.bytes as f64 / f64::from(1 << 20),
            retention.keep,
            retention.max_bytes >> 20
        );
    }
    let dir = create_in(Path::new(ROOT), command, SystemTime::now())?;
    hold(&dir);
    Ok(dir)
}

/// A new run directory for `command`'s outputs, or the failure said.
pub(crate) fn create_for(command: &str) -> Result<PathBuf, crate::error::CliError> {
    create(command).map_err(|e| {
        crate::error::CliError::Failed(format!(
            "tickwire-feed: cannot make a run directory under {ROOT}/: {e}"
        ))
    })
}

/// Deletes the oldest runs under `root` until one more would make at
/// most `retention.keep` and those left take at most
/// `retention.max_bytes`, but never a run a `latest-*` link points to,
/// one still in use (its process holds its lock: [`create`]), or a
/// directory not named as tickwire names its runs (a `runs/` of the
/// user's own is not ours to empty).
pub(crate) fn prune(root: &Path, retention: Retention) -> io::Result<Pruned> {
    let entries = match std::fs::read_dir(root) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Pruned::default()),
        other => other?,
    };
    let mut protected = Vec::new();
    let mut runs = Vec::new();
    // An entry that cannot be read is left alone (and a link that cannot
    // be read protects nothing, but keeps its run from counting as gone).
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() && name.to_string_lossy().starts_with("latest-") {
            match std::fs::read_link(entry.path()) {
                Ok(target) => protected.push(target.file_name().map(ToOwned::to_owned)),
                // Which run it names is unknown: delete none this time.
                Err(_) => return Ok(Pruned::default()),
            }
        } else if kind.is_dir() && name.to_str().is_some_and(is_run_name) {
            runs.push(name);
        }
    }
    // `YYYYMMDD-HHMMSS-...`: by name is oldest first.
    runs.sort();
    let sizes: Vec<u64> = runs.iter().map(|r| size_of_tree(&root.join(r))).collect();
    // Counted with the run about to be made.
    let (mut count, mut total) = (runs.len() + 1, sizes.iter().sum::<u64>());
    let mut pruned = Pruned::default();
    for (run, size) in runs.iter().zip(sizes) {
        let over = (retention.keep > 0 && count > retention.keep)
            || (retention.max_bytes > 0 && total > retention.max_bytes);
        if !over {
            break;
        }
        if protected.iter().flatten().any(|p| p == run) || in_use(&root.join(run)) {
            continue;
        }
        // One another process removes at the same time is gone anyway.
        if std::fs::remove_dir_all(root.join(run)).is_ok() {
            count -= 1;
            total -= size;
            pruned.runs += 1;
            pruned.bytes += size;
        }
    }
    Ok(pruned)
}

/// Whether `name` is a run directory's: `YYYYMMDD-HHMMSS-<command>`,
/// maybe with `-<n>` (see [`create_in`]).
fn is_run_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() > 16
        && b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'-'
        && b[9..15].iter().all(u8::is_ascii_digit)
        && b[15] == b'-'
        && b[16].is_ascii_lowercase()
}

/// Takes `dir`'s lock (`flock` on the directory itself, no file added)
/// for as long as this process lives: a run in use is never pruned by
/// another process's start.
fn hold(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir)
        && d.try_lock().is_ok()
    {
        // Released when the process ends, however it ends.
        std::mem::forget(d);
    }
}

/// Whether another process holds `dir`'s lock ([`hold`]).
fn in_use(dir: &Path) -> bool {
    std::fs::File::open(dir)
        .is_ok_and(|d| matches!(d.try_lock(), Err(std::fs::TryLockError::WouldBlock)))
}

/// The bytes of the files under `path` (links not followed).
fn size_of_tree(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path).map_or(0, |entries| {
        entries.flatten().map(|e| size_of_tree(&e.path())).sum()
    })
}

/// [`create`] under `root`, stamped with `now`.
pub(crate) fn create_in(root: &Path, command: &str, now: SystemTime) -> io::Result<PathBuf> {
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
pub(crate) fn discard(command: &str, dir: &Path) -> io::Result<()> {
    discard_in(Path::new(ROOT), command, dir)
}

/// [`discard`] under `root`.
pub(crate) fn discard_in(root: &Path, command: &str, dir: &Path) -> io::Result<()> {
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

    /// 30 runs of four commands, 1 MiB each: the oldest go, down to the
    /// limits (room left for one more), but never a run a `latest-*` link
    /// names.
    #[test]
    #[cfg(unix)]
    fn old_runs_are_deleted_down_to_the_limits_and_every_link_stays_valid() {
        let root = std::env::temp_dir().join(format!("tickwire-retain-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        // Nothing to prune before the first run.
        assert_eq!(
            prune(&root, Retention::default()).unwrap(),
            Pruned::default()
        );
        let mut made = Vec::new();
        for n in 0..30u64 {
            // The simulator started first, and only once: its run is old.
            let command = match n % 3 {
                _ if n == 0 => "sim",
                0 => "record",
                1 => "demo",
                _ => "run",
            };
            let at = UNIX_EPOCH + Duration::from_secs(1_709_251_200 + n * 60);
            let dir = create_in(&root, command, at).unwrap();
            std::fs::write(dir.join("out"), vec![0u8; 1 << 20]).unwrap();
            made.push(dir);
        }
        let keep = |keep, max_mb: u64| Retention {
            keep,
            max_bytes: max_mb << 20,
        };
        // No limit crossed: nothing goes.
        assert_eq!(prune(&root, keep(31, 0)).unwrap(), Pruned::default());
        // 20 runs with the next: the 11 oldest go but the simulator's
        // (latest-sim).
        let pruned = prune(&root, keep(20, 0)).unwrap();
        assert_eq!(pruned.runs, 11);
        assert!(pruned.bytes >= 11 << 20);
        assert!(made[0].exists(), "latest-sim's run is kept");
        assert!(made[1..12].iter().all(|d| !d.exists()));
        assert!(made[12..].iter().all(|d| d.exists()));
        // 5 MiB: the oldest go until 5 runs are left, the linked ones
        // among them (sim, and the newest of demo, record and run).
        prune(&root, keep(0, 5)).unwrap();
        let left: Vec<_> = made.iter().filter(|d| d.exists()).collect();
        assert_eq!(left.len(), 5, "{left:?}");
        for link in ["latest-sim", "latest-demo", "latest-run", "latest-record"] {
            let target = std::fs::canonicalize(root.join(link)).unwrap();
            assert!(target.is_dir(), "{link}");
        }
        // Hidden files, the links and .gitignore are not runs.
        assert!(root.join(".gitignore").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A run another process still uses (it holds the run's lock), and a
    /// directory not named as a run (the user's own), are never pruned,
    /// however far over the limits.
    #[test]
    #[cfg(unix)]
    fn a_run_in_use_and_a_directory_of_the_users_are_kept() {
        let root = std::env::temp_dir().join(format!("tickwire-in-use-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let at = |n: u64| UNIX_EPOCH + Duration::from_secs(1_709_251_200 + n * 60);
        let busy = create_in(&root, "record", at(0)).unwrap();
        let done = create_in(&root, "record", at(1)).unwrap();
        let _newest = create_in(&root, "record", at(2)).unwrap();
        let mine = root.join("my-notes");
        std::fs::create_dir_all(&mine).unwrap();
        // The lock a running `record` holds (another open of the
        // directory conflicts with it, as another process's would).
        let lock = std::fs::File::open(&busy).unwrap();
        lock.try_lock().unwrap();
        let pruned = prune(
            &root,
            Retention {
                keep: 1,
                max_bytes: 0,
            },
        )
        .unwrap();
        assert_eq!(pruned.runs, 1);
        assert!(busy.exists() && mine.exists() && !done.exists());
        drop(lock);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_limits_come_from_the_environment_and_a_bad_value_is_named() {
        let vars = |keep: &'static str, mb: &'static str| {
            move |name: &str| match name {
                KEEP_VAR => Some(keep.to_owned()),
                MAX_MB_VAR => Some(mb.to_owned()),
                _ => None,
            }
        };
        assert_eq!(
            Retention::from_vars(vars("5", "0")).unwrap(),
            Retention {
                keep: 5,
                max_bytes: 0
            }
        );
        assert_eq!(
            Retention::from_vars(vars("0", "300")).unwrap().max_bytes,
            300 << 20
        );
        let e = Retention::from_vars(vars("many", "1"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("TICKWIRE_RUNS_KEEP") && e.contains("many"),
            "{e}"
        );
        let e = Retention::from_vars(vars("1", "-1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("TICKWIRE_RUNS_MAX_MB"), "{e}");
        assert_eq!(
            Retention::from_vars(|_| None).unwrap(),
            Retention::default()
        );
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
