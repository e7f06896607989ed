//! Fetching a venue's instrument list through `tickwire-net` (the only
//! crate that does I/O): a short-lived [`Driver`] of one large slot, a
//! REST GET per page (Bybit's next page after its cursor), or Kraken's
//! WebSocket `instrument` channel; every wait bounded by one deadline.
//! Start-up only: it allocates freely.
//!
//! Budgets: one request a venue (Bybit: one a page of 1000, OKX: one an
//! instrument type), before the feed's own REST budget starts spending;
//! that budget spends at most half of a venue's limit, so the list's
//! request (Binance spot: weight 20 of 6000 a minute,
//! `tickwire_venues::listing::binance::weight`; Deribit: within
//! `get_instruments`' 1 a 10 s, burst 5) fits beside it.

use std::time::{Duration, Instant};

use tickwire_net::{
    Config, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect, ResponseHead,
    Role, SlotSize, Stamps, TlsConfig,
};
use tickwire_venues::Venue;
use tickwire_venues::listing::{self, Listed, Listing, Source};

/// The largest answer read: Binance spot's `exchangeInfo` without
/// permission sets and Deribit's every-currency list are a few MB.
const MAX_ANSWER: usize = 32 << 20;

/// Bybit pages followed at most (1000 instruments each).
const MAX_PAGES: usize = listing::bybit::MAX_PAGES;

/// Where a venue's list is fetched from: the venue's own host, or the
/// configured `rest` (`endpoint` for Kraken's channel) when the feed is
/// pointed elsewhere (a simulator, a proxy).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// `https://host[:port]`, `http://…`, or `wss://…` for a channel.
    pub base: String,
}

/// `scheme://authority` of `url`, its path dropped.
fn authority(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    match url[after..].find('/') {
        Some(i) => &url[..after + i],
        None => url,
    }
}

/// Where `venue`'s list comes from, given the venue's configured `rest`
/// and `endpoint` overrides.
pub fn origin(venue: Venue, rest: Option<&str>, endpoint: Option<&str>) -> Origin {
    let base = match listing::source(venue, &[]) {
        Source::Rest { host, .. } => match (rest, endpoint) {
            (Some(r), _) => authority(r).to_owned(),
            (None, Some(e)) => authority(e)
                .replacen("wss://", "https://", 1)
                .replacen("ws://", "http://", 1),
            (None, None) => format!("https://{host}"),
        },
        Source::WebSocket { host, .. } => match endpoint {
            Some(e) => authority(e).to_owned(),
            None => format!("wss://{host}"),
        },
    };
    Origin { base }
}

/// What one fetch did: the list, and the URLs it came from.
#[derive(Debug)]
pub struct Fetched {
    /// The list.
    pub listing: Listing,
    /// The first URL (the one the cache is keyed by).
    pub url: String,
    /// Requests made (pages).
    pub requests: usize,
}

/// Fetches `venue`'s list from `origin` within `timeout`, trusting `tls`.
/// `symbols`: the configured ones (OKX option families).
pub fn fetch(
    venue: Venue,
    origin: &Origin,
    symbols: &[&str],
    tls: &TlsConfig,
    timeout: Duration,
) -> Result<Fetched, String> {
    let deadline = Instant::now() + timeout;
    let config = Config {
        max_connections: 1,
        sized_slots: vec![SlotSize {
            count: 1,
            read_buffer_size: MAX_ANSWER,
            max_message_size: MAX_ANSWER / 2,
        }],
        connect_timeout: timeout,
        handshake_timeout: timeout,
        ..Config::default()
    };
    let mut driver = Driver::new(config, tls, Fetcher::default())
        .map_err(|e| format!("cannot set up the connection: {e}"))?;
    match listing::source(venue, symbols) {
        Source::Rest { paths, .. } => {
            let url = format!("{}{}", origin.base, paths[0]);
            let mut instruments: Vec<Listed> = Vec::new();
            let mut queue: Vec<String> = paths.into_iter().rev().collect();
            let mut requests = 0;
            while let Some(path) = queue.pop() {
                if requests >= paths_allowed(venue) {
                    return Err(format!(
                        "more than {requests} pages of instruments: the list was cut there"
                    ));
                }
                requests += 1;
                let page_url = format!("{}{path}", origin.base);
                let (status, body) = get(&mut driver, &page_url, deadline)?;
                let text = String::from_utf8_lossy(&body);
                if !(200..300).contains(&status) {
                    return Err(format!("{page_url}: HTTP {status}: {}", excerpt(&text)));
                }
                let page = listing::parse_page(venue, &path, &text)
                    .map_err(|e| format!("{page_url}: {e}"))?;
                instruments.extend(page.instruments);
                queue.extend(page.next);
            }
            Ok(Fetched {
                listing: Listing { instruments },
                url,
                requests,
            })
        }
        Source::WebSocket {
            path, subscribe, ..
        } => {
            let url = format!("{}{path}", origin.base);
            let endpoint = Endpoint::parse(&url).map_err(|e| format!("{url}: {e}"))?;
            driver.handler_mut().subscribe = Some(subscribe);
            driver
                .connect_sized(endpoint, MAX_ANSWER / 2)
                .map_err(|e| format!("{url}: {e}"))?;
            wait(&mut driver, deadline, &url)?;
            match driver.handler_mut().channel.take() {
                Some(Ok(instruments)) => Ok(Fetched {
                    listing: Listing { instruments },
                    url,
                    requests: 1,
                }),
                Some(Err(e)) => Err(format!("{url}: {e}")),
                None => Err(format!("{url}: the connection ended before the list came")),
            }
        }
    }
}

