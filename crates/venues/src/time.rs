//! Venue timestamps to nanoseconds since the Unix epoch, without
//! allocating and without a calendar crate: venues send either integers
//! (ms, µs) or RFC 3339 UTC text (`2023-09-25T07:48:36.925533Z`). And
//! back: [`Utc`], the calendar date and time of day of an instant (the
//! simulator writes venues' timestamps with it, the feed names its run
//! directories).

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

/// A UTC date and time of day, to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Utc {
    /// The year (proleptic Gregorian).
    pub year: i64,
    /// 1 to 12.
    pub month: u32,
    /// 1 to 31.
    pub day: u32,
    /// 0 to 23.
    pub hour: u64,
    /// 0 to 59.
    pub minute: u64,
    /// 0 to 59 (Unix time has no leap second).
    pub second: u64,
}

impl Utc {
    /// `secs` seconds after 1970-01-01T00:00:00Z (UTC has no leap seconds
    /// in Unix time).
    pub fn from_secs(secs: u64) -> Utc {
        let (days, time) = (secs / 86_400, secs % 86_400);
        let (year, month, day) = date(days as i64);
        Utc {
            year,
            month,
            day,
            hour: time / 3600,
            minute: time / 60 % 60,
            second: time % 60,
        }
    }
}

/// The proleptic Gregorian date (year, month, day) `days` after
/// 1970-01-01, in constant time: counted in 400-year eras of 146 097 days,
/// each year starting on 1 March so that the leap day falls at its end
/// (Howard Hinnant's `civil_from_days`, the inverse of the
/// `days_from_civil` that [`rfc3339_ns`] parses with).
pub fn date(days: i64) -> (i64, u32, u32) {
    let from_march = days + 719_468; // 0000-03-01 to 1970-01-01
    let era = from_march.div_euclid(146_097);
    let day_of_era = from_march - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every day from 1970 to beyond 2400 against a count of the calendar
    /// a day at a time (leap years by the Gregorian rule).
    #[test]
    fn dates_follow_the_calendar_day_by_day() {
        let leap = |y: i64| y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        let (mut year, mut month, mut day) = (1970i64, 1u32, 1u32);
        for days in 0..160_000 {
            assert_eq!(date(days), (year, month, day), "day {days}");
            let length = match month {
                2 if leap(year) => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            day += 1;
            if day > length {
                day = 1;
                month += 1;
                if month > 12 {
                    month = 1;
                    year += 1;
                }
            }
        }
        assert!(year > 2400);
    }

    #[test]
    fn times_of_day() {
        assert_eq!(
            Utc::from_secs(1_696_613_755),
            Utc {
                year: 2023,
                month: 10,
                day: 6,
                hour: 17,
                minute: 35,
                second: 55
            }
        );
        assert_eq!(Utc::from_secs(951_782_399).day, 28);
        assert_eq!(Utc::from_secs(951_782_400).day, 29);
    }

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
