//! Calendar dates in UTC without a time-zone database: proleptic Gregorian day numbers (Howard
//! Hinnant's algorithms), JavaScript's `toISOString` format, and parsing ISO-8601 timestamps
//! and HTTP dates.

/// Days since 1970-01-01 to `(year, month, day)`.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `(year, month, day)` to days since 1970-01-01 (inverse of [`civil_from_days`]).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((i64::from(m) + 9) % 12) + 2) / 5 + i64::from(d) - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// `(year, month, day, hour, minute, second)` of a time in seconds since the epoch.
pub fn utc_fields(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let r = secs.rem_euclid(86_400) as u32;
    (y, m, d, r / 3600, r % 3600 / 60, r % 60)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for milliseconds since the epoch, as JavaScript prints dates.
pub fn iso_timestamp(ms: i64) -> String {
    let (y, m, d, h, mi, s) = utc_fields(ms.div_euclid(1000));
    let millis = ms.rem_euclid(1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{millis:03}Z")
}

/// Milliseconds since the epoch for `YYYY-MM-DDTHH:MM:SS[.fff…]` followed by `Z`, a `±HH:MM`
/// offset, or nothing (UTC). Surrounding whitespace is ignored; a space may stand for `T`.
/// `None` if it does not parse or a field is out of range.
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    let mut i = 19;
    let mut ms = 0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let frac = s.get(start..i).filter(|f| !f.is_empty())?;
        let three: String = frac.chars().chain("000".chars()).take(3).collect();
        ms = three.parse::<i64>().ok()?;
    }
    let offset_min = match &s[i..] {
        "Z" | "z" | "" => 0,
        rest if rest.len() == 6 && matches!(rest.as_bytes()[0], b'+' | b'-') => {
            if rest.as_bytes()[3] != b':' {
                return None;
            }
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (num(i + 1..i + 3)? * 60 + num(i + 4..i + 6)?)
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo as u32, d as u32);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs * 1000 + ms)
}

/// Milliseconds since the epoch for an HTTP date in the preferred IMF-fixdate form
/// (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7), as servers write `Retry-After`.
pub fn parse_http_date_ms(s: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let mut parts = s.trim().split_ascii_whitespace();
    let _weekday = parts.next()?.strip_suffix(',')?;
    let day: u32 = parts.next()?.parse().ok()?;
    let month_name = parts.next()?;
    let month = MONTHS.iter().position(|m| *m == month_name)? as u32 + 1;
    let year: i64 = parts.next()?.parse().ok()?;
    let time = parts.next()?;
    if parts.next()? != "GMT" || parts.next().is_some() || !(1..=31).contains(&day) {
        return None;
    }
    let hms: Vec<i64> = time
        .split(':')
        .map(|t| t.parse().ok())
        .collect::<Option<_>>()?;
    let [h, mi, sec] = hms[..] else { return None };
    if !(0..24).contains(&h) || !(0..60).contains(&mi) || !(0..=60).contains(&sec) {
        return None;
    }
    Some((days_from_civil(year, month, day) * 86_400 + h * 3600 + mi * 60 + sec) * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_matches_javascript_and_parses_back() {
        assert_eq!(iso_timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_timestamp(1_795_300_000_123), "2026-11-21T22:26:40.123Z");
        assert_eq!(iso_timestamp(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso_timestamp(-1), "1969-12-31T23:59:59.999Z");
        for ms in [
            0,
            1_795_300_000_123,
            951_782_400_000,
            -86_400_000 * 365 * 400 - 7,
        ] {
            assert_eq!(parse_iso_ms(&iso_timestamp(ms)), Some(ms));
        }
        assert_eq!(
            parse_iso_ms("2026-11-21T23:26:40+01:00"),
            Some(1_795_300_000_000)
        );
        assert_eq!(
            parse_iso_ms(" 2026-11-21 22:26:40.1234 "),
            Some(1_795_300_000_123)
        );
        assert_eq!(parse_iso_ms("2026-11-21T22:26:40"), Some(1_795_300_000_000));
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-11-21T22:26:40.Z",
            "2026-11-21T22-26-40Z",
        ] {
            assert_eq!(parse_iso_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn http_dates() {
        assert_eq!(
            parse_http_date_ms("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777_000)
        );
        for bad in [
            "",
            "Sun, 06 Nov 1994 08:49:37",
            "06 Nov 1994 08:49:37 GMT",
            "soon",
        ] {
            assert_eq!(parse_http_date_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn day_numbers_round_trip() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
