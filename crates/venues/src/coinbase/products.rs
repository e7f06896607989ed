//! Which product id a Coinbase product's public data comes under: a
//! `-USDC` product's comes under its `-USD` id ([`answered_as`]), and the
//! adapter's table back from that id to the product configured.

use crate::event::InstrumentSpec;

/// The product ids a `-USDC` product's data comes under on the public
/// channels, and the product configured as such ([`answered_as`]): sorted
/// by the id on the wire, made once with the adapter, so the receive path
/// only looks them up.
pub(super) struct Aliases(Vec<(Box<str>, Box<str>)>);

impl Aliases {
    pub(super) fn new(specs: &[InstrumentSpec]) -> Aliases {
        let mut list: Vec<(Box<str>, Box<str>)> = specs
            .iter()
            .filter_map(|s| {
                let wire = answered_as(&s.symbol);
                // The `-USD` product configured as well takes its own data.
                let aliased = wire != s.symbol && !specs.iter().any(|t| t.symbol == wire);
                aliased.then(|| (wire.into(), s.symbol.as_str().into()))
            })
            .collect();
        list.sort();
        list.dedup();
        Aliases(list)
    }

    /// The configured product whose data a frame keyed `product` carries:
    /// `product` itself unless it is an alias's id on the wire.
    #[inline]
    pub(super) fn configured<'a>(&'a self, product: &'a str) -> &'a str {
        if self.0.is_empty() {
            return product;
        }
        match self.0.binary_search_by(|(wire, _)| (**wire).cmp(product)) {
            Ok(at) => &self.0[at].1,
            Err(_) => product,
        }
    }
}

/// The product id Coinbase's public channels send `product`'s data under.
///
/// A `-USDC` product can be subscribed to, but only the `user` channel
/// keys it so: the other channels "return the same data as the
/// corresponding '-USD' based products" (WebSocket Channels docs; the
/// WebSocket endpoints page says the same of "-USDC product IDs other than
/// USDT-USDC and EURC-USDC"), under the `-USD` id. So `BTC-USDC` is
/// answered as `BTC-USD`; `USDT-USDC` and `EURC-USDC` "are available on
/// all channels" under their own. nautilus_trader
/// (`resolve_wire_product_id`) and ccxt's `coinbase` (pro) read it so.
pub fn answered_as(product: &str) -> &str {
    match product.strip_suffix("-USDC") {
        Some("USDT" | "EURC") | None => product,
        // `-USD` is `-USDC` without its last letter.
        Some(_) => &product[..product.len() - 1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usdc_products_but_two_are_answered_under_their_usd_id() {
        for (product, wire) in [
            ("BTC-USDC", "BTC-USD"),
            ("ETH-USDC", "ETH-USD"),
            ("USDT-USDC", "USDT-USDC"),
            ("EURC-USDC", "EURC-USDC"),
            ("BTC-USD", "BTC-USD"),
            ("BTC-EUR", "BTC-EUR"),
            ("USDC-EUR", "USDC-EUR"),
            ("BTC-USDT", "BTC-USDT"),
        ] {
            assert_eq!(answered_as(product), wire, "{product}");
        }
        let aliases = Aliases::new(&[
            InstrumentSpec::new("ETH-USDC", 2, 8, 0),
            InstrumentSpec::new("BTC-USDC", 2, 8, 0),
            InstrumentSpec::new("EURC-USDC", 2, 8, 0),
            InstrumentSpec::new("SOL-USDC", 2, 8, 0),
            InstrumentSpec::new("SOL-USD", 2, 8, 0),
        ]);
        let wire: Vec<&str> = aliases.0.iter().map(|(w, _)| &**w).collect();
        assert_eq!(wire, ["BTC-USD", "ETH-USD"], "sorted; SOL-USD is its own");
        for (product, to) in [
            ("BTC-USD", "BTC-USDC"),
            ("ETH-USD", "ETH-USDC"),
            ("SOL-USD", "SOL-USD"),
            ("EURC-USDC", "EURC-USDC"),
            ("DOGE-USD", "DOGE-USD"),
        ] {
            assert_eq!(aliases.configured(product), to, "{product}");
        }
    }
}
