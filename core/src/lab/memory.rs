//! Memory: every variable is a byte region laid out as naga's `Layouter` lays it out (WGSL
//! spec §14.4 "Memory Layout"). A pointer value is two words per lane, the region and the
//! byte offset in it; function and private variables have one copy per lane (the lane's
//! offset is `lane × size`). Each warp request is costed by the rules of [`crate::simt`]:
//! storage and uniform buffers as 32-byte sectors ([`crate::simt::global`]), workgroup memory
//! as banks and wavefronts ([`crate::simt::shared::BankConfig::request`]); per-lane memory
//! is registers and costs nothing.

use std::rc::Rc;

use naga::{Handle, TypeInner};

use super::Machine;
use super::dispatch::Binding;
use super::exec::Frame;
use super::output::WarningKind;
use super::sanitize::{SharedWord, storage_write};
use super::value::{Active, Kind, Val, lanes_of};
use crate::Error;
use crate::simt::shared::BankConfig;
use crate::simt::trace::{Lane, Metrics};
use crate::simt::{EventKind, global};
use crate::text::Text;

/// Set in a pointer's region word when its index was out of bounds: loads read the clamped
/// element, stores are dropped (WGSL spec §14.5.3 "Out-of-Bounds Access").
pub const OOB: u32 = 1 << 31;

/// Where a region lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// A storage or uniform buffer.
    Global {
        /// `var<storage, read_write>`.
        writable: bool,
    },
    /// `var<workgroup>`.
    Shared,
    /// `var<private>` and `var<function>`: one copy per lane.
    Lane,
}

/// One variable's bytes.
#[derive(Debug)]
pub struct Region {
    /// Where it lives.
    pub space: Space,
    /// Its bytes (per-lane regions: every lane's copy, lane after lane).
    pub bytes: Vec<u8>,
    /// Its first byte's address in its address space (for sectors and banks).
    pub base: u64,
    /// The binding of a buffer.
    pub binding: Option<Binding>,
    /// Workgroup words' accesses (sanitizers).
    pub words: Vec<SharedWord>,
    /// Storage words' last writer (invocation + 1), for a writable buffer.
    pub writer: Vec<u32>,
}

/// All regions of a run.
#[derive(Debug, Default)]
pub struct Memory {
    /// By id; function locals are pushed on a call and truncated on its return.
    pub regions: Vec<Region>,
}

impl Memory {
    /// A zeroed region of `size` bytes for each of `n` lanes, after checking the budget.
    ///
    /// # Errors
    /// [`Error::BadInput`] when the run would pass `max` bytes.
    pub fn lane_region(
        &mut self,
        n: usize,
        size: usize,
        used: &mut u64,
        max: u64,
    ) -> Result<usize, Error> {
        let bytes = (n as u64).saturating_mul(size as u64);
        reserve(used, bytes, max)?;
        self.regions.push(Region {
            space: Space::Lane,
            bytes: vec![0; n * size],
            base: 0,
            binding: None,
            words: Vec::new(),
            writer: Vec::new(),
        });
        Ok(self.regions.len() - 1)
    }
}

/// Counts `bytes` against the memory budget.
///
/// # Errors
/// [`Error::BadInput`] with the numbers when `used + bytes` passes `max`.
pub fn reserve(used: &mut u64, bytes: u64, max: u64) -> Result<(), Error> {
    let total = used.saturating_add(bytes);
    if total > max {
        return Err(Error::BadInput(format!(
            "the simulation needs more than {max} bytes of memory ({total} with this variable); \
             make the buffers or workgroups smaller\n模拟需要超过 {max} 字节内存（加上此变量为 {total}）；请减小缓冲区或工作组"
        )));
    }
    *used = total;
    Ok(())
}

/// One scalar of a type's flattening: its byte offset and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leaf {
    /// Byte offset in the value's layout.
    pub off: u32,
    /// Scalar kind.
    pub kind: Kind,
}

