//! The market moves only while some client is subscribed: a client that
//! connects and only pings holds it still, its subscription starts it, and
//! its unsubscription stills it again. Each "still" is read after a ping's
//! pong: the server answered the client in a later turn of its loop, which
//! steps the market (when it moves) before it reads its clients.

use tickwire_sim::{SimConfig, Simulator, Venue};
use tickwire_testkit::ws::Client;

/// A ping answered: the server has read this client since.
fn ping(client: &mut Client) {
    client.send("ping");
    let _ = client.until("pong", |t| t == "pong");
}

#[test]
fn the_market_moves_only_while_a_client_is_subscribed() {
    let simulator = Simulator::start(SimConfig {
        tls: None,
        rate: 2000,
        ..SimConfig::new(Venue::Okx)
    })
    .unwrap();
    let mut client = Client::connect(simulator.addr(), "/ws/v5/public");
    // Connected, answered, not subscribed: still.
    ping(&mut client);
    ping(&mut client);
    assert_eq!(simulator.stats().steps, 0);

    let symbol = SimConfig::new(Venue::Okx).instruments[0].symbol.clone();
    let arg = format!(r#"{{"channel":"books","instId":"{symbol}"}}"#);
    client.send(&format!(r#"{{"op":"subscribe","args":[{arg}]}}"#));
    let _ = client.until("the book's first update", |t| {
        t.contains(r#""action":"update""#)
    });
    assert!(simulator.stats().steps > 0);

    client.send(&format!(r#"{{"op":"unsubscribe","args":[{arg}]}}"#));
    let _ = client.until("the unsubscribe answer", |t| {
        t.contains(r#""event":"unsubscribe""#)
    });
    ping(&mut client);
    let still = simulator.stats().steps;
    ping(&mut client);
    ping(&mut client);
    assert_eq!(simulator.stats().steps, still);
    simulator.stop();
}
