//! A fast path for reading large snapshots: a pickle decoder for the binary opcodes PyTorch's
//! snapshots use (protocols 2–5) that indexes the `frames` of every block and trace event — the
//! Python stack, most of a snapshot's bytes — into a [`FrameTable`] while reading, each distinct
//! string, frame and list kept once, instead of building them as values.
//!
//! It runs after [`super::pickle::check`] has refused anything unsafe and bounded sizes, and it
//! answers `None` — "use `serde-pickle`" — for anything it does not handle exactly: another
//! opcode (protocol 0/1 text opcodes, sets, big integers, `BINSTRING`), a `frames` string that is
//! not a dict key, a `frames` value that is not a list, or any inconsistency. Where it answers,
//! the value equals `serde-pickle`'s with every `frames` list replaced by its id in the table,
//! whose frames are the list's (a test checks this on every bundled snapshot).
//!
//! Containers are built as nodes of an arena and referenced by index, so the memo shares them
//! as pickle means (a dict memoised while empty and filled later is seen filled); the value is
//! then expanded into [`Value`]s, a shared node once per reference, a cycle as `None` (what
//! `serde-pickle`'s `replace_recursive_structures` does).

#![deny(clippy::indexing_slicing)]

use std::collections::{BTreeMap, HashMap};

use serde_pickle::{HashableValue, Value};

use super::frames::FrameTable;

/// The dict key whose value is a stack-frame list.
const FRAMES_KEY: &str = "frames";

enum Node {
    Scalar(Value),
    /// A string read inside a `frames` value, kept once in the [`FrameTable`].
    Str(u32),
    /// A `LONG1` integer beyond 64 bits read inside a `frames` value: PyTorch writes an unknown
    /// C++ line as 2⁶⁴ − 1 (a frame's line becomes −1). Declines if expanded as a value.
    Big,
    List(Vec<u32>),
    Dict(Vec<(u32, u32)>),
    Tuple(Vec<u32>),
    /// A dict the caller's `fold` turned into record `n` of its own (declines if expanded or
    /// added to).
    Folded(u32),
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

/// A decoded snapshot pickle: its value, with the value of every `frames` entry that is a list
/// of `{name, filename, line}` dicts replaced by the integer id of that list in `frames`.
pub struct Decoded {
    /// The pickle's value (`frames` entries as list ids, see above).
    pub value: Value,
    /// Every distinct string, frame and frame list of those entries, once.
    pub frames: FrameTable,
}

/// The decoder's stack of node ids, with the largest id at or below each position (what
/// [`decode_arena`] asks before dropping nodes).
#[derive(Default)]
struct Stack {
    items: Vec<u32>,
    maxes: Vec<u32>,
}

impl std::ops::Deref for Stack {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        &self.items
    }
}

impl Stack {
    fn push(&mut self, n: u32) {
        let m = self.maxes.last().map_or(n, |&m| m.max(n));
        self.items.push(n);
        self.maxes.push(m);
    }

    fn pop(&mut self) -> Option<u32> {
        self.maxes.pop();
        self.items.pop()
    }

    fn truncate(&mut self, n: usize) {
        self.items.truncate(n);
        self.maxes.truncate(n);
    }

    /// The items from `at` on, removed (`None` past the end).
    fn split_off(&mut self, at: usize) -> Option<Vec<u32>> {
        if at > self.items.len() {
            return None;
        }
        self.maxes.truncate(at);
        Some(self.items.split_off(at))
    }

    /// The largest node id on the stack (0 when empty).
    fn max(&self) -> u32 {
        self.maxes.last().copied().unwrap_or(0)
    }
}

/// Memo slots kept in a vector while an index stays below twice the entries stored plus this
/// slack (PyTorch's pickles number them 0, 1, 2 …); any other index goes to a map, so one
/// `LONG_BINPUT 67108863` costs one entry, not 2²⁶ slots.
const DENSE_MEMO: u64 = 1 << 16;
const NO_NODE: u32 = u32::MAX;

#[derive(Default)]
struct MemoTable {
    dense: Vec<u32>,
    sparse: HashMap<u64, u32>,
    /// Distinct indices stored: where `MEMOIZE` stores next.
    count: u64,
}

