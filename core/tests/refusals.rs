//! Refusals of parameters (issue 25): every scene refuses a value out of range or of the wrong
//! type naming the parameter, and words what would be valid in Chinese without English — the
//! window shows core's Chinese rule as it is, with nothing left to translate.

// Test helpers outside #[test] functions stop on failure by design.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use proptest::test_runner::Config;
use warpscope_core::Error;
use warpscope_core::params::{ParamKind, ParamSpec, ParamValue};
use warpscope_core::scene;

mod common;
use common::english_words;

#[test]
fn english_words_finds_english_and_keeps_names() {
    // Worded by hand: what the window showed before rules were typed, and what it shows now.
    assert_eq!(
        english_words("expected one of gpt2-small (GPT-2 family)"),
        ["expected", "one", "family"]
    );
    assert!(english_words("应为以下之一：gpt2-small, gpt2-xl（GPT-2 系列）").is_empty());
    assert!(
        english_words("应为 threads = 12 的倍数；ker_attn_softmax_bw 的 ITERATIONS").is_empty()
    );
    assert!(english_words("应为 -1（沿用文件的值）、0（不限）或大于 20 的数（MiB）").is_empty());
}

#[test]
fn every_scene_refuses_out_of_range_values_with_the_parameter_named() {
    for s in scene::scenes() {
        for spec in s.params {
            let bad: Vec<ParamValue> = match &spec.kind {
                ParamKind::Int { min, max, .. } => vec![
                    ParamValue::Int(min.saturating_sub(1)),
                    ParamValue::Int(max.saturating_add(1)),
                    ParamValue::Int(i64::MIN),
                    ParamValue::Float(0.5),
                    ParamValue::Text("x".into()),
                ],
                ParamKind::Float { min, max, .. } => vec![
                    ParamValue::Float(min - (max - min).abs().max(1.0)),
                    ParamValue::Float(max + (max - min).abs().max(1.0)),
                    ParamValue::Float(f64::NAN),
                    ParamValue::Float(f64::INFINITY),
                    ParamValue::Float(f64::NEG_INFINITY),
                ],
                ParamKind::Choice { .. } => {
                    vec![
                        ParamValue::Text("no-such-option".into()),
                        ParamValue::Int(0),
                    ]
                }
                ParamKind::Text { .. } => {
                    vec![ParamValue::Text("x".repeat(5000)), ParamValue::Int(1)]
                }
            };
            for b in bad {
                let mut v = s.defaults();
                v.0.insert(spec.name.to_owned(), b.clone());
                match s.report(v) {
                    Err(Error::InvalidParam { name, expected, .. }) => {
                        assert_eq!(name, spec.name);
                        let english = english_words(&expected.zh());
                        assert!(english.is_empty(), "{}.{}: {english:?}", s.id, spec.name);
                    }
                    other => panic!("{}.{} = {b:?}: {:?}", s.id, spec.name, other.map(|_| ())),
                }
            }
        }
    }
}

/// A value `spec` refuses, from raw randomness `r`: past either end of a range by a random
/// amount, of the wrong type, not a number, or a name outside the choices.
fn value_outside(spec: &ParamSpec, r: u64) -> ParamValue {
    let k = (r >> 8) as i64 % 1_000_000;
    let word: String = (0..1 + (r >> 40) % 8)
        .map(|i| char::from(b'a' + ((r >> (i * 5)) % 26) as u8))
        .collect();
    match (&spec.kind, r % 4) {
        (ParamKind::Int { min, .. }, 0) => ParamValue::Int(min.saturating_sub(1 + k)),
        (ParamKind::Int { max, .. }, 1) => ParamValue::Int(max.saturating_add(1 + k)),
        (ParamKind::Int { .. }, 2) => ParamValue::Float(k as f64 + 0.5),
        (ParamKind::Float { min, max, .. }, 0) => {
            ParamValue::Float(min - (max - min).abs().max(1.0) * (1 + k) as f64)
        }
        (ParamKind::Float { min, max, .. }, 1) => {
            ParamValue::Float(max + (max - min).abs().max(1.0) * (1 + k) as f64)
        }
        (ParamKind::Float { .. }, 2) => ParamValue::Float(f64::NAN),
        (ParamKind::Int { .. } | ParamKind::Float { .. }, _) => ParamValue::Text(word),
        (ParamKind::Choice { options, .. }, 0 | 1) if !options.contains(&word.as_str()) => {
            ParamValue::Text(word)
        }
        (ParamKind::Choice { .. }, _) => ParamValue::Int(k),
        (ParamKind::Text { .. }, 0 | 1) => ParamValue::Text(word.repeat(5000)),
        (ParamKind::Text { .. }, _) => ParamValue::Float(k as f64),
    }
}

