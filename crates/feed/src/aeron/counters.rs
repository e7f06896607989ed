//! The media driver's own counters, as a client reads them: the system
//! counters (`aeron_system_counters.c`: "NAKs sent", "Retransmits sent",
//! ...) that show what the driver did on the wire, e.g. that loss
//! happened and was repaired.

use super::Client;

/// The system counters' type id (`AERON_SYSTEM_COUNTER_TYPE_ID`).
const SYSTEM_COUNTER_TYPE_ID: i32 = 0;

impl Client {
    /// The value of the driver's system counter labelled `label` ("NAKs
    /// sent", "Retransmits sent", "NAKs received", ...), or `None` when the
    /// driver has no such counter.
    pub fn system_counter(&self, label: &str) -> Option<i64> {
        let mut found = None;
        self.aeron
            .counters_reader()
            .foreach_counter_fn(|value, _id, type_id, _key, l| {
                if found.is_none() && type_id == SYSTEM_COUNTER_TYPE_ID && l == label {
                    found = Some(value);
                }
            });
        found
    }
}
