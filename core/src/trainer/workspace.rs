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

use half::f16;
use ndarray::{ArrayViewD, ArrayViewMutD, IxDyn, Zip};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use serde::Serialize;

use crate::Error;
use crate::cost::{KernelCost, totals};
use crate::device::{DEVICE_IDS, Device, device};
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Scene, to_json};

use super::adam::{AdamConfig, AdamStep, adam_f16};
use super::census::{MODEL_IDS, ParamTensor, TensorKind, model, total_parameters};

/// A storage precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// IEEE binary16.
    Fp16,
    /// IEEE binary32.
    Fp32,
}

impl Precision {
    /// Bytes per element (`size_of` of `half::f16` / `f32`).
    pub fn bytes(self) -> usize {
        match self {
            Precision::Fp16 => std::mem::size_of::<f16>(),
            Precision::Fp32 => std::mem::size_of::<f32>(),
        }
    }
}

/// One operand a stage reads or writes, per parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Operand {
    /// `p`, `g`, `p′`, `g′`, `m` or `v`.
    pub name: &'static str,
    /// Its precision.
    pub precision: Precision,
    /// Bytes per parameter.
    pub bytes: usize,
}

fn op(name: &'static str, precision: Precision) -> Operand {
    Operand {
        name,
        precision,
        bytes: precision.bytes(),
    }
}

/// One kernel of a trainer step, per parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stage {
    /// What it does.
    pub name: &'static str,
    /// Operands read from DRAM.
    pub reads: Vec<Operand>,
    /// Operands written to DRAM.
    pub writes: Vec<Operand>,
    /// Launched once per tensor (true) or once over the whole workspace (false).
    pub per_tensor: bool,
}

impl Stage {
    /// Bytes read per parameter.
    pub fn read_bytes(&self) -> usize {
        self.reads.iter().map(|o| o.bytes).sum()
    }
    /// Bytes written per parameter.
    pub fn written_bytes(&self) -> usize {
        self.writes.iter().map(|o| o.bytes).sum()
    }
    /// Bytes moved per parameter.
    pub fn bytes_per_param(&self) -> usize {
        self.read_bytes() + self.written_bytes()
    }
}

/// Which trainer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrainerScheme {
    /// Per tensor: copy g → g′ (FP32), Adam on the FP32 master p′, copy p′ → p (slides p.29
    /// left; Fairseq/Apex-style).
    PerTensorFp32Master,
    /// LightSeq2: one kernel over the linked FP16 workspace, conversion in registers (slides
    /// p.29 right; paper §IV-C).
    LinkedFp16Workspace,
}

/// The kernels of one trainer step (lecture §4.2 table; exercise 3).
pub fn trainer_stages(scheme: TrainerScheme) -> Vec<Stage> {
    use Precision::{Fp16, Fp32};
    match scheme {
        TrainerScheme::PerTensorFp32Master => vec![
            Stage {
                name: "copy g → g′ (FP16 → FP32)",
                reads: vec![op("g", Fp16)],
                writes: vec![op("g′", Fp32)],
                per_tensor: true,
            },
            Stage {
                name: "Adam on the FP32 master p′ (with g′, m, v)",
                reads: vec![op("p′", Fp32), op("g′", Fp32), op("m", Fp32), op("v", Fp32)],
                writes: vec![op("p′", Fp32), op("m", Fp32), op("v", Fp32)],
                per_tensor: true,
            },
            Stage {
                name: "copy p′ → p (FP32 → FP16)",
                reads: vec![op("p′", Fp32)],
                writes: vec![op("p", Fp16)],
                per_tensor: true,
            },
        ],
        TrainerScheme::LinkedFp16Workspace => vec![Stage {
            name: "Adam on the FP16 workspace, conversion in registers",
            reads: vec![op("p", Fp16), op("g", Fp16), op("m", Fp32), op("v", Fp32)],
            writes: vec![op("p", Fp16), op("m", Fp32), op("v", Fp32)],
            per_tensor: false,
        }],
    }
}

