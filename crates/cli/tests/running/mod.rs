//! `tickwire-feed run` as a process the integration tests watch: its
//! configuration written into the test's directory (where its `runs/`
//! goes too), its standard error read line by line, every wait ending on
//! an event (a line, the exit) with a generous deadline.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// `run` on `config`, its standard error read line by line.
pub(crate) struct Run {
    child: Child,
    lines: mpsc::Receiver<String>,
    pub(crate) seen: Vec<String>,
}

/// A generous deadline only, so a broken feed fails a test rather than
/// hang it; every wait below ends on an event (a line, the exit).
const TOO_LONG: Duration = Duration::from_secs(90);

impl Run {
    pub(crate) fn start(dir: &Path, config: &str) -> Run {
        let path = dir.join("feed.toml");
        std::fs::write(&path, config).unwrap();
        let mut child = crate::util::bin()
            .args(["run", "--config"])
            .arg(&path)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Run {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for a line `matches` accepts.
    pub(crate) fn wait_for(&mut self, what: &str, matches: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + TOO_LONG;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if matches(&line) {
                        return line;
                    }
                }
                Err(_) => panic!("no {what} on stderr; it said:\n{}", self.seen.join("\n")),
            }
        }
    }

    /// Reads standard error to its end (the process exited), then its
    /// exit code.
    pub(crate) fn exit_code(&mut self) -> Option<i32> {
        let deadline = Instant::now() + TOO_LONG;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("it never exited; it said:\n{}", self.seen.join("\n"))
                }
            }
        }
        self.child.wait().unwrap().code()
    }

    /// SIGINT, as Ctrl-C sends it.
    pub(crate) fn interrupt(&self) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-INT", &pid]).status().unwrap();
        assert!(status.success());
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
