//! Each parser on answers written after the venues' documented examples
//! (shortened, values changed), and the decimals of increments.

use super::*;

fn one<'a>(list: &'a [Listed], symbol: &str) -> &'a Listed {
    list.iter().find(|l| l.symbol == symbol).unwrap()
}

#[test]
fn decimals_of_increments_are_exact() {
    for (text, d) in [
        ("0.01", 2),
        ("0.01000000", 2),
        ("0.00000100", 6),
        ("1e-8", 8),
        ("1E-08", 8),
        ("1e-08", 8),
        ("2.5e-3", 4),
        ("0.5", 1),
        ("5", 0),
        ("10", 0),
        ("10.000", 0),
        ("1e2", 0),
        ("0.0001", 4),
        (".25", 2),
    ] {
        assert_eq!(increment_decimals(text), Ok(d), "{text}");
    }
    assert_eq!(increment_decimals("0.00000000"), Err(BadIncrement::Zero));
    assert_eq!(increment_decimals("0"), Err(BadIncrement::Zero));
    for bad in ["", ".", "-0.1", "0.1.2", "1e", "1e-", "abc", "0x10", " 1"] {
        assert_eq!(
            increment_decimals(bad),
            Err(BadIncrement::Syntax),
            "{bad:?}"
        );
    }
    assert_eq!(increment_decimals("1e-19"), Err(BadIncrement::TooFine));
    // An exponent at the edge of i64 is too fine, not an overflow.
    assert_eq!(
        increment_decimals("1e-9223372036854775808"),
        Err(BadIncrement::TooFine)
    );
    assert_eq!(increment_decimals("1e9223372036854775807"), Ok(0));
}

proptest::proptest! {
    /// `d` zeros after the point, then a non-zero digit, then trailing
    /// zeros, in plain and exponent form, give `d + 1` decimals.
    #[test]
    fn decimals_hold_for_any_written_form(d in 0u8..17, digit in 1u8..10, trailing in 0usize..6) {
        let plain = format!("0.{}{digit}{}", "0".repeat(usize::from(d)), "0".repeat(trailing));
        proptest::prop_assert_eq!(increment_decimals(&plain), Ok(d + 1));
        let exp = format!("{digit}e-{}", d + 1);
        proptest::prop_assert_eq!(increment_decimals(&exp), Ok(d + 1));
    }
}

#[test]
fn binance_spot_and_futures_exchange_info() {
    let spot = r#"{"timezone":"UTC","serverTime":1700000000000,"rateLimits":[],
      "exchangeFilters":[],"symbols":[
      {"symbol":"ETHBTC","status":"TRADING","baseAsset":"ETH","baseAssetPrecision":8,
       "quoteAsset":"BTC","quotePrecision":8,"orderTypes":["LIMIT"],
       "filters":[{"filterType":"PRICE_FILTER","minPrice":"0.00001000","maxPrice":"922327.00000000","tickSize":"0.00001000"},
                  {"filterType":"LOT_SIZE","minQty":"0.00010000","maxQty":"100000.00000000","stepSize":"0.00010000"},
                  {"filterType":"ICEBERG_PARTS","limit":10}],
       "permissions":[],"permissionSets":[]},
      {"symbol":"LUNAUSDT","status":"BREAK","filters":[
                  {"filterType":"PRICE_FILTER","minPrice":"0","maxPrice":"0","tickSize":"0.00000000"},
                  {"filterType":"LOT_SIZE","minQty":"1.00000000","maxQty":"900.00000000","stepSize":"1.00000000"}]}]}"#;
    let l = binance::parse(spot).unwrap();
    assert_eq!(l.len(), 2);
    let eth = one(&l, "ETHBTC");
    assert!(eth.trading);
    assert_eq!(eth.tick_size.as_deref(), Some("0.00001000"));
    assert_eq!((eth.price_decimals, eth.size_decimals), (Some(5), Some(4)));
    let luna = one(&l, "LUNAUSDT");
    assert!(!luna.trading);
    assert_eq!(luna.status, "BREAK");
    // A zero tick size is "no price rule": no decimals from it.
    assert_eq!((luna.price_decimals, luna.size_decimals), (None, Some(0)));

    let coinm = r#"{"symbols":[{"symbol":"BTCUSD_PERP","pair":"BTCUSD","contractType":"PERPETUAL",
      "contractStatus":"TRADING","contractSize":100,"filters":[
        {"filterType":"PRICE_FILTER","tickSize":"0.1","minPrice":"1000","maxPrice":"4520958"},
        {"filterType":"LOT_SIZE","stepSize":"1","minQty":"1","maxQty":"1000000"}]}]}"#;
    let l = binance::parse(coinm).unwrap();
    assert!(l[0].trading);
    assert_eq!(
        (l[0].price_decimals, l[0].size_decimals),
        (Some(1), Some(0))
    );

    let refused = r#"{"code":-1121,"msg":"Invalid symbol."}"#;
    assert!(
        matches!(binance::parse(refused), Err(ListingError::Refused(e)) if e.contains("-1121"))
    );
    assert!(matches!(
        binance::parse("{\"symbols\":3}"),
        Err(ListingError::Shape(_))
    ));
}

