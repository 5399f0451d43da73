//! A fast path for reading large snapshots: a pickle decoder for the binary opcodes PyTorch's
//! snapshots use (protocols 2–5) that never builds the value of a dict entry named `frames` —
//! the Python stack of every block and trace event, ~90 % of a snapshot's bytes and nothing the
//! reader uses.
//!
//! It runs after [`super::pickle::check`] has refused anything unsafe and bounded sizes, and it
//! answers `None` — "use `serde-pickle`" — for anything it does not handle exactly: another
//! opcode (protocol 0/1 text opcodes, sets, big integers, `BINSTRING`), a `frames` string that is
//! not a dict key, a memo reference from outside a skipped value into it, or any inconsistency.
//! Where it answers, the value equals `serde-pickle`'s with every `frames` entry's value replaced
//! by an empty list (a test checks this on every bundled snapshot).
//!
//! Containers are built as nodes of an arena and referenced by index, so the memo shares them
//! as pickle means (a dict memoised while empty and filled later is seen filled); the value is
//! then expanded into [`Value`]s, a shared node once per reference, a cycle as `None` (what
//! `serde-pickle`'s `replace_recursive_structures` does).

#![deny(clippy::indexing_slicing)]

use std::collections::{BTreeMap, HashMap};

use serde_pickle::{HashableValue, Value};

/// The dict key whose value is skipped.
const SKIPPED_KEY: &str = "frames";

enum Node {
    Scalar(Value),
    List(Vec<u32>),
    Dict(Vec<(u32, u32)>),
    Tuple(Vec<u32>),
}

#[derive(Clone, Copy)]
enum Memo {
    Node(u32),
    /// Memoised inside a skipped value: its contents were never built.
    Skipped,
}

/// Stands for every container built inside a skipped value (never filled).
const SKIPPED_CONTAINER: u32 = 0;
/// Stands for every scalar read inside a skipped value (never allocated).
const SKIPPED_SCALAR: u32 = 1;

fn skipped(id: u32) -> bool {
    id == SKIPPED_CONTAINER || id == SKIPPED_SCALAR
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.b.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    fn uint(&mut self, n: usize) -> Option<u64> {
        let s = self.take(n)?;
        Some(
            s.iter()
                .rev()
                .fold(0u64, |acc, &byte| (acc << 8) | u64::from(byte)),
        )
    }
}

