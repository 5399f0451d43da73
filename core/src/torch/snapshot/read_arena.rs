//! Extracting a [`Snapshot`] straight from the fast decoder's nodes ([`Arena`]): the trace
//! events — nearly all of a large file — are read field by field from their dict nodes, keys
//! compared as the strings they are, never expanded into values; everything else (segments,
//! blocks, settings: a few thousand values) is expanded and read by [`super::read`]'s own code.
//!
//! Equal to expanding the whole value and extracting it ([`super::read`]'s `extract`): an event
//! holding anything but plain scalars in the fields read (a container, a `history`, a key that is
//! not a string) is expanded and read by that code instead, so its result — or error message —
//! is the same; an integer beyond 64 bits anywhere the expansion would meet it declines the fast
//! path, as expanding it would.

use std::collections::BTreeMap;

use serde_pickle::Value;

use super::read::{FrameIds, Traces, event_from_value, extract_with};
use super::{
    MAX_TRACE_EVENTS, PROGRESS_DECODED, PROGRESS_EVERY, PROGRESS_EXTRACTED, Snapshot, TraceEvent,
    report_events,
};
use crate::Error;
use crate::torch::frames::{FrameTable, NO_FRAMES};
use crate::torch::unpickle::{Arena, Expander, Nodes, View};

/// The decoder's `fold` ([`crate::torch::unpickle::decode_arena`]): a trace event's dict whose
/// fields read are plain scalars, as its [`TraceEvent`] (`None`: left a dict).
pub(super) fn fold_event(
    entries: &[u32],
    nodes: Nodes<'_>,
    table: &FrameTable,
) -> Option<TraceEvent> {
    plain_event(entries, nodes, table, true).ok()
}

/// The snapshot in `arena` (decoded with `table`; `folded`: the events [`fold_event`] made), or
/// `None` where the fast path declines (the caller then decodes with `serde-pickle`).
pub(super) fn extract_arena(
    arena: &Arena,
    folded: Vec<TraceEvent>,
    protocol: u8,
    table: &mut FrameTable,
) -> Option<Result<Snapshot, Error>> {
    let mut folded = Folded {
        events: folded,
        moved_to: None,
    };
    let mut x = Expander::new(arena);
    let root = arena.root();
    // The top-level dict without `device_traces` (the last such entry wins, as in a dict).
    let (top, traces_node) = match arena.view(root)? {
        View::Dict(entries) => {
            let mut d = BTreeMap::new();
            let mut traces = None;
            for &(k, v) in entries {
                if arena.view(k)?.str(table) == Some("device_traces") {
                    traces = Some(v);
                    continue;
                }
                let key = x.expand(k, 1, table)?.into_hashable().ok()?;
                let value = x.expand(v, 1, table)?;
                d.insert(key, value);
            }
            (Value::Dict(d), traces)
        }
        _ => (x.expand(root, 0, table)?, None),
    };
    // `None` counts as absent, as `field` reads it.
    let traces_node =
        traces_node.filter(|&n| !matches!(arena.view(n), Some(View::Scalar(Value::None))));
    let out = extract_with(
        &top,
        protocol,
        table,
        FrameIds::Fast,
        &mut |_, table| match traces_node {
            None => Some(Ok(Vec::new())),
            Some(n) => traces_from_arena(arena, n, table, &mut x, &mut folded),
        },
    );
    match out {
        Ok(Some(s)) => Some(Ok(s)),
        Ok(None) => None,
        Err(e) => Some(Err(e)),
    }
}

/// The items of a list or tuple node; `Err(true)` for an integer beyond 64 bits (decline),
/// `Err(false)` for anything else.
fn items(arena: &Arena, n: u32) -> Result<&[u32], bool> {
    match arena.view(n) {
        Some(View::List(l) | View::Tuple(l)) => Ok(l),
        Some(View::Big) | None => Err(true),
        _ => Err(false),
    }
}

