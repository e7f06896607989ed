//! `loopback`: one TLS 1.3 (AES-128-GCM) WebSocket connection over
//! 127.0.0.1, the same rustls server for every client (`server.rs`).
//! The server runs on core 0, the client on core 1. Clients
//! (`clients.rs`):
//!
//! - tickwire's `Driver`, spinning on epoll (`BusyPoll`), spinning on the
//!   socket (`BusyRead`), or blocking; its receive buffer is
//!   `LOOPBACK_READ_BUFFER` bytes and its reads at most `LOOPBACK_MAX_READ`
//!   (defaults: `Config`'s).
//! - tungstenite's sync `WebSocket`, nexus-web 0.8's blocking `ws::Client`
//!   and "ceiling", all three over the very same rustls `StreamOwned`, so
//!   that only the WebSocket layer differs; each busy (spinning on `read` of
//!   a non-blocking socket, as tickwire's busy-read does) or blocking. The
//!   ceiling is ~40 lines of framing and nothing else (no UTF-8 or other
//!   checks): what any client over `StreamOwned` can reach at best.
//! - A raw-socket reader that does the handshakes, then spins reading the
//!   ciphertext without decrypting it: how fast the server and the
//!   loopback go. The server sends its pre-encrypted load in one `write`
//!   (`sendfile` from `/dev/shm` was slower); on the 2-vCPU machine this
//!   was written on, one loopback TCP connection then carried ~25 M msg/s
//!   (~5 GB/s), and the fastest clients came within 10-25% of that on the
//!   batched shapes: there the last line of each table matters.
//!
//! Every client hands every payload to the same handler, which reads every
//! byte (`measure.rs`).
//!
//! - Throughput: the server writes N pre-encrypted 201-byte JSON messages
//!   (205-byte text frames) in one of three shapes: 64 KiB writes (16 KiB
//!   records), 64 frames per write (one 13 KiB record each), one record per
//!   message (as exchanges send them); all encrypted first, then written as
//!   fast as the socket takes them. A client's rate is messages from its
//!   first to its last. Each client runs 5 times, interleaved; per shape a
//!   table shows the median (min-max) and, from the same runs, the median
//!   of per-run ratios of tickwire over nexus-web, tungstenite and the
//!   ceiling (busy modes against busy, blocking against blocking), and of
//!   the raw reader over the fastest client (above 1: the server was never
//!   the limit).
//! - Latency: the server sends one message every 100 us, each in its own
//!   record, stamped with the TSC just before it is encrypted; the client
//!   records stamp -> handler in an HdrHistogram. The server spins between
//!   sends (`LOOPBACK_SERVER_SLEEP=1`: it sleeps; every row is then ~3 us
//!   slower, and the tails shorter, since no vCPU is kept busy). tickwire
//!   and tungstenite each run 5 times, interleaved; the table shows the
//!   median of each percentile, and how often tickwire beat tungstenite.
//!   A plain TCP client of a plain TCP server with the same cadence (no TLS,
//!   no WebSocket), waiting in each of tickwire's three ways, shows the floor
//!   the kernel and the VM set, and what each way of waiting costs.
//!
//! `cargo bench -p tickwire-benches --bench loopback [-- N K [throughput|latency] [16k] [x64] [x1]]`
//! (N throughput messages, K latency messages; the shapes default to all
//! three). `cargo test --benches` runs it once, small.

#![allow(clippy::print_stdout)] // A benchmark reports its results.

mod clients;
mod measure;
mod server;

use std::time::Duration;

use hdrhistogram::Histogram;
use tickwire_benches::tls::{MESSAGE, Pki, frames, pki};
use tickwire_net::Config;
use tickwire_tsc::Calibration;

use measure::{Measure, Report};
use server::{Load, serve, serve_plain};

/// Each client's runs, interleaved with the others'.
const REPS: usize = 5;

/// The clients of the throughput runs; the first five also run the latency
/// section. Busy modes spin on a non-blocking `read`, except tickwire's
/// busy-poll, which spins on `epoll_wait`.
const CLIENTS: [(&str, &str); 9] = [
    ("tickwire", "busy-poll"),
    ("tickwire", "busy-read"),
    ("tickwire", "blocking"),
    ("tungstenite", "busy"),
    ("tungstenite", "blocking"),
    ("nexus-web", "busy"),
    ("nexus-web", "blocking"),
    ("ceiling", "busy"),
    ("ceiling", "blocking"),
];

/// Pins the calling thread to `core` by its number. (Not through
/// `core_affinity::get_core_ids`, which lists only the cores the caller's
/// current mask allows: a thread spawned by an already pinned thread would
/// find only its parent's core, and both ends would share it.)
fn pin(core: usize) {
    if !core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
        eprintln!("loopback: could not pin a thread to core {core}; numbers will be noisy");
    }
}

/// What every run shares.
struct Bench {
    pki: Pki,
    clock: Calibration,
    /// tickwire's `Config::read_buffer_size` and `Config::max_read`.
    sizes: (usize, usize),
}

