//! The engine's rules, tested on a market without a server.

use super::*;
