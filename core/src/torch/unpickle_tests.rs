//! Tests of [`super`]: the fast decoder against serde-pickle on every bundled snapshot.

use super::*;

fn is_frames(k: &HashableValue) -> bool {
    matches!(k, HashableValue::String(s) if s == FRAMES_KEY)
}

/// `v` with every `frames` id replaced by its list from `table`, rebuilt as the dicts
/// PyTorch writes.
fn resolve(v: Value, table: &FrameTable) -> Value {
    match v {
        Value::List(l) => Value::List(l.into_iter().map(|v| resolve(v, table)).collect()),
        Value::Tuple(l) => Value::Tuple(l.into_iter().map(|v| resolve(v, table)).collect()),
        Value::Dict(d) => Value::Dict(
            d.into_iter()
                .map(|(k, v)| match v {
                    Value::I64(id) if is_frames(&k) => {
                        let frames = table
                            .frames(u32::try_from(id).expect("an id"))
                            .into_iter()
                            .map(|f| {
                                Value::Dict(BTreeMap::from([
                                    (HashableValue::String("name".into()), Value::String(f.name)),
                                    (
                                        HashableValue::String("filename".into()),
                                        Value::String(f.filename),
                                    ),
                                    (HashableValue::String("line".into()), Value::I64(f.line)),
                                ]))
                            })
                            .collect();
                        (k, Value::List(frames))
                    }
                    v => (k, resolve(v, table)),
                })
                .collect(),
        ),
        other => other,
    }
}

/// Whether `fast` equals `want`, where inside a `frames` value anything `serde-pickle`
/// lost to its shared-reference limit (`None`; see `snapshot::parse`) matches anything.
fn same(fast: &Value, want: &Value, in_frames: bool) -> bool {
    match (fast, want) {
        (_, Value::None) if in_frames => true,
        // A line beyond 64 bits (2⁶⁴ − 1: unknown) is kept as −1.
        (Value::I64(-1), Value::Int(_)) if in_frames => true,
        (Value::List(a), Value::List(b)) | (Value::Tuple(a), Value::Tuple(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y, in_frames))
        }
        // serde-pickle can lose a shared key too (the dict comes back `{None: …}`).
        (Value::Dict(_), Value::Dict(b)) if in_frames && b.contains_key(&HashableValue::None) => {
            true
        }
        (Value::Dict(a), Value::Dict(b)) => {
            a.len() == b.len()
                && a.iter().zip(b).all(|((ka, va), (kb, vb))| {
                    ka == kb && same(va, vb, in_frames || is_frames(ka))
                })
        }
        (a, b) => a == b,
    }
}

fn reference(bytes: &[u8]) -> Value {
    let options = serde_pickle::DeOptions::new().replace_recursive_structures();
    serde_pickle::value_from_slice(bytes, options).expect("serde-pickle reads it")
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/data/snapshots/{name}.pickle",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture present")
}

/// Frame lists of `v` (every `frames` entry), counted with Python's `pickle.load` in mind:
/// the number of `frames` entries whose value is a list.
fn count_frames_entries(v: &Value) -> usize {
    match v {
        Value::List(l) | Value::Tuple(l) => l.iter().map(count_frames_entries).sum(),
        Value::Dict(d) => d
            .iter()
            .map(|(k, v)| usize::from(is_frames(k)) + count_frames_entries(v))
            .sum(),
        _ => 0,
    }
}

#[test]
fn equals_serde_pickle_with_frames_resolved_on_every_bundled_snapshot() {
    for name in [
        "torch2.0-flexgen-opt1.3b",
        "torch2.6-verl",
        "torch2.11-cs336-a2",
        "torch2.11-mini-fixture",
    ] {
        let bytes = fixture(name);
        let fast = decode(&bytes, &mut |_| true)
            .unwrap_or_else(|| panic!("{name}: the fast path declined a real snapshot"));
        let mut want = reference(&bytes);
        if name == "torch2.6-verl" {
            // serde-pickle 1.2 loses this memo-shared empty string (it comes back None);
            // Python's `pickle.load` reads `''`, and so does the fast path.
            let setting = |v: &mut Value| -> Option<()> {
                let Value::Dict(top) = v else { return None };
                let Value::Dict(settings) =
                    top.get_mut(&HashableValue::String("allocator_settings".into()))?
                else {
                    return None;
                };
                let conf =
                    settings.get_mut(&HashableValue::String("PYTORCH_CUDA_ALLOC_CONF".into()))?;
                assert_eq!(*conf, Value::None, "serde-pickle's loss is still there");
                *conf = Value::String(String::new());
                Some(())
            };
            setting(&mut want).expect("the setting is in the file");
        }
        assert_eq!(
            count_frames_entries(&fast.value),
            count_frames_entries(&want),
            "{name}"
        );
        let resolved = resolve(fast.value, &fast.frames);
        assert!(same(&resolved, &want, false), "{name}: values differ");
    }
}

