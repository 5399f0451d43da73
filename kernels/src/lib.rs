//! # warpscope-kernels
//!
//! The real-GPU side of warpscope: adapter selection and, as labs land, the lecture's kernels
//! as WGSL compute shaders verified against `warpscope-core`.
//!
//! [`DeviceContext::open`] picks an adapter (the `WGPU_BACKEND` / `WGPU_ADAPTER_NAME`
//! environment variables override the choice; otherwise a discrete GPU is preferred) and
//! reports what it is; with no adapter at all it returns [`NoAdapter`], and the app runs in
//! simulation and says so.
//!
//! Kernels ([`KERNELS`], one file each under [`kernel`](mod@kernel) behind the [`Kernel`]
//! trait, run by [`run_kernel`] / [`run_kernel_with`] for `warpscope run KERNEL --json`), each
//! two variants at one shape, verified and timed:
//!
//! - `layernorm-bw` ([`layernorm`]): fused ∇x (one reduction, one barrier) vs the autograd-style
//!   chain of 7 kernels;
//! - `layernorm-dgamma` ([`dgamma`]): the ∇γ/∇β 32 × 32 tile, shared buffer padded vs unpadded
//!   (a pipeline-overridable constant);
//! - `softmax-bw` ([`softmax`]): fused softmax + dropout backward (one row per subgroup) vs the
//!   unfused chain of 5 kernels;
//! - `adam` ([`adam`]): one dispatch per parameter tensor vs one over the linked workspace
//!   (f32; the same two with FP16 storage of p and g when the adapter has `SHADER_F16`).
//!
//! Recordings ([`record`]): the `softmax-warp` row reduction and the `layernorm-syncs` block
//! reduction, the lecture's own shaders instrumented by the kernel lab's record pass so every
//! invocation writes what it executed; decoded into `warpscope_core::simt::Trace` with the
//! device's subgroup size and compared with the scene's simulation
//! (`warpscope run softmax-bw --record --json`).
//!
//! The kernel lab ([`lab`]): a user's own WGSL kernel (or a bundled example) run with a
//! `warpscope_core::lab::dispatch::Dispatch`'s buffers, read back, timed and compared with
//! the simulation (`warpscope run kernel-lab`).
//!
//! The host side (buffers, pipelines with shader errors as values, timestamp or host timing,
//! verification) is [`runner`]; WGSL sources are in `src/shaders/`, assembled in [`shaders`]
//! (the shared block reduction written once and prepended where it is used).

use serde::Serialize;

pub mod adam;
pub mod data;
pub mod dgamma;
pub mod kernel;
pub mod lab;
pub mod layernorm;
pub mod record;
pub mod run;
pub mod runner;
pub mod shaders;
pub mod softmax;

pub use kernel::{Kernel, KernelInfo};
pub use run::{
    Comparison, CopyBandwidth, F16Storage, KERNELS, KernelRun, RunOptions, VariantRun, find_kernel,
    kernel_info, kernel_names, run_kernel, run_kernel_with,
};
pub use runner::{KernelError, Timing, TimingMethod, Tolerance, Verification};

/// What the chosen adapter is and can do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdapterReport {
    /// The adapter's name, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)` or `NVIDIA H200`.
    pub name: String,
    /// Backend: `Vulkan`, `Metal`, `Dx12`, `Gl`.
    pub backend: String,
    /// `DiscreteGpu`, `IntegratedGpu`, `Cpu`, …
    pub device_type: String,
    /// Driver name and version.
    pub driver: String,
    /// Smallest subgroup (warp) size the adapter may use (lanes).
    pub subgroup_min_size: u32,
    /// Largest subgroup size (lanes).
    pub subgroup_max_size: u32,
    /// GPU timestamp queries available (kernel timing on the device).
    pub timestamps: bool,
    /// Subgroup operations (shuffles) available in shaders.
    pub subgroups: bool,
    /// `f16` arithmetic and storage in shaders.
    pub shader_f16: bool,
}

/// No usable adapter: the reason, to show in the banner and CLI.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no GPU adapter: {0}. warpscope runs in simulation; install a Vulkan driver (e.g. Mesa's lavapipe: apt-get install mesa-vulkan-drivers) to run kernels for real"
)]
pub struct NoAdapter(pub String);

/// An opened adapter and device.
#[derive(Debug)]
pub struct DeviceContext {
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The logical device, with every optional feature warpscope uses that the adapter has.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// What it is.
    pub report: AdapterReport,
}

/// Features warpscope asks for when the adapter has them.
fn wanted_features() -> wgpu::Features {
    wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::SUBGROUP | wgpu::Features::SHADER_F16
}

fn report_of(adapter: &wgpu::Adapter) -> AdapterReport {
    let info = adapter.get_info();
    let f = adapter.features();
    AdapterReport {
        name: info.name,
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        driver: format!("{} {}", info.driver, info.driver_info)
            .trim()
            .to_owned(),
        subgroup_min_size: info.subgroup_min_size,
        subgroup_max_size: info.subgroup_max_size,
        timestamps: f.contains(wgpu::Features::TIMESTAMP_QUERY),
        subgroups: f.contains(wgpu::Features::SUBGROUP),
        shader_f16: f.contains(wgpu::Features::SHADER_F16),
    }
}

impl DeviceContext {
    /// Opens the preferred adapter (a discrete GPU when there is one; `WGPU_BACKEND` and
    /// `WGPU_ADAPTER_NAME` override) and a device with the features in [`AdapterReport`].
    ///
    /// # Errors
    /// [`NoAdapter`] when no driver offers an adapter or the device cannot be created.
    pub fn open() -> Result<Self, NoAdapter> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        let wanted_name = std::env::var("WGPU_ADAPTER_NAME")
            .ok()
            .map(|s| s.to_lowercase());
        let rank = |a: &wgpu::Adapter| {
            let info = a.get_info();
            if wanted_name
                .as_ref()
                .is_some_and(|n| info.name.to_lowercase().contains(n.as_str()))
            {
                return 0;
            }
            match info.device_type {
                wgpu::DeviceType::DiscreteGpu => 1,
                wgpu::DeviceType::IntegratedGpu => 2,
                wgpu::DeviceType::VirtualGpu => 3,
                wgpu::DeviceType::Cpu => 4,
                wgpu::DeviceType::Other => 5,
            }
        };
        let adapter = adapters.into_iter().min_by_key(rank).ok_or_else(|| {
            NoAdapter("no Vulkan, Metal, DX12 or GL driver offered an adapter".to_owned())
        })?;
        let report = report_of(&adapter);
        let features = adapter.features() & wanted_features();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("warpscope"),
            required_features: features,
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| NoAdapter(format!("{} offered no device: {e}", report.name)))?;
        Ok(DeviceContext {
            adapter,
            device,
            queue,
            report,
        })
    }
}

/// Whether tests that need an adapter must fail rather than skip: true in CI (`CI` set).
pub fn adapter_required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_adapter_is_found_and_described() {
        match DeviceContext::open() {
            Ok(ctx) => {
                assert!(!ctx.report.name.is_empty());
                assert!(ctx.report.subgroup_max_size >= ctx.report.subgroup_min_size);
                eprintln!("adapter: {:?}", ctx.report);
            }
            Err(e) if !adapter_required() => eprintln!("skipped: no adapter ({e})"),
            Err(e) => panic!("CI must provide a GPU adapter (lavapipe): {e}"),
        }
    }
}
