//! What a venue's instrument list says, in every venue's terms: the
//! vocabulary each venue's `listing` module parses into (see
//! [`crate::listing`]).

use std::fmt;

use crate::decimal::MAX_SCALE;

/// One instrument of a venue's list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// The symbol exactly as the venue spells it (`BTCUSDT`, `BTC-USDT`,
    /// `BTC/USD`, `BTC-PERPETUAL`).
    pub symbol: String,
    /// Its status, in the venue's own words (`TRADING`, `live`,
    /// `Trading`, `online`, `active`).
    pub status: String,
    /// Whether that status is the venue's "trading" one.
    pub trading: bool,
    /// The price increment as the venue wrote it (`None`: not given, or
    /// zero, which Binance uses for "no rule").
    pub tick_size: Option<String>,
    /// The size increment as the venue wrote it.
    pub lot_size: Option<String>,
    /// Decimal places of prices, from `tick_size` (or from the venue's own
    /// precision field where it gives one, Kraken).
    pub price_decimals: Option<u8>,
    /// Decimal places of sizes, from `lot_size`.
    pub size_decimals: Option<u8>,
}

impl Listed {
    /// An instrument with decimals derived from its increments; an
    /// increment that is zero or unreadable counts as not given.
    pub fn new(
        symbol: &str,
        status: &str,
        trading: bool,
        tick_size: Option<&str>,
        lot_size: Option<&str>,
    ) -> Listed {
        let keep =
            |s: Option<&str>| s.and_then(|s| increment_decimals(s).ok().map(|d| (s.to_owned(), d)));
        let tick = keep(tick_size);
        let lot = keep(lot_size);
        Listed {
            symbol: symbol.to_owned(),
            status: status.to_owned(),
            trading,
            price_decimals: tick.as_ref().map(|t| t.1),
            size_decimals: lot.as_ref().map(|l| l.1),
            tick_size: tick.map(|t| t.0),
            lot_size: lot.map(|l| l.0),
        }
    }
}

/// A venue's list of instruments, as fetched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// Every instrument, in the order the venue listed them.
    pub instruments: Vec<Listed>,
}

impl Listing {
    /// The instrument the venue spells exactly `symbol`.
    pub fn get(&self, symbol: &str) -> Option<&Listed> {
        self.instruments.iter().find(|i| i.symbol == symbol)
    }
}

/// One page of a venue's answer: its instruments, and the path of the
/// next page when the venue paginates (Bybit's cursor).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Page {
    /// The page's instruments.
    pub instruments: Vec<Listed>,
    /// The path (and query) of the next page, if there is one.
    pub next: Option<String>,
}

/// Why an answer could not be read as an instrument list.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListingError {
    /// Not the documented JSON shape (serde's message).
    Shape(String),
    /// The venue answered with its own error (code and message).
    Refused(String),
}

impl fmt::Display for ListingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListingError::Shape(e) => write!(f, "not the documented instrument list: {e}"),
            ListingError::Refused(e) => write!(f, "the venue refused the request: {e}"),
        }
    }
}

impl std::error::Error for ListingError {}

impl From<serde_json::Error> for ListingError {
    fn from(e: serde_json::Error) -> ListingError {
        ListingError::Shape(e.to_string())
    }
}

/// Why an increment gives no decimals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadIncrement {
    /// Not `digits[.digits][(e|E)[+|-]digits]`.
    Syntax,
    /// Zero (no increment).
    Zero,
    /// Finer than [`MAX_SCALE`] decimal places.
    TooFine,
}

/// The decimal places an increment needs, exactly, from its text:
/// `"0.01"` → 2, `"0.00000100"` → 6 (trailing zeros say nothing),
/// `"1e-8"` and `"1E-08"` → 8, `"0.5"` → 1, `"2.5e-3"` → 4, `"10"` → 0.
pub fn increment_decimals(text: &str) -> Result<u8, BadIncrement> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => {
            let e = &text[at + 1..];
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(BadIncrement::Syntax);
            }
            let e: i64 = e.parse().map_err(|_| BadIncrement::Syntax)?;
            (&text[..at], e)
        }
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return Err(BadIncrement::Syntax);
    }
    if int.bytes().chain(frac.bytes()).all(|b| b == b'0') {
        return Err(BadIncrement::Zero);
    }
    // An exponent the text may carry at any size (`1e-9223372036854775808`)
    // cannot overflow the subtraction: too fine either way.
    let Some(places) = (frac.trim_end_matches('0').len() as i64).checked_sub(exponent) else {
        return Err(BadIncrement::TooFine);
    };
    if places > i64::from(MAX_SCALE) {
        return Err(BadIncrement::TooFine);
    }
    Ok(places.max(0) as u8)
}

/// How a venue's list is fetched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// HTTP GETs of these paths (and queries) on the venue's REST host,
    /// each answer parsed by [`parse_page`](crate::listing::parse_page); a page's `next` is fetched
    /// after it.
    Rest {
        /// The venue's public REST host.
        host: &'static str,
        /// The first pages.
        paths: Vec<String>,
    },
    /// A WebSocket connection to `path` on `host` that sends `subscribe`;
    /// each message is offered to [`kraken::parse_message`](crate::kraken::listing::parse_message) until one is
    /// the list.
    WebSocket {
        /// The venue's public WebSocket host.
        host: &'static str,
        /// Its path.
        path: &'static str,
        /// The text frame to send once open.
        subscribe: &'static str,
    },
}

impl Page {
    pub(crate) fn whole(instruments: Vec<Listed>) -> Page {
        Page {
            instruments,
            next: None,
        }
    }
}
