//! Reading the stream back: a subscription polled on the caller's thread,
//! each message decoded in the log buffer where Aeron delivered it.

use rusteron_client::{AeronHeader, AeronSubscription};

use crate::id::{Event, FeedId};
use crate::shm::RingInstrument;
use crate::stream::{self, BadMessage, Message, Sequence, Step};

use super::AeronError;

/// Publishers a subscriber keeps apart at most (a feed's threads, feeds
/// restarted): past it the one seen first is forgotten, so a stream cannot
/// make the subscriber grow without bound.
const MAX_SOURCES: usize = 64;
/// The largest instrument table a subscriber takes. Each source's table
/// grows only as its entries arrive, so a stream's memory here is bounded
/// by this times [`MAX_SOURCES`] entries whatever it sends.
const MAX_INSTRUMENTS: u32 = 1 << 16;

/// One publisher as a subscriber has seen it: its numbering and its
/// instrument table.
#[derive(Debug)]
pub struct Source {
    /// Its id (each message's bytes 4..8).
    pub publisher: u32,
    /// Its events' sequence numbers, as checked so far.
    pub sequence: Sequence,
    /// Entries by id, as far as they have arrived.
    instruments: Vec<Option<RingInstrument>>,
    /// The table's size, as its parts say.
    total: usize,
    known: usize,
}

impl Source {
    fn new(publisher: u32) -> Source {
        Source {
            publisher,
            sequence: Sequence::new(),
            instruments: Vec::new(),
            total: 0,
            known: 0,
        }
    }

    /// Whether its whole instrument table has arrived.
    pub fn has_table(&self) -> bool {
        self.total > 0 && self.known == self.total
    }

    /// The instrument `id` names, once its table part has arrived.
    pub fn instrument(&self, id: FeedId) -> Option<&RingInstrument> {
        self.instruments.get(id.0 as usize)?.as_ref()
    }

    /// Its table, once whole.
    pub fn instruments(&self) -> Option<Vec<RingInstrument>> {
        self.has_table()
            .then(|| self.instruments.iter().flatten().cloned().collect())
    }

    fn take_part(&mut self, total: u32, entries: Vec<RingInstrument>) -> Result<(), BadMessage> {
        if total > MAX_INSTRUMENTS {
            return Err(BadMessage::Table);
        }
        if self.total != total as usize {
            // A new table (a feed with other instruments under this id).
            self.instruments.clear();
            self.total = total as usize;
            self.known = 0;
        }
        for e in entries {
            let at = e.id.0 as usize;
            if self.instruments.len() <= at {
                self.instruments.resize(at + 1, None);
            }
            let slot = &mut self.instruments[at];
            if slot.is_none() {
                self.known += 1;
            }
            *slot = Some(e);
        }
        Ok(())
    }
}

/// What one message brought.
#[derive(Debug)]
pub enum Received<'a> {
    /// An event, and what its sequence number said.
    Event {
        /// Its publisher (its table, its numbering).
        source: &'a Source,
        /// The event; `recv_tsc` is the feed's TSC stamp.
        event: Event,
        /// Its sequence number.
        sequence: u64,
        /// Joined, next, a gap, or old (a duplicate: not delivered again
        /// by a well-formed stream, but said).
        step: Step,
        /// The feed's read stamp on its wall clock, ns since the epoch.
        unix_ns: u64,
    },
    /// A part of a publisher's instrument table
    /// ([`Source::has_table`] once whole).
    Table {
        /// The publisher.
        source: &'a Source,
    },
    /// A message that does not read (counted in [`Subscriber::bad`]).
    Bad(BadMessage),
}

/// A subscription to the feed's stream.
pub struct Subscriber {
    subscription: AeronSubscription,
    channel: String,
    stream: i32,
    sources: Vec<Source>,
    bad: u64,
}

impl std::fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriber")
            .field("sources", &self.sources)
            .field("bad", &self.bad)
            .finish_non_exhaustive()
    }
}

impl Subscriber {
    pub(super) fn new(subscription: AeronSubscription, channel: &str, stream: i32) -> Subscriber {
        Subscriber {
            subscription,
            channel: channel.to_owned(),
            stream,
            sources: Vec::new(),
            bad: 0,
        }
    }

    /// Whether any publisher is connected now.
    pub fn is_connected(&self) -> bool {
        self.subscription.is_connected()
    }

    /// The publishers seen so far.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// Messages that did not read.
    pub fn bad(&self) -> u64 {
        self.bad
    }

    /// Reads up to `limit` messages, handing each to `on` (borrowed for
    /// the call); returns how many fragments were read (0: nothing was
    /// waiting). An event's way allocates nothing; a table part allocates
    /// its entries.
    pub fn poll(
        &mut self,
        limit: usize,
        mut on: impl FnMut(Received<'_>),
    ) -> Result<usize, AeronError> {
        let Subscriber {
            subscription,
            channel,
            stream,
            sources,
            bad,
        } = self;
        let read = subscription
            .poll_fn(
                |bytes: &[u8], _header: AeronHeader| take(bytes, sources, bad, &mut on),
                limit,
            )
            .map_err(|e| AeronError::Channel {
                channel: channel.clone(),
                stream: *stream,
                why: e.to_string(),
            })?;
        Ok(read as usize)
    }
}

/// The source of `publisher`, made on first sight (the oldest forgotten
/// past [`MAX_SOURCES`]).
fn source(sources: &mut Vec<Source>, publisher: u32) -> Option<usize> {
    if let Some(i) = sources.iter().position(|s| s.publisher == publisher) {
        return Some(i);
    }
    if sources.len() >= MAX_SOURCES {
        sources.remove(0);
    }
    sources.push(Source::new(publisher));
    Some(sources.len() - 1)
}

fn take(bytes: &[u8], sources: &mut Vec<Source>, bad: &mut u64, on: &mut impl FnMut(Received<'_>)) {
    let mut refuse = |why: BadMessage, bad: &mut u64| {
        *bad += 1;
        on(Received::Bad(why));
    };
    // Events first, without allocating.
    match stream::decode_event(bytes) {
        Ok(Some((publisher, sequence, event, unix_ns))) => {
            let Some(i) = source(sources, publisher) else {
                return refuse(BadMessage::Table, bad);
            };
            let step = sources[i].sequence.observe(sequence);
            on(Received::Event {
                source: &sources[i],
                event,
                sequence,
                step,
                unix_ns,
            });
            return;
        }
        Ok(None) => {}
        Err(why) => return refuse(why, bad),
    }
    match stream::decode(bytes) {
        Ok(Message::Unknown {
            publisher,
            sequence,
        }) => {
            // A newer kind: skipped, but its number is no gap.
            if let Some(i) = source(sources, publisher) {
                sources[i].sequence.observe(sequence);
            }
        }
        Ok(Message::Table {
            publisher,
            total,
            entries,
        }) => {
            let Some(i) = source(sources, publisher) else {
                return refuse(BadMessage::Table, bad);
            };
            match sources[i].take_part(total, entries) {
                Ok(()) => on(Received::Table {
                    source: &sources[i],
                }),
                Err(why) => refuse(why, bad),
            }
        }
        Ok(Message::Event { .. }) => {}
        Err(why) => refuse(why, bad),
    }
}