/// Requests a value's leaves need: `(first leaf, past last, width bytes)`. Contiguous leaves of
/// 1, 2, 4, 8 or 16 bytes together (a `vec2<f32>`, a `vec4<f32>`) are one request, as one
/// vector load instruction; anything else one request per scalar.
fn requests(leaves: &[Leaf]) -> Vec<(usize, usize, u32)> {
    let total: u32 = leaves.iter().map(|l| l.kind.bytes()).sum();
    let contiguous = leaves
        .windows(2)
        .all(|p| p[1].off == p[0].off + p[0].kind.bytes());
    if contiguous && matches!(total, 1 | 2 | 4 | 8 | 16) {
        return vec![(0, leaves.len(), total)];
    }
    leaves
        .iter()
        .enumerate()
        .map(|(i, l)| (i, i + 1, l.kind.bytes()))
        .collect()
}

impl<'m> Machine<'m> {
    /// The flattening of type `ty` (cached).
    ///
    /// # Errors
    /// A type the lab does not model (64-bit, a runtime-sized array as a value, an image).
    pub fn leaves_of(&mut self, ty: Handle<naga::Type>) -> Result<Rc<[Leaf]>, Error> {
        if let Some(Some(l)) = self.leaf_cache.get(ty.index()) {
            return Ok(l.clone());
        }
        let module = self.module;
        let mut out = Vec::new();
        self.flatten(&module.types[ty].inner, 0, &mut out)?;
        let rc: Rc<[Leaf]> = out.into();
        if let Some(slot) = self.leaf_cache.get_mut(ty.index()) {
            *slot = Some(rc.clone());
        }
        Ok(rc)
    }

    /// Appends the leaves of `inner` at byte offset `base`.
    pub fn flatten(
        &mut self,
        inner: &TypeInner,
        base: u32,
        out: &mut Vec<Leaf>,
    ) -> Result<(), Error> {
        let kind = |s: naga::Scalar| {
            Kind::of(s).ok_or_else(|| {
                Error::BadInput(format!(
                    "the kernel lab simulates f32, f16, i32, u32 and bool, not {s:?}"
                ))
            })
        };
        match inner {
            TypeInner::Scalar(s) | TypeInner::Atomic(s) => out.push(Leaf {
                off: base,
                kind: kind(*s)?,
            }),
            TypeInner::Vector { size, scalar } => {
                let k = kind(*scalar)?;
                for i in 0..*size as u32 {
                    out.push(Leaf {
                        off: base + i * u32::from(scalar.width),
                        kind: k,
                    });
                }
            }
            TypeInner::Matrix {
                columns,
                rows,
                scalar,
            } => {
                let k = kind(*scalar)?;
                let w = u32::from(scalar.width);
                let col = if *rows as u32 == 2 { 2 * w } else { 4 * w };
                for c in 0..*columns as u32 {
                    for r in 0..*rows as u32 {
                        out.push(Leaf {
                            off: base + c * col + r * w,
                            kind: k,
                        });
                    }
                }
            }
            TypeInner::Array {
                base: elem,
                size: naga::ArraySize::Constant(len),
                stride,
            } => {
                if len.get() > 1 << 16 {
                    return Err(Error::BadInput(format!(
                        "an array value of {len} elements: the kernel lab holds values of at most 65536 elements"
                    )));
                }
                let module = self.module;
                let mut one = Vec::new();
                self.flatten(&module.types[*elem].inner, 0, &mut one)?;
                for i in 0..len.get() {
                    out.extend(one.iter().map(|l| Leaf {
                        off: base + i * stride + l.off,
                        kind: l.kind,
                    }));
                }
            }
            TypeInner::Struct { members, .. } => {
                let module = self.module;
                for m in members {
                    self.flatten(&module.types[m.ty].inner, base + m.offset, out)?;
                }
            }
            other => {
                return Err(Error::BadInput(format!(
                    "the kernel lab does not hold values of type {other:?}"
                )));
            }
        }
        Ok(())
    }

