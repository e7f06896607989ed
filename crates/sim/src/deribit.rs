//! Deribit: not simulated yet.

use crate::market::Step;
use crate::protocol::{Market, Out, Protocol, Response};

/// Deribit.
pub(crate) struct Deribit;

impl Deribit {
    pub(crate) fn new() -> Deribit {
        Deribit
    }
}

impl Protocol for Deribit {
    type Client = ();

    fn open(&self, _path: &str, _market: &Market) -> Result<(), Response> {
        Err(Response::json(404, "{}"))
    }

    fn on_text(&self, _client: &mut (), _text: &str, _market: &mut Market, _out: &mut Out) {}

    fn on_step(&self, _client: &mut (), _step: &Step, _market: &Market, _out: &mut Out) {}
}
