//! Runs every case of an Autobahn fuzzing server (the de-facto WebSocket
//! conformance suite) against the tickwire client, echoing what it receives.
//!
//! ```text
//! cargo run --release -p tickwire-net --example autobahn_client -- ws://127.0.0.1:9001 tickwire
//! ```
//!
//! `scripts/autobahn.sh` starts a fuzzing server, runs this, and checks the
//! report. The configuration is the stock one with limits raised for the
//! 9.* cases (messages of 16 MiB, sent in up to 65,536 fragments), pacing
//! and heartbeats off (the suite measures the protocol, not a venue).

#![allow(clippy::print_stdout, clippy::print_stderr)] // A command-line tool reports progress.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use tickwire_net::{
    Config, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect, Role, Stamps,
    TlsConfig,
};

/// Echoes every data message and remembers how its connection ended.
#[derive(Default)]
struct Echo {
    first_text: Option<String>,
    ended: Option<Disconnect>,
}

impl Handler for Echo {
    fn on_message(&mut self, conn: &mut Conn<'_>, payload: Payload<'_>, _stamps: Stamps) {
        let sent = match payload.as_str() {
            Some(text) => {
                if self.first_text.is_none() {
                    self.first_text = Some(text.to_string());
                }
                conn.send_text(text)
            }
            None => conn.send_binary(payload.as_bytes()),
        };
        if let Err(e) = sent {
            eprintln!("{}: echo failed: {e}", conn.id());
        }
    }

    fn on_close(&mut self, _id: ConnId, _role: Role, reason: &Disconnect) -> Reconnect {
        self.ended = Some(reason.clone());
        Reconnect::No
    }
}

/// Connects to `url` and polls until that connection ends.
fn session(driver: &mut Driver<Echo>, url: &str) -> Result<Disconnect, String> {
    let endpoint = Endpoint::parse(url).map_err(|e| format!("{url}: {e}"))?;
    let handler = driver.handler_mut();
    handler.ended = None;
    handler.first_text = None;
    driver.connect(endpoint).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(reason) = driver.handler_mut().ended.take() {
            return Ok(reason);
        }
        if Instant::now() > deadline {
            return Err(format!("{url}: no end after 120 s"));
        }
        driver
            .poll_timeout(Duration::from_millis(100))
            .map_err(|e| e.to_string())?;
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [base, agent] = &args[..] else {
        eprintln!("usage: autobahn_client <base ws url> <agent>");
        return ExitCode::FAILURE;
    };
    let base = base.trim_end_matches('/');
    const MIB16: usize = 16 << 20;
    let config = Config {
        max_connections: 1,
        read_buffer_size: MIB16 + 64,
        max_message_size: MIB16,
        max_fragments: 1 << 17,
        write_buffer_size: MIB16 + 64,
        outbox_size: 1024,
        send_rate: None,
        ping_interval: None,
        stale_timeout: None,
        close_timeout: Duration::from_secs(2),
        ..Config::default()
    };
    let mut driver = match Driver::new(config, &TlsConfig::webpki_roots(), Echo::default()) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };

    if let Err(e) = session(&mut driver, &format!("{base}/getCaseCount")) {
        eprintln!("{e}");
        return ExitCode::FAILURE;
    }
    let Some(count) = driver
        .handler()
        .first_text
        .as_deref()
        .and_then(|t| t.trim().parse::<u32>().ok())
    else {
        eprintln!("getCaseCount did not return a number");
        return ExitCode::FAILURE;
    };
    println!("{count} cases");
    for case in 1..=count {
        let url = format!("{base}/runCase?case={case}&agent={agent}");
        match session(&mut driver, &url) {
            Ok(reason) => println!("case {case}/{count}: {reason}"),
            Err(e) => {
                eprintln!("case {case}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    match session(&mut driver, &format!("{base}/updateReports?agent={agent}")) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