impl Bench {
    /// One run of `client` against a fresh server with `load`.
    fn run(&self, client: (&str, &str), load: Load) -> Report {
        let (port, server) = serve(&self.pki, load, self.clock);
        let (want, stamped) = match load {
            Load::Throughput(n, _) => (n, false),
            Load::Latency(k, _) => (k, true),
        };
        let measure = Measure::new(self.clock, want, stamped);
        let report = clients::run(&self.pki, port, client, self.sizes, measure);
        server.join().unwrap();
        report
    }

    /// The raw-socket reader against a fresh server with `load`.
    fn raw(&self, n: usize, write: usize) -> f64 {
        let (port, server) = serve(&self.pki, Load::Throughput(n, write), self.clock);
        let end = clients::raw_socket(&self.pki, port);
        let start = server.join().unwrap();
        n as f64 / (end - start).as_secs_f64()
    }
}

fn main() {
    let (n, k, rest) = tickwire_benches::harness_args((500_000, 20_000), (2_000, 200));
    let frame = frames(1).len();
    // (argument, description, bytes per write)
    let all_shapes = [
        ("16k", "64 KiB writes: 16 KiB records".to_owned(), 64 * 1024),
        (
            "x64",
            format!("64 frames per write: one {} B record each", 64 * frame),
            64 * frame,
        ),
        ("x1", "one record per message".to_owned(), 0),
    ];
    let (mut throughput, mut latency, mut picked) = (false, false, Vec::new());
    for arg in &rest {
        match arg.as_str() {
            "throughput" => throughput = true,
            "latency" => latency = true,
            shape => picked.push(all_shapes.iter().position(|s| s.0 == shape).unwrap_or_else(
                || panic!("unknown argument {shape:?}: throughput, latency, 16k, x64 or x1"),
            )),
        }
    }
    if !throughput && !latency {
        (throughput, latency) = (true, true);
    }
    if picked.is_empty() {
        picked = (0..all_shapes.len()).collect();
    }
    let default_buffer = Config::default().read_buffer_size;
    let read_buffer = std::env::var("LOOPBACK_READ_BUFFER").map_or(default_buffer, |v| {
        v.parse().expect("LOOPBACK_READ_BUFFER is a byte count")
    });
    let default_read = Config::default().max_read;
    let max_read = std::env::var("LOOPBACK_MAX_READ").map_or(default_read, |v| {
        v.parse().expect("LOOPBACK_MAX_READ is a byte count")
    });
    pin(1);
    let bench = Bench {
        pki: pki(),
        clock: tickwire_tsc::calibration(),
        sizes: (read_buffer, max_read),
    };

    println!(
        "loopback: TLS 1.3 AES-128-GCM, {} B messages ({frame} B frames), server on core 0, \
         client on core 1",
        MESSAGE.len()
    );
    println!(
        "tickwire read buffer: {read_buffer} B (LOOPBACK_READ_BUFFER; default {default_buffer}), \
         reads of at most {max_read} B (LOOPBACK_MAX_READ; default {default_read}); \
         nexus-web: library defaults (1 MiB read buffer); ceiling: 64 KiB buffer"
    );
    if throughput {
        let shapes: Vec<_> = picked.iter().map(|&i| &all_shapes[i]).collect();
        // rates[shape][client][rep]; raw[shape][rep].
        let mut rates = vec![vec![Vec::new(); CLIENTS.len()]; shapes.len()];
        let mut raw = vec![Vec::new(); shapes.len()];
        for _ in 0..REPS {
            for (s, &&(_, _, write)) in shapes.iter().enumerate() {
                raw[s].push(bench.raw(n, write));
                for (c, &client) in CLIENTS.iter().enumerate() {
                    let report = bench.run(client, Load::Throughput(n, write));
                    rates[s][c].push(report.per_second);
                }
            }
        }
        for (s, (_, shape, _)) in shapes.iter().enumerate() {
            println!();
            throughput_table(n, shape, &rates[s], &raw[s]);
        }
    }
    if latency {
        latency_section(&bench, k);
    }
}

