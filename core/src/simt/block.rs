//! [`Block`]: executes warp-wide instructions over lane vectors, costs each by the hardware's
//! rules and records it in a [`Trace`].
//!
//! Kernels call the methods warp by warp in a valid execution order (all warps' work before a
//! barrier, then the barrier, then the work after it); the trace keeps that order in
//! [`Event::seq`]. Lane vectors have one entry per lane of the warp (`warp_size` entries).

use std::collections::HashMap;

use super::shared::BankConfig;
use super::shuffle::{self, Register, ShuffleMode};
use super::trace::{Event, EventKind, Lane, Metrics, Origin, Trace, WarpTrace};
use super::{MAX_BLOCK_THREADS, MAX_WARP_SIZE, Mask, atomic, global};
use crate::Error;
use crate::text::Text;

/// Shared memory per block the model allows by default (48 KiB, CUDA's static limit).
pub const DEFAULT_SHARED_BYTES: u64 = 48 * 1024;

/// Threads per block and lanes per warp, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BlockShape {
    /// Threads in the block (1..=1024).
    pub threads: u32,
    /// Lanes per warp (a power of two, 1..=64).
    pub warp_size: u32,
}

impl BlockShape {
    /// A validated shape.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] (`threads`, `warp`) for a block of 0 or more than 1024 threads,
    /// or a warp width that is not a power of two up to 64.
    pub fn new(threads: u32, warp_size: u32) -> Result<Self, Error> {
        if !(1..=MAX_BLOCK_THREADS).contains(&threads) {
            return Err(Error::invalid(
                "threads",
                threads,
                crate::error::Expected::custom(
                    "expected 1..=1024 threads per block (CUDA's limit)",
                    "每个线程块应有 1..=1024 个线程（CUDA 的上限）",
                ),
            ));
        }
        if !warp_size.is_power_of_two() || warp_size > MAX_WARP_SIZE {
            return Err(Error::invalid(
                "warp",
                warp_size,
                crate::error::Expected::custom(
                    "expected a power of two from 1 to 64 lanes",
                    "应为 1 到 64 之间的 2 的幂（通道数）",
                ),
            ));
        }
        Ok(BlockShape { threads, warp_size })
    }

    /// Number of warps, `ceil(threads / warp_size)`.
    pub fn warps(&self) -> u32 {
        self.threads.div_ceil(self.warp_size)
    }

    /// Lanes that exist in warp `w` (the last warp may be partial).
    pub fn active(&self, w: u32) -> Mask {
        Mask::first(
            self.threads
                .saturating_sub(w.saturating_mul(self.warp_size))
                .min(self.warp_size),
        )
    }
}

/// A block being simulated.
#[derive(Debug, Clone)]
pub struct Block {
    shape: BlockShape,
    banks: BankConfig,
    shared_bytes: u64,
    shared: HashMap<u64, f64>,
    seq: u64,
    barriers: u32,
    kernel: Text,
    warps: Vec<WarpTrace>,
}

impl Block {
    /// A block of `shape` running `kernel`, with 48 KiB of shared memory in 32 × 4-byte banks.
    pub fn new(kernel: impl Into<Text>, shape: BlockShape) -> Self {
        Block {
            shape,
            banks: BankConfig::default(),
            shared_bytes: DEFAULT_SHARED_BYTES,
            shared: HashMap::new(),
            seq: 0,
            barriers: 0,
            kernel: kernel.into(),
            warps: (0..shape.warps())
                .map(|w| WarpTrace {
                    warp: w,
                    events: Vec::new(),
                })
                .collect(),
        }
    }

    /// The block's shape.
    pub fn shape(&self) -> BlockShape {
        self.shape
    }

    /// Barriers passed so far.
    pub fn barriers(&self) -> u32 {
        self.barriers
    }

    fn record(
        &mut self,
        warp: u32,
        kind: EventKind,
        label: impl Into<Text>,
        level: Option<u32>,
        lanes: Vec<Lane>,
        metrics: Metrics,
    ) {
        let e = Event {
            seq: self.seq,
            kind,
            label: label.into(),
            level,
            lanes,
            metrics,
            line: None,
        };
        self.seq += 1;
        if let Some(w) = self.warps.get_mut(warp as usize) {
            w.events.push(e);
        }
    }

    fn lanes_of(
        &self,
        addresses: Option<&[Option<u64>]>,
        values: &[f64],
        active: Mask,
    ) -> Vec<Lane> {
        (0..self.shape.warp_size)
            .map(|l| {
                let on = active.has(l);
                Lane {
                    active: on,
                    address: addresses
                        .and_then(|a| a.get(l as usize).copied().flatten())
                        .filter(|_| on),
                    value: values.get(l as usize).copied().filter(|_| on),
                    source: None,
                }
            })
            .collect()
    }