/// The events of every device in the `device_traces` node `node`, as
/// `super::read::traces_from_value` reads them from the expanded value.
fn traces_from_arena(
    arena: &Arena,
    node: u32,
    table: &mut FrameTable,
    x: &mut Expander<'_>,
    folded: &mut Folded,
) -> Traces {
    let devices = match items(arena, node) {
        Ok(l) => l,
        Err(true) => return None,
        Err(false) => {
            x.expand(node, 1, table)?;
            return Some(Err(Error::BadInput("`device_traces` is not a list".into())));
        }
    };
    let total_events = devices
        .iter()
        .filter_map(|&t| items(arena, t).ok())
        .map(<[u32]>::len)
        .sum::<usize>();
    let mut count = 0usize;
    let mut device_traces = Vec::with_capacity(devices.len());
    for (dev, &t) in devices.iter().enumerate() {
        let evs = match items(arena, t) {
            Ok(l) => l,
            Err(true) => return None,
            Err(false) => {
                x.expand(t, 2, table)?;
                return Some(Err(Error::BadInput(format!(
                    "`device_traces[{dev}]` is not a list"
                ))));
            }
        };
        count += evs.len();
        if count > MAX_TRACE_EVENTS {
            return Some(Err(Error::BadInput(format!(
                "more than {MAX_TRACE_EVENTS} trace events; warpscope reads at most that many"
            ))));
        }
        let before = count - evs.len();
        // Every folded event, in order, once: moved, not copied (one device's trace).
        if folded.moved_to.is_none()
            && evs.len() == folded.events.len()
            && evs
                .iter()
                .enumerate()
                .all(|(k, &ev)| matches!(arena.view(ev), Some(View::Folded(n)) if n as usize == k))
        {
            if let Err(e) =
                report_events(PROGRESS_DECODED, PROGRESS_EXTRACTED, before, total_events)
            {
                return Some(Err(e));
            }
            folded.moved_to = Some(device_traces.len());
            device_traces.push(std::mem::take(&mut folded.events));
            continue;
        }
        let mut out = Vec::with_capacity(evs.len());
        for (k, &ev) in evs.iter().enumerate() {
            if k % PROGRESS_EVERY == 0
                && let Err(e) = report_events(
                    PROGRESS_DECODED,
                    PROGRESS_EXTRACTED,
                    before + k,
                    total_events,
                )
            {
                return Some(Err(e));
            }
            if let Some(View::Folded(n)) = arena.view(ev) {
                let e = match folded.moved_to {
                    Some(d) => device_traces
                        .get(d)
                        .and_then(|t: &Vec<TraceEvent>| t.get(n as usize)),
                    None => folded.events.get(n as usize),
                };
                out.push(e?.clone());
                continue;
            }
            let e = match event(arena, ev, table) {
                Read::Event(e) => e,
                Read::Decline => return None,
                Read::Slow => {
                    let v = x.expand(ev, 3, table)?;
                    match event_from_value(&v, (dev, k), table, FrameIds::Fast) {
                        Ok(e) => e,
                        Err(e) => return Some(Err(e)),
                    }
                }
            };
            out.push(e);
        }
        device_traces.push(out);
    }
    Some(Ok(device_traces))
}

/// The events the decoder folded, until moved into one device's trace.
struct Folded {
    events: Vec<TraceEvent>,
    /// The device whose trace they were moved into.
    moved_to: Option<usize>,
}

pub(super) enum Read {
    Event(TraceEvent),
    /// Not plain scalars: read it from its expanded value.
    Slow,
    /// Holds what the expansion declines.
    Decline,
}

/// A scalar field's value: `Ok(None)` absent or `None`, `Err(read)` for anything the fast
/// reading leaves to the expanded value (`Slow`) or declines.
fn scalar<'a>(nodes: Nodes<'a>, slot: Option<u32>) -> Result<Option<View<'a>>, Read> {
    let Some(n) = slot else { return Ok(None) };
    match nodes.view(n) {
        Some(View::Scalar(Value::None)) => Ok(None),
        Some(v @ (View::Scalar(_) | View::Str(_))) => Ok(Some(v)),
        Some(View::Big) | None => Err(Read::Decline),
        Some(_) => Err(Read::Slow),
    }
}

/// `as_u64` of [`super::read`]: a non-negative integer, or a boolean as 0 / 1.
fn as_u64(v: View<'_>) -> Option<u64> {
    match v {
        View::Scalar(Value::I64(i)) => u64::try_from(*i).ok(),
        View::Scalar(Value::Bool(b)) => Some(u64::from(*b)),
        _ => None,
    }
}