/// Decodes `bytes` with every `frames` entry's value replaced by an empty list, or `None` when
/// the file uses something this fast path does not handle (the caller then uses `serde-pickle`).
/// `progress(byte offset)` is called about every 4 MiB; returning `false` stops (answer `None`).
///
/// The stack machine runs exactly as pickle defines it; while a `frames` key waits on the stack
/// for its value, containers and scalars are pushed as two shared stand-ins that are never
/// filled or allocated (a scalar that is memoised is built, since anything may refer to it).
/// When the entry is stored, its value becomes an empty list. A stand-in reaching a real
/// container any other way, or a memo reference to a skipped container from outside, declines.
pub fn decode_without_frames(
    bytes: &[u8],
    progress: &mut dyn FnMut(usize) -> bool,
) -> Option<Value> {
    let mut r = Reader { b: bytes, pos: 0 };
    let mut nodes: Vec<Node> = vec![Node::List(Vec::new()), Node::Scalar(Value::None)];
    let mut stack: Vec<u32> = Vec::new();
    let mut marks: Vec<usize> = Vec::new();
    let mut memo: HashMap<u64, Memo> = HashMap::new();
    // Stack positions of `frames` keys waiting to be stored, and whether the value is complete.
    let mut frames_keys: Vec<(usize, bool)> = Vec::new();
    // The last scalar pushed while skipping: (opcode, where its argument starts).
    let mut last_scalar: Option<(u8, usize)> = None;
    let mut next_report = 4 << 20;
    loop {
        if r.pos >= next_report {
            next_report += 4 << 20;
            if !progress(r.pos) {
                return None;
            }
        }
        let op = *r.b.get(r.pos)?;
        r.pos += 1;
        // A string pushed right above a `frames` value is the dict's next key: frame lists hold
        // dicts, never strings (a wrong guess leaves a stand-in in the entry: declined below).
        if let Some((p, done)) = frames_keys.last_mut()
            && !*done
            && stack.len() == *p + 2
            && marks.last().is_none_or(|&m| m <= *p)
            && pushes_string(op, &r, &memo, &nodes)
        {
            *done = true;
        }
        let skipping = frames_keys.last().is_some_and(|&(_, done)| !done);
        let scalar_at = last_scalar.take();
        match op {
            0x80 => {
                let p = r.uint(1)?;
                if !(2..=5).contains(&p) {
                    return None;
                }
            }
            0x95 => {
                r.take(8)?;
            }
            b'.' => {
                let root = stack.pop()?;
                if !stack.is_empty() || !marks.is_empty() || skipped(root) {
                    return None;
                }
                return expand(&nodes, root, &mut vec![false; nodes.len()], 0);
            }
            b'(' => marks.push(stack.len()),
            b'0' => {
                if marks.last() == Some(&stack.len()) {
                    return None;
                }
                stack.pop()?;
            }
            b'1' => {
                let m = marks.pop()?;
                stack.truncate(m);
            }
            b'2' => {
                let top = *stack.last()?;
                stack.push(top);
            }
            b'N' | 0x88 | 0x89 | b'J' | b'K' | b'M' | 0x8a | b'G' | b'C' | b'B' | 0x8e | b'X'
            | 0x8c | 0x8d => {
                if skipping {
                    let at = r.pos;
                    skip_scalar(op, &mut r)?;
                    last_scalar = Some((op, at));
                    stack.push(SKIPPED_SCALAR);
                } else {
                    let v = read_scalar(op, &mut r)?;
                    let is_key = matches!(&v, Value::String(s) if s == SKIPPED_KEY)
                        && at_key_position(&nodes, &stack, &marks);
                    nodes.push(Node::Scalar(v));
                    stack.push((nodes.len() - 1) as u32);
                    if is_key {
                        frames_keys.push((stack.len() - 1, false));
                    }
                }
            }
            b']' | b'}' | b')' => {
                if skipping {
                    stack.push(SKIPPED_CONTAINER);
                } else {
                    nodes.push(match op {
                        b']' => Node::List(Vec::new()),
                        b'}' => Node::Dict(Vec::new()),
                        _ => Node::Tuple(Vec::new()),
                    });
                    stack.push((nodes.len() - 1) as u32);
                }
            }
            0x85..=0x87 | b't' | b'l' | b'd' => {
                let at = match op {
                    0x85..=0x87 => {
                        let at = stack.len().checked_sub(usize::from(op - 0x84))?;
                        if marks.last().is_some_and(|&m| m > at) {
                            return None;
                        }
                        at
                    }
                    _ => marks.pop()?,
                };
                let items = stack.split_off(at);
                if skipping && at > frames_keys.last()?.0 {
                    stack.push(SKIPPED_CONTAINER);
                } else {
                    if items.iter().any(|&i| skipped(i)) {
                        return None;
                    }
                    nodes.push(match op {
                        b'l' => Node::List(items),
                        b'd' => Node::Dict(pairs(items)?),
                        _ => Node::Tuple(items),
                    });
                    stack.push((nodes.len() - 1) as u32);
                }
            }
            b'a' | b'e' | b's' | b'u' => {
                let at = match op {
                    b'a' => stack.len().checked_sub(1)?,
                    b's' => stack.len().checked_sub(2)?,
                    _ => marks.pop()?,
                };
                if marks.last().is_some_and(|&m| m > at) {
                    return None;
                }
                let mut items = stack.split_off(at);
                let &target = stack.last()?;
                if target == SKIPPED_CONTAINER {
                    continue;
                }
                if matches!(op, b's' | b'u') {
                    // Storing `frames` entries: the value becomes an empty list.
                    if !items.len().is_multiple_of(2) {
                        return None;
                    }
                    for k in (0..items.len()).step_by(2) {
                        if frames_keys.last().is_some_and(|&(p, _)| p == at + k) {
                            frames_keys.pop();
                            nodes.push(Node::List(Vec::new()));
                            *items.get_mut(k + 1)? = (nodes.len() - 1) as u32;
                        }
                    }
                }
                if items.iter().any(|&i| skipped(i)) {
                    return None;
                }
                match (op, nodes.get_mut(target as usize)?) {
                    (b'a' | b'e', Node::List(l)) => l.extend(items),
                    (b's' | b'u', Node::Dict(d)) => d.extend(pairs(items)?),
                    _ => return None,
                }
            }
            0x94 | b'q' | b'r' => {
                let idx = match op {
                    0x94 => memo.len() as u64,
                    b'q' => r.uint(1)?,
                    _ => r.uint(4)?,
                };
                let top = *stack.last()?;
                let entry = match top {
                    // A skipped scalar is built after all: anything later may refer to it.
                    SKIPPED_SCALAR => {
                        let (sop, at) = scalar_at?;
                        let mut again = Reader { b: r.b, pos: at };
                        nodes.push(Node::Scalar(read_scalar(sop, &mut again)?));
                        last_scalar = scalar_at;
                        Memo::Node((nodes.len() - 1) as u32)
                    }
                    SKIPPED_CONTAINER => Memo::Skipped,
                    n => Memo::Node(n),
                };
                memo.insert(idx, entry);
            }
            b'h' | b'j' => {
                let idx = if op == b'h' { r.uint(1)? } else { r.uint(4)? };
                let n = match memo.get(&idx)? {
                    Memo::Node(n) => *n,
                    Memo::Skipped if skipping => SKIPPED_CONTAINER,
                    Memo::Skipped => return None,
                };
                // PyTorch memoises each key string once and refers to it afterwards.
                let is_key = !skipping
                    && matches!(nodes.get(n as usize), Some(Node::Scalar(Value::String(s))) if s == SKIPPED_KEY)
                    && at_key_position(&nodes, &stack, &marks);
                stack.push(n);
                if is_key {
                    frames_keys.push((stack.len() - 1, false));
                }
            }
            _ => return None,
        }
        // A `frames` key popped without being stored (POP, POP_MARK, a tuple): not a dict entry.
        if frames_keys.last().is_some_and(|&(p, _)| p >= stack.len()) {
            return None;
        }
    }
}