    /// The leaves of what the pointer expression `ptr` points to.
    pub fn pointee_leaves(
        &mut self,
        f: &Frame<'m>,
        ptr: Handle<naga::Expression>,
    ) -> Result<Rc<[Leaf]>, Error> {
        let module = self.module;
        match f.finfo[ptr].ty.inner_with(&module.types) {
            TypeInner::Pointer { base, .. } => self.leaves_of(*base),
            TypeInner::ValuePointer { size, scalar, .. } => {
                let inner = match size {
                    Some(size) => TypeInner::Vector {
                        size: *size,
                        scalar: *scalar,
                    },
                    None => TypeInner::Scalar(*scalar),
                };
                let mut out = Vec::new();
                self.flatten(&inner, 0, &mut out)?;
                Ok(out.into())
            }
            other => Err(Error::BadInput(format!("not a pointer: {other:?}"))),
        }
    }

    /// A pointer to local variable `h` of `f` (each lane its own copy).
    pub fn local_ptr(&self, f: &Frame<'m>, h: Handle<naga::LocalVariable>) -> Val {
        let region = f.locals.get(h.index()).copied().unwrap_or(0) as u32;
        let size = self.layouter[f.fun.local_variables[h].ty].size;
        self.lane_ptr(region, size)
    }

    /// A pointer to a per-lane region of `size` bytes per lane, or a shared one (`size` 0).
    pub fn lane_ptr(&self, region: u32, size: u32) -> Val {
        let mut v = Val::zeros(2, self.n);
        for l in 0..self.n {
            v.set(self.n, 0, l, region);
            v.set(self.n, 1, l, l as u32 * size);
        }
        v
    }

    /// A warp-wide load (`store` = `None`, the loaded value returned) or store of the `leaves`
    /// at `ptr` for the lanes of `mask`: data moved, each request costed, sanitized and traced.
    pub fn access(
        &mut self,
        ptr: &Val,
        leaves: &[Leaf],
        mask: &Active,
        line: u32,
        store: Option<&Val>,
    ) -> Result<Val, Error> {
        let (n, sg) = (self.n, self.sg);
        let mut out = Val::zeros(if store.is_some() { 0 } else { leaves.len() }, n);
        let groups = requests(leaves);
        let mut addrs: Vec<Option<u64>> = vec![None; sg];
        for (w, m) in mask.warps() {
            for &(a, z, width) in &groups {
                let Some(first) = leaves.get(a) else { continue };
                addrs.fill(None);
                let mut space = Space::Lane;
                for l in lanes_of(m) {
                    let gl = w * sg + l;
                    let r = ptr.get(n, 0, gl);
                    let off = ptr.get(n, 1, gl).wrapping_add(first.off);
                    let Some(reg) = self.mem.regions.get_mut((r & !OOB) as usize) else {
                        continue;
                    };
                    space = reg.space;
                    let dropped = store.is_some() && r & OOB != 0;
                    if !dropped && let Some(slot) = addrs.get_mut(l) {
                        *slot = Some(reg.base + u64::from(off));
                    }
                    for (i, leaf) in leaves.iter().enumerate().take(z).skip(a) {
                        let o = ptr.get(n, 1, gl).wrapping_add(leaf.off) as usize;
                        let wb = leaf.kind.bytes() as usize;
                        match store {
                            Some(v) if !dropped => {
                                if let Some(slot) = reg.bytes.get_mut(o..o + wb) {
                                    leaf.kind.to_mem(v.get(n, i, gl), slot);
                                }
                            }
                            Some(_) => {}
                            None => {
                                let word = reg
                                    .bytes
                                    .get(o..o + wb)
                                    .map_or(0, |b| leaf.kind.from_mem(b));
                                out.set(n, i, gl, word);
                            }
                        }
                        if dropped {
                            continue;
                        }
                        // Sanitizers.
                        match space {
                            Space::Shared => {
                                let wd = reg.words.get_mut(o / 4);
                                if let Some(wd) = wd {
                                    let epoch = self.barrier_index + 1;
                                    let (race, uninit) = if store.is_some() {
                                        (wd.write(w as u32, epoch), false)
                                    } else {
                                        wd.read(w as u32, epoch)
                                    };
                                    if race {
                                        self.stats.warn(WarningKind::Race, line, || race_text(w));
                                    }
                                    if uninit {
                                        self.stats.warn(WarningKind::UninitializedRead, line, || {
                                            Text::new(
                                                format!("warp {w} reads workgroup memory no invocation wrote (WGSL zero-initialises it; the read gets 0)"),
                                                format!("warp {w} 读取了没有任何调用写过的共享内存（WGSL 将其初始化为 0，读到 0）"),
                                            )
                                        });
                                    }
                                }
                            }
                            Space::Global { writable: true } if store.is_some() => {
                                let inv = self.inv_base.wrapping_add(gl as u32);
                                if let Some(slot) = reg.writer.get_mut(o / 4)
                                    && storage_write(slot, inv)
                                {
                                    self.stats.warn(WarningKind::Race, line, || {
                                            Text::new(
                                                format!("invocation {inv} writes a storage word another invocation wrote (byte {o} of buffer {})", reg.binding.map(|b| b.to_string()).unwrap_or_default()),
                                                format!("调用 {inv} 写入了另一个调用写过的存储字（缓冲区 {} 的第 {o} 字节）", reg.binding.map(|b| b.to_string()).unwrap_or_default()),
                                            )
                                        });
                                }
                            }
                            _ => {}
                        }
                    }
                }
                let kind = match (space, store.is_some()) {
                    (Space::Lane, _) => continue,
                    (Space::Global { .. }, false) => EventKind::GlobalLoad { width },
                    (Space::Global { .. }, true) => EventKind::GlobalStore { width },
                    (Space::Shared, false) => EventKind::SharedLoad { width },
                    (Space::Shared, true) => EventKind::SharedStore { width },
                };
                let metrics = self.charge(space, &addrs, width, line)?;
                if self.tracing {
                    let vals = store.unwrap_or(&out);
                    let lanes = (0..sg)
                        .map(|l| Lane {
                            active: m >> l & 1 == 1,
                            address: addrs.get(l).copied().flatten(),
                            value: (m >> l & 1 == 1)
                                .then(|| first.kind.to_f64(vals.get(n, a, w * sg + l))),
                            source: None,
                        })
                        .collect();
                    self.record(w, line, kind, lanes, metrics);
                }
            }
        }
        Ok(out)
    }

