//! Needs the internet: subscribes to a public exchange stream over TLS and
//! prints the first messages. Never run by the tests or CI.
//!
//! ```text
//! cargo run --release -p tickwire-net --example public_stream -- [wss url] [subscribe message] [count]
//! ```
//!
//! With no arguments it subscribes to Binance's BTCUSDT trades.

#![allow(clippy::print_stdout, clippy::print_stderr)] // An example prints what it does.

use std::time::Duration;

use tickwire_net::{
    CloseCode, Config, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect,
    Role, Stamps, TlsConfig,
};

struct Print {
    subscribe: String,
    left: usize,
    finished: bool,
}

impl Handler for Print {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        println!("{} open; subscribing", conn.id());
        if let Err(e) = conn.send_text(&self.subscribe) {
            eprintln!("subscribe failed: {e}");
        }
    }

    fn on_message(&mut self, conn: &mut Conn<'_>, payload: Payload<'_>, _stamps: Stamps) {
        println!("{}", String::from_utf8_lossy(payload.as_bytes()));
        self.left = self.left.saturating_sub(1);
        if self.left == 0 {
            let _ = conn.close(CloseCode::NORMAL, "enough");
        }
    }

    fn on_close(&mut self, id: ConnId, _role: Role, reason: &Disconnect) -> Reconnect {
        println!("{id} closed: {reason}");
        if matches!(reason, Disconnect::Local { .. }) {
            self.finished = true;
        }
        Reconnect::Yes
    }

    fn on_reconnecting(&mut self, id: ConnId, attempt: u32, delay: Duration) {
        println!("{id} reconnecting (attempt {attempt}) in {delay:?}");
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .unwrap_or_else(|| "wss://stream.binance.com:9443/ws".into());
    let subscribe = args
        .next()
        .unwrap_or_else(|| r#"{"method":"SUBSCRIBE","params":["btcusdt@trade"],"id":1}"#.into());
    let count = args.next().map_or(Ok(10), |c| c.parse())?;
    let handler = Print {
        subscribe,
        left: count,
        finished: false,
    };
    let mut driver = Driver::new(Config::default(), &TlsConfig::webpki_roots(), handler)?;
    driver.connect(Endpoint::parse(&url)?)?;
    driver.run_until(|h| h.finished)?;
    Ok(())
}
