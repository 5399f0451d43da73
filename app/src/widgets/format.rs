//! Numbers as the views print them.

/// Four significant digits, scientific outside 1e-3..1e6.
pub fn format_number(f: f64) -> String {
    let a = f.abs();
    if f == 0.0 || (1e-3..1e6).contains(&a) {
        let s = format!("{f:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        format!("{f:.3e}")
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