#[test]
fn okx_instruments_and_their_pages() {
    let body = r#"{"code":"0","msg":"","data":[
      {"instType":"SPOT","instId":"BTC-USDT","baseCcy":"BTC","quoteCcy":"USDT","tickSz":"0.1",
       "lotSz":"0.00000001","minSz":"0.00001","state":"live","ctVal":"","listTime":"1606468572000"},
      {"instType":"SPOT","instId":"OLD-USDT","tickSz":"0.0001","lotSz":"1","state":"suspend"}]}"#;
    let l = okx::parse(body).unwrap();
    let btc = one(&l, "BTC-USDT");
    assert!(btc.trading);
    assert_eq!((btc.price_decimals, btc.size_decimals), (Some(1), Some(8)));
    assert!(!one(&l, "OLD-USDT").trading);
    let refused = r#"{"code":"51000","msg":"Parameter instType error","data":[]}"#;
    assert!(matches!(okx::parse(refused), Err(ListingError::Refused(e)) if e.contains("51000")));

    let Source::Rest { host, paths } = source(
        Venue::Okx,
        &[
            "BTC-USDT",
            "BTC-USD-250328-100000-C",
            "BTC-USD-250328-90000-P",
        ],
    ) else {
        panic!("OKX is REST");
    };
    assert_eq!(host, "www.okx.com");
    assert_eq!(paths.len(), 4, "{paths:?}");
    assert!(
        paths[3].ends_with("instType=OPTION&instFamily=BTC-USD"),
        "{paths:?}"
    );
}

#[test]
fn bybit_spot_and_linear_pages_with_the_cursor() {
    let spot = r#"{"retCode":0,"retMsg":"OK","result":{"category":"spot","list":[
      {"symbol":"BTCUSDT","baseCoin":"BTC","quoteCoin":"USDT","status":"Trading",
       "lotSizeFilter":{"basePrecision":"0.000001","quotePrecision":"0.00000001","minOrderQty":"0.000048"},
       "priceFilter":{"tickSize":"0.01"}}]},"retExtInfo":{},"time":1700000000000}"#;
    let (l, next) = bybit::parse(spot).unwrap();
    assert_eq!(next, None);
    assert_eq!(
        (l[0].price_decimals, l[0].size_decimals),
        (Some(2), Some(6))
    );

    let linear = r#"{"retCode":0,"retMsg":"OK","result":{"category":"linear","list":[
      {"symbol":"BTCUSDT","contractType":"LinearPerpetual","status":"Trading",
       "priceFilter":{"minPrice":"0.10","maxPrice":"199999.80","tickSize":"0.10"},
       "lotSizeFilter":{"maxOrderQty":"100.000","minOrderQty":"0.001","qtyStep":"0.001"}},
      {"symbol":"NEWUSDT","status":"PreLaunch","priceFilter":{"tickSize":"0.0001"},
       "lotSizeFilter":{"qtyStep":"1"}}],
      "nextPageCursor":"first%3DBTCUSDT%26last%3DNEWUSDT"}}"#;
    let page = parse_page(Venue::BybitLinear, "", linear).unwrap();
    assert_eq!(page.instruments.len(), 2);
    assert!(page.instruments[0].trading && !page.instruments[1].trading);
    assert_eq!(page.instruments[0].price_decimals, Some(1));
    assert_eq!(page.instruments[0].size_decimals, Some(3));
    let next = page.next.unwrap();
    assert!(next.starts_with("/v5/market/instruments-info?category=linear&limit=1000&cursor="));
    assert!(
        next.ends_with("first%253DBTCUSDT%2526last%253DNEWUSDT"),
        "{next}"
    );

    let last = r#"{"retCode":0,"retMsg":"OK","result":{"category":"linear","list":[],"nextPageCursor":""}}"#;
    assert_eq!(parse_page(Venue::BybitLinear, "", last).unwrap().next, None);
    let refused = r#"{"retCode":10001,"retMsg":"params error","result":{}}"#;
    assert!(matches!(
        bybit::parse(refused),
        Err(ListingError::Refused(_))
    ));
}

#[test]
fn coinbase_public_products() {
    let body = r#"{"products":[
      {"product_id":"BTC-USD","price":"60000.01","base_increment":"0.00000001",
       "quote_increment":"0.01","price_increment":"0.01","status":"online","trading_disabled":false,
       "base_currency_id":"BTC","quote_currency_id":"USD","product_type":"SPOT"},
      {"product_id":"SHIB-USD","base_increment":"1","quote_increment":"0.000001",
       "price_increment":"0.00000001","status":"online","trading_disabled":true},
      {"product_id":"OLD-USD","base_increment":"0.1","quote_increment":"0.001","status":"delisted"}],
      "num_products":3}"#;
    let l = coinbase::parse(body).unwrap();
    let btc = one(&l, "BTC-USD");
    assert!(btc.trading);
    assert_eq!((btc.price_decimals, btc.size_decimals), (Some(2), Some(8)));
    let shib = one(&l, "SHIB-USD");
    assert!(!shib.trading, "trading disabled");
    assert_eq!(
        (shib.price_decimals, shib.size_decimals),
        (Some(8), Some(0))
    );
    // No price increment: the quote increment.
    assert_eq!(one(&l, "OLD-USD").price_decimals, Some(3));
    let refused = r#"{"error":"INTERNAL","message":"try later"}"#;
    assert!(matches!(
        coinbase::parse(refused),
        Err(ListingError::Refused(_))
    ));
}

