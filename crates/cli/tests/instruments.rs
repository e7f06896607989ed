//! Instruments are checked against the venue's own list before anything
//! connects, from the binary: a wrong-case or unknown symbol is refused
//! with the closest listed names and exit code 2, nothing connected and
//! no run directory made; decimals not given come from the list; a list
//! that cannot be fetched is said once (and refused when required); the
//! `instruments` command lists them. The venue is a tiny HTTP server on
//! loopback that answers as Binance documents `exchangeInfo`.

use crate::util::bin;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn temp_dir(name: &str) -> PathBuf {
    crate::util::temp_dir(&format!("inst-{name}"))
}

/// A Binance spot `exchangeInfo` answer, written after the example in
/// Binance's "Exchange information" docs: two symbols trading, one in
/// BREAK.
const EXCHANGE_INFO: &str = r#"{"timezone":"UTC","serverTime":1700000000000,"rateLimits":[
 {"rateLimitType":"REQUEST_WEIGHT","interval":"MINUTE","intervalNum":1,"limit":6000}],
 "exchangeFilters":[],"symbols":[
 {"symbol":"BTCUSDT","status":"TRADING","baseAsset":"BTC","baseAssetPrecision":8,"quoteAsset":"USDT",
  "quotePrecision":8,"quoteAssetPrecision":8,"orderTypes":["LIMIT","MARKET"],"filters":[
   {"filterType":"PRICE_FILTER","minPrice":"0.01000000","maxPrice":"1000000.00000000","tickSize":"0.01000000"},
   {"filterType":"LOT_SIZE","minQty":"0.00001000","maxQty":"9000.00000000","stepSize":"0.00001000"}],
  "permissions":[],"permissionSets":[]},
 {"symbol":"ETHUSDT","status":"TRADING","baseAsset":"ETH","quoteAsset":"USDT","filters":[
   {"filterType":"PRICE_FILTER","minPrice":"0.01000000","maxPrice":"1000000.00000000","tickSize":"0.01000000"},
   {"filterType":"LOT_SIZE","minQty":"0.00010000","maxQty":"9000.00000000","stepSize":"0.00010000"}]},
 {"symbol":"LUNAUSDT","status":"BREAK","baseAsset":"LUNA","quoteAsset":"USDT","filters":[
   {"filterType":"PRICE_FILTER","minPrice":"0.00010000","maxPrice":"1000.00000000","tickSize":"0.00010000"},
   {"filterType":"LOT_SIZE","minQty":"0.01000000","maxQty":"9000000.00000000","stepSize":"0.01000000"}]}]}"#;

/// A plain-HTTP server on loopback answering every GET with `status`
/// and `body`; it keeps the request lines it was sent.
struct Venue {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

fn venue(status: u16, body: &'static str) -> Venue {
    venue_with(move |_| (status, body.to_owned()))
}

/// [`venue`], answering each request line as `answer` says.
fn venue_with(answer: impl Fn(&str) -> (u16, String) + Send + 'static) -> Venue {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&requests);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let line = head.lines().next().unwrap_or("").to_owned();
            let (status, body) = answer(&line);
            seen.lock().unwrap().push(line);
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    Venue { port, requests }
}

/// A listener standing for the venue's stream endpoint: counts the
/// connections made to it.
fn stream_endpoint() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    std::thread::spawn(move || {
        let mut keep: Vec<TcpStream> = Vec::new();
        for s in listener.incoming().flatten() {
            count.fetch_add(1, Ordering::SeqCst);
            keep.push(s);
        }
    });
    (port, accepted)
}

fn config(dir: &Path, rest_port: u16, stream_port: u16, extra: &str, instruments: &str) -> PathBuf {
    let path = dir.join("feed.toml");
    std::fs::write(
        &path,
        format!(
            "{extra}\n[[venue]]\nname = \"binance\"\nvenue = \"binance-spot\"\n\
             instruments = [{instruments}]\nendpoint = \"ws://127.0.0.1:{stream_port}\"\n\
             rest = \"http://127.0.0.1:{rest_port}\"\n"
        ),
    )
    .unwrap();
    path
}

