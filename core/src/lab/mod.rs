//! The kernel lab: a user's own WGSL compute kernel, parsed and validated by naga and
//! interpreted warp by warp on the SIMT model of [`crate::simt`] — per-line bank conflicts,
//! sectors and divergence, sanitizer warnings, and a [`crate::simt::Trace`] the stepper walks.
//! The same source runs on the GPU in `warpscope-kernels` (`kernels::lab`) with the same
//! [`dispatch::Dispatch`] bytes, so simulated and real buffers can be compared.
//!
//! [`simulate`] is the entry: [`module`] parses and validates, [`exec`] walks the statements
//! with an active mask per warp, [`eval`] computes expressions lane-wise on [`value::Val`]s,
//! [`memory`] moves and costs bytes, [`subgroup`] does shuffles, reductions and atomics,
//! [`sanitize`] keeps the counters and warnings. What the interpreter refuses (textures,
//! derivatives, `discard`, matrix products, 64-bit types, override-sized arrays or
//! workgroups) is an error naming the line.

pub mod dispatch;
pub mod eval;
pub mod examples;
pub mod exec;
pub mod memory;
pub mod module;
pub mod ops;
pub mod output;
pub mod record;
pub mod sanitize;
pub mod scene;
pub mod subgroup;
pub mod value;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::rc::Rc;

use naga::{AddressSpace, Expression, Handle, Module};

use crate::text::Text;

use crate::Error;
use crate::simt::trace::{Lane, Metrics, Origin, WarpTrace};
use crate::simt::{Event, EventKind, Trace};
use dispatch::{Binding, Dispatch, decode};
use exec::Frame;
use memory::{Leaf, Memory, Region, Space, reserve};
use module::LineIndex;
use output::{BufferOut, Counters, Element, LabOutput, LineCounters, Totals};
use sanitize::{SharedWord, Stats};
use value::{Active, Val};

/// Lane instructions one run may execute by default (about a minute at the benchmark's
/// speed): an endless loop ends with an error instead of hanging.
pub const MAX_LANE_INSTRUCTIONS: u64 = 1 << 31;

/// Bytes of simulator memory one run may allocate by default (buffers, their race
/// bookkeeping, workgroup and per-lane variables).
pub const MAX_MEMORY_BYTES: u64 = 1 << 30;

/// Events the trace keeps (the stepped workgroup's first ones).
pub const MAX_TRACE_EVENTS: usize = 200_000;

/// The subgroup sizes the lab simulates (lanes per warp).
pub const SUBGROUP_SIZES: [u32; 4] = [8, 16, 32, 64];

/// Knobs of [`simulate_with`].
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Pipeline-overridable constants by name (or by `@id` written as a number): the value
    /// replaces the `override`'s default.
    pub overrides: BTreeMap<String, f64>,
    /// The lane-instruction budget.
    pub max_lane_instructions: u64,
    /// The memory budget, bytes.
    pub max_memory_bytes: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            overrides: BTreeMap::new(),
            max_lane_instructions: MAX_LANE_INSTRUCTIONS,
            max_memory_bytes: MAX_MEMORY_BYTES,
        }
    }
}

/// Simulates `source`'s compute entry point `entry` (or its only one) over `dispatch` with
/// warps of `subgroup_size` lanes; `override`s take their defaults.
///
/// # Errors
/// As [`simulate_with`].
pub fn simulate(
    source: &str,
    entry: Option<&str>,
    subgroup_size: u32,
    dispatch: &Dispatch,
) -> Result<LabOutput, Error> {
    simulate_with(source, entry, subgroup_size, dispatch, &Options::default())
}

