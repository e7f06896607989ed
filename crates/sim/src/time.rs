//! Wall-clock time for the venues' messages: now, since the Unix epoch, and
//! the UTC calendar date and time of day of an instant. One reading of the
//! clock and one calendar for every venue module (each writes the fields
//! its own way: Kraken's RFC 3339 with six digits, Coinbase's Go formats,
//! the integers of Binance, OKX, Bybit and Deribit).

use std::time::{SystemTime, UNIX_EPOCH};

/// Nanoseconds since the Unix epoch, now (0 for a clock set before it).
pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Microseconds since the Unix epoch, now.
pub(crate) fn now_us() -> u64 {
    now_ns() / 1_000
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    now_ns() / 1_000_000
}

/// A UTC date and time of day, to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Utc {
    pub(crate) year: i64,
    /// 1 to 12.
    pub(crate) month: u32,
    /// 1 to 31.
    pub(crate) day: u32,
    pub(crate) hour: u64,
    pub(crate) minute: u64,
    pub(crate) second: u64,
}

impl Utc {
    /// `secs` seconds after 1970-01-01T00:00:00Z (UTC has no leap seconds
    /// in Unix time).
    pub(crate) fn from_secs(secs: u64) -> Utc {
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
/// `days_from_civil` that `tickwire_venues::time` parses with).
pub(crate) fn date(days: i64) -> (i64, u32, u32) {
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
        let now = now_ns();
        assert!(now > 1_600_000_000_000_000_000, "{now}");
        assert!(now_ms() >= now / 1_000_000);
    }
}
