//! A guard that reads a pickle's opcodes *before* `serde-pickle` decodes it, so that a PyTorch
//! memory snapshot from a stranger can do nothing but describe data (issue 11, item 4).
//!
//! Pickle is a small stack machine; some opcodes import and call Python objects (`GLOBAL`,
//! `STACK_GLOBAL`, `REDUCE`, `BUILD`, `INST`, `OBJ`, `NEWOBJ`, `NEWOBJ_EX`, `EXT1/2/4`, `PERSID`,
//! `BINPERSID`, `NEXT_BUFFER`, `READONLY_BUFFER`). A memory snapshot holds only dicts, lists,
//! tuples, strings, numbers, booleans and `None`, so any of those opcodes is refused with its byte
//! offset — never resolved. The guard also replays the stack machine on sizes only, to refuse
//! before decoding: a length prefix longer than the rest of the file (a truncated file or a
//! "2 GB string" header), nesting deeper than [`MAX_DEPTH`], more than [`MAX_CONTAINERS`]
//! containers, and memo references that would expand (every reference is a copy once decoded)
//! past [`MAX_DECODED_BYTES`] — the "billion laughs" of pickles. Protocols 0–5 are understood
//! (opcode table: CPython `Lib/pickletools.py`).

use std::collections::HashMap;

use crate::Error;

/// Deepest nesting of containers accepted (real snapshots nest about 8 deep).
pub const MAX_DEPTH: usize = 64;
/// Most lists, tuples, dicts and sets a file may create.
pub const MAX_CONTAINERS: usize = 16 << 20;
/// Most container-in-container references (including memo references).
pub const MAX_EDGES: usize = 64 << 20;
/// Most memo entries.
pub const MAX_MEMO: usize = 64 << 20;
/// Largest estimated size of the decoded value, bytes (2 GiB): the estimate counts 64 bytes per
/// container, 32 bytes per scalar plus its payload, and every memo reference as a full copy.
pub const MAX_DECODED_BYTES: u64 = 2 << 30;

/// Longest text number literal (`INT`, `LONG`, `FLOAT` of protocols 0/1) accepted, characters: a
/// snapshot's numbers fit in 64 bits (20 digits; a float's repr is at most 24 characters).
pub const MAX_NUMBER_LITERAL: usize = 64;

const NODE_COST: u64 = 64;
const LEAF_COST: u64 = 32;

/// What the guard learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PickleSummary {
    /// The protocol from the `PROTO` opcode (0 or 1 when absent).
    pub protocol: u8,
    /// Estimated size of the decoded value (bytes).
    pub decoded_bytes: u64,
    /// Containers created.
    pub containers: usize,
    /// Nesting depth of the decoded value.
    pub depth: usize,
}

#[derive(Debug, Clone, Copy)]
enum Item {
    Leaf(u64),
    Node(u32),
}

/// The guard's memo: slots kept in a vector while the indices stay dense (PyTorch's pickles
/// number them 0, 1, 2 …), any index far past the stored ones in a map — a lookup costs an
/// index, not a hash, and a hostile `BINPUT 4294967295` does not grow the vector. A dense slot
/// is an [`Item`] packed into 8 bytes ([`pack`]).
#[derive(Default)]
struct Memo {
    dense: Vec<u64>,
    sparse: HashMap<u64, Item>,
    /// Distinct indices stored.
    len: usize,
}

/// How far past the dense slots an index may be and still grow them.
const MEMO_SLACK: u64 = 1 << 16;
/// A dense slot never stored.
const EMPTY_SLOT: u64 = u64::MAX;
const NODE_BIT: u64 = 1 << 63;

/// `item` in 8 bytes: a node with the top bit set, a leaf's cost (below 2⁶³: at most the file's
/// length plus 32) without.
fn pack(item: Item) -> u64 {
    match item {
        Item::Node(n) => NODE_BIT | u64::from(n),
        Item::Leaf(w) => w.min(NODE_BIT - 1),
    }
}

fn unpack(slot: u64) -> Option<Item> {
    match slot {
        EMPTY_SLOT => None,
        s if s & NODE_BIT != 0 => Some(Item::Node(s as u32)),
        s => Some(Item::Leaf(s)),
    }
}

