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
