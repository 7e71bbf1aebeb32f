//! `new Date(value).getTime()` as Node (V8) computes it, for the ISO
//! `timestamp` of session entries: pi turns it into the `timestamp` of the
//! messages it builds from custom messages, branch summaries and
//! compactions, and the replay compares it with message times (C.3).
//!
//! Strings follow V8's date parser, which first reads the ES Date Time
//! String Format (with V8's extensions: any number of fraction digits,
//! `+hhmm` offsets, lowercase `t`/`z`) and falls back to its legacy
//! grammar (month names, `1/2/2024`, `GMT+2`, ...) for anything else. The
//! result of both is exact when the string fixes the offset (a `Z`, an
//! offset, a zone name, or a date-only ISO form, which is UTC). When it does
//! not, JavaScript reads the time in the host's local time zone; this loader
//! does not guess one and answers [`DateValue::LocalTime`], which callers turn
//! into a typed error.

use crate::json::tape::Kind;
use crate::json::text::to_units;
use crate::json::view::Value;

/// What `new Date(x).getTime()` gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DateValue {
    /// A time value, or NaN (an invalid date, `null` in JSON).
    Time(f64),
    /// A valid date read in the host's local time zone.
    LocalTime,
}

const MAX_TIME_MS: f64 = 8.64e15;
/// V8 refuses a local date more than ten days beyond the time range before
/// converting it.
const MAX_LOCAL_MS: f64 = MAX_TIME_MS + 864_000_000.0;

fn time_clip(t: f64) -> f64 {
    if !t.is_finite() || t.abs() > MAX_TIME_MS {
        f64::NAN
    } else {
        t.trunc() + 0.0
    }
}

/// `new Date(v).getTime()` for a JSON value (`None` is `undefined`).
pub fn date_of(v: Option<Value<'_>>) -> DateValue {
    let Some(v) = v else {
        return DateValue::Time(f64::NAN);
    };
    match v.kind() {
        Kind::Null | Kind::False => DateValue::Time(0.0),
        Kind::True => DateValue::Time(1.0),
        Kind::Number => DateValue::Time(time_clip(v.number().unwrap_or(f64::NAN))),
        // Strings, and objects through ToPrimitive (arrays join, objects are
        // "[object Object]").
        _ => parse_date(&v.to_js_string()),
    }
}

/// `Date.parse(s)` for a string (canonical text).
pub fn parse_date(s: &[u8]) -> DateValue {
    if let Some(t) = to_iso_string_form(s) {
        return DateValue::Time(t);
    }
    let units = to_units(s);
    // V8 reads a NUL as the end of the string.
    let end = units.iter().position(|&u| u == 0).unwrap_or(units.len());
    let Some((date, offset_seconds)) = parse_fields(&units[..end]) else {
        return DateValue::Time(f64::NAN);
    };
    match offset_seconds {
        Some(offset) => DateValue::Time(time_clip(date - f64::from(offset) * 1000.0)),
        None if date.is_nan() || date.abs() > MAX_LOCAL_MS => DateValue::Time(f64::NAN),
        None => DateValue::LocalTime,
    }
}

