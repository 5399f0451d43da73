//! The kernel lab on the GPU: a user's WGSL compute kernel run on the adapter with the very
//! bytes the simulator (`warpscope_core::lab`) starts from, every writable storage buffer read
//! back, the dispatch timed, and the buffers compared with the simulation ([`compare`]).
//!
//! [`run`] parses the module with naga to learn its resources ([`module::Resources`]: group,
//! binding, storage or uniform, read-only or read-write, the type's size by naga's layouter),
//! checks the dispatch against them before anything is allocated (a missing buffer, a buffer
//! the kernel does not declare, a buffer smaller than its fixed-size type, an override the
//! module lacks), checks that the adapter has what the module needs (subgroups, `f16`), then
//! uploads, dispatches once, reads back and times further runs with [`crate::runner`].

use std::collections::BTreeMap;

use serde::Serialize;
use warpscope_core::lab::dispatch::{Binding, Dispatch, decode};
use warpscope_core::lab::output::{BufferOut, Element};

use crate::runner::{Encode, KernelError, Runner, Timing};
use crate::{AdapterReport, DeviceContext};

pub mod compare;
pub mod module;
pub mod record;

#[cfg(test)]
mod tests;

pub use compare::{BufferComparison, Comparison, Mismatch, compare};
pub use module::{Resource, ResourceKind, Resources};

/// Timed runs after the verification run unless [`RunOptions::runs`] says otherwise.
pub const DEFAULT_RUNS: u32 = 5;

/// Most timed runs one `run kernel-lab` may ask for.
pub const MAX_RUNS: u32 = 1000;

/// Why a kernel-lab GPU run did not happen or failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LabError {
    /// The source does not parse or validate, names no usable compute entry point, or does not
    /// fit the dispatch (a missing or unknown buffer, one too small, an unknown override). The
    /// user's to fix: the CLI exits with status 2. The message quotes naga's, with the line.
    #[error("{0}")]
    Input(String),
    /// The module needs a feature the adapter lacks (subgroup operations, `f16`).
    #[error("{adapter} cannot run this kernel: {needs}")]
    Unsupported {
        /// The adapter's name.
        adapter: String,
        /// What the module needs, and naga's message.
        needs: String,
    },
    /// Pipeline creation, the dispatch, the readback or the timing failed on the device.
    #[error(transparent)]
    Kernel(#[from] KernelError),
}

impl LabError {
    /// Whether the user can fix it in the source or the dispatch (CLI status 2).
    pub fn is_input(&self) -> bool {
        matches!(self, LabError::Input(_))
    }
}

/// How [`run`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    /// Timed runs (each a fresh submission) after the untimed run whose buffers are read back.
    pub runs: u32,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { runs: DEFAULT_RUNS }
    }
}

/// What one GPU run gave: `{adapter, entry, workgroup_size, subgroup_size, buffers, time}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuRun {
    /// The adapter it ran on.
    pub adapter: AdapterReport,
    /// The entry point that ran.
    pub entry: String,
    /// Its `@workgroup_size`.
    pub workgroup_size: [u32; 3],
    /// The adapter's subgroup size when it has only one (lavapipe: 8), else `None` (the driver
    /// picks within `adapter.subgroup_min_size ..= subgroup_max_size`).
    pub subgroup_size: Option<u32>,
    /// Every writable storage binding the entry point uses, after the run (decoded with the
    /// element type the dispatch declares).
    pub buffers: BTreeMap<Binding, BufferOut>,
    /// The dispatch's time: median, min and max over the timed runs (µs), and how it was
    /// measured (GPU timestamps, or the host clock with its caveat).
    pub time: Timing,
}

/// One dispatch with every bind group the entry point uses.
struct LabPass {
    pipeline: wgpu::ComputePipeline,
    groups: Vec<(u32, wgpu::BindGroup)>,
    workgroups: [u32; 3],
}

impl Encode for LabPass {
    fn encode(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_pipeline(&self.pipeline);
        for (g, bg) in &self.groups {
            pass.set_bind_group(*g, bg, &[]);
        }
        pass.dispatch_workgroups(self.workgroups[0], self.workgroups[1], self.workgroups[2]);
    }
}

