//! Tests of the kernel registry and its options (no adapter needed).

use super::*;

#[test]
fn options_parse_and_validate() {
    let mut o = RunOptions::default();
    o.set("rows=64").unwrap();
    o.set("runs=3").unwrap();
    assert_eq!(o.runs, Some(3));
    let info = kernel_info("softmax-bw").unwrap();
    let v = o.resolve(info).unwrap();
    assert_eq!(v["rows"], 64.0);
    assert_eq!(v["len"], 256.0);
    assert!(o.set("rows").is_err());
    assert!(o.set("rows=abc").is_err());
    let e = o.set("runs=0").unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "invalid option runs = 0: expected an integer in 1..={MAX_RUNS} (timed runs of \
             each variant)"
        )
    );
    // A value is shown as written, never expanded.
    let mut big = RunOptions::default();
    big.set("rows=1e308").unwrap();
    let e = big.resolve(info).unwrap_err().to_string();
    assert!(e.starts_with("invalid option rows = 1e308: "), "{e}");
    // The wording of a refusal: the spec's range and the parameter's help.
    let mut r = RunOptions::default();
    r.set("rows=0").unwrap();
    assert_eq!(
        r.resolve(info).unwrap_err().to_string(),
        "invalid option rows = 0: expected an integer in 1..=4096 (rows (B·h·L in attention))"
    );
    let mut r = RunOptions::default();
    r.set("dropout=0.95").unwrap();
    assert_eq!(
        r.resolve(info).unwrap_err().to_string(),
        "invalid option dropout = 0.95: expected a number in 0..=0.9 (dropout ratio (keep = 1 \
         − ratio))"
    );
    let mut r = RunOptions::default();
    r.set("len=2.5").unwrap();
    assert_eq!(
        r.resolve(info).unwrap_err().to_string(),
        "invalid option len = 2.5: expected an integer in 1..=4096 (row length L)"
    );
    o.set("rows=1.5").unwrap();
    assert!(o.resolve(info).is_err());
    let mut o = RunOptions::default();
    o.set("bogus=1").unwrap();
    let e = o.resolve(info).unwrap_err().to_string();
    assert!(e.contains("rows, len"), "{e}");
    assert!(
        kernel_info("nope")
            .unwrap_err()
            .to_string()
            .contains("layernorm-bw")
    );
    assert_eq!(
        kernel_names(),
        ["layernorm-bw", "layernorm-dgamma", "softmax-bw", "adam"]
    );
}

#[test]
fn transformer_sizes_count() {
    let s = crate::adam::transformer_sizes(2, 8, 10, 4);
    assert_eq!(s.len(), 12 * 2 + 4);
    // Per layer: 4h (LN) + 3h² + 3h + h² + h + 4h² + 4h + 4h² + h = 12h² + 13h.
    let total: usize = s.iter().sum();
    assert_eq!(total, 10 * 8 + 4 * 8 + 2 * (12 * 64 + 13 * 8) + 2 * 8);
}
