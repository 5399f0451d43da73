//! Scene `trainer-workspace` (lecture §4.2; LightSeq2 paper §IV-C and fig. 7; exercises 3, 4, 8).
//!
//! Two trainers for FP16 training with Adam (m, v in FP32):
//! - the per-tensor FP32-master trainer (slides p.29 left): for every tensor, copy the FP16
//!   gradient g to an FP32 g′, run Adam on the FP32 master p′, copy p′ back to the FP16 p —
//!   three launches per tensor;
//! - the linked FP16 workspace (symbolic tensor linking + on-the-fly conversion): every
//!   parameter is a view into one flat buffer, one kernel per step reads p, g in FP16, converts
//!   in registers, updates, writes p in FP16.
//!
//! Bytes per parameter come from the element sizes of each stage's operands (FP16 2 bytes,
//! FP32 4 bytes) and time from the one cost model ([`crate::cost`]: bytes / bandwidth +
//! launches × launch overhead) on the one device table ([`crate::device`]).
//!
//! The scene also builds a real, scaled-down instance: parameters, gradients, m and v as
//! ndarray views into flat buffers, checks that every view aliases its buffer (pointer ranges),
//! and runs Adam per tensor (on the views) and once over the whole buffer, comparing the bits.
//!
//! Layout: `ledger` holds the two trainers' stages, bytes per parameter and time
//! ([`trainer_ledger`], [`trainer_comparison`]); `instance` the real, scaled-down workspace
//! ([`Workspace`], [`check_views`]); this module the scene ([`run`], [`run_instance`]).

mod instance;
mod ledger;
#[cfg(test)]
mod tests;

use crate::text::Text;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::Error;
use crate::device::{DEVICE_IDS, device};
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};

use super::adam::AdamConfig;
use super::census::{MODEL_IDS, ParamTensor, model, total_parameters};

pub use instance::{Segment, ViewCheck, Workspace, check_views, layout, shrink_tensors};
pub use ledger::{
    Fp32Copies, Operand, Precision, Stage, StageCost, TrainerComparison, TrainerLedger,
    TrainerScheme, fp32_copies, trainer_comparison, trainer_kernels, trainer_ledger,
    trainer_stages,
};

const PARAMS: &[ParamSpec] = &[
    ParamSpec::choice("model", "model", "模型", MODEL_IDS, "gpt2-large"),
    ParamSpec::choice("device", "device", "设备", DEVICE_IDS, "a100"),
    ParamSpec::int(
        "shrink",
        "instance: each dimension ÷ shrink",
        "实例：每一维缩小倍数",
        1,
        4096,
        16,
    )
    .log(),
    ParamSpec::int(
        "steps",
        "instance: Adam steps",
        "实例：Adam 步数",
        1,
        100,
        2,
    ),
    ParamSpec::int("seed", "random seed", "随机种子", 0, 1 << 31, 1),
];

/// Largest instance the scene builds, elements (22 bytes each: p twice, m, v twice, g once).
pub const MAX_INSTANCE_ELEMENTS: u64 = 1 << 24;

/// Most element-steps (`elements × steps`) one run may take: about a second in a release build.
pub const MAX_ELEMENT_STEPS: u64 = 1 << 24;

/// Bytes of the instance per element: two copies of p (FP16), m, v (FP32) and one g (FP16).
fn instance_bytes_per_element() -> u64 {
    (2 * (Precision::Fp16.bytes() + 2 * Precision::Fp32.bytes()) + Precision::Fp16.bytes()) as u64
}

/// The scene's typed definition (`trainer-workspace`).
pub struct WorkspaceScene;

impl SceneDef for WorkspaceScene {
    const ID: &'static str = "trainer-workspace";
    type Output = WorkspaceOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&WorkspaceParams::from_values(v)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: WorkspaceScene::ID,
    section: "§4.2",
    title: Text::new(
        "Workspace: hundreds of tensors linked into one buffer",
        "workspace：几百个张量链接成一整块",
    ),
    summary: Text::new(
        "Per-tensor FP32-master trainer (40 B/param, 3 launches per tensor) vs one kernel over the linked FP16 workspace (22 B/param, 1 launch); per-tensor and whole-buffer Adam are bitwise identical.",
        "逐张量、带 FP32 主参数的训练器（每个参数 40 B，每个张量 3 次发射）vs 在链接好的 FP16 workspace 上跑一个内核（每个参数 22 B，1 次发射）；逐张量 Adam 与整块 Adam 逐位相同。",
    ),
    params: PARAMS,
    run: erase::<WorkspaceScene>(),
    input: None,
    chapter: &Chapter::TRAINER,
    featured: Featured::Nothing,
    cost: Cost::Heavy { caps: &[] },
};

/// Validated parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkspaceParams {
    /// Model id.
    pub model: String,
    /// Device id.
    pub device: String,
    /// Each dimension of the instance is the model's ÷ `shrink`, rounded up.
    pub shrink: usize,
    /// Adam steps on the instance.
    pub steps: u32,
    /// Seed of the instance's values and gradients.
    pub seed: u64,
}