impl MemoTable {
    fn insert(&mut self, idx: u64, node: u32) {
        let bound = self.count.saturating_mul(2).saturating_add(DENSE_MEMO);
        let new = match usize::try_from(idx) {
            Ok(i) if idx < bound => {
                if i >= self.dense.len() {
                    self.dense.resize(i + 1, NO_NODE);
                }
                // An index stored in the map before the vector reached it moves here.
                let was_sparse = !self.sparse.is_empty() && self.sparse.remove(&idx).is_some();
                match self.dense.get_mut(i) {
                    Some(slot) => std::mem::replace(slot, node) == NO_NODE && !was_sparse,
                    None => false,
                }
            }
            _ => self.sparse.insert(idx, node).is_none(),
        };
        if new {
            self.count += 1;
        }
    }

    fn get(&self, idx: u64) -> Option<u32> {
        match usize::try_from(idx).ok().and_then(|i| self.dense.get(i)) {
            Some(&n) if n != NO_NODE => Some(n),
            _ => self.sparse.get(&idx).copied(),
        }
    }
}

/// Decodes `bytes`, indexing every `frames` list into a [`FrameTable`] as it goes, or `None`
/// when the file uses something this fast path does not handle (the caller then uses
/// `serde-pickle`). `progress(byte offset)` is called about every 4 MiB; returning `false`
/// stops (answer `None`).
///
/// The stack machine runs exactly as pickle defines it. Strings read while a `frames` key waits
/// for its value are interned in the table instead of allocated. When a `frames` entry is
/// stored, its value — a list of frame dicts — is interned as a frame list, once per memoised
/// list: PyTorch pickles a traceback shared by many events once and refers to it through the
/// memo afterwards, so the same memo entry, the same node, gets the same id without being read
/// again. A `frames` value that is not a list reads as no frames; a list of anything but plain
/// `{name, filename, line}` dicts is kept as a value (the reader interns it from there).
pub fn decode(bytes: &[u8], progress: &mut dyn FnMut(usize) -> bool) -> Option<Decoded> {
    let (arena, frames, _) = decode_arena::<()>(bytes, progress, &mut |_, _, _| None)?;
    let mut x = Expander::new(&arena);
    let value = x.expand(arena.root, 0, &frames)?;
    Some(Decoded { value, frames })
}

/// A decoded pickle before expansion: its containers and scalars as nodes, referenced by index
/// (a memo-shared container is one node), for readers that look at a few fields of many
/// containers without building them as values ([`Arena::view`]).
pub struct Arena {
    nodes: Vec<Node>,
    root: u32,
}

/// One node of an [`Arena`], borrowed.
#[derive(Clone, Copy)]
pub enum View<'a> {
    /// A scalar (a string read outside any `frames` entry included).
    Scalar(&'a Value),
    /// A string interned in the frame table (its id there).
    Str(u32),
    /// An integer beyond 64 bits read inside a `frames` entry (a value cannot hold it).
    Big,
    /// A list's items.
    List(&'a [u32]),
    /// A tuple's items.
    Tuple(&'a [u32]),
    /// A dict's `(key, value)` entries, in the order the pickle set them.
    Dict(&'a [(u32, u32)]),
    /// A dict folded into record `n` of the decoder's `fold`.
    Folded(u32),
}

impl<'a> View<'a> {
    /// The string this node holds, if it is one (`table`: the frame table decoded with it).
    pub fn str(self, table: &'a FrameTable) -> Option<&'a str> {
        match self {
            View::Scalar(Value::String(s)) => Some(s),
            View::Str(id) => Some(table.text(id)),
            _ => None,
        }
    }
}

impl Arena {
    /// The root node.
    pub fn root(&self) -> u32 {
        self.root
    }

    /// Node `id` (`None` for an unknown id).
    pub fn view(&self, id: u32) -> Option<View<'_>> {
        self.nodes().view(id)
    }

    /// Every node, as a `fold` sees them.
    pub fn nodes(&self) -> Nodes<'_> {
        Nodes(&self.nodes)
    }
}

/// The nodes decoded so far, as a `fold` sees them ([`decode_arena`]).
#[derive(Clone, Copy)]
pub struct Nodes<'a>(&'a [Node]);

impl<'a> Nodes<'a> {
    /// Node `id` (`None` for an unknown id).
    pub fn view(self, id: u32) -> Option<View<'a>> {
        Some(match self.0.get(id as usize)? {
            Node::Scalar(v) => View::Scalar(v),
            Node::Str(s) => View::Str(*s),
            Node::Big => View::Big,
            Node::List(l) => View::List(l),
            Node::Tuple(l) => View::Tuple(l),
            Node::Dict(d) => View::Dict(d),
            Node::Folded(n) => View::Folded(*n),
        })
    }
}