/// [`simulate`] with explicit overrides and budgets.
///
/// # Errors
/// [`Error::BadInput`]: a parse or validation error (line, column, the line, both
/// languages), a construct the lab does not simulate (with its line), a budget passed (with the
/// numbers). [`Error::InvalidParam`]: `entry` not a compute entry point, `subgroup_size` not
/// 8, 16, 32 or 64. [`Error::InvalidInput`]: bindings the kernel uses that the dispatch lacks
/// (all named), a buffer smaller than its variable. [`Error::Cancelled`].
pub fn simulate_with(
    source: &str,
    entry: Option<&str>,
    subgroup_size: u32,
    dispatch: &Dispatch,
    options: &Options,
) -> Result<LabOutput, Error> {
    if !SUBGROUP_SIZES.contains(&subgroup_size) {
        return Err(Error::invalid(
            "subgroup_size",
            subgroup_size,
            crate::error::Expected::OneOf(SUBGROUP_SIZES.iter().map(u32::to_string).collect()),
        ));
    }
    let program = module::load(source, entry)?;
    let mut m = Machine::new(&program, source, subgroup_size as usize, dispatch, options)?;
    m.run(dispatch)?;
    m.finish(&program, dispatch, subgroup_size)
}

/// The simulator's state for one dispatch.
#[derive(Debug)]
pub struct Machine<'m> {
    module: &'m Module,
    info: &'m naga::valid::ModuleInfo,
    lines: &'m LineIndex,
    source_lines: Vec<&'m str>,
    entry: usize,
    /// Lanes of the workgroup rounded up to whole warps.
    n: usize,
    /// Lanes per warp.
    sg: usize,
    /// Warps per workgroup.
    nw: usize,
    /// Invocations per workgroup.
    threads: usize,
    wg_size: [u32; 3],
    full: Active,
    stats: Stats,
    iterations: u64,
    done_workgroups: u64,
    total_workgroups: u64,
    barrier_index: u32,
    mem: Memory,
    mem_used: u64,
    max_memory: u64,
    max_lanes: u64,
    layouter: naga::proc::Layouter,
    leaf_cache: Vec<Option<Rc<[Leaf]>>>,
    depth: u32,
    consts: Vec<Val>,
    overrides: Vec<Val>,
    /// Per global variable: its region and bytes per lane (0 for a shared region).
    global_region: Vec<Option<(u32, u32)>>,
    tracing: bool,
    events: Vec<Vec<(u32, Event)>>,
    event_count: usize,
    inv_base: u32,
}

fn bad(msg: String) -> Error {
    Error::BadInput(msg)
}