impl Memo {
    fn insert(&mut self, id: u64, item: Item) {
        // Dense while the index stays within twice the entries stored (plus the slack): the
        // vector then never outgrows the entries a file paid bytes for — growing it by the
        // slack at every store let a staircase of `LONG_BINPUT`s claim 512 KiB per 5 bytes.
        let bound = (self.len as u64)
            .saturating_mul(2)
            .saturating_add(MEMO_SLACK);
        if id < bound {
            let i = id as usize;
            if i >= self.dense.len() {
                self.dense.resize(i + 1, EMPTY_SLOT);
            }
            if let Some(slot) = self.dense.get_mut(i) {
                let was_sparse = !self.sparse.is_empty() && self.sparse.remove(&id).is_some();
                if std::mem::replace(slot, pack(item)) == EMPTY_SLOT && !was_sparse {
                    self.len += 1;
                }
            }
        } else if self.sparse.insert(id, item).is_none() {
            self.len += 1;
        }
    }

    fn get(&self, id: u64) -> Option<Item> {
        match usize::try_from(id)
            .ok()
            .and_then(|i| self.dense.get(i))
            .and_then(|&s| unpack(s))
        {
            Some(item) => Some(item),
            None => self.sparse.get(&id).copied(),
        }
    }

    fn len(&self) -> usize {
        self.len
    }
}

fn refused(op: u8, pos: usize, extra: &str) -> Error {
    let name = match op {
        b'c' => "GLOBAL",
        0x93 => "STACK_GLOBAL",
        b'R' => "REDUCE",
        b'b' => "BUILD",
        b'i' => "INST",
        b'o' => "OBJ",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => "an unknown opcode",
    };
    Error::BadInput(format!(
        "not a plain-data memory snapshot: byte {pos} holds {name} (0x{op:02x}){extra}, which would \
         import or call Python code; PyTorch snapshots hold only dicts, lists, strings and numbers, \
         so warpscope refuses the file and executes nothing from it"
    ))
}

