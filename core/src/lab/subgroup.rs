//! Subgroup (warp) operations and atomics.
//!
//! Subgroup operations follow WGSL §17.13 "Subgroup Built-in Functions": a shuffle, broadcast
//! or quad operation whose source lane is out of range or inactive gives an *indeterminate*
//! value — here NaN for floats and 0 for integers, so any use of it shows, and the trace marks
//! the lane [`Source::Undefined`]; reductions and scans combine the active lanes only, in lane
//! order. Atomics run lane by lane in lane order within a warp, each a read-modify-write of one
//! word; lanes of one warp updating one address serialise ([`crate::simt::atomic`]).

use naga::{
    AtomicFunction, BinaryOperator as B, CollectiveOperation, Expression, GatherMode, Handle,
    MathFunction as M, SubgroupOperation as S,
};

use super::Machine;
use super::exec::Frame;
use super::memory::{OOB, Space};
use super::ops;
use super::value::{Active, Kind, Val, lanes_of};
use crate::Error;
use crate::simt::EventKind;
use crate::simt::shuffle::{ShuffleMode, Source};
use crate::simt::trace::{Lane, Metrics};

/// An indeterminate value of kind `k`.
fn undefined(k: Kind) -> u32 {
    if k.is_float() { 0x7FC0_0000 } else { 0 }
}

/// The identity of `op` on kind `k` (what an exclusive scan gives the first lane).
fn identity(op: S, k: Kind) -> u32 {
    match (op, k) {
        (S::Mul, Kind::F32 | Kind::F16) => 1f32.to_bits(),
        (S::Mul, _) => 1,
        (S::Min, Kind::F32 | Kind::F16) => f32::INFINITY.to_bits(),
        (S::Min, Kind::I32) => i32::MAX as u32,
        (S::Min, _) => u32::MAX,
        (S::Max, Kind::F32 | Kind::F16) => f32::NEG_INFINITY.to_bits(),
        (S::Max, Kind::I32) => i32::MIN as u32,
        (S::And, Kind::Bool) | (S::All, _) => 1,
        (S::And, _) => u32::MAX,
        _ => 0,
    }
}

fn combine(op: S, k: Kind) -> Option<ops::BinFn> {
    match op {
        S::Add => ops::binary(B::Add, k),
        S::Mul => ops::binary(B::Multiply, k),
        S::And | S::All => ops::binary(B::And, if k == Kind::Bool { Kind::U32 } else { k }),
        S::Or | S::Any => ops::binary(B::InclusiveOr, if k == Kind::Bool { Kind::U32 } else { k }),
        S::Xor => ops::binary(B::ExclusiveOr, k),
        S::Min => Some(match k {
            Kind::F32 | Kind::F16 => |a, b| ops::math(M::Min, Kind::F32, a, b, 0).unwrap_or(a),
            Kind::I32 => |a, b| ops::math(M::Min, Kind::I32, a, b, 0).unwrap_or(a),
            _ => |a: u32, b: u32| a.min(b),
        }),
        S::Max => Some(match k {
            Kind::F32 | Kind::F16 => |a, b| ops::math(M::Max, Kind::F32, a, b, 0).unwrap_or(a),
            Kind::I32 => |a, b| ops::math(M::Max, Kind::I32, a, b, 0).unwrap_or(a),
            _ => |a: u32, b: u32| a.max(b),
        }),
    }
}

impl<'m> Machine<'m> {
    fn subgroup_count(&mut self, line: u32, mask: &Active) -> Result<(), Error> {
        self.count(line, mask, EventKind::Compute)?;
        let warps = mask.warps().count() as u64;
        self.stats.at(line).subgroup_ops += warps;
        Ok(())
    }

    /// `subgroupBallot(pred)`: a `vec4<u32>` of the active lanes whose `pred` holds.
    pub fn ballot(&mut self, pred: Option<&Val>, mask: &Active, line: u32) -> Result<Val, Error> {
        self.subgroup_count(line, mask)?;
        let (n, sg) = (self.n, self.sg);
        let mut out = Val::zeros(4, n);
        for (w, m) in mask.warps() {
            let mut bits = 0u64;
            for l in lanes_of(m) {
                if pred.is_none_or(|p| p.get(n, 0, w * sg + l) != 0) {
                    bits |= 1 << l;
                }
            }
            for l in 0..sg {
                out.set(n, 0, w * sg + l, bits as u32);
                out.set(n, 1, w * sg + l, (bits >> 32) as u32);
            }
            if self.tracing {
                let lanes = (0..sg)
                    .map(|l| Lane {
                        active: m >> l & 1 == 1,
                        address: None,
                        value: Some(f64::from(u32::from(bits >> l & 1 == 1))),
                        source: None,
                    })
                    .collect();
                self.record_labelled(
                    w,
                    line,
                    EventKind::Compute,
                    lanes,
                    Metrics::default(),
                    "subgroupBallot",
                );
            }
        }
        Ok(out)
    }

