//! For every venue, through its protocol as the server drives it: the
//! instrument list names exactly what the simulator serves (here the
//! venue's whole catalogue), a listed instrument outside the pair streams,
//! and a symbol the list does not name is refused the venue's way, or
//! acknowledged and silent where that is the venue's way (each rule's
//! source is with the venue's module).

use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::Value;
use tickwire_venues::Venue;

use crate::market::{SimInstrument, Step};
use crate::protocol::{Market, Out, Protocol};
use crate::testutil::market_of;
use crate::{binance, bybit, coinbase, deribit, kraken, okx};

/// What a client saw: the replies to `requests` (and what came on
/// open), then the market data of some steps of every instrument.
struct Seen {
    replies: Vec<String>,
    data: Vec<String>,
}

/// A market of `venue`'s whole catalogue.
fn catalogue_market(venue: Venue, rng: &mut StdRng) -> Market {
    market_of(SimInstrument::listed(venue), rng)
}

/// A client of `p` at `path` sends `requests`, then the market steps each
/// instrument a few times.
fn session<P: Protocol>(p: &P, venue: Venue, path: &str, requests: &[&str]) -> Seen {
    let mut rng = StdRng::seed_from_u64(7);
    let mut market = catalogue_market(venue, &mut rng);
    let Ok(mut client) = p.open(path, &market) else {
        panic!("{venue:?}: {path} refused");
    };
    let mut out = Out::default();
    p.on_open(&mut client, &mut market, &mut out);
    for r in requests {
        p.on_text(&mut client, r, &mut market, &mut out);
    }
    let replies = out.items.drain(..).map(|(t, _)| t.into_text()).collect();
    let mut data = Vec::new();
    let mut step = Step::default();
    let count = market.instruments.len();
    for k in 0..count * 6 {
        market.step(k % count, &mut rng, k % 2 == 0, &mut step);
        let mut out = Out::default();
        p.on_step(&mut client, &step, &market, &mut out);
        data.extend(out.items.into_iter().map(|(t, _)| t.into_text()));
    }
    Seen { replies, data }
}

/// `p`'s answer to `GET path` over a market of `venue`'s catalogue, parsed.
fn list<P: Protocol>(p: &P, venue: Venue, path: &str) -> (u16, Value) {
    let market = catalogue_market(venue, &mut StdRng::seed_from_u64(1));
    let Some(r) = p.instruments(path, &market) else {
        panic!("{venue:?}: {path} is not a list request");
    };
    let body = serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {}", r.body));
    (r.status, body)
}

