//! `tickwire-feed`: the feed handler binary. So far it has one command,
//! `report`, which reads the latency log (`.hlog`) that tickwire-tsc's
//! exporter writes; `run`, `sim`, `demo`, `record` and `replay` come with the
//! feed itself.

#![allow(clippy::print_stdout)] // A command-line tool reports on stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tickwire_tsc::Report;

#[derive(Parser)]
#[command(name = "tickwire-feed", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the percentile table of a latency log and plot it to SVG.
    ///
    /// The log is an HdrHistogram interval log (`.hlog`) as tickwire's
    /// exporter writes it: one tag per stream and stage. Every tag's
    /// intervals are merged.
    Report {
        /// The `.hlog` file.
        log: PathBuf,
        /// Where to write the SVG percentile plot [default: the log's path
        /// with the extension `svg`].
        #[arg(long)]
        svg: Option<PathBuf>,
        /// Do not write the plot.
        #[arg(long, conflicts_with = "svg")]
        no_svg: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Report { log, svg, no_svg } => report(&log, svg, no_svg),
    }
}

fn report(log: &std::path::Path, svg: Option<PathBuf>, no_svg: bool) -> ExitCode {
    let report = match Report::read(log) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("tickwire-feed report: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", report.table());
    println!(
        "{} interval histograms, {} series",
        report.intervals,
        report.series.len()
    );
    if !no_svg {
        let svg = svg.unwrap_or_else(|| log.with_extension("svg"));
        if let Err(e) = report.write_svg(&svg) {
            eprintln!("tickwire-feed report: {e}");
            return ExitCode::FAILURE;
        }
        println!("plot written to {}", svg.display());
    }
    ExitCode::SUCCESS
}
