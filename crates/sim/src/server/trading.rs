//! What the server does for the matching engine: a request's changes to
//! the books and orders written to every client at once, and a client
//! gone told to its venue (cancel-on-disconnect), what that changed sent
//! to the others.

use std::sync::atomic::Ordering;

use tickwire_tsc::Clock;

use super::{Client, Shared, count_gone, write};
use crate::protocol::{Delivered, Market, Out, Protocol};
use tickwire_net::server::ServerError;

/// Client `c`'s request `text`: its answer written to it, then what it
/// changed in the books and orders to every client ([`flush_engine`]). A
/// request that reached the matching engine makes the client one that
/// trades ([`Client::trading`]).
pub(super) fn request<P: Protocol>(
    shared: &Shared<P>,
    clients: &mut [Client<P::Client>],
    c: usize,
    text: &str,
    market: &mut Market,
    out: &mut Out,
    clock: Clock,
) -> Result<(), ServerError> {
    let client = &mut clients[c];
    let touched = market.exchange.touched();
    shared
        .protocol
        .on_text(&mut client.state, text, market, out);
    if market.exchange.touched() != touched && !client.trading {
        client.trading = true;
        shared.trading.fetch_add(1, Ordering::Relaxed);
    }
    write(client, out, &shared.stamps, &shared.counters, clock)?;
    flush_engine(shared, clients, market, out, clock);
    Ok(())
}

/// What the matching engine's changes owe the clients, if anything: its
/// steps to every client that has joined the market (before any further
/// random step), then its private events. A client whose write fails is
/// marked gone.
pub(super) fn flush_engine<P: Protocol>(
    shared: &Shared<P>,
    clients: &mut [Client<P::Client>],
    market: &mut Market,
    out: &mut Out,
    clock: Clock,
) {
    if market.exchange.steps.is_empty() && market.exchange.events.is_empty() {
        return;
    }
    let (steps, events) = market.take_engine();
    let mut delivered = vec![Delivered::default(); steps.len()];
    for client in clients.iter_mut() {
        if !client.opened || client.gone.is_some() {
            continue;
        }
        let mut got = vec![Delivered::default(); steps.len()];
        for (s, got) in steps.iter().zip(got.iter_mut()) {
            let from = out.items.len();
            shared.protocol.on_step(&mut client.state, s, market, out);
            *got = Delivered::of(s, &out.items[from..]);
        }
        if !events.is_empty() {
            shared
                .protocol
                .on_private(&mut client.state, &events, market, out);
        }
        match write(client, out, &shared.stamps, &shared.counters, clock) {
            Ok(()) => {
                for (d, g) in delivered.iter_mut().zip(&got) {
                    *d = d.or(*g);
                }
            }
            Err(_) => {
                out.items.clear();
                client.gone = Some(Err(()));
            }
        }
    }
    for (s, d) in steps.iter().zip(&delivered) {
        market.record(s, *d);
    }
}

/// Removes the clients that are gone, counting each and telling the venue
/// ([`Protocol::on_gone`]); what that changes (cancel-on-disconnect) goes
/// out to the others, which may find more gone.
pub(super) fn remove_gone<P: Protocol>(
    shared: &Shared<P>,
    clients: &mut Vec<Client<P::Client>>,
    market: &mut Market,
    out: &mut Out,
    clock: Clock,
) {
    while let Some(c) = clients.iter().position(|c| c.gone.is_some()) {
        let mut client = clients.remove(c);
        count_gone(&shared.counters, client.gone.unwrap_or(Err(())));
        if client.trading {
            shared.trading.fetch_sub(1, Ordering::Relaxed);
        }
        shared.protocol.on_gone(&mut client.state, market);
        flush_engine(shared, clients, market, out, clock);
    }
}