/// Turns a dict's entries — keys and values alternating — set all at once into an empty dict,
/// into a record of the caller's (`None`: keep the dict).
pub type Fold<'f, T> = dyn FnMut(&[u32], Nodes<'_>, &FrameTable) -> Option<T> + 'f;

/// A map keyed by node id, hashed by one multiplication (ids are dense and not chosen by a
/// file's author beyond their order; SipHash cost a few percent of a large read).
type IdMap = HashMap<u32, u32, std::hash::BuildHasherDefault<IdHasher>>;

#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Expands [`Arena`] nodes into [`Value`]s: a shared node once per reference, a cycle as `None`,
/// at most [`MAX_EXPANDED`] values over all the nodes it expands.
pub struct Expander<'a> {
    arena: &'a Arena,
    open: Vec<bool>,
    budget: u64,
}

impl<'a> Expander<'a> {
    /// An expander of `arena`'s nodes with the whole budget.
    pub fn new(arena: &'a Arena) -> Self {
        Expander {
            arena,
            open: vec![false; arena.nodes.len()],
            budget: MAX_EXPANDED,
        }
    }

    /// Node `id` as a value, `depth` containers deep (`table`: the frame table decoded with the
    /// arena); `None` when it holds an integer beyond 64 bits, nests too deep or runs past the
    /// budget — and the expander is then spent.
    pub fn expand(&mut self, id: u32, depth: usize, table: &FrameTable) -> Option<Value> {
        let mut budget = self.budget;
        let v = expand(
            &self.arena.nodes,
            table,
            id,
            &mut self.open,
            (depth, &mut budget),
        );
        self.budget = budget;
        v
    }
}