proptest! {
    #![proptest_config(Config { cases: 64, failure_persistence: None, ..Config::default() })]

    /// For every scene and parameter, a value out of range or of the wrong type — set as
    /// `--set` does or read from a preset's JSON — is refused naming the parameter, with a
    /// Chinese rule that holds no English word.
    #[test]
    fn every_refusal_of_a_parameter_reads_in_chinese(r in any::<u64>(), json in 0usize..5) {
        for s in scene::scenes() {
            for spec in s.params {
                let mut v = s.defaults();
                v.0.insert(spec.name.to_owned(), value_outside(spec, r));
                let refusal = s.report(v).map(|_| ());
                let wrong_type = [
                    serde_json::json!(true),
                    serde_json::json!(null),
                    serde_json::json!([1, 2]),
                    serde_json::json!({"a": 1}),
                    serde_json::json!(if matches!(spec.kind, ParamKind::Int { .. }) { "3" } else { "" }),
                ];
                let from_json = match &spec.kind {
                    // Free text takes any string; a number is the wrong type for it.
                    ParamKind::Text { .. } => spec.from_json(&serde_json::json!(1)).map(|_| ()),
                    _ => spec.from_json(&wrong_type[json]).map(|_| ()),
                };
                for result in [refusal, from_json] {
                    match result {
                        Err(Error::InvalidParam { name, expected, .. }) => {
                            prop_assert_eq!(&name, spec.name);
                            let english = english_words(&expected.zh());
                            prop_assert!(
                                english.is_empty(),
                                "{}.{}: English {:?} in {}",
                                s.id,
                                spec.name,
                                english,
                                expected.zh()
                            );
                        }
                        other => prop_assert!(
                            false,
                            "{}.{}: {:?}",
                            s.id,
                            spec.name,
                            other.map_err(|e| e.to_string())
                        ),
                    }
                }
            }
        }
    }
}

/// The refusal of `scene` with `sets` (`--set` assignments) over its defaults.
fn refusal(scene: &str, sets: &[&str]) -> (String, String) {
    let s = scene::find(scene).unwrap();
    let mut v = s.defaults();
    for a in sets {
        v.set_assignment(s.params, a).unwrap();
    }
    match s.report(v) {
        Err(Error::InvalidParam { expected, .. }) => (expected.to_string(), expected.zh()),
        other => panic!("{scene} {sets:?}: {:?}", other.map(|_| ())),
    }
}

#[test]
fn a_scenes_own_rules_read_in_both_languages() {
    // Worded by hand from the rules: warp 0 reduces one partial per warp, so a block of 8-lane
    // warps holds at most 8 × 8 = 64 threads.
    let (en, zh) = refusal("reduction", &["warp=8", "threads=128"]);
    assert!(
        en.starts_with("expected at most 64: warp 0 reduces"),
        "{en}"
    );
    assert!(zh.starts_with("应不大于 64：0 号线程束"), "{zh}");
    assert!(zh.ends_with("线程束数 ≤ 8"), "{zh}");
    // Attention heads split the hidden size: 100 is not a multiple of 12 heads.
    let (en, zh) = refusal("memory-lifetimes", &["hidden=100", "heads=12"]);
    assert_eq!(
        en,
        "expected a multiple of heads = 12 (each head gets H/N dimensions)"
    );
    assert_eq!(zh, "应为 heads = 12 的倍数（每个头分到 H/N 维）");
    let (en, zh) = refusal("memory-allocator", &["hidden=100", "heads=12"]);
    assert_eq!(en, "expected a multiple of heads = 12");
    assert_eq!(zh, "应为 heads = 12 的倍数");
    // A mean of 0 has no place on the error plot's logarithmic axis.
    let (en, zh) = refusal("layernorm-error", &["means=1,0"]);
    assert!(en.starts_with("expected a mean above 0"), "{en}");
    assert!(zh.starts_with("均值应大于 0"), "{zh}");
}
