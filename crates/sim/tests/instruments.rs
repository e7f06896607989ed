//! Every venue's instrument list over HTTP, as a client fetches it at
//! start: the documented path and query, the documented shape (parsed
//! here, the fields a client reads checked), the venue's error for a
//! query it refuses, and the REST weight Binance charges for it.
//!
//! Each simulator serves its venue's whole catalogue
//! ([`SimInstrument::listed`]) on loopback, plain HTTP.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;
use tickwire_sim::{SimConfig, SimInstrument, Simulator, Venue};

/// A simulator of `venue` serving `instruments`.
fn start(venue: Venue, instruments: Vec<SimInstrument>) -> Simulator {
    Simulator::start(SimConfig {
        instruments,
        ..SimConfig::new(venue)
    })
    .expect("the simulator starts")
}

/// A simulator of `venue`'s whole catalogue.
fn catalogue(venue: Venue) -> Simulator {
    start(venue, SimInstrument::listed(venue))
}

/// An answer: status, headers (lower-case names), body parsed.
struct Answer {
    status: u16,
    head: String,
    body: Value,
}

/// `GET path` (query included) from `sim`, HTTP/1.1, read to the end.
fn get(sim: &Simulator, path: &str) -> Answer {
    let mut s = TcpStream::connect(sim.addr()).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("the answer");
    let raw = String::from_utf8(raw).expect("utf-8");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status");
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
    Answer {
        status,
        head: head.to_ascii_lowercase(),
        body,
    }
}

/// The strings at `key` of every object of `array`, sorted.
fn names(array: &Value, key: &str) -> Vec<String> {
    let mut v: Vec<String> = array
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {array}"))
        .iter()
        .map(|o| o[key].as_str().unwrap_or_default().to_owned())
        .collect();
    v.sort();
    v
}

/// The catalogue's symbols of `venue`, sorted.
fn symbols(venue: Venue) -> Vec<String> {
    let mut v: Vec<String> = SimInstrument::listed(venue)
        .into_iter()
        .map(|i| i.symbol)
        .collect();
    v.sort();
    v
}

/// The object of `array` whose `key` is `value`.
fn find<'a>(array: &'a Value, key: &str, value: &str) -> &'a Value {
    array
        .as_array()
        .and_then(|a| a.iter().find(|o| o[key] == value))
        .unwrap_or_else(|| panic!("no {key}={value} in {array}"))
}

/// The filter of `filterType` `kind` of a Binance symbol.
fn filter<'a>(symbol: &'a Value, kind: &str) -> &'a Value {
    find(&symbol["filters"], "filterType", kind)
}