#[test]
fn shared_traceback_lists_get_one_id() {
    // Distinct frame lists (the empty one included) and distinct frames of every block,
    // block `history` entry and trace event, counted by content on Python's own
    // `pickle.load` of each file: each is kept once. (cs336: 5,163 events, 55 lists.)
    for (name, lists, frames) in [
        ("torch2.0-flexgen-opt1.3b", 54, 61),
        ("torch2.6-verl", 32, 248),
        ("torch2.11-cs336-a2", 55, 55),
        ("torch2.11-mini-fixture", 18, 200),
    ] {
        let fast =
            decode(&fixture(name), &mut |_| true).unwrap_or_else(|| panic!("{name} declined"));
        assert_eq!(fast.frames.lists(), lists, "{name}");
        assert_eq!(fast.frames.distinct_frames(), frames, "{name}");
    }
}

#[test]
fn equals_serde_pickle_on_a_synthetic_trace_with_frames() {
    let bytes = crate::torch::snapshot::synthetic(3_000, 5, 7).expect("synthetic");
    let fast = decode(&bytes, &mut |_| true).expect("handled");
    let resolved = resolve(fast.value, &fast.frames);
    assert!(resolved == reference(&bytes));
}

#[test]
fn declines_what_it_does_not_handle_and_never_panics() {
    // Protocol 0 (text opcodes): declined, serde-pickle's job.
    let p0 = b"(dp0\nVa\np1\nI1\ns.";
    assert!(decode(p0, &mut |_| true).is_none());
    // Every prefix of a real file: declined (truncated), never a panic.
    let bytes = fixture("torch2.11-mini-fixture");
    for cut in (0..bytes.len()).step_by(997) {
        assert!(decode(&bytes[..cut], &mut |_| true).is_none());
    }
    let pickle = |v: &Value| {
        serde_pickle::value_to_vec(v, serde_pickle::SerOptions::new()).expect("pickles")
    };
    // A `frames` string that is a list item, not a dict key, is kept as it is.
    let list = Value::List(vec![Value::String("frames".into()), Value::I64(3)]);
    assert_eq!(
        decode(&pickle(&list), &mut |_| true).map(|d| d.value),
        Some(list)
    );
    // A `frames` value that is not a list (an integer, a stray string): no frames, marked
    // `false` — not an integer, which would read as a list id (issue 30: declining sent the
    // whole file to serde-pickle).
    for stray in [Value::I64(3), Value::String("x".into())] {
        let odd = Value::Dict(BTreeMap::from([(
            HashableValue::String("frames".into()),
            stray,
        )]));
        let read = Value::Dict(BTreeMap::from([(
            HashableValue::String("frames".into()),
            Value::Bool(false),
        )]));
        assert_eq!(
            decode(&pickle(&odd), &mut |_| true).map(|d| d.value),
            Some(read)
        );
    }
    // A list of something other than frame dicts stays a value.
    let other = Value::Dict(BTreeMap::from([(
        HashableValue::String("frames".into()),
        Value::List(vec![Value::I64(1)]),
    )]));
    assert_eq!(
        decode(&pickle(&other), &mut |_| true).map(|d| d.value),
        Some(other)
    );
}

proptest::proptest! {
    /// Any sequence of memo indices (PyTorch's dense 0, 1, 2 … mixed with hostile far ones):
    /// each index reads back the node stored last, the count is the distinct indices, and the
    /// vector stays within twice the entries plus the slack — never sized by an index.
    #[test]
    fn memo_indices_read_back_and_never_size_the_table(
        ops in proptest::collection::vec(
            proptest::prop_oneof![0u64..300, 0u64..(1 << 32), proptest::strategy::Just((1u64 << 26) - 1)],
            0..200,
        ),
    ) {
        let mut memo = MemoTable::default();
        let mut model = std::collections::HashMap::new();
        for (node, &idx) in ops.iter().enumerate() {
            memo.insert(idx, node as u32);
            model.insert(idx, node as u32);
            proptest::prop_assert!(
                memo.dense.len() as u64 <= 2 * model.len() as u64 + DENSE_MEMO,
                "{} slots for {} entries", memo.dense.len(), model.len()
            );
        }
        proptest::prop_assert_eq!(memo.count, model.len() as u64);
        for (&idx, &node) in &model {
            proptest::prop_assert_eq!(memo.get(idx), Some(node));
        }
    }
}

#[test]
fn one_long_binput_near_2_to_the_26_costs_one_entry() {
    // Protocol 4: EMPTY_LIST, LONG_BINPUT 67108863, STOP (the 46-byte file, shortened).
    let bytes = b"\x80\x04]r\xff\xff\xff\x03.";
    let mut memo = MemoTable::default();
    memo.insert(67_108_863, 0);
    assert!(memo.dense.is_empty(), "{} slots", memo.dense.len());
    assert_eq!(memo.get(67_108_863), Some(0));
    // The decoder reads it without the table growing (it answers the empty list).
    let d = decode(bytes, &mut |_| true).expect("decodes");
    assert!(matches!(d.value, Value::List(ref l) if l.is_empty()));
}
