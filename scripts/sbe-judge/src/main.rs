//! An independent judge of tickwire's simulated Binance SBE streams:
//! nautilus_trader's Binance adapter (`nautilus-binance`, its own
//! WebSocket client and SBE decoders, written without reference to
//! tickwire) connects to the simulator, as it connects to
//! `stream-sbe.binance.com`, and reads its streams.
//!
//! `tickwire-sbe-judge ws://127.0.0.1:PORT/ws SYMBOL COUNT DEADLINE_S`
//!
//! Passes (exit 0, one summary line) when, before the deadline:
//! - the upgrade without a key is refused (answered, but not with 101
//!   Switching Protocols: the client tells no more);
//! - with a key (a throw-away Ed25519 key, as the client requires) it
//!   subscribes `@trade`, `@bestBidAsk`, `@depth` and `@depth20` and gets
//!   at least COUNT decoded messages of each template;
//! - the client decodes every binary frame (no `RawBinary`), and reads no
//!   error and no text it does not know (`Error`, `RawJson`);
//! - the decoded values hold together: each diff's first id is the last
//!   one's last id + 1 and its ids ascend, each diff's and snapshot's
//!   bids are below their asks and sorted best first, best bid below best
//!   ask, trade ids ascend, every time is in microseconds (between 2020
//!   and 2100 read as microseconds: not milliseconds, not nanoseconds),
//!   every symbol is SYMBOL; the connection is never lost.

use std::process::ExitCode;
use std::time::Duration;

use futures_util::StreamExt;
use nautilus_binance::spot::BinanceSpotWebSocketClient;
use nautilus_binance::spot::sbe::stream::PriceLevel;
use nautilus_binance::spot::websocket::streams::messages::BinanceSpotWsMessage;
use nautilus_network::websocket::TransportBackend;

/// 2020-01-01 in microseconds: a time in milliseconds is far below it.
const AFTER_2020_US: i64 = 1_577_836_800_000_000;
/// 2100-01-01 in microseconds: a time in nanoseconds is far above it.
const BEFORE_2100_US: i64 = 4_102_444_800_000_000;