/// The form `Date.prototype.toISOString` writes (`YYYY-MM-DDTHH:mm:ss.sssZ`,
/// what pi writes), read directly; anything else goes through the parser.
fn to_iso_string_form(s: &[u8]) -> Option<f64> {
    if s.len() != 24
        || s[4] != b'-'
        || s[7] != b'-'
        || s[10] != b'T'
        || s[13] != b':'
        || s[16] != b':'
        || s[19] != b'.'
        || s[23] != b'Z'
    {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i32> {
        s[from..to].iter().try_fold(0i32, |acc, &d| {
            d.is_ascii_digit().then(|| acc * 10 + i32::from(d - b'0'))
        })
    };
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second, ms) = (num(11, 13)?, num(14, 16)?, num(17, 19)?, num(20, 23)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    Some(time_clip(make_date(
        make_day(year, month - 1, day),
        [hour, minute, second, ms],
    )))
}

/// Milliseconds from the epoch for a day from [`make_day`] and a time of
/// day (hour, minute, second, millisecond).
fn make_date(day: f64, [hour, minute, second, ms]: [i32; 4]) -> f64 {
    let time = f64::from(hour) * 3_600_000.0
        + f64::from(minute) * 60_000.0
        + f64::from(second) * 1000.0
        + f64::from(ms);
    day * 86_400_000.0 + time
}

/// Days from 1970-01-01 to the given date (month from 0, day may overflow
/// the month), NaN beyond V8's year range.
fn make_day(year: i32, month0: i32, day: i32) -> f64 {
    if !(-1_000_000..=1_000_000).contains(&year) {
        return f64::NAN;
    }
    let y = i64::from(year) + i64::from(month0.div_euclid(12));
    let m = i64::from(month0.rem_euclid(12)) + 1;
    // Days from civil (proleptic Gregorian), then the day of the month.
    let (yy, mm) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    (days + i64::from(day) - 1) as f64
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum WordKind {
    Unknown,
    Month,
    Zone,
    TimeSeparator,
    AmPm,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Token {
    /// Digits: the value of at most their first nine, and their count.
    Number(i32, usize),
    Symbol(u16),
    Word(WordKind, i32, usize),
    Space,
    Other,
    End,
}

impl Token {
    fn number_of_length(self, len: usize) -> Option<i32> {
        match self {
            Token::Number(n, l) if l == len => Some(n),
            _ => None,
        }
    }

    fn is_sign(self) -> bool {
        matches!(self, Token::Symbol(c) if c == u16::from(b'+') || c == u16::from(b'-'))
    }

    fn sign(self) -> i32 {
        if self == Token::Symbol(u16::from(b'-')) {
            -1
        } else {
            1
        }
    }

    fn is_z(self) -> bool {
        matches!(self, Token::Word(WordKind::Zone, 0, 1))
    }
}

/// Words V8 knows by their first three letters (longer words match only as
/// month names).
const KEYWORDS: [(&[u8; 3], WordKind, i32); 27] = [
    (b"jan", WordKind::Month, 1),
    (b"feb", WordKind::Month, 2),
    (b"mar", WordKind::Month, 3),
    (b"apr", WordKind::Month, 4),
    (b"may", WordKind::Month, 5),
    (b"jun", WordKind::Month, 6),
    (b"jul", WordKind::Month, 7),
    (b"aug", WordKind::Month, 8),
    (b"sep", WordKind::Month, 9),
    (b"oct", WordKind::Month, 10),
    (b"nov", WordKind::Month, 11),
    (b"dec", WordKind::Month, 12),
    (b"am\0", WordKind::AmPm, 0),
    (b"pm\0", WordKind::AmPm, 12),
    (b"ut\0", WordKind::Zone, 0),
    (b"utc", WordKind::Zone, 0),
    (b"z\0\0", WordKind::Zone, 0),
    (b"gmt", WordKind::Zone, 0),
    (b"cdt", WordKind::Zone, -5),
    (b"cst", WordKind::Zone, -6),
    (b"edt", WordKind::Zone, -4),
    (b"est", WordKind::Zone, -5),
    (b"mdt", WordKind::Zone, -6),
    (b"mst", WordKind::Zone, -7),
    (b"pdt", WordKind::Zone, -7),
    (b"pst", WordKind::Zone, -8),
    (b"t\0\0", WordKind::TimeSeparator, 0),
];

struct Scanner<'u> {
    units: &'u [u16],
    pos: usize,
    next: Token,
}

impl<'u> Scanner<'u> {
    fn new(units: &'u [u16]) -> Self {
        let mut s = Scanner {
            units,
            pos: 0,
            next: Token::End,
        };
        s.next = s.scan();
        s
    }

    fn ch(&self) -> u16 {
        self.units.get(self.pos).copied().unwrap_or(0)
    }

    fn scan(&mut self) -> Token {
        let c = self.ch();
        if c == 0 {
            return Token::End;
        }
        if (u16::from(b'0')..=u16::from(b'9')).contains(&c) {
            let (mut value, mut len) = (0i32, 0usize);
            while (u16::from(b'0')..=u16::from(b'9')).contains(&self.ch()) {
                if len < 9 {
                    value = value * 10 + i32::from(self.ch() - u16::from(b'0'));
                }
                len += 1;
                self.pos += 1;
            }
            return Token::Number(value, len);
        }
        if b":-+.)".iter().any(|&s| u16::from(s) == c) {
            self.pos += 1;
            return Token::Symbol(c);
        }
        if c >= u16::from(b'A') {
            let mut prefix = [0u16; 3];
            let mut len = 0;
            while self.ch() >= u16::from(b'A') {
                if len < 3 {
                    prefix[len] = self.ch() | 0x20;
                }
                len += 1;
                self.pos += 1;
            }
            for (word, kind, value) in KEYWORDS {
                if prefix.iter().zip(word).all(|(&p, &w)| p == u16::from(w))
                    && (len <= 3 || kind == WordKind::Month)
                {
                    return Token::Word(kind, value, len);
                }
            }
            return Token::Word(WordKind::Unknown, 0, len);
        }
        if matches!(c, 9..=13 | 32) {
            self.pos += 1;
            return Token::Space;
        }
        if c == u16::from(b'(') {
            let mut balance = 0;
            loop {
                match self.ch() {
                    0x29 => balance -= 1,
                    0x28 => balance += 1,
                    _ => {}
                }
                self.pos += 1;
                if balance <= 0 || self.ch() == 0 {
                    break;
                }
            }
            return Token::Other;
        }
        self.pos += 1;
        Token::Other
    }

    fn peek(&self) -> Token {
        self.next
    }

    fn take(&mut self) -> Token {
        let t = self.next;
        self.next = self.scan();
        t
    }

    /// The next token when it is two digits whose value passes `ok`.
    fn two_digits(&mut self, ok: impl Fn(i32) -> bool) -> Option<i32> {
        let n = self.next.number_of_length(2).filter(|&n| ok(n))?;
        self.take();
        Some(n)
    }

    fn skip_symbol(&mut self, c: u8) -> bool {
        if self.next == Token::Symbol(u16::from(c)) {
            self.next = self.scan();
            true
        } else {
            false
        }
    }
}

const fn between(x: i32, lo: i32, hi: i32) -> bool {
    lo <= x && x <= hi
}

#[derive(Default)]
struct DayParts {
    comp: Vec<i32>,
    named_month: Option<i32>,
    iso: bool,
}

impl DayParts {
    fn add(&mut self, n: i32) -> bool {
        if self.comp.len() < 3 {
            self.comp.push(n);
            true
        } else {
            false
        }
    }

    /// (year, month from 1, day).
    fn resolve(&self) -> Option<(i32, i32, i32)> {
        if self.comp.is_empty() {
            return None;
        }
        let mut c = self.comp.clone();
        c.resize(3, 1);
        let (mut year, month, day) = match self.named_month {
            None if self.iso || !between(c[0], 1, 31) => (c[0], c[1], c[2]),
            None => (c[2], c[0], c[1]),
            Some(m) if !between(c[0], 1, 31) => (c[0], m, c[1]),
            Some(m) => (c[1], m, c[0]),
        };
        if !self.iso {
            if between(year, 0, 49) {
                year += 2000;
            } else if between(year, 50, 99) {
                year += 1900;
            }
        }
        (between(month, 1, 12) && between(day, 1, 31)).then_some((year, month, day))
    }
}

#[derive(Default)]
struct TimeParts {
    comp: Vec<i32>,
    hour_offset: Option<i32>,
}

impl TimeParts {
    fn is_empty(&self) -> bool {
        self.comp.is_empty()
    }

    fn expects(&self, n: i32) -> bool {
        match self.comp.len() {
            1 | 2 => between(n, 0, 59),
            3 => between(n, 0, 999),
            _ => false,
        }
    }

    fn add(&mut self, n: i32) -> bool {
        if self.comp.len() < 4 {
            self.comp.push(n);
            true
        } else {
            false
        }
    }

    fn add_final(&mut self, n: i32) -> bool {
        if !self.add(n) {
            return false;
        }
        self.comp.resize(4, 0);
        true
    }

    fn resolve(&self) -> Option<[i32; 4]> {
        let mut c = self.comp.clone();
        c.resize(4, 0);
        if let Some(offset) = self.hour_offset {
            if !between(c[0], 0, 12) {
                return None;
            }
            c[0] = c[0] % 12 + offset;
        }
        let in_range = between(c[0], 0, 23)
            && between(c[1], 0, 59)
            && between(c[2], 0, 59)
            && between(c[3], 0, 999);
        (in_range || c == [24, 0, 0, 0]).then_some([c[0], c[1], c[2], c[3]])
    }
}

#[derive(Default)]
struct ZoneParts {
    sign: Option<i32>,
    hour: Option<i32>,
    minute: Option<i32>,
}

impl ZoneParts {
    fn set_hours(&mut self, offset: i32) {
        self.sign = Some(if offset < 0 { -1 } else { 1 });
        self.hour = Some(offset.abs());
        self.minute = Some(0);
    }

    fn expects(&self, n: i32) -> bool {
        self.hour.is_some() && self.minute.is_none() && between(n, 0, 59)
    }

    fn is_utc(&self) -> bool {
        self.hour == Some(0) && self.minute == Some(0)
    }

    fn resolve(&self) -> Option<Option<i32>> {
        let Some(sign) = self.sign else {
            return Some(None);
        };
        let total =
            i64::from(self.hour.unwrap_or(0)) * 3600 + i64::from(self.minute.unwrap_or(0)) * 60;
        if total > i64::from(i32::MAX >> 1) {
            return None;
        }
        Some(Some(sign * total as i32))
    }
}

/// The first three significant digits of a fraction, as V8 infers them
/// from the value and the digit count.
fn milliseconds(token: Token) -> i32 {
    let Token::Number(mut n, len) = token else {
        return 0;
    };
    match len {
        1 => n *= 100,
        2 => n *= 10,
        3 => {}
        _ => {
            let shift = len.min(9) - 3;
            n /= 10i32.pow(shift as u32);
        }
    }
    n
}

enum Es5 {
    Done,
    Invalid,
    /// Not (all) ES format: the legacy grammar goes on from this token.
    Continue(Token),
}

fn es5(
    sc: &mut Scanner<'_>,
    day: &mut DayParts,
    time: &mut TimeParts,
    zone: &mut ZoneParts,
) -> Es5 {
    if sc.peek().is_sign() {
        let sign_token = sc.take();
        let Some(year) = sc.peek().number_of_length(6) else {
            return Es5::Continue(sign_token);
        };
        if sign_token.sign() < 0 && year == 0 {
            return Es5::Continue(sign_token);
        }
        sc.take();
        day.add(sign_token.sign() * year);
    } else if let Some(year) = sc.peek().number_of_length(4) {
        sc.take();
        day.add(year);
    } else {
        return Es5::Continue(sc.take());
    }
    if sc.skip_symbol(b'-') {
        let Some(m) = sc.two_digits(|m| between(m, 1, 12)) else {
            return Es5::Continue(sc.take());
        };
        day.add(m);
        if sc.skip_symbol(b'-') {
            let Some(d) = sc.two_digits(|d| between(d, 1, 31)) else {
                return Es5::Continue(sc.take());
            };
            day.add(d);
        }
    }
    if !matches!(sc.peek(), Token::Word(WordKind::TimeSeparator, _, _)) {
        if sc.peek() != Token::End {
            return Es5::Continue(sc.take());
        }
    } else {
        sc.take();
        let Some(hour) = sc.two_digits(|h| between(h, 0, 24)) else {
            return Es5::Invalid;
        };
        let hour_24 = hour == 24;
        time.add(hour);
        // Minutes and seconds: 00 to 59, only 00 after hour 24.
        let sixty = |n: i32| between(n, 0, 59) && !(hour_24 && n > 0);
        if !sc.skip_symbol(b':') {
            return Es5::Invalid;
        }
        let Some(minute) = sc.two_digits(sixty) else {
            return Es5::Invalid;
        };
        time.add(minute);
        if sc.skip_symbol(b':') {
            let Some(second) = sc.two_digits(sixty) else {
                return Es5::Invalid;
            };
            time.add(second);
            if sc.skip_symbol(b'.') {
                match sc.peek() {
                    Token::Number(n, _) if !(hour_24 && n > 0) => {
                        let t = sc.take();
                        time.add(milliseconds(t));
                    }
                    _ => return Es5::Invalid,
                }
            }
        }
        if sc.peek().is_z() {
            sc.take();
            zone.set_hours(0);
        } else if sc.peek().is_sign() {
            zone.sign = Some(sc.take().sign());
            if let Some(hhmm) = sc.peek().number_of_length(4) {
                let (h, m) = (hhmm / 100, hhmm % 100);
                if !between(h, 0, 23) || !between(m, 0, 59) {
                    return Es5::Invalid;
                }
                sc.take();
                zone.hour = Some(h);
                zone.minute = Some(m);
            } else {
                let Some(h) = sc.two_digits(|h| between(h, 0, 23)) else {
                    return Es5::Invalid;
                };
                zone.hour = Some(h);
                if !sc.skip_symbol(b':') {
                    return Es5::Invalid;
                }
                let Some(m) = sc.two_digits(|m| between(m, 0, 59)) else {
                    return Es5::Invalid;
                };
                zone.minute = Some(m);
            }
        }
        if sc.peek() != Token::End {
            return Es5::Invalid;
        }
    }
    if zone.hour.is_none() && time.is_empty() {
        zone.set_hours(0);
    }
    day.iso = true;
    Es5::Done
}

/// The date a legacy or ES-format string names, in milliseconds from the
/// epoch before its offset, and the offset in seconds when it fixes one.
fn parse_fields(units: &[u16]) -> Option<(f64, Option<i32>)> {
    let mut sc = Scanner::new(units);
    let mut day = DayParts::default();
    let mut time = TimeParts::default();
    let mut zone = ZoneParts::default();
    let mut token = match es5(&mut sc, &mut day, &mut time, &mut zone) {
        Es5::Invalid => return None,
        Es5::Done => Token::End,
        Es5::Continue(t) => t,
    };
    let mut has_number = !day.comp.is_empty();
    while token != Token::End {
        match token {
            Token::Number(n, _) => {
                has_number = true;
                if sc.skip_symbol(b':') {
                    if sc.skip_symbol(b':') {
                        if !time.is_empty() {
                            return None;
                        }
                        time.add(n);
                        time.add(0);
                    } else {
                        if !time.add(n) {
                            return None;
                        }
                        if sc.peek() == Token::Symbol(u16::from(b'.')) {
                            sc.take();
                        }
                    }
                } else if sc.skip_symbol(b'.') && time.expects(n) {
                    time.add(n);
                    if !matches!(sc.peek(), Token::Number(..)) {
                        return None;
                    }
                    let ms = milliseconds(sc.take());
                    time.add_final(ms);
                } else if zone.expects(n) {
                    zone.minute = Some(n);
                } else if time.expects(n) {
                    time.add_final(n);
                    let p = sc.peek();
                    if !(p == Token::End || p == Token::Space || p.is_z() || p.is_sign()) {
                        return None;
                    }
                } else {
                    if !day.add(n) {
                        return None;
                    }
                    sc.skip_symbol(b'-');
                }
            }
            Token::Word(kind, value, _) => {
                if kind == WordKind::AmPm && !time.is_empty() {
                    time.hour_offset = Some(value);
                } else if kind == WordKind::Month {
                    day.named_month = Some(value);
                    sc.skip_symbol(b'-');
                } else if kind == WordKind::Zone && has_number {
                    zone.set_hours(value);
                } else if has_number || matches!(sc.peek(), Token::Number(..)) {
                    return None;
                }
            }
            t if t.is_sign() && (zone.is_utc() || !time.is_empty()) => {
                zone.sign = Some(t.sign());
                let (mut n, mut len) = (0, 0);
                if let Token::Number(v, l) = sc.peek() {
                    sc.take();
                    n = v;
                    len = l;
                }
                has_number = true;
                if sc.peek() == Token::Symbol(u16::from(b':')) {
                    zone.hour = Some(n);
                    zone.minute = None;
                } else if len == 1 || len == 2 {
                    zone.hour = Some(n);
                    zone.minute = Some(0);
                } else if len == 3 || len == 4 {
                    zone.hour = Some(n / 100);
                    zone.minute = Some(n % 100);
                } else {
                    return None;
                }
            }
            t if (t.is_sign() || t == Token::Symbol(u16::from(b')'))) && has_number => return None,
            _ => {}
        }
        token = sc.take();
    }
    let (year, month, d) = day.resolve()?;
    let time = time.resolve()?;
    let offset_seconds = zone.resolve()?;
    Some((
        make_date(make_day(year, month - 1, d), time),
        offset_seconds,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateValue {
        parse_date(s.as_bytes())
    }

    fn ms(s: &str) -> f64 {
        match t(s) {
            DateValue::Time(v) => v,
            DateValue::LocalTime => panic!("{s}: local"),
        }
    }

    #[test]
    fn iso_forms_match_node() {
        // Right-hand sides: node -e 'new Date(s).getTime()' (TZ=UTC for the
        // ones that fix their offset, which do not depend on it).
        for (s, v) in [
            ("2024-01-01T10:00:00.1234567Z", 1704103200123.0),
            ("2024-01-01T24:00:00Z", 1704153600000.0),
            ("2024-01-01t10:00:00z", 1704103200000.0),
            ("2024-01-01T10:00:00+0100", 1704099600000.0),
            ("2024-01-01", 1704067200000.0),
            ("2024-02-30", 1709251200000.0),
            ("+002024-01-01T00:00:00Z", 1704067200000.0),
            ("2024-01-01T10:00:00.000+01:00", 1704099600000.0),
            ("2024", 1704067200000.0),
            ("2024-01", 1704067200000.0),
            ("2024-01-01T00:00:00.5Z", 1704067200500.0),
            ("2024-01-01T23:59:59.999-23:59", 1704239939999.0),
            ("2026-07-30T12:34:56.789Z", 1785414896789.0),
            ("1970-01-01T00:00:00.000Z", 0.0),
            ("-000001-01-01T00:00:00Z", -62198755200000.0),
        ] {
            assert_eq!(ms(s), v, "{s}");
        }
    }

    #[test]
    fn invalid_strings_are_nan() {
        for s in [
            "",
            "abc",
            "now",
            "1700000000000",
            "2024-13-01",
            "-000000-01-01T00:00:00Z",
            "2024-01-01T10:00:00.Z",
            "2024-01-01T10:00:00,5Z",
            "2024-01-01T10:00:60Z",
            " 2024-01-01T10:00:00Z",
            "2024-01-01T10:00:00Z ",
            "2024-01-01T10Z",
            "2024-01-01T25:00:00Z",
            "2024-01-01T24:00:01Z",
            "2024-01-01T00:00:00+24:00",
            "275760-09-13T00:00:00Z",
            "+275760-09-13T00:00:00.001Z",
            "1970-01-01T00:00:00Z[UTC]",
            "2024-06-01T12:00:00.000GMT",
            "[object Object]",
            "Infinity",
        ] {
            assert!(ms(s).is_nan(), "{s}");
        }
    }

    #[test]
    fn legacy_forms_with_a_zone_are_exact() {
        for (s, v) in [
            ("Jan 1 2024 GMT", 1704067200000.0),
            ("Mon, 01 Jan 2024 10:00:00 GMT", 1704103200000.0),
            ("1 January 2024 10:00 UTC+2", 1704096000000.0),
            ("2024/01/01 10:00:00 Z", 1704103200000.0),
            ("Jan 1 2024 10:00 PM EST", 1704164400000.0),
        ] {
            assert_eq!(ms(s), v, "{s}");
        }
    }

    #[test]
    fn local_times_are_reported() {
        for s in [
            "2024-01-01T10:00",
            "2024-01-01T10:00:00",
            "Jan 1 2024",
            "5",
            "2024-1-1",
            "2024-01-01 10:00:00",
        ] {
            assert_eq!(t(s), DateValue::LocalTime, "{s}");
        }
    }

    #[test]
    fn non_strings_follow_the_date_constructor() {
        use crate::json::view::tests::tape;
        let text = r#"[null,true,1.9,-0.5,9e15,"2024-01-01",[],{},["2024",1]]"#;
        let tp = tape(text);
        let root = Value::root(text.as_bytes(), &tp);
        let got: Vec<DateValue> = root.elements().map(|e| date_of(Some(e))).collect();
        assert_eq!(got[0], DateValue::Time(0.0));
        assert_eq!(got[1], DateValue::Time(1.0));
        assert_eq!(got[2], DateValue::Time(1.0));
        assert_eq!(got[3], DateValue::Time(0.0));
        assert!(matches!(got[4], DateValue::Time(v) if v.is_nan()));
        assert_eq!(got[5], DateValue::Time(1704067200000.0));
        assert!(matches!(got[6], DateValue::Time(v) if v.is_nan()));
        assert!(matches!(got[7], DateValue::Time(v) if v.is_nan()));
        assert_eq!(got[8], DateValue::LocalTime);
        assert!(matches!(date_of(None), DateValue::Time(v) if v.is_nan()));
    }
}
