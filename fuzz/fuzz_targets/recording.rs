//! The recording reader on arbitrary bytes: every record it hands out is
//! within its limit and passed its CRC; anything else is a typed error,
//! never a panic, and nothing is allocated past the limit.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tickwire_feed::recording::{RECORD_HEADER, Reader};

const LIMIT: usize = 64 * 1024;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = Reader::with_limit(data, LIMIT) else {
        return;
    };
    let mut consumed = tickwire_feed::recording::FILE_HEADER;
    loop {
        match reader.next_record() {
            Ok(Some(record)) => {
                assert!(record.payload.len() <= LIMIT);
                consumed += RECORD_HEADER + record.payload.len();
                assert!(consumed <= data.len(), "read past the input");
            }
            Ok(None) => {
                assert_eq!(consumed, data.len(), "a clean end only at the end");
                break;
            }
            Err(_) => break,
        }
    }
});