/// Whether opcode `op` (its argument at `r`) pushes a string: a string opcode, or a memo
/// reference to a string node.
fn pushes_string(op: u8, r: &Reader<'_>, memo: &HashMap<u64, Memo>, nodes: &[Node]) -> bool {
    match op {
        b'X' | 0x8c | 0x8d => true,
        b'h' | b'j' => {
            let mut peek = Reader { b: r.b, pos: r.pos };
            let idx = if op == b'h' {
                peek.uint(1)
            } else {
                peek.uint(4)
            };
            matches!(
                idx.and_then(|i| memo.get(&i)),
                Some(Memo::Node(n)) if matches!(nodes.get(*n as usize), Some(Node::Scalar(Value::String(_))))
            )
        }
        _ => false,
    }
}

/// Moves past a scalar's argument without decoding it.
fn skip_scalar(op: u8, r: &mut Reader<'_>) -> Option<()> {
    let n = match op {
        b'N' | 0x88 | 0x89 => 0,
        b'J' => 4,
        b'K' => 1,
        b'M' => 2,
        b'G' => 8,
        0x8a | 0x8c | b'C' => usize::try_from(r.uint(1)?).ok()?,
        b'X' | b'B' => usize::try_from(r.uint(4)?).ok()?,
        _ => usize::try_from(r.uint(8)?).ok()?,
    };
    r.take(n)?;
    Some(())
}

/// The scalar of opcode `op` whose argument starts at `r`'s position.
fn read_scalar(op: u8, r: &mut Reader<'_>) -> Option<Value> {
    Some(match op {
        b'N' => Value::None,
        0x88 => Value::Bool(true),
        0x89 => Value::Bool(false),
        b'J' => Value::I64(i64::from(r.uint(4)? as u32 as i32)),
        b'K' => Value::I64(r.uint(1)? as i64),
        b'M' => Value::I64(r.uint(2)? as i64),
        0x8a => Value::I64(long1(r)?),
        b'G' => Value::F64(f64::from_be_bytes(r.take(8)?.try_into().ok()?)),
        b'X' | 0x8c | 0x8d => {
            let n = match op {
                0x8c => r.uint(1)?,
                b'X' => r.uint(4)?,
                _ => r.uint(8)?,
            };
            let s = std::str::from_utf8(r.take(usize::try_from(n).ok()?)?).ok()?;
            Value::String(s.to_owned())
        }
        b'C' | b'B' | 0x8e => {
            let n = match op {
                b'C' => r.uint(1)?,
                b'B' => r.uint(4)?,
                _ => r.uint(8)?,
            };
            Value::Bytes(r.take(usize::try_from(n).ok()?)?.to_vec())
        }
        _ => return None,
    })
}

/// Whether a string pushed now would be a dict key: the first of a pair after a MARK above a
/// dict, or right above a dict with no MARK in between (a single `SETITEM`).
fn at_key_position(nodes: &[Node], stack: &[u32], marks: &[usize]) -> bool {
    let is_dict = |i: usize| {
        stack
            .get(i)
            .and_then(|&n| nodes.get(n as usize))
            .is_some_and(|n| matches!(n, Node::Dict(_)))
    };
    match marks.last() {
        Some(&m)
            if m <= stack.len()
                && m > 0
                && is_dict(m - 1)
                && (stack.len() - m).is_multiple_of(2) =>
        {
            true
        }
        Some(&m) if m == stack.len() => false,
        _ => !stack.is_empty() && is_dict(stack.len() - 1),
    }
}

fn pairs(items: Vec<u32>) -> Option<Vec<(u32, u32)>> {
    if !items.len().is_multiple_of(2) {
        return None;
    }
    items
        .chunks_exact(2)
        .map(|p| match *p {
            [k, v] => Some((k, v)),
            _ => None,
        })
        .collect()
}

