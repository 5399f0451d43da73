//! The whole run: every batch's allocation sequence through one [`CachingAllocator`], with an
//! event timeline (reserved and allocated after each malloc and free), a record per batch and
//! the segment map at each batch's allocated peak.

use serde::Serialize;

use super::workload::{AllocatorParams, Op, batch_lengths, batch_ops, needed_bytes};
use crate::Error;
use crate::caching::{CachingAllocator, OutOfMemory, SegmentView, Served};
use crate::memory::mib;

/// One batch of the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchRecord {
    /// 0-based batch number.
    pub batch: u64,
    /// Sequence length L.
    pub len: u64,
    /// Sequences B.
    pub seqs: u64,
    /// Tokens B·L.
    pub tokens: u64,
    /// What this batch needs: peak of live requested bytes, in MiB.
    pub needed_mib: f64,
    /// Peak allocated (rounded blocks) during the batch, MiB.
    pub allocated_peak_mib: f64,
    /// Reserved at the batch's end, MiB.
    pub reserved_mib: f64,
    /// Share of the up-front LightSeq2 allocation idle at this batch's peak (1 − needed/prealloc).
    pub preallocated_idle_share: f64,
    /// Index of this batch's first event in the event timeline.
    pub first_event: usize,
}

/// One allocator event.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Event {
    /// Batch.
    pub batch: u32,
    /// True for malloc, false for free.
    pub alloc: bool,
    /// Bytes asked for (malloc) or freed (the block's requested size).
    pub bytes: u64,
    /// How a malloc was served (None for a free).
    pub served: Option<Served>,
    /// Reserved after the event (bytes).
    pub reserved: u64,
    /// Allocated after the event (bytes).
    pub allocated: u64,
}

/// A whole simulated run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Simulation {
    /// Per batch.
    pub batches: Vec<BatchRecord>,
    /// Per event (reserved vs allocated over time).
    pub events: Vec<Event>,
    /// Segment map at each batch's allocated peak (batch-by-batch animation).
    pub frames: Vec<Vec<SegmentView>>,
    /// Peak reserved over the run (bytes).
    pub reserved_peak: u64,
    /// Largest per-batch need (bytes).
    pub needed_peak: u64,
    /// Peak allocated over the run (bytes).
    pub allocated_peak: u64,
    /// Segments created.
    pub segments_created: u64,
    /// Segments released on a full device.
    pub segments_released: u64,
    /// Set when the run hit out-of-memory (the run stops there).
    pub oom: Option<OutOfMemory>,
    /// The batch that hit out-of-memory, as far as it got: its allocated peak and reserved
    /// bytes at the failed request. After out-of-memory the run's peaks and needs cover the
    /// batches reached, this one included.
    pub oom_batch: Option<BatchRecord>,
}