/// The fields of event dict `ev` as `event_from_value` reads them, where they are plain.
fn event(arena: &Arena, ev: u32, table: &FrameTable) -> Read {
    let Some(View::Dict(entries)) = arena.view(ev) else {
        return Read::Slow;
    };
    let flat: Vec<u32> = entries.iter().flat_map(|&(k, v)| [k, v]).collect();
    match plain_event(&flat, arena.nodes(), table, false) {
        Ok(e) => Read::Event(e),
        Err(r) => r,
    }
}

/// The event of dict entries `entries` (keys and values alternating); `folding`: while decoding, the frame table still
/// growing (an integer `frames` that is not yet a list id is then left to the end).
fn plain_event(
    entries: &[u32],
    nodes: Nodes<'_>,
    table: &FrameTable,
    folding: bool,
) -> Result<TraceEvent, Read> {
    let arena = nodes;
    let (mut action, mut addr, mut size, mut stream, mut device_free, mut frames) =
        (None, None, None, None, None, None);
    for pair in entries.chunks_exact(2) {
        let &[k, v] = pair else {
            return Err(Read::Slow);
        };
        let key = arena.view(k).and_then(|k| k.str(table)).ok_or(Read::Slow)?;
        let slot = match key.as_bytes() {
            b"action" => &mut action,
            b"addr" => &mut addr,
            b"size" => &mut size,
            b"stream" => &mut stream,
            b"device_free" => &mut device_free,
            b"frames" => &mut frames,
            // A PyTorch ≤ 2.0 block's frames live in its `history`.
            b"history" => return Err(Read::Slow),
            _ => {
                // A field not read: the expansion would still meet what it holds.
                match arena.view(v) {
                    Some(View::Scalar(_) | View::Str(_)) => continue,
                    Some(View::Big) | None => return Err(Read::Decline),
                    Some(_) => return Err(Read::Slow),
                }
            }
        };
        *slot = Some(v);
    }
    let action = match scalar(nodes, action)?.and_then(|v| v.str(table)) {
        Some(a) => super::Action::from_name(a),
        None => return Err(Read::Slow),
    };
    let byte_count = |slot| match scalar(nodes, slot)? {
        None => Ok(None),
        Some(View::Scalar(Value::I64(i))) if *i >= 0 => Ok(Some(i.unsigned_abs())),
        // Refused with the event named: read from the value.
        Some(_) => Err(Read::Slow),
    };
    let addr = byte_count(addr)?;
    let size = byte_count(size)?.unwrap_or(0);
    let stream = scalar(nodes, stream)?.and_then(as_u64).unwrap_or(0);
    let device_free = scalar(nodes, device_free)?.and_then(as_u64);
    let frames = match scalar(nodes, frames)? {
        Some(View::Scalar(Value::I64(id))) => match u32::try_from(*id) {
            Ok(id) if (id as usize) < table.lists() => id,
            _ if folding => return Err(Read::Slow),
            _ => NO_FRAMES,
        },
        // Any other scalar is no frame list.
        _ => NO_FRAMES,
    };
    Ok(TraceEvent {
        action,
        addr,
        size,
        stream,
        device_free,
        frames,
    })
}

#[cfg(test)]
mod tests {
    use serde_pickle::{HashableValue, Value};