/// [`decode`] without expanding the value: the nodes, for [`Arena::view`] and [`Expander`],
/// the frame table, and the records `fold` made.
///
/// `fold` sees every dict whose entries are all set by one `SETITEMS` (or `SETITEM`) into it
/// while empty — the way `pickle.dump` writes a dict of under 1,000 entries — its `frames`
/// already interned; where it returns a record, the dict becomes [`View::Folded`], and the
/// nodes decoded for its entries alone (its integers, say) are dropped when nothing else can
/// refer to them. Adding to a folded dict later, or expanding it, declines.
pub fn decode_arena<T>(
    bytes: &[u8],
    progress: &mut dyn FnMut(usize) -> bool,
    fold: &mut Fold<'_, T>,
) -> Option<(Arena, FrameTable, Vec<T>)> {
    let mut folded: Vec<T> = Vec::new();
    // The newest node the memo, the interned lists or a container other than the one being
    // filled can refer to: nodes past it and past the stack are referred to by nothing else.
    let mut pinned = 0u32;
    let mut r = Reader { b: bytes, pos: 0 };
    let mut nodes: Vec<Node> = Vec::new();
    let mut table = FrameTable::default();
    let mut stack = Stack::default();
    let mut marks: Vec<usize> = Vec::new();
    let mut memo = MemoTable::default();
    // Stack positions of `frames` keys waiting to be stored.
    let mut frames_keys: Vec<usize> = Vec::new();
    // Frame-list nodes already interned → the node of their list id.
    let mut interned = IdMap::default();
    // The items a SETITEMS or APPENDS takes off the stack (one buffer, reused).
    let mut scratch: Vec<u32> = Vec::new();
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
                if !stack.is_empty() || !marks.is_empty() {
                    return None;
                }
                return Some((Arena { nodes, root }, table, folded));
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
                let node = if matches!(op, b'X' | 0x8c | 0x8d) && !frames_keys.is_empty() {
                    Node::Str(table.string(read_str(op, &mut r)?)?)
                } else if op == 0x8a
                    && !frames_keys.is_empty()
                    && r.b.get(r.pos).is_some_and(|&n| n > 8)
                {
                    let n = usize::from(*r.take(1)?.first()?);
                    r.take(n)?;
                    Node::Big
                } else {
                    Node::Scalar(read_scalar(op, &mut r)?)
                };
                let is_key = node_str(&node, &table) == Some(FRAMES_KEY)
                    && at_key_position(&nodes, &stack, &marks);
                nodes.push(node);
                stack.push(u32::try_from(nodes.len() - 1).ok()?);
                if is_key {
                    frames_keys.push(stack.len() - 1);
                }
            }
            b']' | b'}' | b')' => {
                nodes.push(match op {
                    b']' => Node::List(Vec::new()),
                    b'}' => Node::Dict(Vec::new()),
                    _ => Node::Tuple(Vec::new()),
                });
                stack.push(u32::try_from(nodes.len() - 1).ok()?);
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
                let items = stack.split_off(at)?;
                nodes.push(match op {
                    b'l' => Node::List(items),
                    b'd' => Node::Dict(pairs(&items)?),
                    _ => Node::Tuple(items),
                });
                stack.push(u32::try_from(nodes.len() - 1).ok()?);
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
                let items = &mut scratch;
                items.clear();
                items.extend_from_slice(stack.get(at..)?);
                stack.truncate(at);
                let &target = stack.last()?;
                if matches!(op, b's' | b'u') {
                    if !items.len().is_multiple_of(2) {
                        return None;
                    }
                    // Storing `frames` entries: the value becomes its frame list's id.
                    for k in (0..items.len()).step_by(2).rev() {
                        if frames_keys.last() == Some(&(at + k)) {
                            frames_keys.pop();
                            let v = items.get_mut(k + 1)?;
                            *v = intern_list(&mut nodes, &mut table, &mut interned, *v)?;
                            pinned = pinned.max(*v);
                        }
                    }
                }
                let fresh = matches!(op, b's' | b'u')
                    && matches!(nodes.get(target as usize), Some(Node::Dict(d)) if d.is_empty());
                if fresh {
                    if !items.len().is_multiple_of(2) {
                        return None;
                    }
                    if let Some(record) = fold(items, Nodes(&nodes), &table) {
                        *nodes.get_mut(target as usize)? =
                            Node::Folded(u32::try_from(folded.len()).ok()?);
                        folded.push(record);
                        if pinned <= target && stack.max() <= target {
                            nodes.truncate(target as usize + 1);
                        }
                    } else {
                        pinned = pinned.max(items.iter().copied().max().unwrap_or(0));
                        *nodes.get_mut(target as usize)? = Node::Dict(pairs(items)?);
                    }
                } else {
                    pinned = pinned.max(items.iter().copied().max().unwrap_or(0));
                    match (op, nodes.get_mut(target as usize)?) {
                        (b'a' | b'e', Node::List(l)) => l.extend_from_slice(items),
                        (b's' | b'u', Node::Dict(d)) => d.extend(pairs(items)?),
                        _ => return None,
                    }
                }
            }
            0x94 | b'q' | b'r' => {
                let idx = match op {
                    0x94 => memo.count,
                    b'q' => r.uint(1)?,
                    _ => r.uint(4)?,
                };
                let top = *stack.last()?;
                pinned = pinned.max(top);
                memo.insert(idx, top);
            }
            b'h' | b'j' => {
                let idx = if op == b'h' { r.uint(1)? } else { r.uint(4)? };
                let n = memo.get(idx)?;
                // PyTorch memoises each key string once and refers to it afterwards.
                let is_key = nodes
                    .get(n as usize)
                    .is_some_and(|node| node_str(node, &table) == Some(FRAMES_KEY))
                    && at_key_position(&nodes, &stack, &marks);
                stack.push(n);
                if is_key {
                    frames_keys.push(stack.len() - 1);
                }
            }
            _ => return None,
        }
        // A `frames` key popped without being stored (POP, POP_MARK, a tuple): not a dict entry.
        if frames_keys.last().is_some_and(|&p| p >= stack.len()) {
            return None;
        }
    }
}

/// The string a node holds, if it is one.
fn node_str<'a>(node: &'a Node, table: &'a FrameTable) -> Option<&'a str> {
    match node {
        Node::Scalar(Value::String(s)) => Some(s),
        Node::Str(id) => Some(table.text(*id)),
        _ => None,
    }
}

/// Node `value`, the value of a `frames` entry, as the node of its frame list's id (interned
/// once per node); the node itself when it is a list of something other than plain frame
/// dicts; a `false` scalar (no frames) when it is not a list.
fn intern_list(
    nodes: &mut Vec<Node>,
    table: &mut FrameTable,
    interned: &mut IdMap,
    value: u32,
) -> Option<u32> {
    if let Some(&marker) = interned.get(&value) {
        return Some(marker);
    }
    let Node::List(items) = nodes.get(value as usize)? else {
        // Not a list: no frames, as the general decoder reads it (`FrameTable::intern_value`).
        // Marked by a scalar no reader takes for a list id (an integer would be one) and that
        // is not `None` (which would send a block's reader on to its `history`); declining
        // instead sent a whole file to the general decoder for one stray value (issue 30).
        nodes.push(Node::Scalar(Value::Bool(false)));
        let marker = u32::try_from(nodes.len() - 1).ok()?;
        interned.insert(value, marker);
        return Some(marker);
    };
    let mut ids = Vec::with_capacity(items.len());
    for &item in items {
        match frame_of(nodes, table, item) {
            Some(f) => ids.push(f),
            None => return Some(value),
        }
    }
    let list = table.list(ids)?;
    nodes.push(Node::Scalar(Value::I64(i64::from(list))));
    let marker = u32::try_from(nodes.len() - 1).ok()?;
    interned.insert(value, marker);
    Some(marker)
}