/// Runs `source`'s compute entry point `entry` (`None`: the only one) on `ctx` with
/// `dispatch`'s workgroups, buffers and overrides: one run whose writable storage buffers are
/// read back, then `opts.runs` timed runs.
///
/// # Errors
/// - [`LabError::Input`]: the source does not parse or validate (naga's message with the line
///   and column); no such compute entry point, or several and none named; the dispatch lacks
///   a buffer the entry point binds, has one for a binding the module does not declare, or
///   gives one smaller than its fixed-size type (bytes); an override the module lacks; a
///   binding that is not a storage or uniform buffer; more workgroups in a dimension than the
///   adapter allows.
/// - [`LabError::Unsupported`]: the module needs subgroups or `f16` and the adapter lacks them.
/// - [`LabError::Kernel`]: the device refused the pipeline or failed while running, a buffer
///   is past the adapter's limits, or the readback failed.
pub fn run(
    source: &str,
    entry: Option<&str>,
    dispatch: &Dispatch,
    ctx: &DeviceContext,
    opts: RunOptions,
) -> Result<GpuRun, LabError> {
    let res = Resources::of(source, entry)?;
    res.check_adapter(source, &ctx.report)?;
    res.check_dispatch(dispatch)?;
    let limits = ctx.device.limits();
    for (i, &w) in dispatch.workgroups.iter().enumerate() {
        if w > limits.max_compute_workgroups_per_dimension {
            return Err(LabError::Input(format!(
                "workgroups[{i}] = {w}: {} runs at most {} workgroups per dimension",
                ctx.report.name, limits.max_compute_workgroups_per_dimension
            )));
        }
    }
    let runner = Runner::new(ctx, "kernel-lab");
    let constants: Vec<(&str, f64)> = dispatch
        .overrides
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    let pipeline = runner.pipeline(source, &res.entry, &constants)?;
    // Every buffer the dispatch gives, by binding, with its byte length as declared.
    let mut buffers: BTreeMap<Binding, (wgpu::Buffer, Vec<u8>)> = BTreeMap::new();
    for r in &res.resources {
        let Some(init) = dispatch.buffers.get(&r.binding) else {
            continue;
        };
        let bytes = init
            .bytes(r.binding, dispatch.seed)
            .map_err(|e| LabError::Input(e.to_string()))?;
        let label = format!("kernel-lab {}", r.binding);
        let buf = match r.kind {
            ResourceKind::Uniform => uniform_buffer(&runner, &label, &bytes)?,
            ResourceKind::Storage { .. } => runner.storage_bytes(&label, &bytes)?,
        };
        buffers.insert(r.binding, (buf, bytes));
    }
    let groups = runner.scoped(|| {
        let mut by_group: BTreeMap<u32, Vec<wgpu::BindGroupEntry<'_>>> = BTreeMap::new();
        for r in res.resources.iter().filter(|r| r.used) {
            if let Some((buf, _)) = buffers.get(&r.binding) {
                by_group
                    .entry(r.binding.group)
                    .or_default()
                    .push(wgpu::BindGroupEntry {
                        binding: r.binding.binding,
                        resource: buf.as_entire_binding(),
                    });
            }
        }
        // The derived layout has a (possibly empty) bind group layout for every group up to
        // the highest used; each one must be set, so the gaps get empty bind groups.
        let top = by_group.keys().next_back().copied();
        let mut out = Vec::new();
        for g in top.map_or(0..0, |t| 0..t + 1) {
            let entries = by_group.remove(&g).unwrap_or_default();
            let layout = pipeline.get_bind_group_layout(g);
            let bg = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("kernel-lab"),
                layout: &layout,
                entries: &entries,
            });
            out.push((g, bg));
        }
        Ok(out)
    })?;
    let pass = [LabPass {
        pipeline,
        groups,
        workgroups: dispatch.workgroups,
    }];
    runner.run_once(&pass)?;
    let mut out = BTreeMap::new();
    for r in &res.resources {
        // The entry point's writable storage, as the simulator reports it: a binding only
        // another entry point uses is neither bound nor read back.
        if !r.used || r.kind != (ResourceKind::Storage { writable: true }) {
            continue;
        }
        let (Some((buf, initial)), Some(init)) =
            (buffers.get(&r.binding), dispatch.buffers.get(&r.binding))
        else {
            continue;
        };
        let bytes = runner.read_bytes(buf, initial.len() as u64)?;
        let values = decode(&bytes, init.ty).into_iter().map(Element).collect();
        out.insert(
            r.binding,
            BufferOut {
                ty: init.ty,
                values,
            },
        );
    }
    // Timed runs come after the readback: they run on the results of the first run (an
    // accumulating kernel keeps accumulating), which only their duration is wanted from.
    let time = runner.time(&pass, opts.runs.clamp(1, MAX_RUNS))?;
    let report = &ctx.report;
    Ok(GpuRun {
        adapter: report.clone(),
        entry: res.entry.clone(),
        workgroup_size: res.workgroup_size,
        subgroup_size: (report.subgroups && report.subgroup_min_size == report.subgroup_max_size)
            .then_some(report.subgroup_max_size),
        buffers: out,
        time,
    })
}

/// A uniform buffer holding `bytes`, zero-padded to a multiple of 16 bytes (a uniform
/// buffer's size must be a multiple of its type's 16-byte alignment).
fn uniform_buffer(
    runner: &Runner<'_>,
    label: &str,
    bytes: &[u8],
) -> Result<wgpu::Buffer, LabError> {
    let ctx = runner.ctx;
    let size = (bytes.len() as u64).max(16).next_multiple_of(16);
    let limit = ctx.device.limits().max_uniform_buffer_binding_size;
    if size > limit {
        return Err(KernelError::TooLarge {
            kernel: "kernel-lab".to_owned(),
            buffer: label.to_owned(),
            bytes: size,
            limit,
            adapter: ctx.report.name.clone(),
        }
        .into());
    }
    let buf = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut padded = bytes.to_vec();
    padded.resize(usize::try_from(size).unwrap_or(0), 0);
    ctx.queue.write_buffer(&buf, 0, &padded);
    Ok(buf)
}