/// Runs the workload through the simulator. `check` verifies the allocator's invariants after
/// every event (slow; for tests). Reports progress ([`crate::progress`]) once per batch.
///
/// # Errors
/// [`Error::BadInput`] if `check` finds a violated invariant (a simulator bug);
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub fn simulate(p: &AllocatorParams, check: bool) -> Result<Simulation, Error> {
    let lens = batch_lengths(p);
    let shapes: Vec<(u64, u64)> = lens.iter().map(|&l| ((p.tokens / l).max(1), l)).collect();
    let mut total_ops = 0;
    let needs: Vec<u64> = shapes
        .iter()
        .map(|&(b, l)| {
            let ops = batch_ops(p, b, l);
            total_ops += ops.len();
            needed_bytes(&ops)
        })
        .collect();
    let prealloc = needs.iter().copied().max().unwrap_or(0);
    let mut a = CachingAllocator::new(p.capacity);
    let mut sim = Simulation {
        batches: Vec::with_capacity(shapes.len()),
        // One event per op: sized once instead of grown (and copied) by doubling.
        events: Vec::with_capacity(total_ops),
        frames: Vec::with_capacity(shapes.len()),
        reserved_peak: 0,
        needed_peak: prealloc,
        allocated_peak: 0,
        segments_created: 0,
        segments_released: 0,
        oom: None,
        oom_batch: None,
    };
    let batches = shapes.len() as u64;
    'run: for (bi, (&(seqs, len), &need)) in shapes.iter().zip(&needs).enumerate() {
        crate::progress::report(bi as u64, batches)?;
        let ops = batch_ops(p, seqs, len);
        let mut handles: Vec<Option<usize>> = vec![None; ops.len()];
        let first_event = sim.events.len();
        let mut peak_alloc = 0;
        // The segment map at the batch's peak. Allocations only raise `allocated`, so the peak
        // is reached just before some free (or at the batch's end): the map is copied there,
        // when it beats the last copy — not at every new high, which copied every segment
        // after almost every allocation of a forward pass (seconds at the top of the ranges).
        // Only segments changed since the last copy are copied again (`frame_keys`).
        let mut frame = Vec::new();
        let mut frame_keys = Vec::new();
        let mut frame_alloc: Option<u64> = None;
        for op in &ops {
            if matches!(op, Op::Free { .. }) && frame_alloc.is_none_or(|f| a.allocated() > f) {
                a.segments_update(&mut frame, &mut frame_keys);
                frame_alloc = Some(a.allocated());
            }
            let (alloc, bytes, served) = match *op {
                Op::Alloc { slot, bytes } => match a.malloc(bytes, 0) {
                    Ok(x) => {
                        if let Some(h) = handles.get_mut(slot) {
                            *h = Some(x.block);
                        }
                        (true, bytes, Some(x.served))
                    }
                    Err(oom) => {
                        sim.oom = Some(oom);
                        sim.allocated_peak = sim.allocated_peak.max(peak_alloc);
                        sim.reserved_peak = sim.reserved_peak.max(a.reserved());
                        // What the run reached: the batches before this one, and this one's
                        // need (known from the workload) — not the batches never started.
                        let reached = needs.get(..=bi).unwrap_or(&needs);
                        sim.needed_peak = reached.iter().copied().max().unwrap_or(0);
                        sim.oom_batch = Some(BatchRecord {
                            batch: bi as u64,
                            len,
                            seqs,
                            tokens: seqs * len,
                            needed_mib: mib(need),
                            allocated_peak_mib: mib(peak_alloc),
                            reserved_mib: mib(a.reserved()),
                            preallocated_idle_share: 0.0,
                            first_event,
                        });
                        break 'run;
                    }
                },
                Op::Free { slot } => {
                    let h = handles.get_mut(slot).and_then(Option::take);
                    let bytes = h.map_or(0, |h| a.block_requested(h));
                    if let Some(h) = h {
                        a.free(h);
                    }
                    (false, bytes, None)
                }
            };
            if check {
                a.check()
                    .map_err(|e| Error::BadInput(format!("simulator invariant: {e}")))?;
            }
            sim.events.push(Event {
                batch: bi as u32,
                alloc,
                bytes,
                served,
                reserved: a.reserved(),
                allocated: a.allocated(),
            });
            sim.reserved_peak = sim.reserved_peak.max(a.reserved());
            peak_alloc = peak_alloc.max(a.allocated());
        }
        if frame_alloc.is_none_or(|f| a.allocated() > f) {
            a.segments_update(&mut frame, &mut frame_keys);
        }
        sim.allocated_peak = sim.allocated_peak.max(peak_alloc);
        sim.frames.push(frame);
        sim.batches.push(BatchRecord {
            batch: bi as u64,
            len,
            seqs,
            tokens: seqs * len,
            needed_mib: mib(need),
            allocated_peak_mib: mib(peak_alloc),
            reserved_mib: mib(a.reserved()),
            preallocated_idle_share: if prealloc == 0 {
                0.0
            } else {
                1.0 - need as f64 / prealloc as f64
            },
            first_event,
        });
    }
    if sim.oom.is_some() {
        // The up-front allocation is sized to the batches reached.
        let pre = sim.needed_peak;
        for b in &mut sim.batches {
            b.preallocated_idle_share = if pre == 0 {
                0.0
            } else {
                1.0 - b.needed_mib * (1u64 << 20) as f64 / pre as f64
            };
        }
        if let Some(b) = &mut sim.oom_batch {
            b.preallocated_idle_share = if pre == 0 {
                0.0
            } else {
                1.0 - b.needed_mib * (1u64 << 20) as f64 / pre as f64
            };
        }
    }
    sim.segments_created = a.segments_created;
    sim.segments_released = a.segments_released;
    crate::progress::report(batches, batches)?;
    Ok(sim)
}