/// Runs the binary in `dir`; a run that is still going at the deadline
/// (today's feed, which never refuses a symbol) is killed and fails.
fn run_until_exit(dir: &Path, args: &[&str]) -> Output {
    let mut child = bin()
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running at the deadline: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_wrong_case_symbol_is_refused_before_connecting_with_the_listed_spelling() {
    let dir = temp_dir("case");
    let v = venue(200, EXCHANGE_INFO);
    let (stream_port, accepted) = stream_endpoint();
    config(&dir, v.port, stream_port, "", "\"btcusdt\"");
    let out = run_until_exit(&dir, &["run", "--config", "feed.toml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "unknown instrument `btcusdt` on venue binance (binance-spot); did you mean BTCUSDT?"
        ),
        "{stderr}"
    );
    // Said once; nothing connected to the streams; no run directory.
    assert_eq!(stderr.matches("unknown instrument").count(), 1, "{stderr}");
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
    assert!(!dir.join("runs").exists(), "{stderr}");
    // One request, for the documented list.
    let requests = v.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert!(
        requests[0].starts_with("GET /api/v3/exchangeInfo"),
        "{requests:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unknown_symbol_is_refused_by_check_too() {
    let dir = temp_dir("unknown");
    let v = venue(200, EXCHANGE_INFO);
    let (stream_port, accepted) = stream_endpoint();
    config(&dir, v.port, stream_port, "", "\"BTCUSDT\", \"FOOBAR\"");
    for args in [
        &["run", "--config", "feed.toml", "--check"][..],
        &["run", "--config", "feed.toml"][..],
    ] {
        let out = run_until_exit(&dir, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("unknown instrument `FOOBAR` on venue binance (binance-spot)"),
            "{stderr}"
        );
        assert!(
            stderr.contains("tickwire-feed instruments --venue binance-spot"),
            "{stderr}"
        );
        assert!(!String::from_utf8_lossy(&out.stdout).contains("configuration ok"));
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn decimals_not_given_come_from_the_list() {
    let dir = temp_dir("decimals");
    let v = venue(200, EXCHANGE_INFO);
    let (stream_port, _) = stream_endpoint();
    config(
        &dir,
        v.port,
        stream_port,
        "",
        "\"BTCUSDT\", \"ETHUSDT:3:6:20\", \"LUNAUSDT\"",
    );
    let out = run_until_exit(&dir, &["run", "--config", "feed.toml", "--check"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("BTCUSDT: price decimals 2, size decimals 5 (from the venue's list"),
        "{stderr}"
    );
    assert!(
        stderr.contains("ETHUSDT: price decimals 3, size decimals 6 (as configured"),
        "{stderr}"
    );
    assert!(
        stderr.contains("LUNAUSDT: price decimals 4, size decimals 2")
            && stderr.contains("status `BREAK`, not trading"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_list_that_cannot_be_fetched_is_said_once_and_refused_when_required() {
    let dir = temp_dir("unfetchable");
    let v = venue(404, r#"{"code":-1,"msg":"no such path"}"#);
    let (stream_port, accepted) = stream_endpoint();
    // By default: said once, with the cause, and the configured values kept.
    config(&dir, v.port, stream_port, "", "\"BTCUSDT\"");
    let out = run_until_exit(&dir, &["run", "--config", "feed.toml", "--check"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("could not be fetched").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("HTTP 404"), "{stderr}");
    // Required: refused, exit 1, before connecting.
    config(
        &dir,
        v.port,
        stream_port,
        "check_instruments = \"required\"",
        "\"BTCUSDT\"",
    );
    let out = run_until_exit(&dir, &["run", "--config", "feed.toml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot fetch the instrument list of venue binance (binance-spot)")
            && stderr.contains("HTTP 404"),
        "{stderr}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
    // Off: nothing asked.
    let asked = v.requests.lock().unwrap().len();
    config(
        &dir,
        v.port,
        stream_port,
        "check_instruments = \"off\"",
        "\"BTCUSDT\"",
    );
    let out = run_until_exit(&dir, &["run", "--config", "feed.toml", "--check"]);
    assert!(out.status.success());
    assert_eq!(v.requests.lock().unwrap().len(), asked);
    // A value it does not take is a configuration error.
    config(
        &dir,
        v.port,
        stream_port,
        "check_instruments = \"maybe\"",
        "\"BTCUSDT\"",
    );
    let out = run_until_exit(&dir, &["run", "--config", "feed.toml", "--check"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("check_instruments"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_instruments_command_lists_a_venues_symbols() {
    let v = venue(200, EXCHANGE_INFO);
    let rest = format!("http://127.0.0.1:{}", v.port);
    let out = bin()
        .args([
            "instruments",
            "--venue",
            "binance-spot",
            "--rest",
            &rest,
            "--filter",
            "usdt",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let btc = stdout.lines().find(|l| l.starts_with("BTCUSDT")).unwrap();
    let fields: Vec<&str> = btc.split_whitespace().collect();
    assert_eq!(
        fields,
        ["BTCUSDT", "TRADING", "0.01000000", "0.00001000", "2", "5"]
    );
    assert!(stdout.contains("LUNAUSDT"), "{stdout}");
    let out = bin()
        .args([
            "instruments",
            "--venue",
            "binance-spot",
            "--rest",
            &rest,
            "--filter",
            "eth",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ETHUSDT") && !stdout.contains("BTCUSDT"),
        "{stdout}"
    );
}

#[test]
fn the_instruments_command_lists_a_simulators_symbols() {
    let out = bin()
        .args(["instruments", "--venue", "okx", "--simulated"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("BTC-USDT"), "{stdout}");
}

#[test]
fn kraken_lists_come_from_its_instrument_channel() {
    // Kraken's simulator serves the `instrument` channel: read over TLS
    // on loopback as from the venue.
    let out = bin()
        .args([
            "instruments",
            "--venue",
            "kraken",
            "--simulated",
            "--filter",
            "btc/usd",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("/v2"), "{stderr}");
    let btc = stdout.lines().find(|l| l.starts_with("BTC/USD")).unwrap();
    assert_eq!(btc.split_whitespace().nth(1), Some("online"), "{btc}");
}

/// Bybit's linear list in two pages, the second after the first's cursor.
#[test]
fn bybit_pages_are_followed_by_their_cursor() {
    let page = |symbol: &str, cursor: &str| {
        format!(
            r#"{{"retCode":0,"retMsg":"OK","result":{{"category":"linear","list":[
            {{"symbol":"{symbol}","contractType":"LinearPerpetual","status":"Trading",
              "priceFilter":{{"tickSize":"0.10"}},"lotSizeFilter":{{"qtyStep":"0.001"}}}}],
            "nextPageCursor":"{cursor}"}},"retExtInfo":{{}},"time":1700000000000}}"#
        )
    };
    let v = venue_with(move |line| {
        if line.contains("cursor=next%3D2") {
            (200, page("ETHUSDT", ""))
        } else {
            (200, page("BTCUSDT", "next=2"))
        }
    });
    let rest = format!("http://127.0.0.1:{}", v.port);
    let out = bin()
        .args(["instruments", "--venue", "bybit-linear", "--rest", &rest])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("BTCUSDT") && stdout.contains("ETHUSDT"),
        "{stdout}"
    );
    let requests = v.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(
        requests[0].contains("/v5/market/instruments-info?category=linear&limit=1000 "),
        "{requests:?}"
    );
}

/// A bot that asks for the check gets the same refusal from `build`,
/// before anything connects.
#[test]
fn an_embedded_feed_that_asks_for_the_check_refuses_an_unknown_symbol() {
    use tickwire_feed::Feed;
    use tickwire_feed::live::VenueSetup;
    use tickwire_venues::InstrumentSpec;

    let v = venue(200, EXCHANGE_INFO);
    let (stream_port, accepted) = stream_endpoint();
    let setup = |symbol: &str| {
        let mut s = VenueSetup::new(
            "binance",
            tickwire_venues::Venue::BinanceSpot,
            vec![InstrumentSpec::new(symbol, 2, 5, 20)],
        );
        s.endpoint = Some(format!("ws://127.0.0.1:{stream_port}"));
        s.rest = Some(format!("http://127.0.0.1:{}", v.port));
        s
    };
    let Err(e) = Feed::builder()
        .setup(setup("btcusdt"))
        .check_instruments(true)
        .build()
    else {
        panic!("built with an unknown symbol");
    };
    assert!(
        e.to_string().contains(
            "unknown instrument `btcusdt` on venue binance (binance-spot); did you mean BTCUSDT?"
        ),
        "{e}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
    // A listed one builds (and connects).
    let feed = Feed::builder()
        .setup(setup("BTCUSDT"))
        .check_instruments(true)
        .build();
    assert!(feed.is_ok(), "{:?}", feed.err());
}

/// A run keeps the lists it fetched in its run directory; the next start
/// within the hour reads them instead of asking the venue again.
#[test]
fn a_run_keeps_its_lists_and_the_next_start_reuses_them() {
    let dir = temp_dir("cache");
    let v = venue(200, EXCHANGE_INFO);
    let (stream_port, _) = stream_endpoint();
    // An output, so that the run has a run directory.
    let hlog = "[metrics]\nhlog = \"feed.hlog\"";
    config(&dir, v.port, stream_port, hlog, "\"BTCUSDT\"");
    let mut child = bin()
        .current_dir(&dir)
        .args(["run", "--config", "feed.toml"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let kept = dir.join("runs/latest-run/instruments-binance.tsv");
    crate::util::wait_for(&mut child, "the kept instrument list", 60, || kept.exists());
    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&kept).unwrap();
    assert!(
        text.contains("BTCUSDT\tTRADING\ttrue\t0.01000000\t0.00001000\t2\t5"),
        "{text}"
    );
    assert_eq!(v.requests.lock().unwrap().len(), 1);
    let out = run_until_exit(&dir, &["run", "--config", "feed.toml", "--check"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("a cached list"), "{stderr}");
    assert!(
        stderr.contains("BTCUSDT: price decimals 2, size decimals 5"),
        "{stderr}"
    );
    assert_eq!(v.requests.lock().unwrap().len(), 1, "asked again");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Simulated, a feed that asks for the check meets each simulator's own
/// list (its catalogue) and is refused a symbol it does not list.
#[test]
fn a_simulated_feed_that_asks_for_the_check_meets_the_simulators_list() {
    use tickwire_feed::Feed;

    // Every venue the project lists.
    for (venue, wrong, right) in [
        ("binance-spot", "btcusdt", "BTCUSDT"),
        ("binance-usdm", "BTCUSDT_PERP", "BTCUSDT"),
        ("binance-coinm", "btcusd_perp", "BTCUSD_PERP"),
        ("okx", "BTC-USDT-SWAP-X", "BTC-USDT"),
        ("bybit-spot", "btcusdt", "BTCUSDT"),
        ("bybit-linear", "BTCUSDTX", "BTCUSDT"),
        ("bybit-inverse", "btcusd", "BTCUSD"),
        ("kraken", "XBT/USD", "BTC/USD"),
        ("coinbase", "btc-usd", "BTC-USD"),
        ("deribit", "btc-perpetual", "BTC-PERPETUAL"),
    ] {
        let Err(e) = Feed::builder()
            .venue(venue, &[wrong])
            .simulated(true)
            .check_instruments(true)
            .build()
        else {
            panic!("{venue}: built with {wrong}");
        };
        assert!(
            e.to_string()
                .contains(&format!("unknown instrument `{wrong}` on venue {venue}")),
            "{e}"
        );
        let built = Feed::builder()
            .venue(venue, &[right])
            .simulated(true)
            .check_instruments(true)
            .build();
        assert!(built.is_ok(), "{venue}: {:?}", built.err());
    }
}

/// An embedded simulated feed checks by default (best effort): a symbol
/// the simulator does not list fails `build` with the listed spelling,
/// without `check_instruments` being asked for.
#[test]
fn a_simulated_feed_checks_its_symbols_by_default() {
    use tickwire_feed::Feed;

    let Err(e) = Feed::builder()
        .venue("binance-spot", &["btcusdt"])
        .simulated(true)
        .build()
    else {
        panic!("built with btcusdt");
    };
    assert!(e.to_string().contains("did you mean BTCUSDT?"), "{e}");
}

/// Unchecked, a simulated symbol the catalogue lists is served with its
/// own market (SOLUSDT near 150), never another instrument's under its
/// name (the simulator used to serve BTCUSDT's market, near 60 000, for
/// any symbol it did not know).
#[test]
fn an_unchecked_simulated_symbol_gets_its_own_market() {
    use tickwire_feed::Feed;

    let mut feed = Feed::builder()
        .venue("binance-spot", &["SOLUSDT"])
        .simulated(true)
        .check_instruments(false)
        .build()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let bid = loop {
        feed.poll().unwrap();
        let venue = feed.venue("binance-spot").unwrap();
        if let Some((bid, _)) = feed.book_of(venue, "SOLUSDT").and_then(|b| b.top()) {
            break bid;
        }
        assert!(Instant::now() < deadline, "no SOLUSDT book in 60 s");
    };
    // Binance's default decimals: 8.
    let units = bid.price / 100_000_000;
    assert!((50..1_000).contains(&units), "SOLUSDT bid at {units}");
}
