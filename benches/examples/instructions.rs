//! Runs one `<impl>/<case>` of the `frame_decode` workload a given number of
//! times, so that `benches/instructions.sh` can count its instructions with
//! callgrind. Exits with status 2 if the implementation cannot do the case.
//!
//! `cargo run --profile bench -p tickwire-benches --example instructions -- tickwire text_128 1000`

use std::process::ExitCode;

use tickwire_benches::{cases, runner};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name, case_name, iters] = &args[..] else {
        eprintln!("usage: instructions <impl> <case> <iterations>");
        return ExitCode::FAILURE;
    };
    let iters: usize = iters.parse().expect("iterations is a number");
    let case = cases()
        .into_iter()
        .find(|c| c.name == case_name)
        .expect("a known case");
    let Some(mut f) = runner(name, &case) else {
        return ExitCode::from(2);
    };
    let mut total = 0;
    for _ in 0..iters {
        total += f();
    }
    assert_eq!(total, iters * case.payload_bytes);
    ExitCode::SUCCESS
}