    use super::super::read::parse_expanded;
    use crate::torch::snapshot::parse;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/tests/data/snapshots/{name}.pickle",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("fixture present")
    }

    fn dict(entries: Vec<(&str, Value)>) -> Value {
        Value::Dict(
            entries
                .into_iter()
                .map(|(k, v)| (HashableValue::String(k.into()), v))
                .collect(),
        )
    }

    #[test]
    fn equals_the_expanded_value_on_every_bundled_snapshot_and_a_synthetic_one() {
        for name in [
            "torch2.0-flexgen-opt1.3b",
            "torch2.6-verl",
            "torch2.11-cs336-a2",
            "torch2.11-mini-fixture",
        ] {
            let bytes = fixture(name);
            let want = parse_expanded(&bytes).expect("the fast decoder reads it");
            assert!(parse(&bytes) == want, "{name}");
        }
        let bytes = crate::torch::snapshot::synthetic(3_000, 5, 7).expect("synthetic");
        assert!(parse(&bytes) == parse_expanded(&bytes).expect("read"));
    }

    #[test]
    fn odd_events_read_or_refused_as_from_the_expanded_value() {
        let frame = dict(vec![
            ("name", Value::String("f".into())),
            ("filename", Value::String("a.py".into())),
            ("line", Value::I64(3)),
        ]);
        let base = || {
            vec![
                ("action", Value::String("alloc".into())),
                ("addr", Value::I64(4096)),
                ("size", Value::I64(512)),
                ("stream", Value::I64(0)),
                ("frames", Value::List(vec![frame.clone()])),
            ]
        };
        let with = |k: &'static str, v: Value| {
            let mut e = base();
            e.retain(|(key, _)| *key != k);
            e.push((k, v));
            dict(e)
        };
        let without = |k: &str| {
            let mut e = base();
            e.retain(|(key, _)| *key != k);
            dict(e)
        };
        let events = vec![
            dict(base()),
            with("size", Value::I64(-1)),
            with("addr", Value::String("0x10".into())),
            with("addr", Value::None),
            with("size", Value::Bool(true)),
            with("size", Value::F64(f64::NAN)),
            with("stream", Value::Bool(true)),
            with("stream", Value::I64(-3)),
            with("stream", Value::String("s".into())),
            with("device_free", Value::I64(77)),
            with("device_free", Value::I64(-77)),
            with("action", Value::I64(1)),
            with("action", Value::String("é".repeat(40))),
            with("action", Value::None),
            without("action"),
            without("size"),
            with("frames", Value::I64(0)),
            with("frames", Value::I64(9_999)),
            with("frames", Value::None),
            with("frames", Value::String("x".into())),
            with("frames", Value::List(vec![Value::I64(1)])),
            with("frames", Value::List(Vec::new())),
            with("time_us", Value::List(vec![Value::I64(1)])),
            with(
                "history",
                Value::List(vec![dict(vec![(
                    "frames",
                    Value::List(vec![frame.clone()]),
                )])]),
            ),
            Value::I64(5),
            Value::List(Vec::new()),
        ];
        let snapshot = |traces: Value| {
            serde_pickle::value_to_vec(
                &dict(vec![
                    ("segments", Value::List(Vec::new())),
                    ("device_traces", traces),
                ]),
                serde_pickle::SerOptions::new(),
            )
            .expect("pickles")
        };
        let (mut refused, mut compared) = (0, 0);
        for (i, e) in events.into_iter().enumerate() {
            let bytes = snapshot(Value::List(vec![Value::List(vec![dict(base()), e])]));
            // A `frames` value that is not a list reads as no frames, as serde-pickle's does.
            let Some(want) = parse_expanded(&bytes) else {
                continue;
            };
            if let (Ok(general), Ok(fast)) = (
                super::super::read::parse_with_serde_pickle(&bytes),
                want.as_ref(),
            ) {
                assert_eq!(fast.device_traces, general.device_traces, "event {i}");
            }
            refused += usize::from(want.is_err());
            compared += 1;
            assert!(parse(&bytes) == want, "event {i}: {:?}", parse(&bytes));
        }
        assert!(
            refused >= 6 && compared >= 20,
            "{refused} refused of {compared}"
        );
        for traces in [
            Value::None,
            Value::I64(3),
            Value::List(vec![Value::I64(3)]),
            Value::List(Vec::new()),
            Value::Tuple(vec![Value::List(vec![dict(base())])]),
        ] {
            let bytes = snapshot(traces);
            let want = parse_expanded(&bytes).expect("read");
            assert!(parse(&bytes) == want);
        }
    }

    #[test]
    fn a_large_file_the_guard_refuses_is_refused_with_its_message() {
        // Large enough for the guard to run beside the decoder (`PARALLEL_GUARD_BYTES`).
        let mut bytes = crate::torch::snapshot::synthetic(60_000, 3, 1).expect("synthetic");
        assert!(bytes.len() >= 4 << 20, "{}", bytes.len());
        assert_eq!(bytes.pop(), Some(b'.'));
        bytes.extend_from_slice(b"cos\nsystem\n.");
        let want = crate::torch::pickle::check_opcodes(&bytes).expect_err("refused");
        assert!(want.to_string().contains("os.system"), "{want}");
        assert_eq!(parse(&bytes).err(), Some(want));
    }
}
