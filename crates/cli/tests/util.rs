//! What every test of the program needs: the binary, with the tests' own
//! environment kept out of it, and a fresh directory of its own.

use std::path::PathBuf;
use std::process::Command;

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
