//! The kernels `warpscope run KERNEL` knows, one file each behind the [`Kernel`] trait: what a
//! kernel is ([`KernelInfo`], its tunables declared as core's [`ParamSpec`]s, so `--set` and
//! the window read one declaration), and how it prepares its two variants with the references
//! they are verified against ([`Kernel::run`]). [`crate::run::KERNELS`] lists them; nothing
//! else matches on a kernel's name.

use std::collections::BTreeMap;

use warpscope_core::params::ParamSpec;

use crate::DeviceContext;
use crate::run::KernelRun;
use crate::runner::{KernelError, Tolerance, VariantOutput};

pub mod adam;
pub mod layernorm_bw;
pub mod layernorm_dgamma;
pub mod softmax_bw;

/// A kernel's resolved parameters by name (every declared one, defaults filled in); integers
/// are whole `f64`s. Serialised as the run's `parameters`.
pub type Values = BTreeMap<String, f64>;

/// What a kernel is: its name on the command line, where the lecture treats it, and its
/// tunables.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelInfo {
    /// Name on the command line.
    pub name: &'static str,
    /// Lecture section.
    pub section: &'static str,
    /// One line.
    pub summary: &'static str,
    /// The core scene it belongs beside.
    pub scene: &'static str,
    /// Its tunables (besides `runs`): integers and reals with their ranges and defaults; the
    /// English label is the help a refusal quotes.
    pub params: &'static [ParamSpec],
}

/// A kernel's device outputs with what they are checked against.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The variants' device results, the optimised one first and the baseline last.
    pub outputs: Vec<VariantOutput>,
    /// What the reference is (shown in the report).
    pub reference_name: &'static str,
    /// The reference values the outputs are compared with.
    pub reference: Vec<f64>,
    /// Core's own f32 result per variant, where core has one.
    pub core_f32: Vec<Option<Vec<f32>>>,
    /// Bytes of the largest tensor: the copy-bandwidth measurement copies as many.
    pub tensor_bytes: u64,
    /// How the reductions ran on this adapter, where it matters.
    pub reduction: Option<String>,
    /// The verification's tolerance.
    pub tolerance: Tolerance,
}

/// One kernel of the registry.
pub trait Kernel: Sync {
    /// Its name, section, summary, scene and parameters.
    fn info(&self) -> &'static KernelInfo;

    /// Runs both variants on `ctx` with `values` (resolved against [`KernelInfo::params`]),
    /// `runs` timed runs each, verified and compared (`run::finish`).
    ///
    /// # Errors
    /// [`KernelError::InvalidOption`] for a shape the kernel or core refuses, shader / device /
    /// readback errors.
    fn run(&self, ctx: &DeviceContext, values: Values, runs: u32)
    -> Result<KernelRun, KernelError>;
}

/// The value of `key` (0 when absent: [`crate::run::RunOptions::resolve`] fills every declared
/// one).
pub(crate) fn value(values: &Values, key: &str) -> f64 {
    values.get(key).copied().unwrap_or(0.0)
}

/// The input seed every kernel takes.
pub(crate) const SEED: ParamSpec = ParamSpec::int(
    "seed",
    "input seed",
    "输入数据的随机种子",
    0,
    2_147_483_648,
    0,
);