    /// One address per lane of warp `warp`: lanes past the warp's width or the block's last
    /// thread do not exist, so whatever the caller passed for them takes no part (and costs
    /// nothing).
    fn existing(&self, warp: u32, addresses: &[Option<u64>]) -> Vec<Option<u64>> {
        let exists = self.shape.active(warp);
        (0..self.shape.warp_size)
            .map(|l| {
                addresses
                    .get(l as usize)
                    .copied()
                    .flatten()
                    .filter(|_| exists.has(l))
            })
            .collect()
    }

    fn mask_of(addresses: &[Option<u64>]) -> Mask {
        Mask(
            addresses
                .iter()
                .enumerate()
                .filter(|(_, a)| a.is_some())
                .fold(0, |m, (l, _)| m | 1 << l),
        )
    }

    /// A shuffle on warp `warp`: lanes in `active` exchange `values` (see [`shuffle`]).
    #[allow(clippy::too_many_arguments)]
    pub fn shfl<T: Register>(
        &mut self,
        warp: u32,
        mode: ShuffleMode,
        arg: u32,
        values: &[T],
        active: Mask,
        label: impl Into<Text>,
        level: Option<u32>,
    ) -> Vec<T> {
        let (out, src) = shuffle::shuffle(mode, arg, self.shape.warp_size, values, active);
        let mut lanes = self.lanes_of(
            None,
            &out.iter().map(|v| v.to_f64()).collect::<Vec<_>>(),
            active,
        );
        for (lane, s) in lanes.iter_mut().zip(src) {
            lane.source = Some(s);
        }
        self.record(
            warp,
            EventKind::Shuffle { mode, arg },
            label,
            level,
            lanes,
            Metrics::default(),
        );
        out
    }

    /// Register arithmetic on warp `warp`: records the lanes' new `values`.
    pub fn compute(
        &mut self,
        warp: u32,
        values: &[f64],
        active: Mask,
        label: impl Into<Text>,
        level: Option<u32>,
    ) {
        let lanes = self.lanes_of(None, values, active);
        self.record(
            warp,
            EventKind::Compute,
            label,
            level,
            lanes,
            Metrics::default(),
        );
    }

    fn shared_check(&self, addresses: &[Option<u64>], width: u32) -> Result<(), Error> {
        match addresses
            .iter()
            .flatten()
            .find(|a| **a + u64::from(width) > self.shared_bytes)
        {
            Some(a) => Err(Error::invalid(
                "shared address",
                a,
                crate::error::Expected::custom(
                    format!(
                        "past the block's {} bytes of shared memory",
                        self.shared_bytes
                    ),
                    format!("超出了线程块 {} 字节的共享内存", self.shared_bytes),
                ),
            )),
            None => Ok(()),
        }
    }

    /// A shared-memory store: lane `l` writes `values[l]` (`width` bytes) at byte
    /// `addresses[l]`; `None` = lane inactive.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a bad width, a misaligned or out-of-range address.
    pub fn st_shared(
        &mut self,
        warp: u32,
        addresses: &[Option<u64>],
        width: u32,
        values: &[f64],
        label: impl Into<Text>,
        level: Option<u32>,
    ) -> Result<(), Error> {
        let addresses = &self.existing(warp, addresses);
        self.shared_check(addresses, width)?;
        let cost = self.banks.request(addresses, width)?;
        for (a, v) in addresses.iter().zip(values) {
            if let Some(a) = a {
                self.shared.insert(*a, *v);
            }
        }
        let lanes = self.lanes_of(Some(addresses), values, Self::mask_of(addresses));
        self.record(
            warp,
            EventKind::SharedStore { width },
            label,
            level,
            lanes,
            shared_metrics(&cost),
        );
        Ok(())
    }

    /// A shared-memory load: lane `l` reads `width` bytes at `addresses[l]`. Inactive lanes
    /// and never-written words read NaN, so a kernel bug shows in its result.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a bad width, a misaligned or out-of-range address.
    pub fn ld_shared(
        &mut self,
        warp: u32,
        addresses: &[Option<u64>],
        width: u32,
        label: impl Into<Text>,
        level: Option<u32>,
    ) -> Result<Vec<f64>, Error> {
        let addresses = &self.existing(warp, addresses);
        self.shared_check(addresses, width)?;
        let cost = self.banks.request(addresses, width)?;
        let values: Vec<f64> = (0..self.shape.warp_size as usize)
            .map(|l| {
                addresses
                    .get(l)
                    .copied()
                    .flatten()
                    .and_then(|a| self.shared.get(&a).copied())
                    .unwrap_or(f64::NAN)
            })
            .collect();
        let lanes = self.lanes_of(Some(addresses), &values, Self::mask_of(addresses));
        self.record(
            warp,
            EventKind::SharedLoad { width },
            label,
            level,
            lanes,
            shared_metrics(&cost),
        );
        Ok(values)
    }