/// Median, min and max.
fn spread(v: &[f64]) -> (f64, f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// Median, min and max of the per-run ratios `a / b`.
fn ratio(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let ratios: Vec<f64> = a.iter().zip(b).map(|(a, b)| a / b).collect();
    spread(&ratios)
}

/// One shape's table: each client's rate, tickwire's ratios to the others
/// in the same wait mode, and the server's raw rate over the fastest client.
fn throughput_table(n: usize, shape: &str, rates: &[Vec<f64>], raw: &[f64]) {
    println!("throughput, {shape}: {n} messages, {REPS} interleaved runs, median (min-max)");
    println!(
        "{:<12} {:<10} {:>20}  {:>18} {:>18} {:>18}",
        "client", "mode", "M msg/s", "/ nexus-web", "/ tungstenite", "/ ceiling"
    );
    let at = |client: &str, mode: &str| CLIENTS.iter().position(|&c| c == (client, mode));
    let cell = |(m, lo, hi): (f64, f64, f64)| format!("{m:.2}x ({lo:.2}-{hi:.2})");
    let rate = |v: &[f64]| {
        let (m, lo, hi) = spread(v);
        format!("{:.2} ({:.2}-{:.2})", m / 1e6, lo / 1e6, hi / 1e6)
    };
    println!(
        "{:<12} {:<10} {:>20}",
        "raw socket",
        "no decrypt",
        rate(raw)
    );
    for (c, &(client, mode)) in CLIENTS.iter().enumerate() {
        let mut line = format!("{client:<12} {mode:<10} {:>20}", rate(&rates[c]));
        if client == "tickwire" {
            let peer_mode = if mode == "blocking" {
                "blocking"
            } else {
                "busy"
            };
            for peer in ["nexus-web", "tungstenite", "ceiling"] {
                let p = at(peer, peer_mode).unwrap();
                line += &format!("  {:>18}", cell(ratio(&rates[c], &rates[p])));
            }
        }
        println!("{line}");
    }
    // The raw reader over the fastest client: by medians, and per run.
    let (fastest, best) = (0..CLIENTS.len())
        .map(|c| (spread(&rates[c]).0, c))
        .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a });
    let per_run: Vec<f64> = (0..raw.len())
        .map(|r| rates.iter().map(|v| v[r]).fold(0.0, f64::max))
        .collect();
    let (m, lo, hi) = ratio(raw, &per_run);
    println!(
        "raw socket / fastest client: {:.2}x by medians ({} {}); {m:.2}x ({lo:.2}-{hi:.2}) \
         over each run's fastest: {}",
        spread(raw).0 / fastest,
        CLIENTS[best].0,
        CLIENTS[best].1,
        if lo > 1.0 {
            "the server was never the limit"
        } else {
            "the server may have limited some runs"
        }
    );
}

fn latency_section(bench: &Bench, k: usize) {
    println!();
    let interval = Duration::from_micros(100);
    let rows: [(&str, &str); 8] = [
        CLIENTS[0],
        CLIENTS[1],
        CLIENTS[2],
        CLIENTS[3],
        CLIENTS[4],
        ("plain TCP", "busy-poll"),
        ("plain TCP", "busy-read"),
        ("plain TCP", "blocking"),
    ];
    let mut runs: Vec<Vec<Report>> = (0..rows.len()).map(|_| Vec::new()).collect();
    for _ in 0..REPS {
        for (i, &(client, mode)) in rows.iter().enumerate() {
            let report = if client == "plain TCP" {
                let (port, server) = serve_plain(k, interval, bench.clock);
                let measure = Measure::new(bench.clock, k, true);
                let report = clients::plain_tcp(port, mode, measure);
                server.join().unwrap();
                report
            } else {
                bench.run((client, mode), Load::Latency(k, interval))
            };
            runs[i].push(report);
        }
    }
    type Pick = fn(&Report) -> &Histogram<u64>;
    let tables: [(&str, Pick); 2] = [
        ("stamp -> handler (end to end)", |r| &r.latency),
        (
            "socket read returned -> handler (the client's own share)",
            |r| &r.library,
        ),
    ];
    for (title, pick) in tables {
        println!(
            "latency: {k} messages, one every 100 us, one record each; {title}; \
             median of {REPS} interleaved runs, microseconds"
        );
        println!(
            "{:<12} {:<10} {:>8} {:>8} {:>8} {:>8} {:>9}",
            "client", "mode", "p50", "p90", "p99", "p99.9", "max"
        );
        for ((client, mode), reports) in rows.iter().zip(&runs) {
            let median = |f: &dyn Fn(&Histogram<u64>) -> u64| {
                let mut v: Vec<u64> = reports.iter().map(|r| f(pick(r))).collect();
                v.sort_unstable();
                v[v.len() / 2] as f64 / 1000.0
            };
            println!(
                "{client:<12} {mode:<10} {:>8.2} {:>8.2} {:>8.1} {:>8.1} {:>9.1}",
                median(&|h| h.value_at_quantile(0.5)),
                median(&|h| h.value_at_quantile(0.9)),
                median(&|h| h.value_at_quantile(0.99)),
                median(&|h| h.value_at_quantile(0.999)),
                median(&|h| h.max()),
            );
        }
        // Rows 0 and 1 spin, as row 3 does; rows 2 and 4 block.
        for (mode, ours, theirs) in [("busy-poll", 0, 3), ("busy-read", 1, 3), ("blocking", 2, 4)] {
            let below = |q: f64| {
                runs[ours]
                    .iter()
                    .zip(&runs[theirs])
                    .filter(|(a, b)| pick(a).value_at_quantile(q) < pick(b).value_at_quantile(q))
                    .count()
            };
            println!(
                "tickwire {mode}: below tungstenite in {}/{REPS} runs at p50, {}/{REPS} at p90",
                below(0.5),
                below(0.9)
            );
        }
        println!();
    }
}
