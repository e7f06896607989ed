//! The decoder against the venue's schema facts, and against itself.

mod roundtrip;
mod schema;
