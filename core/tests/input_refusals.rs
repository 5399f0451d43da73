//! Refusals of a user's input (issue 25): for every scene that takes `--input FILE.json`, bad
//! documents are refused naming the key, and the problem reads in Chinese without English — the
//! window shows core's Chinese wording as it is.

// Test helpers outside #[test] functions stop on failure by design.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::Value;
use warpscope_core::Error;
use warpscope_core::scene;
use warpscope_core::text::Text;

mod common;
use common::english_words;

/// Bad inputs per scene: `(scene, input, the key refused)`.
const BAD: &[(&str, &str, &str)] = &[
    ("softmax-formula", r#"[1, 2]"#, ""),
    (
        "softmax-formula",
        r#"{"scores": [[1]], "dy": [[1]], "z": 1}"#,
        "z",
    ),
    ("softmax-formula", r#"{"dy": [[1]]}"#, "scores"),
    (
        "softmax-formula",
        r#"{"scores": [[1]], "y": [[1]], "dy": [[1]]}"#,
        "y",
    ),
    (
        "softmax-formula",
        r#"{"scores": [[1, 2], [3]], "dy": [[1]]}"#,
        "scores[1]",
    ),
    (
        "softmax-formula",
        r#"{"scores": [["lots"]], "dy": [[1]]}"#,
        "scores[0][0]",
    ),
    (
        "softmax-formula",
        r#"{"scores": [["nan"]], "dy": [[1]]}"#,
        "scores[0][0]",
    ),
    (
        "softmax-formula",
        r#"{"y": [[0.5, 0.2]], "dy": [[1, 1]]}"#,
        "y[0]",
    ),
    ("softmax-formula", r#"{"y": [[2]], "dy": [[1]]}"#, "y[0][0]"),
    (
        "softmax-formula",
        r#"{"scores": [[1, 2]], "dy": [[1]]}"#,
        "dy",
    ),
    (
        "softmax-formula",
        r#"{"scores": [[1]], "dy": [[1]], "dropout_p": 0.5}"#,
        "dropout_p",
    ),
    (
        "softmax-formula",
        r#"{"scores": [[1]], "dy": [[1]], "keep": [[1]], "dropout_p": 1}"#,
        "dropout_p",
    ),
    (
        "softmax-formula",
        r#"{"scores": [[1]], "dy": [[1]], "mask": [[2]]}"#,
        "mask[0][0]",
    ),
    (
        "softmax-formula",
        r#"{"scores": [], "dy": [[1]]}"#,
        "scores",
    ),
    ("layernorm-formulas", r#"{"dy": [[1]]}"#, "x"),
    (
        "layernorm-formulas",
        r#"{"x": [[1, 2]], "dy": [[1, 2]], "gamma": [1]}"#,
        "gamma",
    ),
    (
        "layernorm-formulas",
        r#"{"x": [[1, 2]], "dy": [[1, 2]], "eps": "small"}"#,
        "eps",
    ),
    ("layernorm-formulas", r#"{"x": {"a": 1}, "dy": [[1]]}"#, "x"),
    ("reduction", r#"{"values": [1, 2, 3]}"#, "values"),
    (
        "reduction",
        r#"{"values": [1, 1e39, 3, 4, 5, 6, 7, 8]}"#,
        "values[1]",
    ),
    ("reduction", r#"{"value": [1]}"#, "value"),
    (
        "banks",
        r#"{"expression": "lane * 4", "byte_addresses": [0]}"#,
        "expression",
    ),
    ("banks", r#"{}"#, "byte_addresses"),
    ("banks", r#"{"byte_addresses": [0, 4]}"#, "byte_addresses"),
    (
        "banks",
        r#"{"expression": "lane * 4", "elem_bytes": 3}"#,
        "elem_bytes",
    ),
    (
        "banks",
        r#"{"expression": "lane * 3", "elem_bytes": 4}"#,
        "expression",
    ),
    ("banks", r#"{"expression": "lane * tid"}"#, "expression"),
    ("banks", r#"{"expression": "(lane"}"#, "expression"),
    (
        "banks",
        r#"{"expression": "lane / (lane - 3)"}"#,
        "expression",
    ),
    ("banks", r#"{"expression": "lane - 40"}"#, "expression"),
    ("banks", r#"{"expression": ""}"#, "expression"),
    ("banks", r#"{"expression": "lane $ 2"}"#, "expression"),
    (
        "banks",
        r#"{"expression": "99999999999999999999"}"#,
        "expression",
    ),
    ("banks", r#"{"expression": 4}"#, "expression"),
    ("trainer-adam", r#"{"betas": [0.9]}"#, "betas"),
    ("trainer-adam", r#"{"betas": [0.9, 1]}"#, "betas[1]"),
    ("trainer-adam", r#"{"loss_scale": 0}"#, "loss_scale"),
    ("trainer-adam", r#"{"grad": [1, 2], "steps": 3}"#, "grad"),
    ("trainer-adam", r#"{"lr": 100}"#, "lr"),
    ("trainer-adam", r#"{"steps": 1.5}"#, "steps"),
    (
        "memory-plan",
        r#"{"tensors": [{"name": "x", "size_bytes": 1, "first_op": 2, "last_op": 1}]}"#,
        "tensors[0].last_op",
    ),
    (
        "memory-plan",
        r#"{"tensors": [{"name": "x", "size_bytes": 1, "first_op": 0, "last_op": 1}, {"name": "x", "size_bytes": 1, "first_op": 0, "last_op": 1}]}"#,
        "tensors[1].name",
    ),
    (
        "memory-plan",
        r#"{"tensors": [{"name": "x", "size_bytes": 1, "first_op": 0}]}"#,
        "tensors[0].last_op",
    ),
    (
        "memory-plan",
        r#"{"tensors": [{"name": "x", "size": 1}]}"#,
        "tensors[0].size",
    ),
    (
        "memory-allocator",
        r#"{"trace": [["free", "a"]]}"#,
        "trace[0]",
    ),
    (
        "memory-allocator",
        r#"{"trace": [["malloc", "a", 4], ["malloc", "a", 4]]}"#,
        "trace[1]",
    ),
    (
        "memory-allocator",
        r#"{"trace": [["malloc", "a", 4], ["free", "a"], ["free", "a"]]}"#,
        "trace[2]",
    ),
    (
        "memory-allocator",
        r#"{"trace": [["move", "a"]]}"#,
        "trace[0]",
    ),
    ("memory-allocator", r#"{"trace": [7]}"#, "trace[0]"),
    (
        "memory-allocator",
        r#"{"trace": [["malloc", "a", true]]}"#,
        "trace[0][2]",
    ),
    ("kernel-lab", r#"{"buffers": {}}"#, "workgroups"),
    ("kernel-lab", r#"{"workgroups": [1, 1]}"#, "workgroups"),
    (
        "kernel-lab",
        r#"{"workgroups": [100000, 100000, 100000]}"#,
        "workgroups",
    ),
    (
        "kernel-lab",
        r#"{"workgroups": [1, 1, 1], "buffers": []}"#,
        "buffers",
    ),
    (
        "kernel-lab",
        r#"{"workgroups": [1, 1, 1], "overrides": 3}"#,
        "overrides",
    ),
    (
        "kernel-lab",
        r#"{"workgroups": [1, 1, 1], "buffers": {"zero": {"type": "f32", "len": 4}}}"#,
        "buffers.zero",
    ),
    (
        "kernel-lab",
        r#"{"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "f64", "len": 4}}}"#,
        "buffers.0:0.type",
    ),
    (
        "kernel-lab",
        r#"{"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "f32"}}}"#,
        "buffers.0:0",
    ),
    (
        "kernel-lab",
        r#"{"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "f32", "data": [1], "len": 1}}}"#,
        "buffers.0:0",
    ),
    (
        "kernel-lab",
        r#"{"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "f32", "data": [1], "fill": 1}}}"#,
        "buffers.0:0.fill",
    ),
    (
        "kernel-lab",
        r#"{"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "f32", "len": 4, "fill": true}}}"#,
        "buffers.0:0.fill",
    ),
    (
        "kernel-lab",
        r#"{"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "vec2<f32>", "data": [[1, 2, 3]]}}}"#,
        "buffers.0:0.data[0]",
    ),
    (
        "kernel-lab",
        r#"{"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "vec2<f32>", "data": [1, 2, 3]}}}"#,
        "buffers.0:0.data",
    ),
    (
        "kernel-lab",
        r#"{"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "f32", "len": 4000000000}}}"#,
        "buffers.0:0",
    ),
];

/// The refusal of `input` by scene `id` with its default parameters (and its example's).
fn refusal(id: &str, input: &str) -> (String, Text) {
    let s = scene::find(id).unwrap();
    let mut v = s.defaults();
    for (name, value) in s.input.unwrap().example_params {
        v.set(s.params, name, value).unwrap();
    }
    let input: Value = serde_json::from_str(input).unwrap();
    match s.report_with(v, Some(&input)) {
        Err(Error::InvalidInput { key, problem }) => (key, problem),
        other => panic!("{id} {input}: {other:?}"),
    }
}

/// `zh` without its quoted parts (between backticks or double quotes): text from the user's file
/// and the JSON literals a rule names (`"-inf"`, `"malloc"`), kept as they are in both languages.
fn unquoted(zh: &str) -> String {
    let mut out = String::new();
    let mut quote = None;
    for c in zh.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '`' || c == '"' => quote = Some(c),
            None => out.push(c),
        }
    }
    out
}

#[test]
fn every_scene_that_takes_input_refuses_bad_documents_in_chinese() {
    for s in scene::scenes().filter(|s| s.input.is_some()) {
        assert!(
            BAD.iter().any(|(id, _, _)| *id == s.id),
            "no bad input for {}",
            s.id
        );
    }
    for (id, input, want_key) in BAD {
        let (key, problem) = refusal(id, input);
        assert_eq!(key, *want_key, "{id} {input}: {problem:?}");
        assert!(
            !problem.en.is_empty() && !problem.zh.is_empty(),
            "{id} {input}"
        );
        assert_ne!(problem.en, problem.zh, "{id} {input}");
        // The scene's input keys, as its own Chinese listing of them keeps them.
        let keys = english_words(scene::find(id).unwrap().input.unwrap().keys.zh);
        let words = english_words(&unquoted(&problem.zh));
        let words: Vec<_> = words
            .iter()
            .filter(|w| !key.contains(w.as_str()) && !keys.contains(w))
            .collect();
        assert!(
            words.is_empty(),
            "{id} {input}: {words:?} in {}",
            problem.zh
        );
    }
}

#[test]
fn chinese_problems_read_as_worded_by_hand() {
    // English as the CLI has always printed it; Chinese written out by hand.
    let (_, p) = refusal("banks", r#"{"expression": "lane * tid"}"#);
    assert_eq!(
        p.en,
        "at character 8 (\"tid\"): unknown name; the only variable is `lane`"
    );
    assert_eq!(
        p.zh,
        "第 8 个字符处（\"tid\"）：未知的名字；唯一的变量是 `lane`"
    );
    let (_, p) = refusal("reduction", r#"{"values": [1, 2, 3]}"#);
    assert_eq!(
        p.en,
        "3 values but threads = 8: one value per thread (or --set threads=3)"
    );
    assert_eq!(
        p.zh,
        "3 个值，而 threads = 8：每个线程一个值（或 `--set threads=3`）"
    );
    let (_, p) = refusal("memory-allocator", r#"{"trace": [["free", "a"]]}"#);
    assert_eq!(p.en, "`a` was never allocated");
    assert_eq!(p.zh, "`a` 从未分配过");
    let (_, p) = refusal("layernorm-formulas", r#"{"x": {"a": 1}, "dy": [[1]]}"#);
    assert_eq!(p.en, "expected a list, got an object");
    assert_eq!(p.zh, "应为列表，实为对象");
}

#[test]
fn display_stays_english() {
    let e = Error::input(
        "x[1]",
        Text::new("the list is empty".to_owned(), "列表为空".to_owned()),
    );
    assert_eq!(e.to_string(), "input `x[1]`: the list is empty");
}