impl WorkspaceParams {
    /// Reads the values and checks the instance fits.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an unknown model/device, a value out of range, or an
    /// instance over [`MAX_INSTANCE_ELEMENTS`] (message gives its elements and bytes).
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        // Ranges come from the specs; only cross-parameter rules are checked here.
        let v = &v.clone().validated(PARAMS)?;
        let m = v.text("model")?;
        let spec = model(m)?;
        let d = v.text("device")?;
        device(d)?;
        let shrink = v.int("shrink")?;
        let steps = v.int("steps")?;
        let seed = v.int("seed")?;
        let elements = total_parameters(&shrink_tensors(&spec.tensors(), shrink as usize));
        if elements > MAX_INSTANCE_ELEMENTS {
            let bytes = elements * instance_bytes_per_element();
            return Err(Error::invalid(
                "shrink",
                shrink,
                crate::error::Expected::custom(
                    format!(
                        "the instance would hold {elements} elements ({bytes} bytes); at most \
                         {MAX_INSTANCE_ELEMENTS} elements are allowed — a larger shrink"
                    ),
                    format!(
                        "实例将有 {elements} 个元素（{bytes} 字节）；至多允许 \
                         {MAX_INSTANCE_ELEMENTS} 个元素——请加大 shrink"
                    ),
                ),
            ));
        }
        // Every step updates every element in both layouts: bound the work so the top of the
        // `steps` slider cannot freeze the explorer for tens of seconds.
        let work = elements.saturating_mul(steps as u64);
        if work > MAX_ELEMENT_STEPS {
            return Err(Error::invalid(
                "steps",
                steps,
                crate::error::Expected::custom(
                    format!(
                        "{elements} elements × {steps} steps = {work} element-steps; at most \
                         {MAX_ELEMENT_STEPS} (about a second) — fewer steps or a larger shrink"
                    ),
                    format!(
                        "{elements} 个元素 × {steps} 步 = {work} 元素步；至多 \
                         {MAX_ELEMENT_STEPS}（约一秒）——请减少 steps 或加大 shrink"
                    ),
                ),
            ));
        }
        Ok(WorkspaceParams {
            model: m.to_owned(),
            device: d.to_owned(),
            shrink: shrink as usize,
            steps: steps as u32,
            seed: seed as u64,
        })
    }
}

/// The scaled-down instance's checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InstanceCheck {
    /// Each dimension ÷ this.
    pub shrink: usize,
    /// Tensors (same as the model).
    pub tensors: usize,
    /// Elements in the workspace.
    pub elements: u64,
    /// Bytes the check allocates (two states + one gradient buffer).
    pub bytes: u64,
    /// Adam steps run.
    pub steps: u32,
    /// Allocations holding all parameters: 1 (one `Vec<f16>`).
    pub parameter_allocations: usize,
    /// Every parameter view lies inside the flat buffer at its segment's offset.
    pub views_alias_workspace: bool,
    /// The views tile the buffer: back to back, no gap, no overlap, covering it.
    pub views_tile_workspace: bool,
    /// The first views' pointer checks (at most 32; all are checked).
    pub views: Vec<ViewCheck>,
    /// Parameters whose FP16 bits changed over the steps (the check is not vacuous).
    pub changed_parameters: u64,
    /// p, m and v after per-tensor Adam equal, bit for bit, those after whole-buffer Adam.
    pub bitwise_identical: bool,
    /// Elements (of p, m, v together) whose bits differ.
    pub differing_elements: u64,
}

/// The scene's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkspaceOutput {
    /// Model id.
    pub model: String,
    /// Device id.
    pub device: String,
    /// Parameter tensors.
    pub tensors: usize,
    /// Parameters.
    pub parameters: u64,
    /// Bytes per parameter per step, per-tensor FP32-master trainer.
    pub bytes_per_param_baseline: usize,
    /// Bytes per parameter per step, linked FP16 workspace.
    pub bytes_per_param_workspace: usize,
    /// Launches per step, per-tensor (3 × tensors).
    pub launches_baseline: u64,
    /// Launches per step, workspace (1).
    pub launches_workspace: u64,
    /// Per-tensor trainer time per step, ms.
    pub baseline_ms: f64,
    /// Its launch part, ms.
    pub baseline_launch_ms: f64,
    /// Its byte part, ms.
    pub baseline_bytes_ms: f64,
    /// Workspace trainer time per step, ms.
    pub workspace_ms: f64,
    /// Its launch part, ms.
    pub workspace_launch_ms: f64,
    /// Its byte part, ms.
    pub workspace_bytes_ms: f64,
    /// `baseline_ms / workspace_ms`.
    pub speedup: f64,
    /// Both ledgers with their stages.
    pub baseline: TrainerLedger,
    /// See `baseline`.
    pub workspace: TrainerLedger,
    /// FP32 copies the workspace does without (bytes).
    pub fp32_copies: Fp32Copies,
    /// The full model's workspace: one bar, one segment per parameter.
    pub segments: Vec<Segment>,
    /// The instance's result: per-tensor vs whole-buffer Adam bitwise identical.
    pub bitwise_identical: bool,
    /// The instance.
    pub instance: InstanceCheck,
}