struct Scan<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Scan<'_> {
    fn truncated(&self, what: &str, need: u64) -> Error {
        Error::BadInput(format!(
            "truncated or corrupt pickle: {what} at byte {} needs {need} bytes but only {} remain",
            self.pos,
            self.b.len() - self.pos
        ))
    }

    fn take(&mut self, n: u64, what: &str) -> Result<&[u8], Error> {
        let left = (self.b.len() - self.pos) as u64;
        if n > left {
            return Err(self.truncated(what, n));
        }
        let s = &self.b[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }

    fn le(&mut self, n: usize, what: &str) -> Result<u64, Error> {
        let s = self.take(n as u64, what)?;
        Ok(s.iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }

    fn line(&mut self, what: &str) -> Result<&[u8], Error> {
        match self.b[self.pos..].iter().position(|&c| c == b'\n') {
            Some(i) => {
                let s = &self.b[self.pos..self.pos + i];
                self.pos += i + 1;
                Ok(s)
            }
            None => Err(self.truncated(what, (self.b.len() - self.pos + 1) as u64)),
        }
    }
}

/// Checks a pickle before decoding (see the module docs).
///
/// # Errors
/// [`Error::BadInput`] with the reason and byte offset.
pub fn check(bytes: &[u8]) -> Result<PickleSummary, Error> {
    let summary = check_opcodes(bytes)?;
    refuse_expansion(&summary)?;
    Ok(summary)
}

/// Refuses a pickle whose value, every memo reference expanded to a copy, would exceed
/// [`MAX_DECODED_BYTES`] (what `serde-pickle` builds).
///
/// # Errors
/// [`Error::BadInput`] with the estimate.
pub fn refuse_expansion(summary: &PickleSummary) -> Result<(), Error> {
    let decoded_bytes = summary.decoded_bytes;
    if decoded_bytes > MAX_DECODED_BYTES {
        return Err(Error::BadInput(format!(
            "snapshot too large: decoding it would take about {decoded_bytes} bytes of memory \
             (memo references expand to copies); warpscope reads at most {MAX_DECODED_BYTES}"
        )));
    }
    Ok(())
}

/// [`check`] without the expansion limit: every other refusal, and the estimate
/// ([`PickleSummary::decoded_bytes`], capped just past [`MAX_DECODED_BYTES`]) for the caller to
/// apply where values are expanded ([`refuse_expansion`]). The snapshot reader's fast decoder
/// keeps a memo-shared stack-frame list once and bounds its own expansion, so a file whose
/// shared frames would expand past the limit is still read there.
///
/// # Errors
/// As [`check`], but for the expansion limit.
pub fn check_opcodes(bytes: &[u8]) -> Result<PickleSummary, Error> {
    let mut s = Scan { b: bytes, pos: 0 };
    let mut own: Vec<u64> = Vec::new();
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut stack: Vec<Item> = Vec::new();
    let mut marks: Vec<usize> = Vec::new();
    let mut memo = Memo::default();
    let mut protocol = 0u8;
    let underflow =
        |pos: usize| Error::BadInput(format!("corrupt pickle: stack underflow at byte {pos}"));
    let bad_target = |pos: usize| {
        Error::BadInput(format!(
            "corrupt pickle: byte {pos} adds items to something that is not a container"
        ))
    };
    macro_rules! new_node {
        () => {{
            if own.len() >= MAX_CONTAINERS {
                return Err(Error::BadInput(format!(
                    "snapshot too large: more than {MAX_CONTAINERS} lists/dicts (at byte {})",
                    s.pos
                )));
            }
            own.push(NODE_COST);
            (own.len() - 1) as u32
        }};
    }
    macro_rules! add {
        ($parent:expr, $child:expr) => {{
            match $child {
                Item::Leaf(w) => own[$parent as usize] = own[$parent as usize].saturating_add(w),
                Item::Node(c) => {
                    if edges.len() >= MAX_EDGES {
                        return Err(Error::BadInput(format!(
                            "snapshot too large: more than {MAX_EDGES} nested references"
                        )));
                    }
                    edges.push(($parent, c));
                }
            }
        }};
    }
    let root = loop {
        let at = s.pos;
        let op = *s.b.get(at).ok_or_else(|| {
            Error::BadInput(format!(
                "truncated pickle: the file ends at byte {at} before the STOP opcode"
            ))
        })?;
        s.pos += 1;
        let frame_len = marks.last().copied().unwrap_or(0);
        match op {
            0x80 => {
                protocol = s.le(1, "PROTO")? as u8;
                if protocol > 5 {
                    return Err(Error::BadInput(format!(
                        "pickle protocol {protocol} is newer than 5, the newest warpscope reads"
                    )));
                }
            }
            0x95 => {
                s.le(8, "FRAME")?;
            }
            b'.' => break stack.pop().ok_or_else(|| underflow(at))?,
            b'(' => marks.push(stack.len()),
            b'0' => {
                if stack.len() == frame_len {
                    let m = marks.pop().ok_or_else(|| underflow(at))?;
                    stack.truncate(m);
                } else {
                    stack.pop();
                }
            }
            b'1' => {
                let m = marks.pop().ok_or_else(|| underflow(at))?;
                stack.truncate(m);
            }
            b'2' => {
                let top = *stack.last().ok_or_else(|| underflow(at))?;
                stack.push(top);
            }
            b'p' | b'q' | b'r' | 0x94 => {
                let id = match op {
                    b'p' => {
                        let l = s.line("PUT")?;
                        std::str::from_utf8(l)
                            .ok()
                            .and_then(|t| t.trim().parse::<u64>().ok())
                            .ok_or_else(|| {
                                Error::BadInput(format!("corrupt pickle: bad PUT at byte {at}"))
                            })?
                    }
                    b'q' => s.le(1, "BINPUT")?,
                    b'r' => s.le(4, "LONG_BINPUT")?,
                    _ => memo.len() as u64,
                };
                if memo.len() >= MAX_MEMO {
                    return Err(Error::BadInput(format!(
                        "snapshot too large: more than {MAX_MEMO} memo entries"
                    )));
                }
                let top = *stack.last().ok_or_else(|| underflow(at))?;
                memo.insert(id, top);
            }
            b'g' | b'h' | b'j' => {
                let id = match op {
                    b'g' => {
                        let l = s.line("GET")?;
                        std::str::from_utf8(l)
                            .ok()
                            .and_then(|t| t.trim().parse::<u64>().ok())
                            .ok_or_else(|| {
                                Error::BadInput(format!("corrupt pickle: bad GET at byte {at}"))
                            })?
                    }
                    b'h' => s.le(1, "BINGET")?,
                    _ => s.le(4, "LONG_BINGET")?,
                };
                let v = memo.get(id).ok_or_else(|| {
                    Error::BadInput(format!(
                        "corrupt pickle: byte {at} refers to memo {id}, never stored"
                    ))
                })?;
                stack.push(v);
            }
            b'N' | 0x88 | 0x89 => stack.push(Item::Leaf(LEAF_COST)),
            b'I' | b'L' | b'F' | b'S' | b'V' => {
                let l = s.line("a text literal")?.len();
                if matches!(op, b'I' | b'L' | b'F') && l > MAX_NUMBER_LITERAL {
                    // Never echoed: the decoder's own message would quote it whole.
                    return Err(Error::BadInput(format!(
                        "not a memory snapshot: the number literal at byte {at} is {l} characters \
                         long; a snapshot's numbers fit in 64 bits (at most \
                         {MAX_NUMBER_LITERAL} characters)"
                    )));
                }
                stack.push(Item::Leaf(LEAF_COST + l as u64));
            }
            b'G' => {
                s.le(8, "BINFLOAT")?;
                stack.push(Item::Leaf(LEAF_COST));
            }
            b'J' | b'K' | b'M' => {
                let n = match op {
                    b'J' => 4,
                    b'K' => 1,
                    _ => 2,
                };
                s.le(n, "an integer")?;
                stack.push(Item::Leaf(LEAF_COST));
            }
            0x8a | b'C' | b'U' | 0x8c => {
                let n = s.le(1, "a length")?;
                s.take(n, "a short string")?;
                stack.push(Item::Leaf(LEAF_COST + n));
            }
            0x8b | b'B' | b'T' | b'X' => {
                let n = s.le(4, "a length")?;
                if matches!(op, 0x8b | b'T') && n >= 1 << 31 {
                    return Err(Error::BadInput(format!(
                        "corrupt pickle: negative length at byte {at}"
                    )));
                }
                s.take(n, "a string")?;
                stack.push(Item::Leaf(LEAF_COST + n));
            }
            0x8e | 0x8d | 0x96 => {
                let n = s.le(8, "a length")?;
                s.take(n, "a string")?;
                stack.push(Item::Leaf(LEAF_COST + n));
            }
            // Sets: no snapshot holds one, and serde-pickle 1.2 sorts a set's members with an
            // order that is not total for mixed floats and `None` — a panic, found by fuzzing.
            0x8f..=0x91 => {
                return Err(Error::BadInput(format!(
                    "not a memory snapshot: byte {at} builds a set; PyTorch snapshots hold only \
                     dicts, lists, tuples, strings and numbers"
                )));
            }
            b')' | b']' | b'}' => {
                let n = new_node!();
                stack.push(Item::Node(n));
            }
            0x85..=0x87 => {
                let k = usize::from(op - 0x84);
                if stack.len() < frame_len + k {
                    return Err(underflow(at));
                }
                let n = new_node!();
                let from = stack.len() - k;
                for it in stack.drain(from..) {
                    add!(n, it);
                }
                stack.push(Item::Node(n));
            }
            b't' | b'l' | b'd' => {
                let m = marks.pop().ok_or_else(|| underflow(at))?;
                let n = new_node!();
                let from = m.min(stack.len());
                for it in stack.drain(from..) {
                    add!(n, it);
                }
                stack.push(Item::Node(n));
            }
            b'a' | b's' => {
                let k = if op == b'a' { 1 } else { 2 };
                if stack.len() < frame_len + k + 1 {
                    return Err(underflow(at));
                }
                let from = stack.len() - k;
                let Some(&Item::Node(t)) = stack.get(from - 1) else {
                    return Err(bad_target(at));
                };
                for it in stack.drain(from..) {
                    add!(t, it);
                }
            }
            b'e' | b'u' => {
                let m = marks.pop().ok_or_else(|| underflow(at))?;
                let from = m.min(stack.len());
                let Some(&Item::Node(t)) = from.checked_sub(1).and_then(|i| stack.get(i)) else {
                    return Err(bad_target(at));
                };
                for it in stack.drain(from..) {
                    add!(t, it);
                }
            }
            b'c' => {
                // Show what it asked for (sanitised), then refuse.
                let module = String::from_utf8_lossy(s.line("GLOBAL").unwrap_or(b"?")).into_owned();
                let name = String::from_utf8_lossy(s.line("GLOBAL").unwrap_or(b"?")).into_owned();
                let what: String = format!("{module}.{name}")
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(80)
                    .collect();
                return Err(refused(op, at, &format!(" asking for `{what}`")));
            }
            0x93 | b'R' | b'b' | b'i' | b'o' | 0x81 | 0x92 | 0x82 | 0x83 | 0x84 | b'P' | b'Q'
            | 0x97 | 0x98 => return Err(refused(op, at, "")),
            other => {
                return Err(Error::BadInput(format!(
                    "not a pickle (or a corrupt one): unknown opcode 0x{other:02x} at byte {at}"
                )));
            }
        }
    };
    if s.pos != bytes.len() {
        return Err(Error::BadInput(format!(
            "corrupt pickle: {} bytes after the STOP opcode at byte {}",
            bytes.len() - s.pos,
            s.pos - 1
        )));
    }
    // Expanded size and depth of the root, each shared (memoised) container counted per use.
    // Edges grouped by parent (a counting sort), each group in child order: what sorting the
    // pairs gives, in linear time for the millions of a large trace.
    let mut start = vec![0usize; own.len() + 1];
    for &(p, _) in &edges {
        start[p as usize + 1] += 1;
    }
    for i in 0..own.len() {
        start[i + 1] += start[i];
    }
    let mut next = start.clone();
    let mut children = vec![0u32; edges.len()];
    for &(p, c) in &edges {
        let slot = &mut next[p as usize];
        children[*slot] = c;
        *slot += 1;
    }
    drop(next);
    drop(edges);
    for i in 0..own.len() {
        children[start[i]..start[i + 1]].sort_unstable();
    }
    let edges = children;
    let (decoded_bytes, depth) = match root {
        Item::Leaf(w) => (w, 0),
        Item::Node(r) => {
            let mut done: Vec<Option<(u64, usize)>> = vec![None; own.len()];
            let mut on_path = vec![false; own.len()];
            expand(r, 1, &own, &edges, &start, &mut done, &mut on_path)?
        }
    };
    Ok(PickleSummary {
        protocol,
        decoded_bytes,
        containers: own.len(),
        depth,
    })
}

/// (expanded bytes, height) of node `n` at nesting level `level`.
fn expand(
    n: u32,
    level: usize,
    own: &[u64],
    edges: &[u32],
    start: &[usize],
    done: &mut [Option<(u64, usize)>],
    on_path: &mut [bool],
) -> Result<(u64, usize), Error> {
    let i = n as usize;
    if let Some((w, h)) = done[i] {
        if level + h - 1 > MAX_DEPTH {
            return Err(too_deep());
        }
        return Ok((w, h));
    }
    if level > MAX_DEPTH {
        return Err(too_deep());
    }
    if on_path[i] {
        return Err(Error::BadInput(
            "corrupt snapshot: a container contains itself (recursive structure)".into(),
        ));
    }
    on_path[i] = true;
    let (mut w, mut h) = (own[i], 1usize);
    for &c in &edges[start[i]..start[i + 1]] {
        let (cw, ch) = expand(c, level + 1, own, edges, start, done, on_path)?;
        w = w.saturating_add(cw);
        h = h.max(ch + 1);
        if w > MAX_DECODED_BYTES {
            // Stop early: the total can only grow.
            on_path[i] = false;
            return Ok((w, h));
        }
    }
    on_path[i] = false;
    done[i] = Some((w, h));
    Ok((w, h))
}

fn too_deep() -> Error {
    Error::BadInput(format!(
        "snapshot nests containers more than {MAX_DEPTH} deep; real snapshots nest about 8"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Any sequence of memo indices: each reads back what was stored last, and the dense
        /// vector stays within twice the entries plus the slack (a staircase of far indices
        /// cannot grow it by the slack per store).
        #[test]
        fn memo_indices_read_back_and_never_size_the_table(
            ops in proptest::collection::vec(
                proptest::prop_oneof![
                    0u64..300,
                    0u64..(1 << 32),
                    proptest::strategy::Strategy::prop_map(0u64..4000, |k| k * MEMO_SLACK),
                ],
                0..200,
            ),
        ) {
            let mut memo = Memo::default();
            let mut model = HashMap::new();
            for (n, &id) in ops.iter().enumerate() {
                memo.insert(id, Item::Leaf(n as u64));
                model.insert(id, n as u64);
                proptest::prop_assert!(
                    memo.dense.len() as u64 <= 2 * model.len() as u64 + MEMO_SLACK,
                    "{} slots for {} entries", memo.dense.len(), model.len()
                );
            }
            proptest::prop_assert_eq!(memo.len(), model.len());
            for (&id, &n) in &model {
                proptest::prop_assert!(matches!(memo.get(id), Some(Item::Leaf(x)) if x == n));
            }
        }
    }

    #[test]
    fn plain_data_passes() {
        // pickle.dumps({'a': [1, 2.5, None, True]}, protocol=2)
        let p = b"\x80\x02}q\x00X\x01\x00\x00\x00aq\x01]q\x02(K\x01G@\x04\x00\x00\x00\x00\x00\x00N\x88es.";
        let sm = check(p).unwrap();
        assert_eq!(sm.protocol, 2);
        assert_eq!(sm.depth, 2);
        assert!(serde_pickle::value_from_slice(p, serde_pickle::DeOptions::new()).is_ok());
    }

    #[test]
    fn a_huge_number_literal_is_refused_without_quoting_it() {
        // INT with a million digits: serde-pickle's own error would quote all of them.
        let mut p = b"I".to_vec();
        p.extend(std::iter::repeat_n(b'9', 1_000_000));
        p.extend_from_slice(b"\n.");
        let m = check(&p).unwrap_err().to_string();
        assert!(m.len() < 300 && m.contains("1000000 characters"), "{m}");
        // Ordinary literals pass.
        assert!(check(b"I12345\n.").is_ok());
        assert!(check(b"F0.5\n.").is_ok());
    }

    #[test]
    fn os_system_via_global_reduce_is_refused() {
        // pickle.dumps of an object whose __reduce__ returns (os.system, ('echo pwned',)),
        // protocol 0: cos\nsystem\n(S'echo pwned'\ntR.
        let p = b"cos\nsystem\n(S'echo pwned'\ntR.";
        let e = check(p).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("GLOBAL") && m.contains("os.system"), "{m}");
        // Protocol 4 spelling: STACK_GLOBAL then REDUCE.
        let p = b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x04echo\x85R.";
        let m = check(p).unwrap_err().to_string();
        assert!(m.contains("STACK_GLOBAL"), "{m}");
    }

    #[test]
    fn huge_length_prefix_is_refused_without_allocating() {
        // BINUNICODE8 claiming 2 GiB, then nothing.
        let mut p = b"\x80\x04\x8d".to_vec();
        p.extend_from_slice(&(2u64 << 30).to_le_bytes());
        p.extend_from_slice(b"abc.");
        let m = check(&p).unwrap_err().to_string();
        assert!(m.contains("2147483648") && m.contains("truncated"), "{m}");
    }

    #[test]
    fn memo_bomb_is_refused() {
        // l0 = [big string]; each level: a list of two references to the previous one.
        let mut p = b"\x80\x04]\x94X\x00\x00\x04\x00".to_vec();
        p.extend(std::iter::repeat_n(b'x', 1 << 18));
        p.push(b'a'); // append to list 0
        for i in 0..40u32 {
            p.push(b']');
            p.push(0x94); // memo i+1
            p.push(b'(');
            p.push(b'j');
            p.extend_from_slice(&i.to_le_bytes());
            p.push(b'j');
            p.extend_from_slice(&i.to_le_bytes());
            p.push(b'e');
            p.push(b'0'); // pop the level list, keep it in the memo
        }
        p.push(b'j');
        p.extend_from_slice(&40u32.to_le_bytes());
        p.push(b'.');
        let m = check(&p).unwrap_err().to_string();
        assert!(m.contains("too large"), "{m}");
    }

    #[test]
    fn deep_nesting_is_refused() {
        let mut p = b"\x80\x04".to_vec();
        p.extend(std::iter::repeat_n(b']', 100));
        p.extend(std::iter::repeat_n(b'a', 99));
        p.push(b'.');
        let m = check(&p).unwrap_err().to_string();
        assert!(m.contains("64 deep"), "{m}");
    }

    #[test]
    fn truncation_and_garbage() {
        let p = b"\x80\x04]\x94(K\x01K\x02e";
        assert!(check(p).unwrap_err().to_string().contains("truncated"));
        assert!(check(b"hello world").is_err());
        assert!(check(b"").is_err());
        assert!(
            check(b"\x80\x09N.")
                .unwrap_err()
                .to_string()
                .contains("protocol 9")
        );
    }
}