fn sorted(levels: &[PriceLevel], descending: bool) -> bool {
    levels.windows(2).all(|w| {
        if descending {
            w[0].price_mantissa > w[1].price_mantissa
        } else {
            w[0].price_mantissa < w[1].price_mantissa
        }
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, symbol, count, deadline] = &args[..] else {
        eprintln!("usage: tickwire-sbe-judge ws://HOST:PORT/ws SYMBOL COUNT DEADLINE_S");
        return ExitCode::from(2);
    };
    let count: usize = count.parse().expect("COUNT");
    let deadline = Duration::from_secs(deadline.parse().expect("DEADLINE_S"));
    match tokio::time::timeout(deadline, judge(url, symbol, count)).await {
        Ok(Ok(summary)) => {
            println!("sbe-judge: pass: {summary}");
            ExitCode::SUCCESS
        }
        Ok(Err(why)) => {
            println!("sbe-judge: FAIL: {why}");
            ExitCode::FAILURE
        }
        Err(_) => {
            println!("sbe-judge: FAIL: not done within {deadline:?}");
            ExitCode::FAILURE
        }
    }
}

async fn judge(url: &str, symbol: &str, count: usize) -> Result<String, String> {
    let backend = TransportBackend::default();
    // Without a key: the venue refuses the upgrade (the client, given no
    // secret, sends no X-MBX-APIKEY header).
    let mut keyless =
        BinanceSpotWebSocketClient::new(Some(url.into()), None, None, Some(20), backend)
            .map_err(|e| e.to_string())?;
    match keyless.connect().await {
        Ok(()) => {
            let _ = keyless.close().await;
            return Err("connected without an API key".into());
        }
        // Refused by the upgrade's answer (the client says only that it was
        // not 101 Switching Protocols), not lost another way.
        Err(e) if e.to_string().contains("expected 101") => {}
        Err(e) => return Err(format!("without a key: not refused at the upgrade but {e}")),
    }
    // A throw-away Ed25519 key: the client takes only those.
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng).map_err(|e| e.to_string())?;
    let secret = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, pkcs8.as_ref());
    let mut client = BinanceSpotWebSocketClient::new(
        Some(url.into()),
        Some("throw-away-judge-key".into()),
        Some(secret),
        Some(20),
        backend,
    )
    .map_err(|e| e.to_string())?;
    client
        .connect()
        .await
        .map_err(|e| format!("connect with a key: {e}"))?;
    let lower = symbol.to_ascii_lowercase();
    let streams = ["trade", "bestBidAsk", "depth", "depth20"]
        .map(|s| format!("{lower}@{s}"))
        .to_vec();
    client
        .subscribe(streams)
        .await
        .map_err(|e| format!("subscribe: {e}"))?;
    let stream = client.stream();
    tokio::pin!(stream);
    let (mut trades, mut quotes, mut diffs, mut snapshots) = (0usize, 0usize, 0usize, 0usize);
    let mut last_u: Option<i64> = None;
    let mut last_trade: Option<i64> = None;
    let symbol_ok = |s: &str| {
        if s == symbol {
            Ok(())
        } else {
            Err(format!("symbol {s:?}, not {symbol:?}"))
        }
    };
    let time_ok = |us: i64, what: &str| {
        if us > AFTER_2020_US && us < BEFORE_2100_US {
            Ok(())
        } else {
            Err(format!(
                "{what} time {us} is not microseconds since the epoch"
            ))
        }
    };
    while trades < count || quotes < count || diffs < count || snapshots < count {
        let Some(message) = stream.next().await else {
            return Err("the stream ended".into());
        };
        match message {
            BinanceSpotWsMessage::Trades(t) => {
                symbol_ok(&t.symbol)?;
                time_ok(t.event_time_us, "trade event")?;
                time_ok(t.transact_time_us, "trade")?;
                for x in &t.trades {
                    if last_trade.is_some_and(|l| x.id <= l) {
                        return Err(format!("trade id {} after {last_trade:?}", x.id));
                    }
                    if x.price_mantissa <= 0 || x.qty_mantissa <= 0 {
                        return Err(format!("trade {} price or size not positive", x.id));
                    }
                    last_trade = Some(x.id);
                }
                trades += t.trades.len();
            }
            BinanceSpotWsMessage::BestBidAsk(q) => {
                symbol_ok(&q.symbol)?;
                time_ok(q.event_time_us, "bestBidAsk")?;
                if q.bid_price_mantissa >= q.ask_price_mantissa {
                    return Err(format!(
                        "best bid {} not below best ask {}",
                        q.bid_price_mantissa, q.ask_price_mantissa
                    ));
                }
                quotes += 1;
            }
            BinanceSpotWsMessage::DepthDiff(d) => {
                symbol_ok(&d.symbol)?;
                time_ok(d.event_time_us, "diff")?;
                if d.first_book_update_id > d.last_book_update_id {
                    return Err(format!(
                        "diff ids {}..{}",
                        d.first_book_update_id, d.last_book_update_id
                    ));
                }
                if let Some(u) = last_u
                    && d.first_book_update_id != u + 1
                {
                    return Err(format!(
                        "diff starts at {} after {u}: not contiguous",
                        d.first_book_update_id
                    ));
                }
                if !sorted(&d.bids, true) || !sorted(&d.asks, false) {
                    return Err("a diff's levels are not best first".into());
                }
                last_u = Some(d.last_book_update_id);
                diffs += 1;
            }
            BinanceSpotWsMessage::DepthSnapshot(s) => {
                symbol_ok(&s.symbol)?;
                time_ok(s.event_time_us, "depth20")?;
                if s.bids.is_empty() || s.asks.is_empty() || s.bids.len() > 20 || s.asks.len() > 20
                {
                    return Err(format!(
                        "depth20 of {} bids and {} asks",
                        s.bids.len(),
                        s.asks.len()
                    ));
                }
                if !sorted(&s.bids, true) || !sorted(&s.asks, false) {
                    return Err("depth20's levels are not best first".into());
                }
                if s.bids[0].price_mantissa >= s.asks[0].price_mantissa {
                    return Err("depth20's best bid is not below its best ask".into());
                }
                snapshots += 1;
            }
            BinanceSpotWsMessage::RawBinary(b) => {
                return Err(format!(
                    "a binary frame the client could not decode ({} bytes)",
                    b.len()
                ));
            }
            BinanceSpotWsMessage::Error(e) => return Err(format!("the venue said error {e:?}")),
            BinanceSpotWsMessage::RawJson(v) => {
                return Err(format!("text the client does not know: {v}"));
            }
            BinanceSpotWsMessage::ServerShutdown(_) => {}
            // A lost connection would break the diffs' chain: said as what
            // it is.
            BinanceSpotWsMessage::Reconnected => {
                return Err("the client lost its connection and reconnected".into());
            }
        }
    }
    let _ = client.close().await;
    Ok(format!(
        "refused without a key; with one, nautilus-binance decoded {trades} trades, {quotes} best bid/asks, \
         {diffs} contiguous diffs and {snapshots} depth20 snapshots of {symbol}, all consistent"
    ))
}