/// `LONG1`: a little-endian two's-complement integer of up to 8 bytes (longer: not handled).
fn long1(r: &mut Reader<'_>) -> Option<i64> {
    let n = usize::from(*r.take(1)?.first()?);
    if n > 8 {
        return None;
    }
    let s = r.take(n)?;
    if n == 0 {
        return Some(0);
    }
    let mut buf = if s.last()? & 0x80 != 0 {
        [0xffu8; 8]
    } else {
        [0u8; 8]
    };
    buf.get_mut(..n)?.copy_from_slice(s);
    Some(i64::from_le_bytes(buf))
}

fn expand(nodes: &[Node], id: u32, open: &mut Vec<bool>, depth: usize) -> Option<Value> {
    let i = id as usize;
    if depth > super::pickle::MAX_DEPTH {
        return None;
    }
    let seen = open.get_mut(i)?;
    if *seen {
        return Some(Value::None);
    }
    *seen = true;
    let v = match nodes.get(i)? {
        Node::Scalar(v) => v.clone(),
        Node::List(items) => Value::List(
            items
                .iter()
                .map(|&c| expand(nodes, c, open, depth + 1))
                .collect::<Option<_>>()?,
        ),
        Node::Tuple(items) => Value::Tuple(
            items
                .iter()
                .map(|&c| expand(nodes, c, open, depth + 1))
                .collect::<Option<_>>()?,
        ),
        Node::Dict(entries) => {
            let mut d = BTreeMap::new();
            for &(k, v) in entries {
                let key: HashableValue = expand(nodes, k, open, depth + 1)?.into_hashable().ok()?;
                d.insert(key, expand(nodes, v, open, depth + 1)?);
            }
            Value::Dict(d)
        }
    };
    *open.get_mut(i)? = false;
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `serde-pickle`'s value with every `frames` entry's value replaced by an empty list.
    fn strip(v: Value) -> Value {
        match v {
            Value::List(l) => Value::List(l.into_iter().map(strip).collect()),
            Value::Tuple(l) => Value::Tuple(l.into_iter().map(strip).collect()),
            Value::Dict(d) => Value::Dict(
                d.into_iter()
                    .map(|(k, v)| {
                        let skipped = matches!(&k, HashableValue::String(s) if s == SKIPPED_KEY);
                        (
                            k,
                            if skipped {
                                Value::List(Vec::new())
                            } else {
                                strip(v)
                            },
                        )
                    })
                    .collect(),
            ),
            other => other,
        }
    }

    fn reference(bytes: &[u8]) -> Value {
        let options = serde_pickle::DeOptions::new().replace_recursive_structures();
        strip(serde_pickle::value_from_slice(bytes, options).expect("serde-pickle reads it"))
    }

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/tests/data/snapshots/{name}.pickle",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("fixture present")
    }

    #[test]
    fn equals_serde_pickle_without_frames_on_every_bundled_snapshot() {
        for name in [
            "torch2.0-flexgen-opt1.3b",
            "torch2.6-verl",
            "torch2.11-cs336-a2",
            "torch2.11-mini-fixture",
        ] {
            let bytes = fixture(name);
            let fast = decode_without_frames(&bytes, &mut |_| true)
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
                    let conf = settings
                        .get_mut(&HashableValue::String("PYTORCH_CUDA_ALLOC_CONF".into()))?;
                    assert_eq!(*conf, Value::None, "serde-pickle's loss is still there");
                    *conf = Value::String(String::new());
                    Some(())
                };
                setting(&mut want).expect("the setting is in the file");
            }
            assert!(fast == want, "{name}: values differ");
        }
    }

    #[test]
    fn equals_serde_pickle_on_a_synthetic_trace_with_frames() {
        let bytes = crate::memory::snapshot::synthetic(3_000, 5, 7).expect("synthetic");
        let fast = decode_without_frames(&bytes, &mut |_| true).expect("handled");
        assert!(fast == reference(&bytes));
    }

    #[test]
    fn declines_what_it_does_not_handle_and_never_panics() {
        // Protocol 0 (text opcodes): declined, serde-pickle's job.
        let p0 = b"(dp0\nVa\np1\nI1\ns.";
        assert!(decode_without_frames(p0, &mut |_| true).is_none());
        // Every prefix of a real file: declined (truncated), never a panic.
        let bytes = fixture("torch2.11-mini-fixture");
        for cut in (0..bytes.len()).step_by(997) {
            assert!(decode_without_frames(&bytes[..cut], &mut |_| true).is_none());
        }
        // A `frames` string that is a list item, not a dict key, is kept as it is.
        let list = serde_pickle::value_to_vec(
            &Value::List(vec![Value::String("frames".into()), Value::I64(3)]),
            serde_pickle::SerOptions::new(),
        )
        .expect("pickles");
        assert_eq!(
            decode_without_frames(&list, &mut |_| true),
            Some(Value::List(vec![
                Value::String("frames".into()),
                Value::I64(3)
            ]))
        );
    }
}
