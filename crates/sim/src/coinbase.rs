//! Coinbase: not simulated yet.

use crate::market::Step;
use crate::protocol::{Market, Out, Protocol, Response};

/// Coinbase.
pub(crate) struct Coinbase;

impl Coinbase {
    pub(crate) fn new() -> Coinbase {
        Coinbase
    }
}

impl Protocol for Coinbase {
    type Client = ();

    fn open(&self, _path: &str, _market: &Market) -> Result<(), Response> {
        Err(Response::json(404, "{}"))
    }

    fn on_text(&self, _client: &mut (), _text: &str, _market: &mut Market, _out: &mut Out) {}

    fn on_step(&self, _client: &mut (), _step: &Step, _market: &Market, _out: &mut Out) {}
}
