//! Prints the percentile table of an `.hlog` written by tickwire's exporter
//! and plots it to SVG (what `tickwire-feed report` will do).
//!
//! `cargo run --release -p tickwire-tsc --example report -- latency.hlog [latency.svg]`

#![allow(clippy::print_stdout)] // A command-line example reports on stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use tickwire_tsc::Report;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(log) = args.next().map(PathBuf::from) else {
        eprintln!("usage: report <file.hlog> [plot.svg]");
        return ExitCode::from(2);
    };
    let svg = args
        .next()
        .map_or_else(|| log.with_extension("svg"), PathBuf::from);
    let report = match Report::read(&log) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("report: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", report.table());
    println!("{} intervals", report.intervals);
    if let Err(e) = report.write_svg(&svg) {
        eprintln!("report: {e}");
        return ExitCode::FAILURE;
    }
    println!("plot: {}", svg.display());
    ExitCode::SUCCESS
}
