//! ECMAScript numbers: `Number::toString` (via ryu-js, which implements it)
//! and `StringToNumber`. Reading a JSON number token is `lex.rs`'s.

/// `Number::toString` as ECMAScript defines it (`NaN`, `Infinity`, `1e+21`,
/// `1.5e-7`, `-0` as `0`), via ryu-js.
pub fn format_number(n: f64) -> String {
    ryu_js::Buffer::new().format(n).to_owned()
}

/// Appends a number as `JSON.stringify` writes it: non-finite values become
/// `null`.
pub fn write_json_number(out: &mut Vec<u8>, n: f64) {
    if n.is_finite() {
        out.extend_from_slice(ryu_js::Buffer::new().format_finite(n).as_bytes());
    } else {
        out.extend_from_slice(b"null");
    }
}

/// ECMAScript `StringToNumber`: trims JS white space and line terminators,
/// the empty string is 0, accepts `0x`/`0o`/`0b` integers and signed
/// `Infinity`, and is NaN for anything else that is not a decimal literal.
pub fn string_to_number(s: &str) -> f64 {
    let t = s.trim_matches(is_js_space);
    if t.is_empty() {
        return 0.0;
    }
    let radix = match t.get(..2) {
        Some("0x") | Some("0X") => Some(16),
        Some("0o") | Some("0O") => Some(8),
        Some("0b") | Some("0B") => Some(2),
        _ => None,
    };
    if let Some(radix) = radix {
        let digits = &t[2..];
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return f64::NAN;
        }
        return digits.chars().fold(0.0, |acc, c| {
            acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
        });
    }
    let (sign, body) = match t.as_bytes()[0] {
        b'+' => (1.0, &t[1..]),
        b'-' => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    if body == "Infinity" {
        return sign * f64::INFINITY;
    }
    if !is_decimal_literal(body.as_bytes()) {
        return f64::NAN;
    }
    body.parse::<f64>().map_or(f64::NAN, |v| sign * v)
}

/// `StrUnsignedDecimalLiteral` without `Infinity`: digits with an optional
/// fraction (at least one digit in all) and an optional exponent.
fn is_decimal_literal(b: &[u8]) -> bool {
    let mut i = 0;
    let int_digits = count_digits(&b[i..]);
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = count_digits(&b[i..]);
        i += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e') | Some(b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+') | Some(b'-')) {
            i += 1;
        }
        let exp_digits = count_digits(&b[i..]);
        if exp_digits == 0 {
            return false;
        }
        i += exp_digits;
    }
    i == b.len()
}

fn count_digits(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(n: f64) -> String {
        let mut out = Vec::new();
        write_json_number(&mut out, n);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn formats_like_ecmascript() {
        assert_eq!(json(1e21), "1e+21");
        assert_eq!(json(1e20), "100000000000000000000");
        assert_eq!(json(1.5e-7), "1.5e-7");
        assert_eq!(json(0.000001), "0.000001");
        assert_eq!(json(-0.0), "0");
        assert_eq!(json(2f64.powi(53) + 2.0), "9007199254740994");
        assert_eq!(json(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(json(5e-324), "5e-324");
        assert_eq!(json(f64::INFINITY), "null");
        assert_eq!(json(f64::NAN), "null");
        assert_eq!(format_number(f64::NAN), "NaN");
        assert_eq!(format_number(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(format_number(123.0), "123");
    }

    #[test]
    fn string_to_number_follows_js() {
        assert_eq!(string_to_number(""), 0.0);
        assert_eq!(string_to_number("  \n"), 0.0);
        assert_eq!(string_to_number(" 42 "), 42.0);
        assert_eq!(string_to_number("-1.5e3"), -1500.0);
        assert_eq!(string_to_number(".5"), 0.5);
        assert_eq!(string_to_number("5."), 5.0);
        assert_eq!(string_to_number("0x1A"), 26.0);
        assert_eq!(string_to_number("-Infinity"), f64::NEG_INFINITY);
        for nan in [
            "abc",
            "1,2",
            "inf",
            "NaN",
            "-0x1",
            "1e",
            ".",
            "0x",
            "[object Object]",
        ] {
            assert!(string_to_number(nan).is_nan(), "{nan}");
        }
    }

    #[test]
    fn formats_special_values_like_node() {
        // Each right-hand side is node's JSON.stringify(n) === String(n).
        for (n, js) in [
            (1e-7, "1e-7"),
            (123e-20, "1.23e-18"),
            (1e-6, "0.000001"),
            (0.000001234, "0.000001234"),
            (-1e21, "-1e+21"),
            (999999999999999900000.0, "999999999999999900000"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (1e300 * 10.0, "1e+301"),
            (-5e-324, "-5e-324"),
            (-1.5e-7, "-1.5e-7"),
            (2f64.powi(53) + 1.0, "9007199254740992"),
            (123456789.125, "123456789.125"),
            (100.0, "100"),
        ] {
            assert_eq!(json(n), js, "{n:e}");
            assert_eq!(format_number(n), js, "{n:e}");
        }
        // String(-0) is "0" too.
        assert_eq!(format_number(-0.0), "0");
        assert_eq!(format_number(f64::INFINITY), "Infinity");
    }

    #[test]
    fn string_to_number_reads_json_spellings() {
        assert_eq!(string_to_number("1e21"), 1e21);
        assert_eq!(string_to_number("1E21"), 1e21);
        assert_eq!(string_to_number("1.5e-7"), 1.5e-7);
        assert_eq!(string_to_number("123e-20"), 1.23e-18);
        assert_eq!(string_to_number("1E400"), f64::INFINITY);
        assert_eq!(string_to_number("-1e999"), f64::NEG_INFINITY);
        assert_eq!(string_to_number("9007199254740993"), 9007199254740992.0);
        let neg_zero = string_to_number("-0");
        assert!(neg_zero == 0.0 && neg_zero.is_sign_negative());
        // JS white space includes U+2028, U+FEFF and NBSP.
        assert_eq!(string_to_number("\u{2028}\u{feff}\u{a0}7\u{2029}"), 7.0);
        assert!(string_to_number("1_000").is_nan());
        assert!(string_to_number("+-1").is_nan());
    }
}