/// The cost-model kernels of one step of `scheme` over `tensors`: per stage, bytes = bytes per
/// parameter × parameters, launches = tensors (per-tensor stages) or 1.
pub fn trainer_kernels(tensors: &[ParamTensor], scheme: TrainerScheme) -> Vec<KernelCost> {
    let n = total_parameters(tensors) as f64;
    trainer_stages(scheme)
        .into_iter()
        .map(|s| KernelCost {
            name: s.name.to_owned(),
            bytes_read: s.read_bytes() as f64 * n,
            bytes_written: s.written_bytes() as f64 * n,
            flops: 0.0,
            launches: if s.per_tensor {
                tensors.len() as u64
            } else {
                1
            },
        })
        .collect()
}

/// One stage's cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageCost {
    /// The stage.
    pub stage: Stage,
    /// Bytes read + written per parameter.
    pub bytes_per_param: usize,
    /// Launches per step.
    pub launches: u64,
    /// Bytes per step.
    pub bytes: f64,
    /// Time per step, ms (bytes / bandwidth + launches × overhead).
    pub ms: f64,
}

/// One trainer step on one device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainerLedger {
    /// Which trainer.
    pub scheme: TrainerScheme,
    /// Per stage.
    pub stages: Vec<StageCost>,
    /// Bytes per parameter per step (40 per-tensor FP32 master, 22 workspace: lecture §4.2).
    pub bytes_per_param: usize,
    /// Bytes per step.
    pub bytes: f64,
    /// Launches per step.
    pub launches: u64,
    /// Launch time, ms.
    pub launch_ms: f64,
    /// Byte time (bytes / bandwidth), ms.
    pub bytes_ms: f64,
    /// Total, ms.
    pub total_ms: f64,
    /// The cost-model kernels (for Lab E's ledger).
    pub kernels: Vec<KernelCost>,
}

/// The ledger of one step of `scheme` over `tensors` on `device` — the one computation Lab E
/// reuses for its trainer stage.
pub fn trainer_ledger(
    tensors: &[ParamTensor],
    scheme: TrainerScheme,
    device: &Device,
) -> TrainerLedger {
    let kernels = trainer_kernels(tensors, scheme);
    let t = totals(&kernels, device, 1.0);
    let stages = trainer_stages(scheme)
        .into_iter()
        .zip(&kernels)
        .map(|(stage, k)| StageCost {
            bytes_per_param: stage.bytes_per_param(),
            launches: k.launches,
            bytes: k.bytes(),
            ms: k.seconds(device, 1.0) * 1e3,
            stage,
        })
        .collect::<Vec<_>>();
    TrainerLedger {
        scheme,
        bytes_per_param: stages.iter().map(|s| s.bytes_per_param).sum(),
        stages,
        bytes: t.bytes,
        launches: t.launches,
        launch_ms: t.launch_s * 1e3,
        bytes_ms: t.bytes / device.bandwidth_bytes_per_s * 1e3,
        total_ms: t.seconds * 1e3,
        kernels,
    }
}

/// Both trainers for one model on one device (exercise 8 is `("gpt2-large", "a100")`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainerComparison {
    /// Model id.
    pub model: String,
    /// Device id.
    pub device: String,
    /// Parameter tensors.
    pub tensors: usize,
    /// Parameters.
    pub parameters: u64,
    /// The per-tensor FP32-master trainer.
    pub baseline: TrainerLedger,
    /// The linked FP16 workspace.
    pub workspace: TrainerLedger,
    /// `baseline.total_ms / workspace.total_ms`.
    pub speedup: f64,
}

/// Both trainers for `model_id` on `device_id`.
///
/// # Errors
/// [`Error::InvalidParam`] (`model` or `device`) for an unknown id.
pub fn trainer_comparison(model_id: &str, device_id: &str) -> Result<TrainerComparison, Error> {
    let tensors = model(model_id)?.tensors();
    let dev = device(device_id)?;
    let baseline = trainer_ledger(&tensors, TrainerScheme::PerTensorFp32Master, dev);
    let workspace = trainer_ledger(&tensors, TrainerScheme::LinkedFp16Workspace, dev);
    Ok(TrainerComparison {
        model: model_id.to_owned(),
        device: device_id.to_owned(),
        tensors: tensors.len(),
        parameters: total_parameters(&tensors),
        speedup: baseline.total_ms / workspace.total_ms,
        baseline,
        workspace,
    })
}