impl<'m> Machine<'m> {
    fn new(
        p: &'m module::Program,
        source: &'m str,
        sg: usize,
        dispatch: &Dispatch,
        options: &Options,
    ) -> Result<Machine<'m>, Error> {
        let module = &p.module;
        let ep = module
            .entry_points
            .get(p.entry)
            .ok_or_else(|| bad("no entry point".to_owned()))?;
        if ep.workgroup_size_overrides.is_some() {
            return Err(bad(
                "a @workgroup_size set by an override: the kernel lab needs it constant".to_owned(),
            ));
        }
        let threads: u64 = ep.workgroup_size.iter().map(|&x| u64::from(x)).product();
        if threads == 0 || threads > u64::from(crate::simt::MAX_BLOCK_THREADS) {
            return Err(bad(format!(
                "@workgroup_size {:?} has {threads} invocations; the lab runs 1 to 1024",
                ep.workgroup_size
            )));
        }
        let threads = threads as usize;
        let nw = threads.div_ceil(sg);
        let n = nw * sg;
        let mut full = Active::none(nw);
        for l in 0..threads {
            if let Some(m) = full.0.get_mut(l / sg) {
                *m |= 1 << (l % sg);
            }
        }
        let mut layouter = naga::proc::Layouter::default();
        layouter
            .update(module.to_ctx())
            .map_err(|e| bad(format!("cannot lay out the module's types: {e}")))?;
        let mut m = Machine {
            module,
            info: &p.info,
            lines: &p.lines,
            source_lines: source.lines().collect(),
            entry: p.entry,
            n,
            sg,
            nw,
            threads,
            wg_size: ep.workgroup_size,
            full,
            stats: Stats::new(p.lines.len()),
            iterations: 0,
            done_workgroups: 0,
            total_workgroups: dispatch.workgroup_count(),
            barrier_index: 0,
            mem: Memory::default(),
            mem_used: 0,
            max_memory: options.max_memory_bytes,
            max_lanes: options.max_lane_instructions,
            layouter,
            leaf_cache: vec![None; module.types.len()],
            depth: 0,
            consts: Vec::new(),
            overrides: Vec::new(),
            global_region: Vec::new(),
            tracing: false,
            events: vec![Vec::new(); nw],
            event_count: 0,
            inv_base: 0,
        };
        for (_, o) in module.overrides.iter() {
            let name = o.name.clone().unwrap_or_default();
            let given = options
                .overrides
                .get(&name)
                .or_else(|| o.id.and_then(|id| options.overrides.get(&id.to_string())));
            let v = match (given, o.init) {
                (Some(x), _) => {
                    let k = eval::kind_of(&module.types[o.ty].inner).unwrap_or(value::Kind::F32);
                    let w = ops::convert(value::Kind::F32, k, (*x as f32).to_bits());
                    let w = if k == value::Kind::I32 || k == value::Kind::U32 {
                        if k == value::Kind::I32 {
                            (*x as i32) as u32
                        } else {
                            *x as u32
                        }
                    } else {
                        w
                    };
                    Val {
                        words: 1,
                        data: vec![w],
                    }
                }
                (None, Some(init)) => m.const_eval(init)?,
                (None, None) => {
                    return Err(bad(format!(
                        "override `{name}` has no default: give it a value"
                    )));
                }
            };
            m.overrides.push(v);
        }
        for (_, c) in module.constants.iter() {
            let v = m.const_eval(c.init)?;
            m.consts.push(v);
        }
        m.globals(dispatch)?;
        Ok(m)
    }

    /// A module-scope constant expression's value, one lane.
    fn const_eval(&mut self, h: Handle<Expression>) -> Result<Val, Error> {
        let module = self.module;
        let one = |w: u32| Val {
            words: 1,
            data: vec![w],
        };
        Ok(match &module.global_expressions[h] {
            Expression::Literal(l) => one(eval::literal(l).ok_or_else(|| {
                bad("64-bit and 16-bit integer constants are not simulated".to_owned())
            })?),
            Expression::Constant(c) => match self.consts.get(c.index()) {
                Some(v) => v.clone(),
                None => self.const_eval(module.constants[*c].init)?,
            },
            Expression::Override(o) => self
                .overrides
                .get(o.index())
                .cloned()
                .ok_or_else(|| bad("an override used before its definition".to_owned()))?,
            Expression::ZeroValue(ty) => {
                let words = self.leaves_of(*ty)?.len();
                Val::zeros(words, 1)
            }
            Expression::Compose { components, .. } => {
                let mut data = Vec::new();
                for c in components {
                    data.extend(self.const_eval(*c)?.data);
                }
                Val {
                    words: data.len(),
                    data,
                }
            }
            Expression::Splat { size, value } => {
                let v = self.const_eval(*value)?;
                let data: Vec<u32> = (0..*size as usize).flat_map(|_| v.data.clone()).collect();
                Val {
                    words: data.len(),
                    data,
                }
            }
            Expression::Binary { op, left, right } => {
                let k = eval::kind_of(self.info[*left].inner_with(&module.types))
                    .ok_or_else(|| bad("a constant of an unsupported type".to_owned()))?;
                let g = ops::binary(*op, k)
                    .ok_or_else(|| bad("a constant operator the lab does not model".to_owned()))?;
                let (a, b) = (self.const_eval(*left)?, self.const_eval(*right)?);
                let words = a.words.max(b.words);
                let data = (0..words)
                    .map(|c| {
                        g(
                            a.get(1, c.min(a.words - 1), 0),
                            b.get(1, c.min(b.words - 1), 0),
                        )
                    })
                    .collect();
                Val { words, data }
            }
            Expression::As {
                expr,
                kind,
                convert,
            } => {
                let from = eval::kind_of(self.info[*expr].inner_with(&module.types))
                    .ok_or_else(|| bad("a constant of an unsupported type".to_owned()))?;
                let to = value::Kind::of(naga::Scalar {
                    kind: *kind,
                    width: convert.unwrap_or(4),
                })
                .ok_or_else(|| bad("a constant conversion the lab does not model".to_owned()))?;
                let a = self.const_eval(*expr)?;
                let data = a
                    .data
                    .iter()
                    .map(|&w| {
                        if convert.is_some() {
                            ops::convert(from, to, w)
                        } else {
                            w
                        }
                    })
                    .collect();
                Val {
                    words: a.words,
                    data,
                }
            }
            other => {
                return Err(bad(format!(
                    "a module-scope constant expression the lab does not evaluate: {other:?}"
                )));
            }
        })
    }

    /// Creates the regions of the module's global variables: the dispatch's buffers, zeroed
    /// workgroup memory, per-lane private variables.
    fn globals(&mut self, dispatch: &Dispatch) -> Result<(), Error> {
        let module = self.module;
        let mut missing = Vec::new();
        let (mut global_base, mut shared_base) = (0u64, 0u64);
        let uses = self.info.get_entry_point(self.entry);
        for (h, g) in module.global_variables.iter() {
            // Only what the entry point (and the functions it calls) uses needs a buffer, as
            // for a pipeline's bind group layout.
            if uses[h].is_empty() {
                self.global_region.push(None);
                continue;
            }
            let size = u64::from(self.layouter[g.ty].size);
            let align = u64::from(self.layouter[g.ty].alignment.round_up(1)).max(4);
            let entry = match g.space {
                AddressSpace::Storage { .. } | AddressSpace::Uniform => {
                    let Some(rb) = &g.binding else {
                        self.global_region.push(None);
                        continue;
                    };
                    let binding = Binding {
                        group: rb.group,
                        binding: rb.binding,
                    };
                    let Some(init) = dispatch.buffers.get(&binding) else {
                        missing.push(format!(
                            "{binding} ({})",
                            g.name.clone().unwrap_or_default()
                        ));
                        self.global_region.push(None);
                        continue;
                    };
                    reserve(&mut self.mem_used, init.byte_len(), self.max_memory)?;
                    let bytes = init.bytes(binding, dispatch.seed)?;
                    if (bytes.len() as u64) < size {
                        return Err(Error::input(
                            format!("buffers.{binding}"),
                            Text::new(
                                format!(
                                    "the buffer has {} bytes; `{}` needs at least {size}",
                                    bytes.len(),
                                    g.name.clone().unwrap_or_default()
                                ),
                                format!(
                                    "缓冲区有 {} 字节；`{}` 至少需要 {size} 字节",
                                    bytes.len(),
                                    g.name.clone().unwrap_or_default()
                                ),
                            ),
                        ));
                    }
                    let writable = matches!(g.space, AddressSpace::Storage { access } if access.contains(naga::StorageAccess::STORE));
                    let writer = if writable {
                        reserve(&mut self.mem_used, bytes.len() as u64, self.max_memory)?;
                        vec![0u32; bytes.len().div_ceil(4)]
                    } else {
                        Vec::new()
                    };
                    let base = global_base;
                    global_base = (base + bytes.len() as u64).div_ceil(256) * 256 + 256;
                    self.mem.regions.push(Region {
                        space: Space::Global { writable },
                        bytes,
                        base,
                        binding: Some(binding),
                        words: Vec::new(),
                        writer,
                    });
                    Some((self.mem.regions.len() as u32 - 1, 0))
                }
                AddressSpace::WorkGroup => {
                    reserve(&mut self.mem_used, size * 3, self.max_memory)?;
                    let base = shared_base.div_ceil(align) * align;
                    shared_base = base + size;
                    self.mem.regions.push(Region {
                        space: Space::Shared,
                        bytes: vec![0; size as usize],
                        base,
                        binding: None,
                        words: vec![SharedWord::default(); (size as usize).div_ceil(4)],
                        writer: Vec::new(),
                    });
                    Some((self.mem.regions.len() as u32 - 1, 0))
                }
                AddressSpace::Private => {
                    let r = self.mem.lane_region(
                        self.n,
                        size as usize,
                        &mut self.mem_used,
                        self.max_memory,
                    )?;
                    Some((r as u32, size as u32))
                }
                _ => None,
            };
            self.global_region.push(entry);
        }
        if !missing.is_empty() {
            return Err(Error::input(
                "buffers",
                Text::new(
                    format!(
                        "the kernel binds {} that the dispatch does not give: add them to \
                         \"buffers\"",
                        missing.join(", ")
                    ),
                    format!(
                        "内核绑定了 {}，而调度没有给出：请把它们加进 \"buffers\"",
                        missing.join(", ")
                    ),
                ),
            ));
        }
        Ok(())
    }

    /// Runs every workgroup, x fastest.
    fn run(&mut self, dispatch: &Dispatch) -> Result<(), Error> {
        let module = self.module;
        let ep = module
            .entry_points
            .get(self.entry)
            .ok_or_else(|| bad("no entry point".to_owned()))?;
        let finfo = self.info.get_entry_point(self.entry);
        let [gx, gy, _] = dispatch.workgroups;
        for wg in 0..self.total_workgroups {
            let id = [
                (wg % u64::from(gx)) as u32,
                (wg / u64::from(gx) % u64::from(gy)) as u32,
                (wg / (u64::from(gx) * u64::from(gy))) as u32,
            ];
            self.reset_workgroup()?;
            self.tracing = wg == 0;
            self.inv_base = (wg as u32).wrapping_mul(self.threads as u32);
            let mut args = Vec::with_capacity(ep.function.arguments.len());
            for a in &ep.function.arguments {
                args.push(Rc::new(self.builtin_arg(a, id, dispatch.workgroups)?));
            }
            let mut frame = Frame::new(&ep.function, finfo, args);
            let mark = self.mem.regions.len();
            let full = self.full.clone();
            let r = self.enter(&mut frame, &full);
            self.mem.regions.truncate(mark);
            r?;
            self.done_workgroups = wg + 1;
            crate::progress::report(wg + 1, self.total_workgroups)?;
        }
        Ok(())
    }

    fn reset_workgroup(&mut self) -> Result<(), Error> {
        self.barrier_index = 0;
        for r in &mut self.mem.regions {
            if r.space == Space::Shared {
                r.bytes.fill(0);
                r.words.fill(SharedWord::default());
            }
        }
        let module = self.module;
        for (h, g) in module.global_variables.iter() {
            if g.space != AddressSpace::Private {
                continue;
            }
            let Some(Some((region, size))) = self.global_region.get(h.index()).copied() else {
                continue;
            };
            if let Some(r) = self.mem.regions.get_mut(region as usize) {
                r.bytes.fill(0);
            }
            if let Some(init) = g.init {
                let v = self.const_eval(init)?.broadcast(self.n);
                let leaves = self.leaves_of(g.ty)?;
                let ptr = self.lane_ptr(region, size);
                let full = self.full.clone();
                self.access(&ptr, &leaves, &full, 0, Some(&v))?;
            }
        }
        Ok(())
    }

    /// An entry-point argument: a builtin, or a struct of builtins.
    fn builtin_arg(
        &self,
        a: &naga::FunctionArgument,
        wg: [u32; 3],
        num: [u32; 3],
    ) -> Result<Val, Error> {
        match &a.binding {
            Some(naga::Binding::BuiltIn(b)) => self.builtin(*b, wg, num),
            _ => match &self.module.types[a.ty].inner {
                naga::TypeInner::Struct { members, .. } => {
                    let mut data = Vec::new();
                    let mut words = 0;
                    for mb in members {
                        let Some(naga::Binding::BuiltIn(b)) = mb.binding else {
                            return Err(bad(
                                "a compute entry argument without a builtin".to_owned()
                            ));
                        };
                        let v = self.builtin(b, wg, num)?;
                        words += v.words;
                        data.extend(v.data);
                    }
                    Ok(Val { words, data })
                }
                _ => Err(bad("a compute entry argument without a builtin".to_owned())),
            },
        }
    }

    /// A builtin's value in every lane (WGSL §13.3.1.1 "Built-in Values").
    fn builtin(&self, b: naga::BuiltIn, wg: [u32; 3], num: [u32; 3]) -> Result<Val, Error> {
        use naga::BuiltIn as BI;
        let (n, sg) = (self.n, self.sg);
        let [sx, sy, sz] = self.wg_size;
        let local = |l: usize| {
            let l = l as u32;
            [l % sx, (l / sx) % sy, l / (sx * sy)]
        };
        let vec3 = |f: &dyn Fn(usize) -> [u32; 3]| {
            let mut v = Val::zeros(3, n);
            for l in 0..n {
                for (c, x) in f(l).into_iter().enumerate() {
                    v.set(n, c, l, x);
                }
            }
            v
        };
        let scalar = |f: &dyn Fn(usize) -> u32| {
            let mut v = Val::zeros(1, n);
            for l in 0..n {
                v.set(n, 0, l, f(l));
            }
            v
        };
        Ok(match b {
            BI::LocalInvocationIndex => scalar(&|l| l as u32),
            BI::LocalInvocationId => vec3(&local),
            BI::GlobalInvocationId => vec3(&|l| {
                let li = local(l);
                [wg[0] * sx + li[0], wg[1] * sy + li[1], wg[2] * sz + li[2]]
            }),
            BI::WorkGroupId => vec3(&|_| wg),
            BI::NumWorkGroups => vec3(&|_| num),
            BI::WorkGroupSize => vec3(&|_| self.wg_size),
            BI::SubgroupInvocationId => scalar(&|l| (l % sg) as u32),
            BI::SubgroupSize => scalar(&|_| sg as u32),
            BI::SubgroupId => scalar(&|l| (l / sg) as u32),
            BI::NumSubgroups => scalar(&|_| self.nw as u32),
            other => {
                return Err(bad(format!(
                    "the builtin {other:?} does not exist in a compute shader"
                )));
            }
        })
    }

    /// Counts one warp instruction on `line` for every warp with an active lane (and, for a
    /// barrier, records its wait); checks the lane-instruction budget.
    pub fn count(&mut self, line: u32, mask: &Active, kind: EventKind) -> Result<(), Error> {
        let mut warps = 0;
        for (w, m) in mask.warps() {
            warps += 1;
            self.stats.lane_instructions += u64::from(m.count_ones());
            if self.tracing && matches!(kind, EventKind::Barrier { .. }) {
                let lanes = (0..self.sg)
                    .map(|l| Lane {
                        active: m >> l & 1 == 1,
                        address: None,
                        value: None,
                        source: None,
                    })
                    .collect();
                self.record_labelled(w, line, kind, lanes, Metrics::default(), "barrier");
            }
        }
        self.stats.at(line).warp_instructions += warps;
        if self.stats.lane_instructions > self.max_lanes {
            return Err(bad(format!(
                "the kernel ran past {} lane instructions (the budget) in workgroup {} of {}: an endless loop, or a dispatch too large for the simulator\n内核执行超过 {} 条 lane 指令（上限），在第 {} 个工作组（共 {} 个）：死循环，或调度对模拟器而言过大",
                self.max_lanes,
                self.done_workgroups,
                self.total_workgroups,
                self.max_lanes,
                self.done_workgroups,
                self.total_workgroups
            )));
        }
        Ok(())
    }

    /// Records a traced event of warp `w` on `line`, labelled with the line's text.
    pub fn record(
        &mut self,
        w: usize,
        line: u32,
        kind: EventKind,
        lanes: Vec<Lane>,
        metrics: Metrics,
    ) {
        self.record_labelled(w, line, kind, lanes, metrics, "");
    }

    /// [`Machine::record`] with `what` before the line's text.
    pub fn record_labelled(
        &mut self,
        w: usize,
        line: u32,
        kind: EventKind,
        lanes: Vec<Lane>,
        metrics: Metrics,
        what: &str,
    ) {
        if self.event_count >= MAX_TRACE_EVENTS {
            return;
        }
        self.event_count += 1;
        let text = self
            .source_lines
            .get(line.saturating_sub(1) as usize)
            .map_or("", |s| s.trim());
        let text: String = text.chars().take(72).collect();
        let label = if what.is_empty() {
            format!("{line}: {text}")
        } else {
            format!("{line}: {what} · {text}")
        };
        let phase = self.barrier_index;
        if let Some(ev) = self.events.get_mut(w) {
            ev.push((
                phase,
                Event {
                    seq: 0,
                    kind,
                    // A source line: the same in both languages.
                    label: Text::same_owned(label),
                    level: None,
                    lanes,
                    metrics,
                    line: Some(line),
                },
            ));
        }
    }

    fn finish(
        mut self,
        p: &module::Program,
        dispatch: &Dispatch,
        subgroup_size: u32,
    ) -> Result<LabOutput, Error> {
        // Events in the schedule's order: barrier interval, then warp, then program order.
        let mut order: Vec<(u32, usize, usize)> = self
            .events
            .iter()
            .enumerate()
            .flat_map(|(w, ev)| ev.iter().enumerate().map(move |(i, (ph, _))| (*ph, w, i)))
            .collect();
        order.sort_unstable();
        for (seq, (_, w, i)) in order.into_iter().enumerate() {
            if let Some((_, e)) = self.events.get_mut(w).and_then(|ev| ev.get_mut(i)) {
                e.seq = seq as u64;
            }
        }
        let warps: Vec<WarpTrace> = std::mem::take(&mut self.events)
            .into_iter()
            .enumerate()
            .map(|(w, ev)| WarpTrace {
                warp: w as u32,
                events: ev.into_iter().map(|(_, e)| e).collect(),
            })
            .collect();
        let events = warps.iter().map(|w| w.events.len()).sum();
        let entry = p
            .module
            .entry_points
            .get(p.entry)
            .map(|e| e.name.clone())
            .unwrap_or_default();
        let mut buffers = BTreeMap::new();
        for r in &self.mem.regions {
            if let (Space::Global { writable: true }, Some(b)) = (r.space, r.binding)
                && let Some(init) = dispatch.buffers.get(&b)
            {
                let values = decode(&r.bytes, init.ty).into_iter().map(Element).collect();
                buffers.insert(
                    b,
                    BufferOut {
                        ty: init.ty,
                        values,
                    },
                );
            }
        }
        let mut totals = Counters::default();
        let mut lines = Vec::new();
        for (i, (c, t)) in self.stats.lines.iter().zip(&self.stats.touched).enumerate() {
            add(&mut totals, c);
            if *t && i > 0 {
                lines.push(LineCounters {
                    line: i as u32,
                    counters: *c,
                });
            }
        }
        Ok(LabOutput {
            entry: entry.clone(),
            workgroup_size: self.wg_size,
            subgroup_size,
            warps_per_workgroup: u32::try_from(self.nw).unwrap_or(u32::MAX),
            buffers,
            lines,
            totals: Totals {
                counters: totals,
                barriers: self.stats.barriers,
                lane_instructions: self.stats.lane_instructions,
                warps: self.nw as u64 * self.total_workgroups,
            },
            warnings: std::mem::take(&mut self.stats.warnings),
            events,
            trace: Trace {
                kernel: Text::same_owned(entry),
                origin: Origin::Simulated,
                warp_size: subgroup_size,
                block_threads: self.threads as u32,
                warps,
            },
        })
    }
}

fn add(t: &mut Counters, c: &Counters) {
    t.warp_instructions += c.warp_instructions;
    t.shared_requests += c.shared_requests;
    t.shared_wavefronts += c.shared_wavefronts;
    t.shared_ideal_wavefronts += c.shared_ideal_wavefronts;
    t.global_requests += c.global_requests;
    t.global_sectors += c.global_sectors;
    t.global_ideal_sectors += c.global_ideal_sectors;
    t.divergent_branches += c.divergent_branches;
    t.subgroup_ops += c.subgroup_ops;
    t.atomics += c.atomics;
}
