//! Offline: one driver plays both ends on 127.0.0.1. Its server role
//! accepts the client, the client subscribes, the server answers with a few
//! trade messages, and the client prints them with the time each spent
//! between the socket read and the handler.
//!
//! ```text
//! cargo run --release -p tickwire-net --example loopback
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)] // An example prints what it does.

use std::time::{Duration, Instant};

use tickwire_net::{
    CloseCode, Config, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect,
    Role, Stamps, TlsConfig,
};

#[derive(Default)]
struct Demo {
    received: usize,
    client: Option<ConnId>,
    done: bool,
}

impl Handler for Demo {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        if conn.role() == Role::Client {
            self.client = Some(conn.id());
            conn.send_text(r#"{"op":"subscribe","args":["trades.BTCUSDT"]}"#)
                .expect("queued");
        }
    }

    fn on_message(&mut self, conn: &mut Conn<'_>, payload: Payload<'_>, stamps: Stamps) {
        match conn.role() {
            // The server answers a subscription with five trades.
            Role::Server => {
                println!("server got {}", String::from_utf8_lossy(payload.as_bytes()));
                for i in 0..5 {
                    let trade = format!(
                        r#"{{"topic":"trades.BTCUSDT","seq":{i},"p":"61234.{i}","q":"0.01"}}"#
                    );
                    conn.send_text(&trade).expect("queued");
                }
            }
            Role::Client => {
                let clock = tickwire_tsc::calibration();
                let ns = clock.ns_between(stamps.read_end, clock.clock().now());
                println!(
                    "client got {} ({ns} ns from read to handler)",
                    String::from_utf8_lossy(payload.as_bytes())
                );
                self.received += 1;
                if self.received == 5 {
                    conn.close(CloseCode::NORMAL, "done").expect("valid close");
                }
            }
        }
    }

    fn on_close(&mut self, id: ConnId, role: Role, reason: &Disconnect) -> Reconnect {
        println!("{role:?} {id} closed: {reason}");
        if Some(id) == self.client {
            self.done = true;
        }
        Reconnect::No
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = Config {
        max_connections: 2,
        read_buffer_size: 64 * 1024,
        max_message_size: 64 * 1024,
        send_rate: None,
        ..Config::default()
    };
    let mut driver = Driver::new(config, &TlsConfig::empty(), Demo::default())?;
    let addr = driver.listen("127.0.0.1:0".parse()?)?;
    println!("listening on ws://{addr}");
    driver.connect(Endpoint::parse(&format!("ws://{addr}/stream"))?)?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !driver.handler().done {
        if Instant::now() > deadline {
            return Err("the demo did not finish in 10 s".into());
        }
        driver.poll_timeout(Duration::from_millis(50))?;
    }
    // Let the server side see the close too.
    driver.poll_timeout(Duration::from_millis(50))?;
    Ok(())
}
