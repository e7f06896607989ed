//! Venue timestamps to nanoseconds since the Unix epoch, without
//! allocating and without a calendar crate: venues send either integers
//! (ms, µs) or RFC 3339 UTC text (`2023-09-25T07:48:36.925533Z`).

/// Parses an RFC 3339 UTC timestamp, `YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z` (or
/// `+00:00` for `Z`), as ns since the Unix epoch. `None` for anything
/// else, including other offsets and dates before 1970.
pub fn rfc3339_ns(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: core::ops::Range<usize>| -> Option<u64> {
        b[r].iter().try_fold(0u64, |v, &d| {
            d.is_ascii_digit().then(|| v * 10 + u64::from(d - b'0'))
        })
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &b[19..];
    let mut nanos = 0u64;
    if let Some((b'.', frac)) = rest.split_first() {
        let digits = frac.iter().take_while(|d| d.is_ascii_digit()).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        for &d in &frac[..digits] {
            nanos = nanos * 10 + u64::from(d - b'0');
        }
        nanos *= 10u64.pow(9 - digits as u32);
        rest = &frac[digits..];
    }
    if !matches!(rest, b"Z" | b"z" | b"+00:00") {
        return None;
    }
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => return None,
    };
    if year < 1970 || day == 0 || day > days_in_month || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let days = days_from_civil(year as i64, month as i64, day as i64);
    let secs = days as u64 * 86_400 + hour * 3_600 + minute * 60 + second;
    secs.checked_mul(1_000_000_000)?.checked_add(nanos)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_instants() {
        assert_eq!(rfc3339_ns("1970-01-01T00:00:00Z"), Some(0));
        // From Kraken's and Coinbase's documentation examples; the values
        // checked against `date -u -d ... +%s%N`.
        assert_eq!(
            rfc3339_ns("2023-09-25T07:48:36.925533Z"),
            Some(1_695_628_116_925_533_000)
        );
        assert_eq!(
            rfc3339_ns("2023-02-09T20:32:50.714964855Z"),
            Some(1_675_974_770_714_964_855)
        );
        assert_eq!(
            rfc3339_ns("2024-02-29T23:59:59.5+00:00"),
            Some(1_709_251_199_500_000_000)
        );
        for bad in [
            "",
            "2023-09-25T07:48:36",
            "2023-09-25T07:48:36.Z",
            "2023-09-25T07:48:36.1234567890Z",
            "2023-09-25T07:48:36+01:00",
            "2023-02-29T00:00:00Z",
            "2023-13-01T00:00:00Z",
            "1969-12-31T23:59:59Z",
            "2023-09-25T24:00:00Z",
            "2023-09-25T07:48:3xZ",
        ] {
            assert_eq!(rfc3339_ns(bad), None, "{bad}");
        }
    }

    proptest! {
        /// Agrees with counting seconds day by day from the epoch.
        #[test]
        fn matches_a_naive_calendar(days in 0u64..60_000, secs in 0u64..86_400, nanos in 0u64..1_000_000_000) {
            let (mut y, mut d) = (1970u64, days);
            loop {
                let len = if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) { 366 } else { 365 };
                if d < len { break; }
                d -= len;
                y += 1;
            }
            let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
            let months = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
            let mut m = 0;
            while d >= months[m] { d -= months[m]; m += 1; }
            let text = format!(
                "{y:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
                m + 1, d + 1, secs / 3600, secs / 60 % 60, secs % 60
            );
            prop_assert_eq!(rfc3339_ns(&text), Some((days * 86_400 + secs) * 1_000_000_000 + nanos));
        }

        #[test]
        fn never_panics(s in "\\PC{0,40}") {
            let _ = rfc3339_ns(&s);
        }
    }
}
