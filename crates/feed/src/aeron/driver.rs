//! A media driver inside this process, on a thread of its own, that says
//! why when it cannot start (rather than panicking) and stops when
//! dropped.
//!
//! The C driver's own rules relied on (`aeron_driver_context.c`,
//! `aeron_driver.c`): in a directory where another driver's `cnc.dat`
//! shows a heartbeat newer than the driver timeout, a new driver refuses
//! to start ("active driver detected"); an older one is a dead driver's,
//! and the new driver removes it. `dir_delete_on_shutdown` removes the
//! directory when the driver closes. `start(true)` leaves the conductor's
//! duty cycle to the caller (`main_do_work`, then `main_idle_strategy`,
//! the configured idle strategy: backoff by default); the sender and
//! receiver run on threads of the driver's threading mode.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;

use rusteron_media_driver::{AeronDriver, AeronDriverContext};

use super::{AeronError, c_string, dir_or_default};

/// A media driver running in this process.
pub struct EmbeddedDriver {
    dir: String,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EmbeddedDriver {
    /// Starts a driver in `dir` (Aeron's default when `None`) and waits
    /// until it runs, or says why it did not.
    pub fn start(dir: Option<&Path>) -> Result<EmbeddedDriver, AeronError> {
        let dir = dir_or_default(dir)?;
        let cdir = c_string(&dir, "the driver's directory").map_err(AeronError::Driver)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (started, up) = mpsc::channel::<Result<(), String>>();
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("tickwire-aeron-driver".into())
            .spawn(move || {
                let run = || -> Result<AeronDriver, String> {
                    let ctx = AeronDriverContext::new().map_err(|e| e.to_string())?;
                    ctx.set_dir(&cdir).map_err(|e| e.to_string())?;
                    ctx.set_dir_delete_on_shutdown(true)
                        .map_err(|e| e.to_string())?;
                    let driver = AeronDriver::new(&ctx).map_err(|e| e.to_string())?;
                    driver.start(true).map_err(|e| e.to_string())?;
                    Ok(driver)
                };
                let driver = match run() {
                    Ok(d) => {
                        let _ = started.send(Ok(()));
                        d
                    }
                    Err(why) => {
                        let _ = started.send(Err(why));
                        return;
                    }
                };
                while !stopping.load(Ordering::Acquire) {
                    match driver.main_do_work() {
                        Ok(work) => driver.main_idle_strategy(work),
                        Err(e) => {
                            log::error!("the embedded Aeron media driver stopped: {e}");
                            return;
                        }
                    }
                }
            })
            .map_err(|e| AeronError::Driver(e.to_string()))?;
        match up.recv() {
            Ok(Ok(())) => Ok(EmbeddedDriver {
                dir,
                stop,
                thread: Some(thread),
            }),
            Ok(Err(why)) => {
                let _ = thread.join();
                Err(AeronError::Driver(format!("in {dir}: {why}")))
            }
            Err(_) => {
                let _ = thread.join();
                Err(AeronError::Driver(format!("in {dir}: its thread ended")))
            }
        }
    }

    /// Its directory, where clients connect.
    pub fn dir(&self) -> &str {
        &self.dir
    }
}

impl Drop for EmbeddedDriver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