#[test]
fn binance_spot_exchange_info() {
    let sim = catalogue(Venue::BinanceSpot);
    let all = get(&sim, "/api/v3/exchangeInfo");
    assert_eq!(all.status, 200);
    // Weight 20 ("Exchange information", Spot REST API).
    assert!(
        all.head.contains("x-mbx-used-weight-1m: 20\r"),
        "{}",
        all.head
    );
    assert_eq!(
        names(&all.body["symbols"], "symbol"),
        symbols(Venue::BinanceSpot)
    );
    let btc = find(&all.body["symbols"], "symbol", "BTCUSDT");
    assert_eq!(btc["status"], "TRADING");
    assert_eq!(
        (&btc["baseAsset"], &btc["quoteAsset"]),
        (&"BTC".into(), &"USDT".into())
    );
    assert_eq!(filter(btc, "PRICE_FILTER")["tickSize"], "0.01000000");
    assert_eq!(filter(btc, "LOT_SIZE")["stepSize"], "0.00001000");
    let ethbtc = find(&all.body["symbols"], "symbol", "ETHBTC");
    assert_eq!(filter(ethbtc, "PRICE_FILTER")["tickSize"], "0.00001000");

    let one = get(&sim, "/api/v3/exchangeInfo?symbol=SOLUSDT");
    assert_eq!(names(&one.body["symbols"], "symbol"), ["SOLUSDT"]);
    assert!(
        one.head.contains("x-mbx-used-weight-1m: 40\r"),
        "{}",
        one.head
    );
    let two = get(
        &sim,
        "/api/v3/exchangeInfo?symbols=%5B%22BTCUSDT%22,%22ETHBTC%22%5D",
    );
    assert_eq!(names(&two.body["symbols"], "symbol"), ["BTCUSDT", "ETHBTC"]);
    let two = get(&sim, r#"/api/v3/exchangeInfo?symbols=["BNBUSDT"]"#);
    assert_eq!(names(&two.body["symbols"], "symbol"), ["BNBUSDT"]);

    let refused = |path: &str, code: i64| {
        let a = get(&sim, path);
        assert_eq!(
            (a.status, &a.body["code"]),
            (400, &code.into()),
            "{path}: {}",
            a.body
        );
        a.body["msg"].as_str().unwrap().to_owned()
    };
    assert_eq!(
        refused("/api/v3/exchangeInfo?symbol=FOOUSDT", -1121),
        "Invalid symbol."
    );
    refused(
        r#"/api/v3/exchangeInfo?symbols=["BTCUSDT","FOOUSDT"]"#,
        -1121,
    );
    assert!(refused("/api/v3/exchangeInfo?symbol=btcusdt", -1100).contains("'symbol'"));
    refused(
        "/api/v3/exchangeInfo?symbol=BTCUSDT&symbols=[%22BTCUSDT%22]",
        -1128,
    );
    // The depth snapshot reads its symbol the same way.
    assert_eq!(
        refused("/api/v3/depth?symbol=FOOUSDT", -1121),
        "Invalid symbol."
    );
    refused("/api/v3/depth?symbol=btcusdt", -1100);
    assert_eq!(
        get(&sim, "/api/v3/depth?symbol=SOLUSDT&limit=5").status,
        200
    );
}

#[test]
fn binance_futures_exchange_info() {
    let usdm = catalogue(Venue::BinanceUsdM);
    let a = get(&usdm, "/fapi/v1/exchangeInfo");
    assert_eq!(a.status, 200);
    // Weight 1 ("Exchange Information", USD-M and COIN-M).
    assert!(a.head.contains("x-mbx-used-weight-1m: 1\r"), "{}", a.head);
    assert_eq!(
        names(&a.body["symbols"], "symbol"),
        symbols(Venue::BinanceUsdM)
    );
    let btc = find(&a.body["symbols"], "symbol", "BTCUSDT");
    assert_eq!(
        (&btc["status"], &btc["contractType"]),
        (&"TRADING".into(), &"PERPETUAL".into())
    );
    assert_eq!(
        (&btc["pricePrecision"], &btc["quantityPrecision"]),
        (&1.into(), &3.into())
    );
    assert_eq!(filter(btc, "PRICE_FILTER")["tickSize"], "0.1");
    assert_eq!(filter(btc, "LOT_SIZE")["stepSize"], "0.001");

    let coinm = catalogue(Venue::BinanceCoinM);
    let a = get(&coinm, "/dapi/v1/exchangeInfo");
    assert_eq!(
        names(&a.body["symbols"], "symbol"),
        symbols(Venue::BinanceCoinM)
    );
    let btc = find(&a.body["symbols"], "symbol", "BTCUSD_PERP");
    assert_eq!(btc["contractStatus"], "TRADING");
    assert_eq!(btc["contractSize"], 100);
    assert_eq!(filter(btc, "LOT_SIZE")["stepSize"], "1");
    // Each market serves its own path only.
    assert_eq!(get(&coinm, "/fapi/v1/exchangeInfo").status, 404);
}

#[test]
fn okx_instruments() {
    let sim = catalogue(Venue::Okx);
    let spot = get(&sim, "/api/v5/public/instruments?instType=SPOT");
    assert_eq!((spot.status, &spot.body["code"]), (200, &"0".into()));
    let btc = find(&spot.body["data"], "instId", "BTC-USDT");
    assert_eq!(
        (&btc["baseCcy"], &btc["quoteCcy"]),
        (&"BTC".into(), &"USDT".into())
    );
    assert_eq!(
        (&btc["tickSz"], &btc["lotSz"], &btc["state"]),
        (&"0.01".into(), &"0.00001".into(), &"live".into())
    );
    let swap = get(&sim, "/api/v5/public/instruments?instType=SWAP");
    let perp = find(&swap.body["data"], "instId", "BTC-USDT-SWAP");
    assert_eq!(
        (&perp["ctVal"], &perp["ctValCcy"], &perp["settleCcy"]),
        (&"0.01".into(), &"BTC".into(), &"USDT".into())
    );
    assert_eq!(
        (&perp["tickSz"], &perp["lotSz"]),
        (&"0.1".into(), &"0.01".into())
    );
    let mut both = names(&spot.body["data"], "instId");
    both.extend(names(&swap.body["data"], "instId"));
    both.sort();
    assert_eq!(both, symbols(Venue::Okx));
    let one = get(
        &sim,
        "/api/v5/public/instruments?instType=SPOT&instId=SOL-USDT",
    );
    assert_eq!(names(&one.body["data"], "instId"), ["SOL-USDT"]);
    for (path, code) in [
        ("/api/v5/public/instruments", "50014"),
        ("/api/v5/public/instruments?instType=spot", "51000"),
        (
            "/api/v5/public/instruments?instType=SPOT&instId=FOO-USDT",
            "51001",
        ),
        (
            "/api/v5/public/instruments?instType=SPOT&instId=BTC-USDT-SWAP",
            "51001",
        ),
    ] {
        let a = get(&sim, path);
        assert_eq!((a.status, &a.body["code"]), (400, &code.into()), "{path}");
        assert_eq!(a.body["data"], serde_json::json!([]));
    }
}

#[test]
fn bybit_instruments_info() {
    for (venue, category) in [
        (Venue::BybitSpot, "spot"),
        (Venue::BybitLinear, "linear"),
        (Venue::BybitInverse, "inverse"),
    ] {
        let sim = catalogue(venue);
        let a = get(
            &sim,
            &format!("/v5/market/instruments-info?category={category}"),
        );
        assert_eq!((a.status, &a.body["retCode"]), (200, &0.into()));
        assert_eq!(a.body["result"]["category"], category);
        let list = &a.body["result"]["list"];
        assert_eq!(names(list, "symbol"), symbols(venue), "{venue:?}");
        let first = &SimInstrument::listed(venue)[0];
        let i = find(list, "symbol", &first.symbol);
        assert_eq!(i["status"], "Trading");
        assert!(i["priceFilter"]["tickSize"].is_string());
        if venue == Venue::BybitSpot {
            assert_eq!(i["lotSizeFilter"]["basePrecision"], "0.00001");
            assert_eq!(i["priceFilter"]["tickSize"], "0.01");
        } else {
            assert!(i["lotSizeFilter"]["qtyStep"].is_string());
        }
        if venue == Venue::BybitLinear {
            assert_eq!(
                (&i["contractType"], &i["settleCoin"]),
                (&"LinearPerpetual".into(), &"USDT".into())
            );
            assert_eq!(i["lotSizeFilter"]["qtyStep"], "0.001");
        }
        if venue == Venue::BybitInverse {
            assert_eq!(i["contractType"], "InversePerpetual");
        }
        // A symbol Bybit does not list: an empty list, not an error.
        let none = get(
            &sim,
            &format!("/v5/market/instruments-info?category={category}&symbol=FOOUSDT"),
        );
        assert_eq!((none.status, &none.body["retCode"]), (200, &0.into()));
        assert_eq!(none.body["result"]["list"], serde_json::json!([]));
        let bad = get(&sim, "/v5/market/instruments-info?category=futures");
        assert_eq!(bad.body["retCode"], 10001);
    }
}

#[test]
fn coinbase_products() {
    let sim = catalogue(Venue::Coinbase);
    let a = get(&sim, "/api/v3/brokerage/market/products");
    assert_eq!(a.status, 200);
    // Every product, each `-USD` one followed by its `-USDC` alias.
    let listed: Vec<String> = symbols(Venue::Coinbase)
        .into_iter()
        .flat_map(|s| {
            let alias = s.strip_suffix("-USD").map(|b| format!("{b}-USDC"));
            std::iter::once(s).chain(alias)
        })
        .collect();
    assert_eq!(names(&a.body["products"], "product_id"), listed);
    assert_eq!(a.body["num_products"], listed.len());
    let btc = find(&a.body["products"], "product_id", "BTC-USD");
    assert_eq!(
        (&btc["status"], &btc["trading_disabled"]),
        (&"online".into(), &false.into())
    );
    assert_eq!(
        (&btc["price_increment"], &btc["base_increment"]),
        (&"0.01".into(), &"0.00000001".into())
    );
    assert_eq!(btc["alias_to"], serde_json::json!(["BTC-USDC"]));
    let price: f64 = btc["price"].as_str().unwrap().parse().unwrap();
    assert!((50_000.0..70_000.0).contains(&price), "{price}");
    let two = get(
        &sim,
        "/api/v3/brokerage/market/products?product_ids=SOL-USD&product_ids=FOO-USD",
    );
    assert_eq!(names(&two.body["products"], "product_id"), ["SOL-USD"]);
    let one = get(&sim, "/api/v3/brokerage/market/products/BTC-EUR");
    assert_eq!(
        (one.status, &one.body["product_id"]),
        (200, &"BTC-EUR".into())
    );
    let alias = get(&sim, "/api/v3/brokerage/market/products/BTC-USDC");
    assert_eq!(
        (&alias.body["product_id"], &alias.body["alias"]),
        (&"BTC-USDC".into(), &"BTC-USD".into())
    );
    for id in ["FOO-USD", "btc-usd"] {
        let none = get(&sim, &format!("/api/v3/brokerage/market/products/{id}"));
        assert_eq!(
            (none.status, &none.body["error"]),
            (404, &"NOT_FOUND".into()),
            "{id}"
        );
    }
}

#[test]
fn deribit_get_instruments() {
    let sim = catalogue(Venue::Deribit);
    let path = "/api/v2/public/get_instruments";
    let any = get(&sim, &format!("{path}?currency=any"));
    assert_eq!((any.status, &any.body["jsonrpc"]), (200, &"2.0".into()));
    assert_eq!(
        names(&any.body["result"], "instrument_name"),
        symbols(Venue::Deribit)
    );
    let btc = get(&sim, &format!("{path}?currency=BTC&kind=future"));
    assert_eq!(
        names(&btc.body["result"], "instrument_name"),
        ["BTC-PERPETUAL"]
    );
    let perp = &btc.body["result"][0];
    assert_eq!(
        (&perp["kind"], &perp["is_active"], &perp["state"]),
        (&"future".into(), &true.into(), &"open".into())
    );
    assert_eq!(
        (
            &perp["tick_size"],
            &perp["contract_size"],
            &perp["min_trade_amount"]
        ),
        (&0.1.into(), &10.0.into(), &10.0.into())
    );
    assert_eq!(
        (&perp["base_currency"], &perp["settlement_currency"]),
        (&"BTC".into(), &"BTC".into())
    );
    let usdc = get(&sim, &format!("{path}?currency=USDC"));
    assert_eq!(
        names(&usdc.body["result"], "instrument_name"),
        ["SOL_USDC-PERPETUAL"]
    );
    assert_eq!(usdc.body["result"][0]["instrument_type"], "linear");
    let options = get(&sim, &format!("{path}?currency=BTC&kind=option"));
    assert_eq!(options.body["result"], serde_json::json!([]));
    for (query, param) in [
        ("currency=FOO", "currency"),
        ("", "currency"),
        ("currency=BTC&kind=perp", "kind"),
    ] {
        let a = get(&sim, &format!("{path}?{query}"));
        assert_eq!(
            (a.status, &a.body["error"]["code"]),
            (400, &(-32602).into()),
            "{query}"
        );
        assert_eq!(a.body["error"]["data"]["param"], param);
    }
}

#[test]
fn kraken_asset_pairs() {
    let sim = catalogue(Venue::Kraken);
    let a = get(&sim, "/0/public/AssetPairs");
    assert_eq!((a.status, &a.body["error"]), (200, &serde_json::json!([])));
    let result = a.body["result"].as_object().unwrap();
    assert_eq!(result.len(), symbols(Venue::Kraken).len());
    let btc = &result["XXBTZUSD"];
    assert_eq!(
        (&btc["altname"], &btc["wsname"]),
        (&"XBTUSD".into(), &"XBT/USD".into())
    );
    assert_eq!(
        (
            &btc["pair_decimals"],
            &btc["lot_decimals"],
            &btc["tick_size"]
        ),
        (&1.into(), &8.into(), &"0.1".into())
    );
    assert_eq!(
        (&btc["ordermin"], &btc["status"]),
        (&"0.0001".into(), &"online".into())
    );
    assert!(result.contains_key("SOLUSD") && result.contains_key("XXBTZEUR"));
    let one = get(&sim, "/0/public/AssetPairs?pair=XBTUSD,SOLUSD");
    assert_eq!(one.body["result"].as_object().unwrap().len(), 2);
    let none = get(&sim, "/0/public/AssetPairs?pair=FOOUSD");
    assert_eq!(
        none.body["error"],
        serde_json::json!(["EQuery:Unknown asset pair"])
    );
}

/// A simulator started with its own instrument (outside the catalogue)
/// lists it, read from its symbol, and nothing it does not serve.
#[test]
fn a_tests_own_instrument_is_listed_and_only_what_is_served() {
    let own = SimInstrument {
        symbol: "DOGEUSDT".into(),
        price_scale: 5,
        size_scale: 0,
        mid: 15_000,
        levels: 50,
    };
    let sim = start(Venue::BinanceSpot, vec![SimInstrument::btcusdt(), own]);
    let a = get(&sim, "/api/v3/exchangeInfo");
    assert_eq!(names(&a.body["symbols"], "symbol"), ["BTCUSDT", "DOGEUSDT"]);
    let doge = find(&a.body["symbols"], "symbol", "DOGEUSDT");
    assert_eq!(
        (&doge["baseAsset"], &doge["quoteAsset"]),
        (&"DOGE".into(), &"USDT".into())
    );
    assert_eq!(filter(doge, "PRICE_FILTER")["tickSize"], "0.00001000");
    assert_eq!(filter(doge, "LOT_SIZE")["stepSize"], "1.00000000");
    // SOLUSDT is in the catalogue, but this simulator does not serve it.
    let sol = get(&sim, "/api/v3/exchangeInfo?symbol=SOLUSDT");
    assert_eq!((sol.status, &sol.body["code"]), (400, &(-1121).into()));
}
