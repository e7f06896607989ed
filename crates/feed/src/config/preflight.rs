//! What `run` needs of the machine beyond a well-formed file, checked
//! before anything starts, by `run --check` and by `run` alike: the files
//! it reads parse, the files it writes can be written, the port it serves
//! is free. A failure names the key, as the file's own checks do, so the
//! binary says it the same way and exits 2, and no run directory is made.

use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};

use tickwire_net::TlsConfig;

use super::{ConfigError, FeedConfig, error};

impl FeedConfig {
    /// Every check `run` makes of the machine before it starts, without
    /// starting (nothing is connected, and no output is left behind):
    ///
    /// - `tls.ca_file` reads and parses as PEM certificates;
    /// - every output (`metrics.hlog`, `sinks.jsonl`, `record.path`,
    ///   `sinks.shm`) can be written: its directory exists or can be made,
    ///   and a relative path's run directory can be made under
    ///   [`crate::RUNS_ROOT`];
    /// - no recording exists under `record.path` (one is never
    ///   overwritten);
    /// - `metrics.prometheus_port` is free on 127.0.0.1;
    /// - a `[[thread]]` with a `priority` can be pinned and given it (tried
    ///   on a thread that ends at once).
    ///
    /// Instruments are not looked up here: the check against each venue's
    /// own list needs the network and sets decimals, and is
    /// [`crate::instruments::check`], which `main` runs right after.
    pub fn preflight(&self) -> Result<(), ConfigError> {
        self.preflight_unblamed()
            .map_err(|e| super::located(&self.text, super::blame(&self.overrides, e)))
    }

    fn preflight_unblamed(&self) -> Result<(), ConfigError> {
        if let Some(ca) = &self.ca_file {
            TlsConfig::empty()
                .add_ca_file(ca)
                .map_err(|e| error("tls.ca_file", format!("{}: {e}", ca.display())))?;
        }
        for (key, path) in self.written(false) {
            writable(&path).map_err(|e| error(key, e))?;
        }
        // An API key a venue's streams need, read as the feed will read it
        // (and dropped): `--check` says a missing or unreadable key before
        // anything connects.
        for (n, v) in self.venues.iter().enumerate() {
            let Some(header) = crate::live::api_key::header(v.venue, &v.instruments, v.channels)
            else {
                continue;
            };
            let at = match v.api_key {
                Some(crate::live::ApiKey::File(_)) => "api_key_file",
                _ => "api_key_env",
            };
            crate::live::api_key::read_for(v.api_key.as_ref(), header)
                .map_err(|problem| error(format!("venue[{n}].{at}"), problem))?;
        }
        if let Some(r) = &self.record {
            for base in self.record_bases(&r.path) {
                // A relative path lands in a run directory made for this
                // run, where nothing is yet; an absolute one is checked as
                // the writer checks it, every file of a series.
                if base.is_relative() {
                    continue;
                }
                if let Some(taken) = crate::recording::series_files(&base).first() {
                    return Err(error(
                        "record.path",
                        format!(
                            "{} exists: a recording is never overwritten (choose another name)",
                            taken.display()
                        ),
                    ));
                }
            }
        }
        // Each feed thread's pinning and SCHED_FIFO priority, tried on a
        // thread of its own that ends at once: a process without the
        // right to real-time priorities is refused here, not once started.
        for (n, t) in self.threads.iter().enumerate() {
            if t.priority.is_none() {
                continue;
            }
            let (core, priority) = (t.core, t.priority);
            let tried = std::thread::scope(|s| {
                s.spawn(|| -> Result<(), (&'static str, io::Error)> {
                    if let Some(core) = core {
                        crate::threads::pin(core).map_err(|e| ("core", e))?;
                    }
                    if let Some(p) = priority {
                        crate::threads::fifo(p).map_err(|e| ("priority", e))?;
                    }
                    Ok(())
                })
                .join()
            });
            match tried {
                Ok(Ok(())) => {}
                Ok(Err((what, e))) => {
                    return Err(error(format!("thread[{n}].{what}"), e.to_string()));
                }
                Err(_) => {
                    return Err(error(format!("thread[{n}].priority"), "trying it panicked"));
                }
            }
        }
        if let Some(port) = self.metrics.prometheus_port
            && port != 0
        {
            TcpListener::bind((Ipv4Addr::LOCALHOST, port)).map_err(|e| {
                error(
                    "metrics.prometheus_port",
                    format!("127.0.0.1:{port}: {e} (is another feed serving there?)"),
                )
            })?;
        }
        Ok(())
    }

    /// Makes the directories the outputs go in (a relative path's are
    /// under the run directory, once [`FeedConfig::place_outputs`] put them
    /// there).
    pub fn make_output_dirs(&self) -> Result<(), ConfigError> {
        for (key, path) in self.written(true) {
            if let Some(dir) = path.parent()
                && !dir.as_os_str().is_empty()
            {
                std::fs::create_dir_all(dir)
                    .map_err(|e| error(key, format!("{}: {e}", dir.display())))?;
            }
        }
        Ok(())
    }