/// Memory the FP32 copies take (exercise 4), bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Fp32Copies {
    /// FP32 master p′ plus FP32 gradient g′: what dropping both saves.
    pub master_and_grad_bytes: u64,
    /// FP32 gradient g′ alone: what keeping the master but dropping g′ saves.
    pub grad_only_bytes: u64,
}

/// The FP32 copies of `parameters` parameters (exercise 4: 7e9 → 56 GB and 28 GB).
pub fn fp32_copies(parameters: u64) -> Fp32Copies {
    let b = Precision::Fp32.bytes() as u64;
    Fp32Copies {
        master_and_grad_bytes: 2 * b * parameters,
        grad_only_bytes: b * parameters,
    }
}

// ---------------------------------------------------------------------------------------------
// The real, scaled-down instance.

/// Each dimension divided by `shrink`, rounded up (a model with the same tensors, smaller).
pub fn shrink_tensors(tensors: &[ParamTensor], shrink: usize) -> Vec<ParamTensor> {
    let s = shrink.max(1);
    tensors
        .iter()
        .map(|t| ParamTensor {
            name: t.name.clone(),
            shape: t.shape.iter().map(|d| d.div_ceil(s)).collect(),
            kind: t.kind,
        })
        .collect()
}

/// Where one tensor sits in the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// Tensor name.
    pub name: String,
    /// Kind.
    pub kind: TensorKind,
    /// First element in the flat buffer.
    pub offset: u64,
    /// Elements.
    pub elements: u64,
}

/// The tensors laid out back to back, in order.
pub fn layout(tensors: &[ParamTensor]) -> Vec<Segment> {
    let mut off = 0;
    tensors
        .iter()
        .map(|t| {
            let s = Segment {
                name: t.name.clone(),
                kind: t.kind,
                offset: off,
                elements: t.numel(),
            };
            off += s.elements;
            s
        })
        .collect()
}

/// Trainer state in flat buffers: one allocation each for p (FP16), g (FP16), m, v (FP32).
#[derive(Debug, Clone, PartialEq)]
pub struct Workspace {
    /// The tensors (shapes) in layout order.
    pub tensors: Vec<ParamTensor>,
    /// Offsets.
    pub segments: Vec<Segment>,
    /// Parameters, FP16.
    pub p: Vec<f16>,
    /// Gradients, FP16.
    pub g: Vec<f16>,
    /// First moments, FP32.
    pub m: Vec<f32>,
    /// Second moments, FP32.
    pub v: Vec<f32>,
}

/// Elements between two progress ticks of the instance (about 1 % of the default instance).
const TICK: usize = 1 << 15;

/// Fills `out` with `normal`'s samples in order, rounded to FP16 (to nearest, ties to even):
/// the same values as `f16::from_f32(normal.sample(rng))` one by one, drawn into an f32 chunk
/// and rounded with `half`'s slice conversion (vectorised). Calls `tick(base + filled)` before
/// each chunk.
fn fill_normal(
    out: &mut [f16],
    normal: &Normal<f32>,
    rng: &mut ChaCha8Rng,
    base: u64,
    tick: &mut dyn FnMut(u64) -> Result<(), Error>,
) -> Result<(), Error> {
    use half::slice::HalfFloatSliceExt;
    let mut buf = vec![0.0f32; TICK.min(out.len())];
    for (i, chunk) in out.chunks_mut(TICK).enumerate() {
        tick(base + (i * TICK) as u64)?;
        let b = &mut buf[..chunk.len()];
        for x in b.iter_mut() {
            *x = normal.sample(rng);
        }
        chunk.convert_from_f32_slice(b);
    }
    Ok(())
}

fn shape_err(e: ndarray::ShapeError) -> Error {
    Error::BadInput(format!("workspace view: {e}"))
}

impl Workspace {
    /// A seeded instance: weights and embeddings N(0, 0.02²), biases and β 0, γ 1; zero
    /// moments and gradients.
    pub fn new(tensors: Vec<ParamTensor>, seed: u64) -> Result<Self, Error> {
        Self::new_ticking(tensors, seed, &mut |_| Ok(()))
    }

