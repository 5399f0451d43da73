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
