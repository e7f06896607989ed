//! The binary's logger: the library's lines (the `log` facade, target
//! `tickwire_feed`) on standard error, prefixed with the program's name, as
//! an operator reads them. Other crates' records are not shown: their
//! own logs are for their developers.

/// Prints the feed library's records on standard error.
struct Stderr;

impl log::Log for Stderr {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Info
            && metadata
                .target()
                .starts_with(tickwire_feed::live::LOG_TARGET)
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            eprintln!("tickwire-feed: {}", record.args());
        }
    }

    fn flush(&self) {}
}

static STDERR: Stderr = Stderr;

/// Installs the logger (once, at start: a second call changes nothing).
pub(crate) fn install() {
    if log::set_logger(&STDERR).is_ok() {
        log::set_max_level(log::LevelFilter::Info);
    }
}