    /// Shuffles, broadcasts and quad operations.
    pub fn gather(
        &mut self,
        f: &mut Frame<'m>,
        mode: &GatherMode,
        argument: Handle<Expression>,
        mask: &Active,
        line: u32,
    ) -> Result<Val, Error> {
        self.subgroup_count(line, mask)?;
        let (n, sg) = (self.n, self.sg);
        let k = super::eval::kind_of(self.ty(f, argument)).unwrap_or(Kind::U32);
        let v = self.operand(f, argument, mask)?;
        let index = match mode {
            GatherMode::Broadcast(h)
            | GatherMode::Shuffle(h)
            | GatherMode::ShuffleDown(h)
            | GatherMode::ShuffleUp(h)
            | GatherMode::ShuffleXor(h)
            | GatherMode::QuadBroadcast(h) => Some(self.operand(f, *h, mask)?),
            GatherMode::BroadcastFirst | GatherMode::QuadSwap(_) => None,
        };
        let (smode, name) = match mode {
            GatherMode::ShuffleXor(_) => (ShuffleMode::Xor, "subgroupShuffleXor"),
            GatherMode::ShuffleUp(_) => (ShuffleMode::Up, "subgroupShuffleUp"),
            GatherMode::ShuffleDown(_) => (ShuffleMode::Down, "subgroupShuffleDown"),
            GatherMode::Shuffle(_) => (ShuffleMode::Idx, "subgroupShuffle"),
            GatherMode::Broadcast(_) => (ShuffleMode::Idx, "subgroupBroadcast"),
            GatherMode::BroadcastFirst => (ShuffleMode::Idx, "subgroupBroadcastFirst"),
            GatherMode::QuadBroadcast(_) => (ShuffleMode::Idx, "quadBroadcast"),
            GatherMode::QuadSwap(_) => (ShuffleMode::Xor, "quadSwap"),
        };
        let mut out = Val::zeros(v.words, n);
        for (w, m) in mask.warps() {
            let mut sources = vec![Source::Inactive; sg];
            let mut arg = None;
            for l in lanes_of(m) {
                let gl = w * sg + l;
                let x = index.as_ref().map_or(0, |i| i.get(n, 0, gl)) as i64;
                let li = l as i64;
                let src = match mode {
                    GatherMode::BroadcastFirst => i64::from(m.trailing_zeros()),
                    GatherMode::Broadcast(_) | GatherMode::Shuffle(_) => x,
                    GatherMode::ShuffleDown(_) => li + x,
                    GatherMode::ShuffleUp(_) => li - x,
                    GatherMode::ShuffleXor(_) => li ^ x,
                    GatherMode::QuadBroadcast(_) => (li & !3) + x,
                    GatherMode::QuadSwap(d) => li ^ (*d as i64 + 1),
                };
                arg.get_or_insert(match mode {
                    GatherMode::BroadcastFirst => src,
                    GatherMode::QuadSwap(d) => *d as i64 + 1,
                    _ => x,
                });
                let ok = (0..sg as i64).contains(&src) && m >> src & 1 == 1;
                for c in 0..v.words {
                    let word = if ok {
                        v.get(n, c, w * sg + src as usize)
                    } else {
                        undefined(k)
                    };
                    out.set(n, c, gl, word);
                }
                if let Some(s) = sources.get_mut(l) {
                    *s = if ok {
                        Source::Lane(src as u32)
                    } else {
                        Source::Undefined(src.clamp(0, u32::MAX as i64) as u32)
                    };
                }
            }
            if self.tracing {
                let lanes = (0..sg)
                    .map(|l| Lane {
                        active: m >> l & 1 == 1,
                        address: None,
                        value: (m >> l & 1 == 1).then(|| k.to_f64(out.get(n, 0, w * sg + l))),
                        source: sources.get(l).copied(),
                    })
                    .collect();
                let kind = EventKind::Shuffle {
                    mode: smode,
                    arg: arg.unwrap_or(0).clamp(0, u32::MAX as i64) as u32,
                };
                self.record_labelled(w, line, kind, lanes, Metrics::default(), name);
            }
        }
        Ok(out)
    }

