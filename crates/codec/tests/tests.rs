//! Integration tests for tickwire-codec, built as one test binary.

mod alloc;
mod handshake;
mod props;
mod rfc;
mod samples;
mod util;
mod validation;