    /// [`Self::new`], calling `tick(elements filled so far)` every [`TICK`] elements (the
    /// scene reports progress and stops on cancel through it).
    fn new_ticking(
        tensors: Vec<ParamTensor>,
        seed: u64,
        tick: &mut dyn FnMut(u64) -> Result<(), Error>,
    ) -> Result<Self, Error> {
        let segments = layout(&tensors);
        let n = total_parameters(&tensors) as usize;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let normal = Normal::new(0.0f32, 0.02).map_err(|e| Error::BadInput(e.to_string()))?;
        let mut p = vec![f16::ZERO; n];
        let mut off = 0;
        for t in &tensors {
            let k = (t.numel() as usize).min(n - off);
            let dst = &mut p[off..off + k];
            match t.kind {
                TensorKind::Weight | TensorKind::Embedding => {
                    fill_normal(dst, &normal, &mut rng, off as u64, tick)?;
                }
                TensorKind::Bias | TensorKind::LayerNormBeta => dst.fill(f16::ZERO),
                TensorKind::LayerNormGamma => dst.fill(f16::ONE),
            }
            off += k;
        }
        Ok(Workspace {
            tensors,
            segments,
            p,
            g: vec![f16::ZERO; n],
            m: vec![0.0; n],
            v: vec![0.0; n],
        })
    }

    /// Fills the gradients with seeded N(0, 0.01²) values rounded to FP16.
    pub fn fill_gradients(&mut self, rng: &mut ChaCha8Rng) -> Result<(), Error> {
        self.fill_gradients_ticking(rng, &mut |_| Ok(()))
    }

    /// [`Self::fill_gradients`], calling `tick(elements filled so far)` every [`TICK`]
    /// elements.
    fn fill_gradients_ticking(
        &mut self,
        rng: &mut ChaCha8Rng,
        tick: &mut dyn FnMut(u64) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let normal = Normal::new(0.0f32, 0.01).map_err(|e| Error::BadInput(e.to_string()))?;
        fill_normal(&mut self.g, &normal, rng, 0, tick)
    }

    /// Every parameter as an n-d view (its own shape) into the one flat `p` buffer.
    ///
    /// # Errors
    /// [`Error::BadInput`] if a segment does not fit its shape (cannot happen for [`layout`]).
    pub fn param_views(&self) -> Result<Vec<ArrayViewD<'_, f16>>, Error> {
        self.tensors
            .iter()
            .zip(&self.segments)
            .map(|(t, s)| {
                let (a, b) = (s.offset as usize, (s.offset + s.elements) as usize);
                let slice = self
                    .p
                    .get(a..b)
                    .ok_or_else(|| Error::BadInput(format!("segment {} out of range", s.name)))?;
                ArrayViewD::from_shape(IxDyn(&t.shape), slice).map_err(shape_err)
            })
            .collect()
    }

    /// Adam once per tensor, each call on that tensor's n-d views of p, g, m, v.
    ///
    /// # Errors
    /// [`Error::BadInput`] if a view cannot be formed (cannot happen for [`layout`]).
    pub fn adam_per_tensor(&mut self, s: &AdamStep) -> Result<(), Error> {
        self.adam_per_tensor_ticking(s, &mut |_| Ok(()))
    }

    /// [`Self::adam_per_tensor`], calling `tick(elements updated so far)` before each tensor.
    fn adam_per_tensor_ticking(
        &mut self,
        s: &AdamStep,
        tick: &mut dyn FnMut(u64) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let (mut p, mut m, mut v) = (&mut self.p[..], &mut self.m[..], &mut self.v[..]);
        let mut g = &self.g[..];
        let mut done = 0u64;
        for t in &self.tensors {
            tick(done)?;
            done += t.numel();
            let n = t.numel() as usize;
            if n > p.len() {
                return Err(Error::BadInput(format!("tensor {} overruns", t.name)));
            }
            let (p0, p1) = std::mem::take(&mut p).split_at_mut(n);
            let (m0, m1) = std::mem::take(&mut m).split_at_mut(n);
            let (v0, v1) = std::mem::take(&mut v).split_at_mut(n);
            let (g0, g1) = g.split_at(n);
            (p, m, v, g) = (p1, m1, v1, g1);
            let shape = IxDyn(&t.shape);
            let mut pv = ArrayViewMutD::from_shape(shape.clone(), p0).map_err(shape_err)?;
            let gv = ArrayViewD::from_shape(shape.clone(), g0).map_err(shape_err)?;
            let mut mv = ArrayViewMutD::from_shape(shape.clone(), m0).map_err(shape_err)?;
            let mut vv = ArrayViewMutD::from_shape(shape, v0).map_err(shape_err)?;
            // The views are contiguous (standard layout), so the chunked kernel runs on their
            // memory; element by element through `Zip` otherwise (same bits either way).
            match (
                pv.as_slice_mut(),
                gv.as_slice(),
                mv.as_slice_mut(),
                vv.as_slice_mut(),
            ) {
                (Some(p), Some(g), Some(m), Some(v)) => adam_f16(p, g, m, v, s),
                _ => Zip::from(pv)
                    .and(gv)
                    .and(mv)
                    .and(vv)
                    .for_each(|p, &g, m, v| s.update_f16(p, g, m, v)),
            }
        }
        Ok(())
    }

    /// Adam once over the whole flat buffers ([`adam_f16`]: FP16 widened a chunk at a time).
    pub fn adam_whole(&mut self, s: &AdamStep) {
        adam_f16(&mut self.p, &self.g, &mut self.m, &mut self.v, s);
    }
}