/// Runs the ledgers and the instance (progress as [`run_instance`]).
///
/// # Errors
/// [`Error::InvalidParam`] for unknown ids; [`Error::BadInput`] only on an internal view error;
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub fn run(p: &WorkspaceParams) -> Result<WorkspaceOutput, Error> {
    let cmp = trainer_comparison(&p.model, &p.device)?;
    let full = model(&p.model)?.tensors();
    let instance = run_instance(&full, p.shrink, p.steps, p.seed)?;
    Ok(WorkspaceOutput {
        model: cmp.model,
        device: cmp.device,
        tensors: cmp.tensors,
        parameters: cmp.parameters,
        bytes_per_param_baseline: cmp.baseline.bytes_per_param,
        bytes_per_param_workspace: cmp.workspace.bytes_per_param,
        launches_baseline: cmp.baseline.launches,
        launches_workspace: cmp.workspace.launches,
        baseline_ms: cmp.baseline.total_ms,
        baseline_launch_ms: cmp.baseline.launch_ms,
        baseline_bytes_ms: cmp.baseline.bytes_ms,
        workspace_ms: cmp.workspace.total_ms,
        workspace_launch_ms: cmp.workspace.launch_ms,
        workspace_bytes_ms: cmp.workspace.bytes_ms,
        speedup: cmp.speedup,
        baseline: cmp.baseline,
        workspace: cmp.workspace,
        fp32_copies: fp32_copies(cmp.parameters),
        segments: layout(&full),
        bitwise_identical: instance.bitwise_identical,
        instance,
    })
}

/// Builds the shrunk instance, checks the views, runs Adam both ways and compares bits.
/// Reports progress ([`crate::progress`]) every 32,768 elements generated and per tensor
/// updated.
///
/// # Errors
/// [`Error::InvalidParam`] (`shrink`) when the instance exceeds [`MAX_INSTANCE_ELEMENTS`];
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub fn run_instance(
    full: &[ParamTensor],
    shrink: usize,
    steps: u32,
    seed: u64,
) -> Result<InstanceCheck, Error> {
    let tensors = shrink_tensors(full, shrink);
    let elements = total_parameters(&tensors);
    if elements > MAX_INSTANCE_ELEMENTS {
        return Err(Error::invalid(
            "shrink",
            shrink,
            crate::error::Expected::custom(
                format!(
                    "the instance would hold {elements} elements; at most \
                     {MAX_INSTANCE_ELEMENTS}"
                ),
                format!("实例将有 {elements} 个元素；至多 {MAX_INSTANCE_ELEMENTS} 个"),
            ),
        ));
    }
    // Progress: the weights' initialisation, then per step the gradients, the per-tensor
    // Adam and the whole-buffer Adam, each `elements` units.
    let total = elements * (1 + 3 * u64::from(steps));
    let report = |done: u64| crate::progress::report(done, total);
    let mut a = Workspace::new_ticking(tensors, seed, &mut |d| report(d))?;
    let start = a.p.clone();
    let checks = check_views(&a)?;
    let views_alias_workspace = checks.iter().all(|c| c.aliases);
    let mut next = 0u64;
    let mut tiles = true;
    for c in &checks {
        tiles &= c.offset_from_pointer == next;
        next = c.offset_from_pointer + c.elements;
    }
    tiles &= next == a.p.len() as u64;

    let mut b = a.clone();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_9a4d);
    let cfg = AdamConfig::with_lr(1e-3);
    for t in 1..=steps {
        let base = elements * (1 + 3 * u64::from(t - 1));
        a.fill_gradients_ticking(&mut rng, &mut |d| report(base + d))?;
        b.g.clone_from(&a.g);
        let s = cfg.step(t);
        a.adam_per_tensor_ticking(&s, &mut |d| report(base + elements + d))?;
        report(base + 2 * elements)?;
        b.adam_whole(&s);
    }
    report(total)?;
    let diff_p =
        a.p.iter()
            .zip(&b.p)
            .filter(|(x, y)| x.to_bits() != y.to_bits());
    let diff_m =
        a.m.iter()
            .zip(&b.m)
            .filter(|(x, y)| x.to_bits() != y.to_bits());
    let diff_v =
        a.v.iter()
            .zip(&b.v)
            .filter(|(x, y)| x.to_bits() != y.to_bits());
    let differing = (diff_p.count() + diff_m.count() + diff_v.count()) as u64;
    let changed =
        a.p.iter()
            .zip(&start)
            .filter(|(x, y)| x.to_bits() != y.to_bits())
            .count() as u64;
    Ok(InstanceCheck {
        shrink,
        tensors: a.tensors.len(),
        elements,
        bytes: elements * instance_bytes_per_element(),
        steps,
        parameter_allocations: 1,
        views_alias_workspace,
        views_tile_workspace: tiles,
        views: checks.into_iter().take(32).collect(),
        changed_parameters: changed,
        bitwise_identical: differing == 0,
        differing_elements: differing,
    })
}