/// The frame id of a dict node holding exactly `name`, `filename` (strings) and `line` (an
/// integer), each at most once; `None` for anything else.
fn frame_of(nodes: &[Node], table: &mut FrameTable, item: u32) -> Option<u32> {
    let Node::Dict(entries) = nodes.get(item as usize)? else {
        return None;
    };
    let (mut name, mut filename, mut line) = (None, None, None);
    for &(k, v) in entries {
        let key = node_str(nodes.get(k as usize)?, table)?;
        let slot = match key {
            "name" => &mut name,
            "filename" => &mut filename,
            "line" => {
                if line.is_some() {
                    return None;
                }
                match nodes.get(v as usize)? {
                    Node::Scalar(Value::I64(i)) => line = Some(*i),
                    Node::Big => line = Some(-1),
                    _ => return None,
                }
                continue;
            }
            _ => return None,
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(match nodes.get(v as usize)? {
            Node::Str(id) => *id,
            Node::Scalar(Value::String(s)) => {
                let s = s.clone();
                table.string(&s)?
            }
            _ => return None,
        });
    }
    table.frame(name?, filename?, line?)
}

/// The string argument of string opcode `op`, borrowed from the file.
fn read_str<'a>(op: u8, r: &mut Reader<'a>) -> Option<&'a str> {
    let n = match op {
        0x8c => r.uint(1)?,
        b'X' => r.uint(4)?,
        _ => r.uint(8)?,
    };
    let n = usize::try_from(n).ok()?;
    let end = r.pos.checked_add(n)?;
    let b: &'a [u8] = r.b;
    let s = b.get(r.pos..end)?;
    r.pos = end;
    std::str::from_utf8(s).ok()
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
        b'X' | 0x8c | 0x8d => Value::String(read_str(op, r)?.to_owned()),
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

fn pairs(items: &[u32]) -> Option<Vec<(u32, u32)>> {
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

/// Most values the expansion builds (memo references copy): past this the fast path declines,
/// and the guard's expansion limit then decides ([`super::pickle::refuse_expansion`]).
const MAX_EXPANDED: u64 = super::pickle::MAX_DECODED_BYTES / 32;

fn expand(
    nodes: &[Node],
    table: &FrameTable,
    id: u32,
    open: &mut Vec<bool>,
    (depth, budget): (usize, &mut u64),
) -> Option<Value> {
    let i = id as usize;
    if depth > super::pickle::MAX_DEPTH {
        return None;
    }
    *budget = budget.checked_sub(1)?;
    let seen = open.get_mut(i)?;
    if *seen {
        return Some(Value::None);
    }
    *seen = true;
    let v = match nodes.get(i)? {
        Node::Scalar(v) => v.clone(),
        Node::Str(id) => Value::String(table.text(*id).to_owned()),
        Node::Big | Node::Folded(_) => return None,
        Node::List(items) => Value::List(
            items
                .iter()
                .map(|&c| expand(nodes, table, c, open, (depth + 1, &mut *budget)))
                .collect::<Option<_>>()?,
        ),
        Node::Tuple(items) => Value::Tuple(
            items
                .iter()
                .map(|&c| expand(nodes, table, c, open, (depth + 1, &mut *budget)))
                .collect::<Option<_>>()?,
        ),
        Node::Dict(entries) => {
            let mut d = BTreeMap::new();
            for &(k, v) in entries {
                let key: HashableValue = expand(nodes, table, k, open, (depth + 1, &mut *budget))?
                    .into_hashable()
                    .ok()?;
                d.insert(
                    key,
                    expand(nodes, table, v, open, (depth + 1, &mut *budget))?,
                );
            }
            Value::Dict(d)
        }
    };
    *open.get_mut(i)? = false;
    Some(v)
}

#[cfg(test)]
#[path = "unpickle_tests.rs"]
mod tests;
