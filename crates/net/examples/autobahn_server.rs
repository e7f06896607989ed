//! The minimal server role as an echo server, for Autobahn's fuzzing client
//! (`kosoku -m fuzzingclient`). Serves until killed.
//!
//! ```text
//! cargo run --release -p tickwire-net --example autobahn_server -- 127.0.0.1:9002
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)] // A command-line tool reports progress.

use std::process::ExitCode;
use std::time::Duration;

use tickwire_net::{Config, Conn, Driver, Handler, Payload, Stamps, TlsConfig};

struct Echo;

impl Handler for Echo {
    fn on_message(&mut self, conn: &mut Conn<'_>, payload: Payload<'_>, _stamps: Stamps) {
        let sent = match payload.as_str() {
            Some(text) => conn.send_text(text),
            None => conn.send_binary(payload.as_bytes()),
        };
        if let Err(e) = sent {
            eprintln!("{}: echo failed: {e}", conn.id());
        }
    }
}

fn main() -> ExitCode {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:9002".into());
    let Ok(addr) = addr.parse() else {
        eprintln!("usage: autobahn_server <ip:port>");
        return ExitCode::FAILURE;
    };
    const MIB16: usize = 16 << 20;
    let config = Config {
        max_connections: 4,
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
    let mut driver = match Driver::new(config, &TlsConfig::empty(), Echo) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    match driver.listen(addr) {
        Ok(local) => println!("listening on ws://{local}"),
        Err(e) => {
            eprintln!("cannot listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    }
    loop {
        if let Err(e) = driver.poll_once() {
            eprintln!("poll failed: {e}");
            return ExitCode::FAILURE;
        }
    }
}