    /// The files a run writes, with the key that names each. Before the
    /// outputs are `placed`, a relative one as it will be: under a new run
    /// directory.
    fn written(&self, placed: bool) -> Vec<(&'static str, PathBuf)> {
        let in_run = |p: &Path| {
            if p.is_relative() && !placed {
                Path::new(crate::RUNS_ROOT).join("<run>").join(p)
            } else {
                p.to_owned()
            }
        };
        let mut out = Vec::new();
        if let Some(p) = &self.metrics.hlog {
            out.push(("metrics.hlog", in_run(p)));
        }
        if let Some(p) = self.sinks.jsonl.as_ref().filter(|p| p.as_os_str() != "-") {
            out.push(("sinks.jsonl", in_run(p)));
        }
        if let Some(r) = &self.record {
            for base in self.record_bases(&r.path) {
                let mut first = base.into_os_string();
                first.push(".0.twrec");
                out.push(("record.path", in_run(Path::new(&first))));
            }
        }
        // The ring is where it is said to be: it is for other programs.
        if let Some(p) = &self.sinks.shm {
            out.push(("sinks.shm", p.clone()));
        }
        out
    }

    /// The recording's base name for each feed thread (`.t<n>` after it
    /// with more than one thread, as the runner writes them).
    fn record_bases(&self, path: &Path) -> Vec<PathBuf> {
        if self.threads.len() <= 1 {
            return vec![path.to_owned()];
        }
        (0..self.threads.len())
            .map(|n| {
                let mut p = path.as_os_str().to_owned();
                p.push(format!(".t{n}"));
                PathBuf::from(p)
            })
            .collect()
    }
}

/// Whether `path` can be written: an existing file opens for writing (not
/// truncated); else its nearest existing ancestor is a directory in which
/// a file can be made (a probe, made and removed at once).
fn writable(path: &Path) -> Result<(), String> {
    let said = |e: io::Error| format!("{}: {e}", path.display());
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(format!("{}: is a directory", path.display())),
        Ok(_) => {
            return std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .map(drop)
                .map_err(said);
        }
        // Not there, or a file is where a directory should be: the
        // ancestors say which.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) => {}
        Err(e) => return Err(said(e)),
    }
    let mut dir = path.parent();
    while let Some(d) = dir {
        let here = if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d
        };
        match std::fs::metadata(here) {
            Ok(m) if m.is_dir() => {
                return probe(here).map_err(|e| format!("{}: {e}", here.display()));
            }
            Ok(_) => return Err(format!("{}: is not a directory", here.display())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => dir = d.parent(),
            Err(e) => return Err(format!("{}: {e}", here.display())),
        }
    }
    Ok(())
}