    /// A global-memory access (load or store) of `width` bytes per lane, with the values the
    /// lanes read or wrote; global memory itself is owned by the kernel's Rust code.
    pub fn global(
        &mut self,
        warp: u32,
        store: bool,
        addresses: &[Option<u64>],
        width: u32,
        values: &[f64],
        label: impl Into<Text>,
    ) {
        let addresses = &self.existing(warp, addresses);
        let c = global::sectors(addresses, width);
        let kind = if store {
            EventKind::GlobalStore { width }
        } else {
            EventKind::GlobalLoad { width }
        };
        let lanes = self.lanes_of(Some(addresses), values, Self::mask_of(addresses));
        let m = Metrics {
            sectors: Some(c.sectors),
            ideal_sectors: Some(c.ideal_sectors),
            ..Metrics::default()
        };
        self.record(warp, kind, label, None, lanes, m);
    }

    /// An atomic add to global memory: lane `l` adds `values[l]` at `addresses[l]`.
    pub fn atomic_add(
        &mut self,
        warp: u32,
        addresses: &[Option<u64>],
        width: u32,
        values: &[f64],
        label: impl Into<Text>,
    ) {
        let addresses = &self.existing(warp, addresses);
        let c = atomic::contention(addresses);
        let lanes = self.lanes_of(Some(addresses), values, Self::mask_of(addresses));
        let m = Metrics {
            contention: Some(c.max_lanes_per_address),
            sectors: Some(global::sectors(addresses, width).sectors),
            ..Metrics::default()
        };
        self.record(warp, EventKind::Atomic { width }, label, None, lanes, m);
    }

    /// `__syncthreads()`: every warp of the block reaches the barrier.
    pub fn barrier(&mut self, label: impl Into<Text>) {
        let label: Text = label.into();
        self.barriers += 1;
        let kind = EventKind::Barrier {
            index: self.barriers,
        };
        for w in 0..self.shape.warps() {
            let lanes = self.lanes_of(None, &[], self.shape.active(w));
            self.record(w, kind, label.clone(), None, lanes, Metrics::default());
        }
    }

    /// The finished trace.
    pub fn finish(self) -> Trace {
        Trace {
            kernel: self.kernel,
            origin: Origin::Simulated,
            warp_size: self.shape.warp_size,
            block_threads: self.shape.threads,
            warps: self.warps,
        }
    }
}

fn shared_metrics(c: &super::shared::SharedCost) -> Metrics {
    Metrics {
        wavefronts: Some(c.wavefronts),
        ideal_wavefronts: Some(c.ideal_wavefronts),
        conflict_degree: Some(c.conflict_degree),
        ..Metrics::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_validation_and_partial_warps() {
        assert!(BlockShape::new(0, 32).is_err());
        assert!(BlockShape::new(1025, 32).is_err());
        assert!(BlockShape::new(64, 24).is_err());
        let s = BlockShape::new(80, 32).unwrap();
        assert_eq!(s.warps(), 3);
        assert_eq!(s.active(2).count(), 16);
        assert_eq!(s.active(0).count(), 32);
    }

    #[test]
    fn shared_round_trip_and_barrier_per_warp() {
        let mut b = Block::new("t", BlockShape::new(64, 32).unwrap());
        let addr: Vec<_> = (0..32).map(|l| Some(4 * l)).collect();
        let vals: Vec<f64> = (0..32).map(f64::from).collect();
        b.st_shared(0, &addr, 4, &vals, "st", None).unwrap();
        b.barrier("sync");
        let got = b.ld_shared(1, &addr, 4, "ld", None).unwrap();
        assert_eq!(got, vals);
        let t = b.finish();
        assert_eq!(t.summary().barriers, 1);
        assert_eq!(t.warps[0].events.len(), 2);
        assert_eq!(t.warps[1].events.len(), 2);
        // Out of range of 48 KiB.
        let mut b = Block::new("t", BlockShape::new(32, 32).unwrap());
        assert!(b.ld_shared(0, &[Some(48 * 1024)], 4, "x", None).is_err());
    }
}
