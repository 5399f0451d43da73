//! Numbers as the views print them.

/// A figure for the screen and for slides: four significant digits (an integer part keeps all
/// its digits), thousands grouped with commas ("476.8", "1,308", "123,457", "0.5768"),
/// scientific outside 1e-3..1e6 ("2.316e-7", "2.099e8").
pub fn format_number(f: f64) -> String {
    group_thousands(&format_sig(f, 4))
}

/// `s` (a number as [`format_sig`] writes it) with its integer part grouped in thousands;
/// scientific forms are left as they are.
pub fn group_thousands(s: &str) -> String {
    if s.contains(['e', 'E']) || !s.chars().any(|c| c.is_ascii_digit()) {
        return s.to_owned();
    }
    let (sign, rest) = s.strip_prefix('-').map_or(("", s), |r| ("-", r));
    let (int, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(i, f)| (i, Some(f)));
    let mut out = String::with_capacity(s.len() + int.len() / 3);
    out.push_str(sign);
    for (k, c) in int.chars().enumerate() {
        if k > 0 && (int.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// `f` to `digits` significant digits, trailing zeros dropped ("0.002316", "6.118", "12"; an
/// integer part keeps all its digits: "123457");
/// scientific with `digits − 1` decimals outside 1e-3..1e6 ("1.332e-15"), like
/// [`format_number`].
pub fn format_sig(f: f64, digits: usize) -> String {
    let a = f.abs();
    if f == 0.0 || !f.is_finite() {
        return format!("{f}");
    }
    if (1e-3..1e6).contains(&a) {
        let magnitude = a.log10().floor() as i64;
        let decimals = (digits as i64 - 1 - magnitude).max(0) as usize;
        let s = format!("{f:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    } else {
        format!("{f:.*e}", digits.saturating_sub(1))
    }
}

/// [`format_sig`] that writes the non-finite values as a reader expects them: "NaN", "∞",
/// "−∞" (Rust's own "inf" reads as a word).
pub fn format_extended(f: f64, digits: usize) -> String {
    if f.is_nan() {
        "NaN".to_owned()
    } else if f == f64::INFINITY {
        "∞".to_owned()
    } else if f == f64::NEG_INFINITY {
        "−∞".to_owned()
    } else {
        format_sig(f, digits)
    }
}

/// Binary units for [`bytes_text`]: (name, bytes).
const BYTE_UNITS: [(&str, f64); 7] = [
    ("EiB", 1_152_921_504_606_846_976.0),
    ("PiB", 1_125_899_906_842_624.0),
    ("TiB", 1_099_511_627_776.0),
    ("GiB", 1_073_741_824.0),
    ("MiB", 1_048_576.0),
    ("KiB", 1024.0),
    ("B", 1.0),
];

/// The largest binary unit (B, KiB, … EiB) `bytes` fills at least once: (name, bytes in it).
pub fn byte_unit(bytes: f64) -> (&'static str, f64) {
    BYTE_UNITS
        .iter()
        .copied()
        .find(|(_, u)| bytes >= *u)
        .unwrap_or(("B", 1.0))
}

/// `bytes` in the largest binary unit it fills, four significant digits: "512 B", "32 KiB",
/// "64 MiB", "1.5 GiB".
pub fn bytes_text(bytes: u64) -> String {
    let b = bytes as f64;
    let (name, unit) = byte_unit(b);
    format!("{} {name}", format_sig(b / unit, 4))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_in_binary_units_by_hand() {
        assert_eq!(bytes_text(512), "512 B");
        assert_eq!(bytes_text(32 * 1024), "32 KiB");
        assert_eq!(bytes_text(96 << 20), "96 MiB");
        assert_eq!(bytes_text(3 << 29), "1.5 GiB");
        assert_eq!(bytes_text(1 << 60), "1 EiB");
        assert_eq!(bytes_text(0), "0 B");
        assert_eq!(byte_unit(2048.0), ("KiB", 1024.0));
    }

    #[test]
    fn screen_figures_have_four_significant_digits_and_grouped_thousands() {
        assert_eq!(format_number(476.752_5), "476.8");
        assert_eq!(format_number(0.576_8), "0.5768");
        assert_eq!(format_number(1308.0), "1,308");
        assert_eq!(format_number(209_915_904.0), "2.099e8");
        assert_eq!(format_number(123_456.7), "123,457");
        assert_eq!(format_number(-98_765.4), "-98,765");
        assert_eq!(format_number(2.316e-7), "2.316e-7");
        assert_eq!(format_number(0.0), "0");
        assert_eq!(group_thousands("1234567.5"), "1,234,567.5");
        assert_eq!(group_thousands("999"), "999");
    }

    #[test]
    fn significant_digits_by_hand() {
        assert_eq!(format_sig(0.002_316_4, 4), "0.002316");
        assert_eq!(format_sig(6.117_9, 4), "6.118");
        assert_eq!(format_sig(12.0, 4), "12");
        assert_eq!(format_sig(-0.5, 3), "-0.5");
        assert_eq!(format_sig(123_456.7, 4), "123457");
        assert_eq!(format_sig(1.332_27e-15, 4), "1.332e-15");
        assert_eq!(format_sig(0.0, 4), "0");
    }
}
