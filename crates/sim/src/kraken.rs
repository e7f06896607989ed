//! Kraken: not simulated yet.

use crate::market::Step;
use crate::protocol::{Market, Out, Protocol, Response};

/// Kraken.
pub(crate) struct Kraken;

impl Kraken {
    pub(crate) fn new() -> Kraken {
        Kraken
    }
}

impl Protocol for Kraken {
    type Client = ();

    fn open(&self, _path: &str, _market: &Market) -> Result<(), Response> {
        Err(Response::json(404, "{}"))
    }

    fn on_text(&self, _client: &mut (), _text: &str, _market: &mut Market, _out: &mut Out) {}

    fn on_step(&self, _client: &mut (), _step: &Step, _market: &Market, _out: &mut Out) {}
}