/// Makes and removes a file in `dir`: whether this process may write there.
/// Its name is this call's own (the process id and a count): two checks at
/// once in one process (tests run in parallel, two feeds built side by
/// side) probing the same directory once found each other's file there.
fn probe(dir: &Path) -> io::Result<()> {
    static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = dir.join(format!(".tickwire-check-{}-{n}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&name)?;
    std::fs::remove_file(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(extra: &str) -> FeedConfig {
        FeedConfig::parse(
            &format!("{extra}\n[[venue]]\nvenue = \"binance-spot\"\ninstruments = [\"BTCUSDT\"]\n"),
            [],
        )
        .unwrap()
    }

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("tickwire-preflight-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// `--check` reads the SBE streams' key as the feed would: a file
    /// others may read, or one with no key, is said before anything
    /// connects; a good one passes.
    #[test]
    fn an_api_key_that_cannot_be_read_is_refused_before_connecting() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp("key");
        let file = dir.join("binance");
        std::fs::write(&file, "key = abc123\n").unwrap();
        let sbe = |file: &Path| {
            FeedConfig::parse(
                &format!(
                    "[[venue]]\nvenue = \"binance-spot-sbe\"\ninstruments = [\"BTCUSDT\"]\n\
                     api_key_file = {:?}\n",
                    file.display().to_string()
                ),
                [],
            )
            .unwrap()
        };
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = sbe(&file).preflight().unwrap_err();
        assert_eq!(e.key, "venue[0].api_key_file", "{e}");
        assert!(e.problem.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        sbe(&file).preflight().unwrap();
        std::fs::write(&file, "secret = x\n").unwrap();
        let e = sbe(&file).preflight().unwrap_err();
        assert!(e.problem.contains("no `key`"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_ca_file_that_is_not_pem_is_refused() {
        let dir = temp("ca");
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, "not a certificate\n").unwrap();
        let c = config(&format!("[tls]\nca_file = {:?}", ca.display().to_string()));
        let e = c.preflight().unwrap_err();
        assert_eq!(e.key, "tls.ca_file", "{e}");
        assert!(e.problem.contains("no certificate"), "{e}");
        assert_eq!(e.env, None);
        // Where in the file: the value of `ca_file`, on line 2.
        assert_eq!(
            e.at,
            Some(crate::config::Location {
                line: 2,
                column: 11
            }),
            "{e}"
        );
        // From the environment: its variable named.
        let c = FeedConfig::parse(
            "[[venue]]\nvenue = \"binance-spot\"\ninstruments = [\"BTCUSDT\"]\n",
            [(
                "TICKWIRE_FEED_TLS_CA_FILE".to_owned(),
                ca.display().to_string(),
            )],
        )
        .unwrap();
        let e = c.preflight().unwrap_err();
        assert_eq!(e.key, "tls.ca_file", "{e}");
        assert!(
            e.env
                .as_deref()
                .is_some_and(|v| v.starts_with("TICKWIRE_FEED_TLS_CA_FILE=")),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_output_under_a_file_is_refused_and_a_missing_directory_is_made() {
        let dir = temp("out");
        std::fs::write(dir.join("plain"), "").unwrap();
        let under_file = dir.join("plain/events.jsonl");
        let c = config(&format!(
            "[sinks]\njsonl = {:?}",
            under_file.display().to_string()
        ));
        let e = c.preflight().unwrap_err();
        assert_eq!(e.key, "sinks.jsonl", "{e}");
        assert!(e.problem.contains("not a directory"), "{e}");
        // A directory that does not exist yet can be made: passes, and
        // the run makes it.
        let deep = dir.join("a/b/events.jsonl");
        let c = config(&format!(
            "[sinks]\njsonl = {:?}",
            deep.display().to_string()
        ));
        c.preflight().unwrap();
        assert!(!dir.join("a").exists(), "a check makes nothing");
        c.make_output_dirs().unwrap();
        assert!(dir.join("a/b").is_dir());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A relative output's directories are made where the run directory
    /// put it, and nowhere else.
    #[test]
    fn relative_outputs_get_their_directories_in_the_run_directory() {
        let dir = temp("placed");
        let mut c =
            config("[metrics]\nhlog = \"m/feed.hlog\"\n[sinks]\njsonl = \"j/events.jsonl\"");
        c.preflight().unwrap();
        let run = dir.join("runs/x-run");
        c.place_outputs(&run);
        c.make_output_dirs().unwrap();
        assert!(run.join("m").is_dir() && run.join("j").is_dir());
        let mut made: Vec<_> = std::fs::read_dir(&run)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        made.sort();
        assert_eq!(made, ["j", "m"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_recording_that_exists_is_refused() {
        let dir = temp("rec");
        std::fs::write(dir.join("mine.0.twrec"), "").unwrap();
        let base = dir.join("mine");
        let c = config(&format!(
            "[record]\npath = {:?}",
            base.display().to_string()
        ));
        let e = c.preflight().unwrap_err();
        assert_eq!(e.key, "record.path", "{e}");
        assert!(e.problem.contains("never overwritten"), "{e}");
        // A later file of a series alone is in the way too, as the
        // writer finds it.
        std::fs::remove_file(dir.join("mine.0.twrec")).unwrap();
        std::fs::write(dir.join("mine.3.twrec"), "").unwrap();
        let e = c.preflight().unwrap_err();
        assert!(e.problem.contains("mine.3.twrec exists"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Checks at once in one process never trip over each other's probe
    /// (with the process id alone for a name, they did: "File exists").
    #[test]
    fn probes_at_once_in_one_directory_all_succeed() {
        let dir = temp("probes");
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let dir = dir.clone();
                std::thread::spawn(move || (0..200).all(|_| probe(&dir).is_ok()))
            })
            .collect();
        for t in threads {
            assert!(t.join().unwrap());
        }
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "a probe left behind"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A relative recording path goes into the new run's directory: a
    /// recording of that name where the command runs is not in its way.
    #[test]
    fn a_relative_recording_is_checked_where_it_will_be_written() {
        let dir = temp("rec-relative");
        let here = std::env::current_dir().unwrap();
        let c = config("[record]\npath = \"tickwire-preflight-rec-relative/x\"");
        let taken = here.join("tickwire-preflight-rec-relative");
        std::fs::create_dir_all(&taken).unwrap();
        std::fs::write(taken.join("x.0.twrec"), "").unwrap();
        let result = c.preflight();
        std::fs::remove_dir_all(&taken).unwrap();
        assert_eq!(result, Ok(()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `run` gives a feed thread its SCHED_FIFO priority at start; the
    /// check refuses exactly when this process may not have it.
    #[test]
    fn a_priority_is_refused_by_the_check_when_run_would_be_refused() {
        let allowed = std::thread::spawn(|| crate::threads::fifo(10).is_ok())
            .join()
            .unwrap();
        let c = config("[[thread]]\npriority = 10\nvenues = [\"binance-spot\"]");
        match c.preflight() {
            Ok(()) => assert!(allowed, "the check passed a priority run would be refused"),
            Err(e) => {
                assert!(!allowed, "{e}");
                assert_eq!(e.key, "thread[0].priority", "{e}");
            }
        }
    }

    #[test]
    fn a_prometheus_port_in_use_is_refused() {
        let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = taken.local_addr().unwrap().port();
        let c = config(&format!("[metrics]\nprometheus_port = {port}"));
        let e = c.preflight().unwrap_err();
        assert_eq!(e.key, "metrics.prometheus_port", "{e}");
    }
}