#[test]
fn deribit_instruments_read_numbers_as_written() {
    let body = r#"{"jsonrpc":"2.0","usIn":1,"usOut":2,"usDiff":1,"testnet":false,"result":[
      {"instrument_name":"BTC-PERPETUAL","kind":"future","is_active":true,"tick_size":0.5,
       "min_trade_amount":10,"contract_size":10,"settlement_period":"perpetual"},
      {"instrument_name":"BTC-27DEC24-60000-C","kind":"option","is_active":true,"tick_size":0.0001,
       "tick_size_steps":[{"above_price":0.005,"tick_size":0.0005}],
       "min_trade_amount":0.1,"contract_size":1.0},
      {"instrument_name":"ETH_USDC","kind":"spot","is_active":false,"tick_size":1e-2,
       "min_trade_amount":0.0001,"contract_size":0.0001}]}"#;
    let l = deribit::parse(body).unwrap();
    let perp = one(&l, "BTC-PERPETUAL");
    assert_eq!(perp.tick_size.as_deref(), Some("0.5"));
    assert_eq!(
        (perp.price_decimals, perp.size_decimals),
        (Some(1), Some(0))
    );
    let opt = one(&l, "BTC-27DEC24-60000-C");
    assert_eq!((opt.price_decimals, opt.size_decimals), (Some(4), Some(1)));
    let spot = one(&l, "ETH_USDC");
    assert!(!spot.trading);
    assert_eq!(
        (spot.price_decimals, spot.size_decimals),
        (Some(2), Some(4))
    );
    let refused = r#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"}}"#;
    assert!(
        matches!(deribit::parse(refused), Err(ListingError::Refused(e)) if e.contains("-32602"))
    );
}

#[test]
fn kraken_instrument_snapshot_among_other_messages() {
    let ack = r#"{"method":"subscribe","result":{"channel":"instrument","snapshot":true},"success":true,"time_in":"2024-01-01T00:00:00.000000Z","time_out":"2024-01-01T00:00:00.000100Z"}"#;
    assert_eq!(kraken::parse_message(ack), Ok(None));
    let status =
        r#"{"channel":"status","type":"update","data":[{"system":"online","api_version":"v2"}]}"#;
    assert_eq!(kraken::parse_message(status), Ok(None));
    let snapshot = r#"{"channel":"instrument","type":"snapshot","data":{
      "assets":[{"id":"BTC","status":"enabled","precision":10,"precision_display":5,"borrowable":true,
                 "collateral_value":1.0,"margin_rate":0.01}],
      "pairs":[{"symbol":"BTC/USD","base":"BTC","quote":"USD","status":"online","qty_precision":8,
                "qty_increment":1e-8,"price_precision":1,"price_increment":0.1,"cost_precision":5,
                "marginable":true,"has_index":true,"cost_min":0.5,"tick_size":0.1},
               {"symbol":"ABC/EUR","base":"ABC","quote":"EUR","status":"cancel_only","qty_precision":2,
                "qty_increment":0.01,"price_precision":4,"price_increment":0.0005}]}}"#;
    let l = kraken::parse_message(snapshot).unwrap().unwrap();
    let btc = one(&l, "BTC/USD");
    assert!(btc.trading);
    assert_eq!(btc.lot_size.as_deref(), Some("1e-8"));
    assert_eq!((btc.price_decimals, btc.size_decimals), (Some(1), Some(8)));
    let abc = one(&l, "ABC/EUR");
    assert!(!abc.trading);
    assert_eq!(abc.tick_size.as_deref(), Some("0.0005"));
    assert_eq!((abc.price_decimals, abc.size_decimals), (Some(4), Some(2)));
    let refused = r#"{"method":"subscribe","error":"Channel unsupported","success":false}"#;
    assert!(matches!(
        kraken::parse_message(refused),
        Err(ListingError::Refused(_))
    ));
}

#[test]
fn every_venue_has_a_source() {
    for (_, venue) in Venue::ALL {
        match source(venue, &[]) {
            Source::Rest { host, paths } => {
                assert!(!host.is_empty() && !paths.is_empty(), "{venue}");
                assert!(paths.iter().all(|p| p.starts_with('/')), "{venue}");
            }
            Source::WebSocket {
                path, subscribe, ..
            } => {
                assert_eq!(venue, Venue::Kraken);
                assert_eq!(path, "/v2");
                assert!(subscribe.contains("instrument"));
            }
        }
    }
}
