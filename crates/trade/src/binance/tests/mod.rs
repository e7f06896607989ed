//! The session against messages written as the venue's docs show them:
//! `login.rs` logging on, subscribing, reconciling and signing;
//! `orders.rs` orders, their news and the rate limits; `robust.rs` bad
//! input.

mod login;
mod orders;
mod review;
mod robust;

use ring::signature::{Ed25519KeyPair, KeyPair as _};
use tickwire_venues::json::INPUT_PADDING;
pub(super) use tickwire_venues::{InstrumentId, InstrumentSpec};

pub(super) use super::*;
pub(super) use crate::order::{Limit, OrderKind, VenueOrderId};

pub(super) const T0: u64 = 1_700_000_003_250;

pub(super) fn now() -> Now {
    Now {
        unix_ms: T0,
        tsc: 77,
    }
}

/// A throw-away Ed25519 key: the credentials and the public half.
pub(super) fn ed25519() -> (Credentials, Vec<u8>) {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
    let public = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref())
        .unwrap()
        .public_key()
        .as_ref()
        .to_vec();
    (Credentials::ed25519("KEY", pkcs8.as_ref()).unwrap(), public)
}

pub(super) fn config() -> SessionConfig {
    SessionConfig {
        instruments: vec![
            InstrumentSpec::new("BTCUSDT", 2, 5, 0),
            InstrumentSpec::new("ETHBTC", 5, 4, 0),
        ],
        prefix: "tw".into(),
        cancel_on_disconnect: false,
        max_open_orders: 16,
    }
}

/// Hands `text` to the session as the feed does (padded); the events and
/// the messages it wrote.
pub(super) fn feed(s: &mut BinanceSession, text: &str) -> (Vec<OrderEvent>, Vec<String>) {
    let mut buf = text.as_bytes().to_vec();
    buf.resize(text.len() + INPUT_PADDING, 0);
    let mut out = Out::new(8192, 32);
    let mut events = Vec::with_capacity(16);
    s.on_text(&mut buf, text.len(), now(), &mut out, &mut events);
    (events, out.iter().map(str::to_owned).collect())
}

pub(super) fn sent(out: &Out) -> Vec<String> {
    out.iter().map(str::to_owned).collect()
}

pub(super) fn signature(message: &str) -> &str {
    let at = message.find("\"signature\":\"").unwrap() + 13;
    &message[at..at + message[at..].find('"').unwrap()]
}

/// A session logged on, subscribed and reconciled with `open` (the
/// `result` of `openOrders.status` for BTCUSDT, then ETHBTC's empty).
pub(super) fn ready(open: &str) -> BinanceSession {
    let (c, _) = ed25519();
    let mut s = BinanceSession::new(config(), c).unwrap();
    let mut out = Out::new(8192, 32);
    s.on_open(now(), &mut out);
    feed(
        &mut s,
        r#"{"id":1,"status":200,"result":{"apiKey":"KEY","authorizedSince":1,"connectedSince":1,"returnRateLimits":false,"serverTime":1,"userDataStream":false}}"#,
    );
    feed(
        &mut s,
        r#"{"id":2,"status":200,"result":{"subscriptionId":0}}"#,
    );
    feed(
        &mut s,
        &format!(r#"{{"id":3,"status":200,"result":{open}}}"#),
    );
    feed(&mut s, r#"{"id":4,"status":200,"result":[]}"#);
    assert_eq!(s.state(), State::Ready);
    s
}

pub(super) fn limit(side: Side, price: i64, size: i64) -> Limit {
    Limit {
        instrument: InstrumentId(0),
        side,
        price,
        size,
        tif: TimeInForce::GoodTillCancel,
        post_only: false,
    }
}

pub(super) fn event(cid: u64, venue: &str, kind: OrderKind, ms: u64, tsc: u64) -> OrderEvent {
    OrderEvent {
        cid: Some(ClientOrderId(cid)),
        instrument: InstrumentId(0),
        venue_order: VenueOrderId::new(venue),
        kind,
        venue_time_ns: ms * 1_000_000,
        sent_tsc: tsc,
    }
}