/// Pages a venue may take: Bybit paginates, the others answer at once
/// (OKX: one page per instrument type and option family).
fn paths_allowed(venue: Venue) -> usize {
    match venue {
        Venue::BybitSpot | Venue::BybitLinear | Venue::BybitInverse => MAX_PAGES,
        _ => 64,
    }
}

/// The start of an answer, for an error message.
fn excerpt(text: &str) -> String {
    let t: String = text.chars().take(200).collect();
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One GET: the status and the body.
fn get(
    driver: &mut Driver<Fetcher>,
    url: &str,
    deadline: Instant,
) -> Result<(u16, Vec<u8>), String> {
    let endpoint = Endpoint::parse(url).map_err(|e| format!("{url}: {e}"))?;
    driver
        .fetch_sized(endpoint, MAX_ANSWER)
        .map_err(|e| format!("{url}: {e}"))?;
    wait(driver, deadline, url)?;
    let h = driver.handler_mut();
    h.ended = false;
    h.response.take().ok_or_else(|| format!("{url}: no answer"))
}

/// Polls until the connection ended (or, on a channel, the list came).
fn wait(driver: &mut Driver<Fetcher>, deadline: Instant, url: &str) -> Result<(), String> {
    loop {
        let h = driver.handler_mut();
        if let Some(reason) = h.failure.take() {
            return Err(format!("{url}: {reason}"));
        }
        if h.ended || h.channel.is_some() {
            return Ok(());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("{url}: no answer within the deadline"));
        }
        driver
            .poll_timeout(left.min(Duration::from_millis(100)))
            .map_err(|e| format!("{url}: {e}"))?;
    }
}

/// The handler of the fetching driver.
#[derive(Default)]
struct Fetcher {
    /// The text to send once a channel opens.
    subscribe: Option<&'static str>,
    /// A GET's answer.
    response: Option<(u16, Vec<u8>)>,
    /// The channel's list, or why it was refused.
    channel: Option<Result<Vec<Listed>, listing::ListingError>>,
    /// The connection ended (after its answer, or not).
    ended: bool,
    /// Why it ended without an answer.
    failure: Option<String>,
}

impl Handler for Fetcher {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        if let Some(text) = self.subscribe
            && let Err(e) = conn.send_text(text)
        {
            self.failure = Some(format!("cannot subscribe: {e}"));
        }
    }

    fn on_message(&mut self, _conn: &mut Conn<'_>, payload: Payload<'_>, _stamps: Stamps) {
        if self.channel.is_some() {
            return;
        }
        let Some(text) = payload.as_str() else {
            return;
        };
        match listing::kraken::parse_message(text) {
            Ok(Some(list)) => self.channel = Some(Ok(list)),
            Ok(None) => {}
            Err(e) => self.channel = Some(Err(e)),
        }
    }

    fn on_response(&mut self, _id: ConnId, head: ResponseHead, body: &mut [u8], len: usize) {
        self.response = Some((head.status, body[..len].to_vec()));
    }

    fn on_close(&mut self, _id: ConnId, _role: Role, reason: &Disconnect) -> Reconnect {
        if self.response.is_none() && self.channel.is_none() {
            self.failure = Some(reason.to_string());
        }
        self.ended = true;
        Reconnect::No
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_come_from_the_venue_or_the_configured_override() {
        let o = |v, r, e| origin(v, r, e).base;
        assert_eq!(o(Venue::BinanceSpot, None, None), "https://api.binance.com");
        assert_eq!(o(Venue::Okx, None, None), "https://www.okx.com");
        assert_eq!(
            o(Venue::BinanceUsdM, Some("https://localhost:9443/x"), None),
            "https://localhost:9443"
        );
        assert_eq!(
            o(Venue::Okx, None, Some("wss://localhost:9444/ws/v5/public")),
            "https://localhost:9444"
        );
        assert_eq!(
            o(Venue::Coinbase, None, Some("ws://127.0.0.1:80")),
            "http://127.0.0.1:80"
        );
        assert_eq!(o(Venue::Kraken, None, None), "wss://ws.kraken.com");
        assert_eq!(
            o(
                Venue::Kraken,
                Some("https://x"),
                Some("wss://localhost:9/v2")
            ),
            "wss://localhost:9"
        );
    }
}