    /// `subgroupAdd`, `…Mul`, `…Min`, `…Max`, `…And`, `…Or`, `…Xor`, `…All`, `…Any` and
    /// their inclusive / exclusive scans, over the active lanes in lane order.
    pub fn collective(
        &mut self,
        f: &mut Frame<'m>,
        op: S,
        how: CollectiveOperation,
        argument: Handle<Expression>,
        mask: &Active,
        line: u32,
    ) -> Result<Val, Error> {
        self.subgroup_count(line, mask)?;
        let (n, sg) = (self.n, self.sg);
        let k = super::eval::kind_of(self.ty(f, argument)).unwrap_or(Kind::U32);
        let g = combine(op, k).ok_or_else(|| self.refuse(line, "this subgroup operation"))?;
        let v = self.operand(f, argument, mask)?;
        let id = identity(op, k);
        let mut out = Val::zeros(v.words, n);
        for (w, m) in mask.warps() {
            for c in 0..v.words {
                let mut acc = id;
                for l in lanes_of(m) {
                    let gl = w * sg + l;
                    let before = acc;
                    // The identity combined with x is x for every operation.
                    acc = g(acc, v.get(n, c, gl));
                    if k == Kind::F16 {
                        acc = super::value::round_f16(acc);
                    }
                    let r = match how {
                        CollectiveOperation::InclusiveScan => acc,
                        CollectiveOperation::ExclusiveScan => before,
                        CollectiveOperation::Reduce => 0,
                    };
                    out.set(n, c, gl, r);
                }
                if how == CollectiveOperation::Reduce {
                    for l in lanes_of(m) {
                        out.set(n, c, w * sg + l, acc);
                    }
                }
            }
            if self.tracing {
                let lanes = (0..sg)
                    .map(|l| Lane {
                        active: m >> l & 1 == 1,
                        address: None,
                        value: (m >> l & 1 == 1).then(|| k.to_f64(out.get(n, 0, w * sg + l))),
                        source: None,
                    })
                    .collect();
                let label = format!("subgroup{op:?} ({how:?})");
                self.record_labelled(
                    w,
                    line,
                    EventKind::Compute,
                    lanes,
                    Metrics::default(),
                    &label,
                );
            }
        }
        Ok(out)
    }

    /// An atomic read-modify-write for the lanes of `mask`, lane by lane; the old values
    /// (and, for a compare-exchange, whether each exchanged).
    pub fn atomic(
        &mut self,
        f: &mut Frame<'m>,
        pointer: Handle<Expression>,
        fun: &AtomicFunction,
        value: Handle<Expression>,
        mask: &Active,
        line: u32,
    ) -> Result<Val, Error> {
        let (n, sg) = (self.n, self.sg);
        let leaves = self.pointee_leaves(f, pointer)?;
        let k = leaves.first().map_or(Kind::U32, |l| l.kind);
        let ptr = self.operand(f, pointer, mask)?;
        let val = self.operand(f, value, mask)?;
        let compare = match fun {
            AtomicFunction::Exchange { compare: Some(c) } => Some(self.operand(f, *c, mask)?),
            _ => None,
        };
        let g: Option<ops::BinFn> = match fun {
            AtomicFunction::Add => ops::binary(B::Add, k),
            AtomicFunction::Subtract => ops::binary(B::Subtract, k),
            AtomicFunction::And => ops::binary(B::And, k),
            AtomicFunction::InclusiveOr => ops::binary(B::InclusiveOr, k),
            AtomicFunction::ExclusiveOr => ops::binary(B::ExclusiveOr, k),
            AtomicFunction::Min => combine(S::Min, k),
            AtomicFunction::Max => combine(S::Max, k),
            AtomicFunction::Exchange { .. } => Some(|_, b| b),
        };
        let g = g.ok_or_else(|| self.refuse(line, "this atomic"))?;
        let mut out = Val::zeros(if compare.is_some() { 2 } else { 1 }, n);
        let mut addrs: Vec<Option<u64>> = vec![None; sg];
        for (w, m) in mask.warps() {
            addrs.fill(None);
            let mut space = Space::Lane;
            for l in lanes_of(m) {
                let gl = w * sg + l;
                let r = ptr.get(n, 0, gl);
                let o = ptr.get(n, 1, gl) as usize;
                let Some(reg) = self.mem.regions.get_mut((r & !OOB) as usize) else {
                    continue;
                };
                space = reg.space;
                if r & OOB != 0 {
                    continue;
                }
                if let Some(a) = addrs.get_mut(l) {
                    *a = Some(reg.base + o as u64);
                }
                let Some(slot) = reg.bytes.get_mut(o..o + 4) else {
                    continue;
                };
                let old = k.from_mem(slot);
                let x = val.get(n, 0, gl);
                let (new, swapped) = match &compare {
                    Some(c) if old == c.get(n, 0, gl) => (x, true),
                    Some(_) => (old, false),
                    None => (g(old, x), true),
                };
                k.to_mem(new, slot);
                if let Some(wd) = reg.words.get_mut(o / 4) {
                    wd.touch();
                }
                out.set(n, 0, gl, old);
                if compare.is_some() {
                    out.set(n, 1, gl, u32::from(swapped));
                }
            }
            if space == Space::Lane {
                continue;
            }
            let mut metrics = self.charge(space, &addrs, 4, line)?;
            let c = crate::simt::atomic::contention(&addrs);
            metrics.contention = Some(c.max_lanes_per_address);
            self.stats.at(line).atomics += 1;
            if self.tracing {
                let lanes = (0..sg)
                    .map(|l| Lane {
                        active: m >> l & 1 == 1,
                        address: addrs.get(l).copied().flatten(),
                        value: (m >> l & 1 == 1).then(|| k.to_f64(out.get(n, 0, w * sg + l))),
                        source: None,
                    })
                    .collect();
                let label = format!("atomic{fun:?}");
                self.record_labelled(
                    w,
                    line,
                    EventKind::Atomic { width: 4 },
                    lanes,
                    metrics,
                    &label,
                );
            }
        }
        Ok(out)
    }
}
