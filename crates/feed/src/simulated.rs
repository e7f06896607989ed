//! Exchange simulators started in this process for a feed that asked for
//! them ([`crate::FeedBuilder::simulated`]): one per venue, over TLS on
//! loopback, speaking that venue's protocol, with the venue's
//! instruments. The feed's venues are pointed at them.

use std::any::Any;

use tickwire_sim::{SendStamps, SimConfig, SimInstrument, Simulator, StreamKind};

use crate::live::{FeedError, SetupError, VenueSetup, WireStamps, WireStream};

/// The simulator's send stamps, for the feed's `exchange` stage.
impl WireStamps for SendStamps {
    fn sent(&self, instrument: usize, stream: WireStream, id: u64) -> Option<u64> {
        let kind = match stream {
            WireStream::Trade => StreamKind::Trade,
            WireStream::Quote => StreamKind::BookTicker,
            WireStream::Depth => StreamKind::Depth,
        };
        self.get(instrument, kind, id)
    }
}

/// Market steps a second each simulator makes (about 1.6 messages each):
/// a lively market whose every update a person can still watch scroll.
const RATE: u32 = 200;

/// Starts a simulator for each of `venues` and points the venue at it
/// (stream, standby and REST endpoints); returns the simulators (they
/// stop when dropped) and the CA certificate (PEM) to trust.
///
/// `listed_only` (a feed that checks its instruments against the
/// venue's list): each simulator serves its venue's whole catalogue and
/// nothing else, so the check finds (and suggests) what the venue lists.
/// Otherwise each simulator serves the configured symbols its catalogue
/// lists, each with its own market; one the catalogue does not list is
/// not served, and the simulator treats it as the venue treats a symbol
/// it does not list (a refusal, or Binance's acknowledged silence): never
/// another instrument's market under that name.
pub(crate) fn start(
    venues: &mut [VenueSetup],
    listed_only: bool,
) -> Result<(Vec<Box<dyn Any + Send>>, String), FeedError> {
    let (tls, ca) = tickwire_sim::self_signed().map_err(|reason| SetupError::Simulator {
        venue: None,
        reason,
    })?;
    let mut sims: Vec<Box<dyn Any + Send>> = Vec::new();
    for setup in venues.iter_mut() {
        let mut instruments = Vec::new();
        for spec in &mut setup.instruments {
            let Some(sim) = SimInstrument::find_listed(setup.venue, &spec.symbol) else {
                continue;
            };
            // The feed's decimals must hold what the simulator sends.
            spec.price_scale = spec.price_scale.max(sim.price_scale);
            spec.size_scale = spec.size_scale.max(sim.size_scale);
            instruments.push(sim);
        }
        if listed_only {
            instruments = SimInstrument::listed(setup.venue);
        }
        let sim = Simulator::start(SimConfig {
            venue: setup.venue,
            tls: Some(tls.clone()),
            instruments,
            rate: RATE,
            ..SimConfig::default()
        })
        .map_err(|e| SetupError::Simulator {
            venue: Some(setup.name.clone()),
            reason: e.to_string(),
        })?;
        let port = sim.addr().port();
        setup.endpoint = Some(format!("wss://localhost:{port}"));
        setup.rest = Some(format!("https://localhost:{port}"));
        // A simulator takes any key where its venue needs one: a simulated
        // feed needs none of the user's.
        if setup.api_key.is_none()
            && crate::live::api_key::needed(setup.venue, &setup.instruments, setup.channels)
        {
            setup.api_key = Some(crate::live::ApiKey::Given("simulated".to_owned()));
        }
        if setup.lines.standby {
            setup.lines.standby_endpoint = setup.endpoint.clone();
        }
        sims.push(Box::new(sim));
    }
    Ok((sims, ca))
}
