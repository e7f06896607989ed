//! What each connection of the feed is: a table by the driver's slot
//! (`ConnId::index`), allocated once for every slot the driver has, so
//! that opening a connection or a REST fetch on the feed thread never
//! allocates (a hash map grows, or rehashes, as fetches come and go).

use tickwire_net::ConnId;

use super::core::Link;

/// Each slot's connection and its role, while it has one.
pub(crate) struct Links {
    slots: Vec<Option<(ConnId, Link)>>,
}

impl Links {
    /// A table for a driver of `slots` connection slots.
    pub(crate) fn new(slots: usize) -> Links {
        Links {
            slots: vec![None; slots],
        }
    }

    /// `id` is `link` (replacing what its slot held). A slot beyond the
    /// table (never: the table has one entry per slot) is not kept.
    pub(crate) fn insert(&mut self, id: ConnId, link: Link) {
        debug_assert!(id.index() < self.slots.len(), "{id} beyond the table");
        if let Some(slot) = self.slots.get_mut(id.index()) {
            *slot = Some((id, link));
        }
    }

    /// What `id` is, if its slot still holds it (not a connection since
    /// replaced in the same slot).
    pub(crate) fn get(&self, id: &ConnId) -> Option<&Link> {
        match self.slots.get(id.index()) {
            Some(Some((held, link))) if held == id => Some(link),
            _ => None,
        }
    }

    /// Whether `id` is one of the feed's connections.
    pub(crate) fn contains_key(&self, id: &ConnId) -> bool {
        self.get(id).is_some()
    }

    /// Forgets `id` (not a later connection in its slot).
    pub(crate) fn remove(&mut self, id: &ConnId) {
        if let Some(slot) = self.slots.get_mut(id.index())
            && slot.is_some_and(|(held, _)| held == *id)
        {
            *slot = None;
        }
    }

    /// Every connection held.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &ConnId> {
        self.slots.iter().flatten().map(|(id, _)| id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickwire_venues::event::InstrumentId;

    /// The feed's connections come and go on the feed thread (REST fetches
    /// open and close, lines are replaced, standbys promoted): once the table
    /// exists, none of that may allocate. The hash map it replaced allocated
    /// on its first insert and again each time it grew (fails with
    /// `HashMap::new()` behind the same methods).
    #[test]
    fn connections_coming_and_going_never_allocate() {
        let slots = 16;
        let mut links = Links::new(slots);
        let ((), allocations) = tickwire_testkit::allocations(|| {
            for serial in 0..50u32 {
                for index in 0..slots as u32 {
                    let id = ConnId::from_parts(index, serial);
                    let link = if index % 2 == 0 {
                        Link::Stream(0, index as usize, tickwire_venues::Line::Primary)
                    } else {
                        Link::Fetch(1, InstrumentId(index))
                    };
                    links.insert(id, link);
                    assert!(links.contains_key(&id));
                }
                assert_eq!(links.keys().count(), slots);
                // Every connection closes before its slot is used again.
                for index in 0..slots as u32 {
                    links.remove(&ConnId::from_parts(index, serial));
                }
                assert_eq!(links.keys().count(), 0);
            }
        });
        assert_eq!(allocations, 0);
    }

    /// A connection since replaced in its slot is not mistaken for the one
    /// there now, and forgetting it leaves the newer one alone.
    #[test]
    fn an_old_connection_is_not_its_slots_successor() {
        let mut links = Links::new(4);
        let old = ConnId::from_parts(2, 0);
        let new = ConnId::from_parts(2, 1);
        links.insert(old, Link::Fetch(0, InstrumentId(7)));
        links.insert(new, Link::Fetch(0, InstrumentId(8)));
        assert!(links.get(&old).is_none());
        links.remove(&old);
        assert!(matches!(
            links.get(&new),
            Some(Link::Fetch(0, InstrumentId(8)))
        ));
        links.remove(&new);
        assert_eq!(links.keys().count(), 0);
    }
}