    /// Costs one warp request to `space` (lane `l` at `addrs[l]`, `width` bytes) on `line`.
    pub fn charge(
        &mut self,
        space: Space,
        addrs: &[Option<u64>],
        width: u32,
        line: u32,
    ) -> Result<Metrics, Error> {
        let mut metrics = Metrics::default();
        match space {
            Space::Global { .. } => {
                let c = global::sectors(addrs, width);
                let at = self.stats.at(line);
                at.global_requests += 1;
                at.global_sectors += u64::from(c.sectors);
                at.global_ideal_sectors += u64::from(c.ideal_sectors);
                metrics.sectors = Some(c.sectors);
                metrics.ideal_sectors = Some(c.ideal_sectors);
            }
            Space::Shared => {
                let c = BankConfig::default().request(addrs, width)?;
                let at = self.stats.at(line);
                at.shared_requests += 1;
                at.shared_wavefronts += u64::from(c.wavefronts);
                at.shared_ideal_wavefronts += u64::from(c.ideal_wavefronts);
                metrics.wavefronts = Some(c.wavefronts);
                metrics.ideal_wavefronts = Some(c.ideal_wavefronts);
                metrics.conflict_degree = Some(c.conflict_degree);
            }
            Space::Lane => {}
        }
        Ok(metrics)
    }

    /// Reports an out-of-bounds index on `line`.
    pub fn out_of_bounds(&mut self, line: u32, index: i64, len: u64) {
        self.stats.warn(WarningKind::OutOfBounds, line, || {
            Text::new(
                format!("index {index} past an array of {len} elements: a load reads a clamped element, a store is dropped (WGSL §14.5.3)"),
                format!("下标 {index} 越过了 {len} 个元素的数组：读取被钳制到界内元素，写入被丢弃（WGSL §14.5.3）"),
            )
        });
    }
}

fn race_text(w: usize) -> Text {
    Text::new(
        format!(
            "warp {w} touches a workgroup word another warp wrote or read since the last barrier, and one of them writes: a data race"
        ),
        format!(
            "warp {w} 访问了自上次屏障以来另一个 warp 写过或读过的共享内存字，且其中一方在写：数据竞争"
        ),
    )
}