/// The aliasing check of one view, from pointers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ViewCheck {
    /// Tensor name.
    pub name: String,
    /// `(view pointer − buffer pointer) / 2 bytes`: the view's first element in the buffer.
    pub offset_from_pointer: u64,
    /// Elements in the view.
    pub elements: u64,
    /// The view's byte range lies inside the buffer's and starts at the segment's offset.
    pub aliases: bool,
}

/// Checks every parameter view against the flat buffer's pointer range.
pub fn check_views(ws: &Workspace) -> Result<Vec<ViewCheck>, Error> {
    let base = ws.p.as_ptr() as usize;
    let elem = std::mem::size_of::<f16>();
    let end = base + ws.p.len() * elem;
    let views = ws.param_views()?;
    Ok(views
        .iter()
        .zip(&ws.segments)
        .map(|(view, seg)| {
            let start = view.as_ptr() as usize;
            let stop = start + view.len() * elem;
            let inside = base <= start && stop <= end;
            let offset = start.wrapping_sub(base) / elem;
            ViewCheck {
                name: seg.name.clone(),
                offset_from_pointer: offset as u64,
                elements: view.len() as u64,
                aliases: inside && offset as u64 == seg.offset && view.len() as u64 == seg.elements,
            }
        })
        .collect())
}

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

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: "trainer-workspace",
    section: "§4.2",
    title: "Workspace: hundreds of tensors linked into one buffer",
    title_zh: "workspace：几百个张量链接成一整块",
    summary: "Per-tensor FP32-master trainer (40 B/param, 3 launches per tensor) vs one kernel over the linked FP16 workspace (22 B/param, 1 launch); per-tensor and whole-buffer Adam are bitwise identical.",
    summary_zh: "逐张量、带 FP32 主参数的训练器（每个参数 40 B，每个张量 3 次发射）vs 在链接好的 FP16 workspace 上跑一个内核（每个参数 22 B，1 次发射）；逐张量 Adam 与整块 Adam 逐位相同。",
    params: PARAMS,
    run: |v| to_json(&run(&WorkspaceParams::from_values(v)?)?),
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
            return Err(Error::invalid(
                "shrink",
                shrink,
                format!(
                    "the instance would hold {elements} elements ({} bytes); at most {} \
                     elements are allowed — a larger shrink",
                    elements * instance_bytes_per_element(),
                    MAX_INSTANCE_ELEMENTS
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
                format!(
                    "{elements} elements × {steps} steps = {work} element-steps; at most \
                     {MAX_ELEMENT_STEPS} (about a second) — fewer steps or a larger shrink"
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
            format!("the instance would hold {elements} elements; at most {MAX_INSTANCE_ELEMENTS}"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_per_parameter_from_element_sizes() {
        // Exercise 3 by hand: copy g→g′ 2 + 4 = 6; Adam reads p′ g′ m v 4·4 = 16, writes
        // p′ m v 3·4 = 12 → 28; copy p′→p 4 + 2 = 6; total 40. Workspace: read p, g 2·2, m, v
        // 2·4, write p 2, m, v 2·4 → 22.
        let b: Vec<usize> = trainer_stages(TrainerScheme::PerTensorFp32Master)
            .iter()
            .map(Stage::bytes_per_param)
            .collect();
        assert_eq!(b, vec![6, 28, 6]);
        let w: Vec<usize> = trainer_stages(TrainerScheme::LinkedFp16Workspace)
            .iter()
            .map(Stage::bytes_per_param)
            .collect();
        assert_eq!(w, vec![22]);
    }

    #[test]
    fn exercise_8_gpt2_large_on_a100() {
        let c = trainer_comparison("gpt2-large", "a100").unwrap();
        assert_eq!(c.baseline.launches, 1308);
        assert_eq!(c.workspace.launches, 1);
        // Lecture: launches 3 × 436 × 4 µs = 5.2 ms; bytes 40 × 7.74e8 / 1.555e12 = 19.9 ms;
        // total 25.1 ms. LightSeq2: 4 µs + 22 × 7.74e8 / 1.555e12 = 10.95 ms.
        assert!(
            (c.baseline.launch_ms - 5.2).abs() < 0.05,
            "{}",
            c.baseline.launch_ms
        );
        assert!(
            (c.baseline.bytes_ms - 19.9).abs() < 0.05,
            "{}",
            c.baseline.bytes_ms
        );
        assert!(
            (c.baseline.total_ms - 25.1).abs() < 0.1,
            "{}",
            c.baseline.total_ms
        );
        assert!((c.workspace.launch_ms - 0.004).abs() < 1e-9);
        assert!(
            (c.workspace.bytes_ms - 10.95).abs() < 0.01,
            "{}",
            c.workspace.bytes_ms
        );
        assert!(
            (c.workspace.total_ms - 10.95).abs() < 0.05,
            "{}",
            c.workspace.total_ms
        );
    }

    #[test]
    fn exercise_4_fp32_copies_of_7b() {
        // 7e9 × (4 + 4) = 56 GB; 7e9 × 4 = 28 GB.
        let c = fp32_copies(7_000_000_000);
        assert_eq!(c.master_and_grad_bytes, 56_000_000_000);
        assert_eq!(c.grad_only_bytes, 28_000_000_000);
    }

    #[test]
    fn instance_views_alias_and_adam_is_bitwise_identical() {
        let full = model("gpt2-large").unwrap().tensors();
        let c = run_instance(&full, 64, 3, 7).unwrap();
        assert_eq!(c.tensors, 436);
        assert!(c.views_alias_workspace);
        assert!(c.views_tile_workspace);
        assert!(c.bitwise_identical);
        assert!(
            c.changed_parameters > c.elements / 2,
            "{}",
            c.changed_parameters
        );
    }

    #[test]
    fn a_too_large_instance_is_refused_with_its_size() {
        let scene = &SCENE;
        let mut v = scene.defaults();
        v.set(scene.params, "shrink", "1").unwrap();
        let e = scene.report(v).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("`shrink`"), "{msg}");
        // 774,030,080 elements × 22 bytes.
        assert!(msg.contains("774030080"), "{msg}");
        assert!(msg.contains(&(774_030_080u64 * 22).to_string()), "{msg}");
    }

    #[test]
    fn scene_defaults_give_the_contract_keys() {
        let r = SCENE.report(SCENE.defaults()).unwrap().result;
        for k in [
            "bytes_per_param_baseline",
            "bytes_per_param_workspace",
            "launches_baseline",
            "launches_workspace",
            "baseline_ms",
            "workspace_ms",
            "bitwise_identical",
        ] {
            assert!(r.get(k).is_some(), "missing {k}");
        }
        assert_eq!(r["bytes_per_param_baseline"], 40);
        assert_eq!(r["bytes_per_param_workspace"], 22);
        assert_eq!(r["launches_baseline"], 1308);
        assert_eq!(r["bitwise_identical"], true);
        assert_eq!(r["segments"].as_array().map(Vec::len), Some(436));
    }
}
