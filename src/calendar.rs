//! The proleptic Gregorian calendar in UTC: dates as day numbers (days since 1970-01-01),
//! RFC 3339 instants as seconds since the epoch, and their canonical spelling. Shared by the
//! built-in world's tools and by scoring, which compares dates and instants by value.

/// English weekday names, Thursday first: 1970-01-01 was a Thursday.
const WEEKDAYS: [&str; 7] = [
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
];

/// Days since 1970-01-01 of a valid calendar date `y-m-d` (Howard Hinnant's
/// `days_from_civil`).
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The calendar date `(year, month, day)` of a day number (Hinnant's `civil_from_days`).
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Days in `month` (1..=12) of `year`.
pub(crate) fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The day number of `year-month-day` when that date exists (`2026-02-30` does not).
pub(crate) fn date(year: i64, month: i64, day: i64) -> Option<i64> {
    let valid = (1..=12).contains(&month) && (1..=days_in_month(year, month)).contains(&day);
    valid.then(|| days_from_civil(year, month, day))
}

/// Parses `YYYY-MM-DD` into a day number; `None` for anything else or an impossible date.
pub(crate) fn parse_date(text: &str) -> Option<i64> {
    let mut parts = text.splitn(3, '-');
    let year: i64 = parts.next().filter(|p| p.len() == 4)?.parse().ok()?;
    let month: i64 = parts.next().filter(|p| p.len() == 2)?.parse().ok()?;
    let day: i64 = parts.next().filter(|p| p.len() == 2)?.parse().ok()?;
    date(year, month, day)
}

/// Formats a day number as `YYYY-MM-DD`.
pub(crate) fn format_date(days: i64) -> String {
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The English weekday name of a day number.
pub(crate) fn weekday(days: i64) -> &'static str {
    WEEKDAYS[days.rem_euclid(7) as usize]
}

/// An RFC 3339 instant: whole seconds since the epoch (UTC) and the fraction as written
/// (digits after the point, trailing zeros removed; empty for none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Instant {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub seconds: i64,
    /// Fractional digits, without trailing zeros.
    pub fraction: String,
}

impl Instant {
    /// The canonical UTC spelling: `2026-01-16T09:00:00Z`, with the fraction when there is
    /// one (`...:00.5Z`). Two spellings of one instant (`+00:00` and `Z`, `+01:00` an hour
    /// later) have the same canonical form.
    pub(crate) fn canonical(&self) -> String {
        let days = self.seconds.div_euclid(86_400);
        let rest = self.seconds.rem_euclid(86_400);
        let fraction = if self.fraction.is_empty() {
            String::new()
        } else {
            format!(".{}", self.fraction)
        };
        format!(
            "{}T{:02}:{:02}:{:02}{fraction}Z",
            format_date(days),
            rest / 3600,
            rest % 3600 / 60,
            rest % 60
        )
    }
}

/// Parses an RFC 3339 date-time (`2026-01-20T14:00:00Z`, `...+01:00`, `t`/`z` in lower case,
/// an optional fraction); `None` for anything else, a date without a time included.
pub(crate) fn parse_instant(text: &str) -> Option<Instant> {
    let (date, time) = text.split_once(['T', 't'])?;
    let days = parse_date(date)?;
    let (clock, offset_seconds) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else {
        let split = time.rfind(['+', '-'])?;
        let (clock, offset) = time.split_at(split);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let (hours, minutes) = offset[1..].split_once(':')?;
        if hours.len() != 2 || minutes.len() != 2 {
            return None;
        }
        let offset = hours.parse::<i64>().ok()? * 3600 + minutes.parse::<i64>().ok()? * 60;
        (clock, sign * offset)
    };
    let (clock, fraction) = match clock.split_once('.') {
        Some((clock, fraction))
            if !fraction.is_empty() && fraction.bytes().all(|b| b.is_ascii_digit()) =>
        {
            (clock, fraction.trim_end_matches('0').to_owned())
        }
        Some(_) => return None,
        None => (clock, String::new()),
    };
    let fields: Vec<&str> = clock.split(':').collect();
    let [hour, minute, second] = fields.as_slice() else {
        return None;
    };
    if [hour, minute, second].iter().any(|f| f.len() != 2) {
        return None;
    }
    let (hour, minute, second): (i64, i64, i64) = (
        hour.parse().ok()?,
        minute.parse().ok()?,
        second.parse().ok()?,
    );
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    Some(Instant {
        seconds: days * 86_400 + hour * 3600 + minute * 60 + second - offset_seconds,
        fraction,
    })
}

/// The canonical spelling of `text` when it is an RFC 3339 instant ([`Instant::canonical`]).
pub(crate) fn canonical_instant(text: &str) -> Option<String> {
    parse_instant(text).map(|instant| instant.canonical())
}

#[cfg(test)]
mod tests {
    //! The calendar: one instant has one canonical spelling; day numbers round-trip with weekdays.

    use super::*;

    #[test]
    fn spellings_of_one_instant_share_a_canonical_form() {
        for text in [
            "2026-01-16T09:00:00Z",
            "2026-01-16T09:00:00+00:00",
            "2026-01-16t09:00:00z",
            "2026-01-16T10:00:00+01:00",
            "2026-01-16T04:30:00-04:30",
        ] {
            assert_eq!(
                canonical_instant(text).as_deref(),
                Some("2026-01-16T09:00:00Z"),
                "{text}"
            );
        }
        assert_eq!(
            canonical_instant("2026-01-16T09:00:00.500+00:00").as_deref(),
            Some("2026-01-16T09:00:00.5Z")
        );
        assert_eq!(
            canonical_instant("2026-01-01T00:30:00+01:00").as_deref(),
            Some("2025-12-31T23:30:00Z")
        );
    }

    #[test]
    fn dates_and_malformed_times_are_not_instants() {
        for text in [
            "2026-01-16",
            "2026-01-16T9:00:00Z",
            "2026-01-16T09:00Z",
            "2026-02-30T09:00:00Z",
            "2026-01-16T24:00:00Z",
            "2026-01-16T09:00:00+0100",
            "2026-01-16T09:00:00.Z",
            "SKU-100",
        ] {
            assert_eq!(parse_instant(text), None, "{text}");
        }
    }

    #[test]
    fn day_numbers_round_trip_and_name_their_weekday() {
        let days = parse_date("2026-01-29").expect("a date");
        assert_eq!(format_date(days), "2026-01-29");
        assert_eq!(weekday(days), "Thursday");
        assert_eq!(date(2024, 2, 29), parse_date("2024-02-29"));
        assert_eq!(date(2026, 2, 29), None);
    }
}