/// The strings at `key` of every object of `array`.
fn names(array: &Value, key: &str) -> Vec<String> {
    array
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {array}"))
        .iter()
        .map(|o| o[key].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The catalogue's symbols of `venue`, sorted.
fn catalogue(venue: Venue) -> Vec<String> {
    let mut s: Vec<String> = SimInstrument::listed(venue)
        .into_iter()
        .map(|i| i.symbol)
        .collect();
    s.sort();
    s
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// Binance acknowledges a stream of a symbol it does not list, and then
/// sends nothing (it validates only the syntax: Binance.Net issue 620);
/// stream names are lower case ("All symbols for streams are
/// lowercase"), so an upper-case one is a stream of no symbol.
#[test]
fn binance_lists_what_streams_and_is_silent_on_the_rest() {
    for venue in [Venue::BinanceSpot, Venue::BinanceUsdM, Venue::BinanceCoinM] {
        let p = binance::Binance::new(venue);
        let path = binance::listing_path(venue);
        let (status, v) = list(&p, venue, path);
        assert_eq!(status, 200);
        assert_eq!(sorted(names(&v["symbols"], "symbol")), catalogue(venue));
        let extra = SimInstrument::listed(venue)[2].symbol.clone();
        let sub = |stream: &str| {
            format!(r#"{{"method":"SUBSCRIBE","params":["{stream}@depth@100ms"],"id":1}}"#)
        };
        let listed = session(&p, venue, "/ws", &[&sub(&extra.to_ascii_lowercase())]);
        assert_eq!(listed.replies, [r#"{"result":null,"id":1}"#]);
        assert!(
            listed
                .data
                .iter()
                .any(|d| d.contains(&format!(r#""s":"{extra}""#))),
            "{venue:?}: {extra} streams"
        );
        for stream in ["foousdt", extra.as_str()] {
            let seen = session(&p, venue, "/ws", &[&sub(stream)]);
            assert_eq!(
                seen.replies,
                [r#"{"result":null,"id":1}"#],
                "{venue:?} {stream}"
            );
            assert!(seen.data.is_empty(), "{venue:?} {stream}: silent");
        }
    }
}

/// OKX refuses a channel of an instrument it does not list with 60018
/// (see `okx/mod.rs`); its list names every instrument served, spot and
/// swap.
#[test]
fn okx_lists_what_streams_and_refuses_the_rest() {
    let venue = Venue::Okx;
    let p = okx::Okx::new();
    let mut all = Vec::new();
    for kind in ["SPOT", "SWAP"] {
        let (status, v) = list(
            &p,
            venue,
            &format!("/api/v5/public/instruments?instType={kind}"),
        );
        assert_eq!((status, &v["code"]), (200, &Value::from("0")));
        assert!(names(&v["data"], "instType").iter().all(|t| t == kind));
        all.extend(names(&v["data"], "instId"));
    }
    assert_eq!(sorted(all), catalogue(venue));
    let sub = |id: &str| {
        format!(r#"{{"op":"subscribe","args":[{{"channel":"books","instId":"{id}"}}]}}"#)
    };
    let listed = session(&p, venue, "/ws/v5/public", &[&sub("BTC-USDT-SWAP")]);
    assert!(
        listed.replies[0].contains(r#""event":"subscribe""#),
        "{:?}",
        listed.replies
    );
    assert!(
        listed
            .data
            .iter()
            .any(|d| d.contains(r#""instId":"BTC-USDT-SWAP""#))
    );
    for id in ["FOO-USDT", "btc-usdt-swap"] {
        let seen = session(&p, venue, "/ws/v5/public", &[&sub(id)]);
        let e: Value = serde_json::from_str(&seen.replies[0]).unwrap();
        assert_eq!(
            (&e["event"], &e["code"]),
            (&"error".into(), &"60018".into()),
            "{id}"
        );
        assert!(
            e["msg"]
                .as_str()
                .unwrap()
                .contains(&format!("instId:{id} doesn't exist"))
        );
        assert!(seen.data.is_empty());
    }
}

/// Bybit refuses a topic of a symbol it does not list, the whole request
/// (see `bybit/mod.rs`), and its symbols are upper case.
#[test]
fn bybit_lists_what_streams_and_refuses_the_rest() {
    for (venue, category, path) in [
        (Venue::BybitSpot, "spot", "/v5/public/spot"),
        (Venue::BybitLinear, "linear", "/v5/public/linear"),
        (Venue::BybitInverse, "inverse", "/v5/public/inverse"),
    ] {
        let p = bybit::Bybit::new(venue);
        let (status, v) = list(
            &p,
            venue,
            &format!("/v5/market/instruments-info?category={category}"),
        );
        assert_eq!((status, &v["retCode"]), (200, &Value::from(0)));
        assert_eq!(
            sorted(names(&v["result"]["list"], "symbol")),
            catalogue(venue)
        );
        let extra = SimInstrument::listed(venue)[2].symbol.clone();
        let sub =
            |s: &str| format!(r#"{{"op":"subscribe","args":["orderbook.50.{s}"],"req_id":"1"}}"#);
        let listed = session(&p, venue, path, &[&sub(&extra)]);
        assert!(
            listed.replies[0].contains(r#""success":true"#),
            "{:?}",
            listed.replies
        );
        assert!(
            listed
                .data
                .iter()
                .any(|d| d.contains(&format!(r#""s":"{extra}""#)))
        );
        for s in ["FOOUSDT".to_owned(), extra.to_ascii_lowercase()] {
            let seen = session(&p, venue, path, &[&sub(&s)]);
            let r: Value = serde_json::from_str(&seen.replies[0]).unwrap();
            assert_eq!(r["success"], false, "{venue:?} {s}");
            assert!(
                r["ret_msg"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("orderbook.50.{s}"))
            );
            assert!(seen.data.is_empty());
        }
    }
}

/// Kraken refuses a symbol it does not list with "Currency pair not
/// supported <symbol>" (see `kraken/mod.rs`); its `instrument` channel lists
/// every pair served `online`, and nothing else as `online`.
#[test]
fn kraken_lists_what_streams_and_refuses_the_rest() {
    let venue = Venue::Kraken;
    let p = kraken::Kraken::new();
    let seen = session(
        &p,
        venue,
        "/v2",
        &[r#"{"method":"subscribe","params":{"channel":"instrument"}}"#],
    );
    let snapshot = seen
        .replies
        .iter()
        .map(|r| serde_json::from_str::<Value>(r).unwrap())
        .find(|v| v["channel"] == "instrument" && v["type"] == "snapshot")
        .expect("an instrument snapshot");
    let online: Vec<String> = snapshot["data"]["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "online")
        .map(|p| p["symbol"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(sorted(online), catalogue(venue));
    // The fields a client reads, from the simulated instrument's scales.
    let sol = snapshot["data"]["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["symbol"] == "SOL/USD")
        .unwrap();
    assert_eq!(
        (&sol["base"], &sol["quote"]),
        (&"SOL".into(), &"USD".into())
    );
    assert_eq!(
        (&sol["price_precision"], &sol["qty_precision"]),
        (&2.into(), &8.into())
    );
    assert_eq!(
        (&sol["price_increment"], &sol["qty_increment"]),
        (&0.01.into(), &1e-8.into())
    );
    assert_eq!(sol["qty_min"], 0.0001);
    let sub = |s: &str| {
        format!(r#"{{"method":"subscribe","params":{{"channel":"book","symbol":["{s}"]}}}}"#)
    };
    let listed = session(&p, venue, "/v2", &[&sub("SOL/USD")]);
    assert!(
        listed
            .replies
            .iter()
            .any(|r| r.contains(r#""success":true"#))
    );
    assert!(
        listed
            .data
            .iter()
            .any(|d| d.contains(r#""symbol":"SOL/USD""#))
    );
    // A filler pair of the list (delisted) is refused as an unknown one.
    for s in ["FOO/USD", "BTCUSDT", "SIM000/USD"] {
        let seen = session(&p, venue, "/v2", &[&sub(s)]);
        let e = seen
            .replies
            .iter()
            .find(|r| r.contains(r#""success":false"#))
            .unwrap();
        let e: Value = serde_json::from_str(e).unwrap();
        assert_eq!(e["error"], format!("Currency pair not supported {s}"));
        assert_eq!(e["symbol"], s);
        assert!(seen.data.is_empty());
    }
}

/// Coinbase leaves a product it does not list out of the acknowledged
/// set (see `coinbase/mod.rs`), and sends nothing for it.
#[test]
fn coinbase_lists_what_streams_and_leaves_out_the_rest() {
    let venue = Venue::Coinbase;
    let p = coinbase::Coinbase::new();
    let (status, v) = list(&p, venue, "/api/v3/brokerage/market/products");
    assert_eq!(status, 200);
    // Every product, and each `-USD` one's `-USDC` alias (its `alias`
    // naming the `-USD` product).
    let mut expected = catalogue(venue);
    for s in catalogue(venue) {
        if let Some(base) = s.strip_suffix("-USD") {
            expected.push(format!("{base}-USDC"));
        }
    }
    expected.sort();
    assert_eq!(sorted(names(&v["products"], "product_id")), expected);
    for p in v["products"].as_array().unwrap() {
        let id = p["product_id"].as_str().unwrap();
        let alias = id.strip_suffix("-USDC").map(|b| format!("{b}-USD"));
        assert_eq!(
            p["alias"].as_str(),
            Some(alias.as_deref().unwrap_or("")),
            "{p}"
        );
    }
    let sub =
        |s: &str| format!(r#"{{"type":"subscribe","product_ids":["{s}"],"channel":"level2"}}"#);
    let listed = session(&p, venue, "/", &[&sub("SOL-USD")]);
    assert!(
        listed
            .replies
            .iter()
            .any(|r| r.contains(r#""level2":["SOL-USD"]"#)),
        "{:?}",
        listed.replies
    );
    assert!(
        listed
            .data
            .iter()
            .any(|d| d.contains(r#""product_id":"SOL-USD""#))
    );
    for s in ["FOO-USD", "sol-usd"] {
        let seen = session(&p, venue, "/", &[&sub(s)]);
        assert!(
            seen.replies.iter().any(|r| r.contains(r#""level2":[]"#)),
            "{s}: {:?}",
            seen.replies
        );
        assert!(
            seen.data
                .iter()
                .all(|d| !d.contains(r#""channel":"l2_data""#))
        );
    }
}

/// Deribit answers a subscription with the channels it subscribed, an
/// unknown instrument's left out (see `deribit/mod.rs`); its
/// `public/get_instruments` names every instrument served.
#[test]
fn deribit_lists_what_streams_and_leaves_out_the_rest() {
    let venue = Venue::Deribit;
    let p = deribit::Deribit::new();
    let ask =
        r#"{"jsonrpc":"2.0","id":3,"method":"public/get_instruments","params":{"currency":"any"}}"#;
    let seen = session(&p, venue, "/ws/api/v2", &[ask]);
    let v: Value = serde_json::from_str(&seen.replies[0]).unwrap();
    assert_eq!(v["id"], 3);
    assert_eq!(
        sorted(names(&v["result"], "instrument_name")),
        catalogue(venue)
    );
    let eth = v["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["instrument_name"] == "ETH-PERPETUAL")
        .unwrap();
    assert_eq!(
        (&eth["kind"], &eth["is_active"], &eth["instrument_type"]),
        (&"future".into(), &true.into(), &"reversed".into())
    );
    assert_eq!(
        (
            &eth["tick_size"],
            &eth["min_trade_amount"],
            &eth["contract_size"]
        ),
        (&0.01.into(), &1.0.into(), &1.0.into())
    );
    // A currency it does not know: -32602, naming the parameter.
    let bad = r#"{"jsonrpc":"2.0","id":4,"method":"public/get_instruments","params":{"currency":"DOGE"}}"#;
    let seen = session(&p, venue, "/ws/api/v2", &[bad]);
    let e: Value = serde_json::from_str(&seen.replies[0]).unwrap();
    assert_eq!(
        (&e["id"], &e["error"]["code"], &e["error"]["data"]["param"]),
        (&4.into(), &(-32602).into(), &"currency".into())
    );
    let sub = |s: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{{"channels":["book.{s}.100ms"]}}}}"#
        )
    };
    let listed = session(&p, venue, "/ws/api/v2", &[&sub("SOL_USDC-PERPETUAL")]);
    let r: Value = serde_json::from_str(&listed.replies[0]).unwrap();
    assert_eq!(
        r["result"],
        serde_json::json!(["book.SOL_USDC-PERPETUAL.100ms"])
    );
    assert!(
        listed
            .data
            .iter()
            .any(|d| d.contains("book.SOL_USDC-PERPETUAL.100ms"))
    );
    for s in ["FOO-PERPETUAL", "btc-perpetual"] {
        let seen = session(&p, venue, "/ws/api/v2", &[&sub(s)]);
        let r: Value = serde_json::from_str(&seen.replies[0]).unwrap();
        assert_eq!(r["result"], serde_json::json!([]), "{s}");
        assert!(seen.data.is_empty());
    }
}
