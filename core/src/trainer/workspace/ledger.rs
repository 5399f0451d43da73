//! The two trainers on paper: each stage's operands and their precisions, bytes per parameter,
//! the kernels of one step over a model's tensors and their time on the cost model, the
//! per-tensor FP32-master vs linked FP16 workspace comparison, and the FP32 copies the
//! baseline keeps (exercise 4).

use half::f16;
use serde::Serialize;

use crate::Error;
use crate::cost::{KernelCost, totals};
use crate::device::{Device, device};
use crate::trainer::census::{ParamTensor, model, total_parameters};

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
