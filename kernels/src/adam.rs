//! Adam on the device (lecture §4.2; LightSeq2 §IV-C): one dispatch per parameter tensor vs
//! one dispatch over the linked workspace (all parameters, gradients and moments in four
//! contiguous buffers), f32 — and, when the adapter has `SHADER_F16`, the same two layouts
//! with FP16 storage.
//!
//! The update is [`warpscope_core::trainer::adam::AdamStep::update`]'s, element by element,
//! in the same order (`shaders/adam.wgsl`); Adam is element-wise, so the two layouts must
//! give the same numbers — only the launches differ. Per element it reads p, g, m, v and
//! writes p, m, v: 28 bytes in f32 ([`Storage::F32`]); with p and g in FP16 and m, v in f32
//! (the mixed-precision trainer's workspace, [`Storage::F16`], `shaders/adam_f16.wgsl`,
//! [`warpscope_core::trainer::adam::AdamStep::update_f16`]) 22 bytes.

use half::f16;
use warpscope_core::trainer::adam::{AdamConfig, adam_f16, adam_f32};

use crate::DeviceContext;
use crate::runner::{Dispatch, KernelError, Runner, VariantOutput, bytes_moved, groups_for};

const ADAM: &str = crate::shaders::ADAM;
const ADAM_F16: &str = crate::shaders::ADAM_F16;
const WG: u64 = 256;
/// Bytes moved per element: reads p, g, m, v; writes p, m, v (f32).
pub const BYTES_PER_ELEMENT: u64 = 28;
/// Bytes moved per element with FP16 p and g: reads 2 + 2 + 4 + 4, writes 2 + 4 + 4.
pub const BYTES_PER_ELEMENT_F16: u64 = 22;

/// How p and g are stored (m and v are f32 either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// p, g f32 (28 B/param moved per step).
    F32,
    /// p, g FP16 (22 B/param): needs `SHADER_F16`.
    F16,
}

impl Storage {
    /// Bytes (read, written) per element.
    fn bytes(self) -> (u64, u64) {
        match self {
            Storage::F32 => (16, 12),
            Storage::F16 => (12, 10),
        }
    }
}

/// f32 values rounded to FP16 (nearest, ties to even).
pub fn to_f16(v: &[f32]) -> Vec<f16> {
    v.iter().map(|x| f16::from_f32(*x)).collect()
}

fn f16_bytes(v: &[f16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect()
}

/// One Adam step over a set of parameter tensors, stored linked (concatenated in `sizes`
/// order).
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Elements of each tensor.
    pub sizes: Vec<usize>,
    /// Parameters (Σ sizes).
    pub p: Vec<f32>,
    /// Gradients.
    pub g: Vec<f32>,
    /// First moments before the step.
    pub m: Vec<f32>,
    /// Second moments before the step (≥ 0).
    pub v: Vec<f32>,
    /// Hyper-parameters.
    pub config: AdamConfig,
    /// The step number t (1-based) the bias corrections use.
    pub step: u32,
}

impl Problem {
    /// Bias corrections (c₁, c₂) = (1 − β₁ᵗ, 1 − β₂ᵗ) in f32, as
    /// [`warpscope_core::trainer::adam::AdamConfig::step`] computes them.
    pub fn corrections(&self) -> (f32, f32) {
        let t = self.step.max(1) as i32;
        (
            1.0 - self.config.beta1.powi(t),
            1.0 - self.config.beta2.powi(t),
        )
    }

    /// core's result: [`warpscope_core::trainer::adam::adam_f32`] over the linked workspace;
    /// returns p ‖ m ‖ v after the step, widened to f64.
    pub fn core_reference(&self) -> Vec<f64> {
        let (mut p, mut m, mut v) = (self.p.clone(), self.m.clone(), self.v.clone());
        adam_f32(
            &mut p,
            &self.g,
            &mut m,
            &mut v,
            &self.config.step(self.step),
        );
        p.iter()
            .chain(&m)
            .chain(&v)
            .map(|x| f64::from(*x))
            .collect()
    }

    /// core's FP16-workspace result: p and g rounded to FP16, then
    /// [`warpscope_core::trainer::adam::adam_f16`]; returns p (FP16, widened) ‖ m ‖ v.
    pub fn core_reference_f16(&self) -> Vec<f64> {
        let (mut p, g) = (to_f16(&self.p), to_f16(&self.g));
        let (mut m, mut v) = (self.m.clone(), self.v.clone());
        adam_f16(&mut p, &g, &mut m, &mut v, &self.config.step(self.step));
        p.iter()
            .map(|x| f64::from(x.to_f32()))
            .chain(m.iter().chain(&v).map(|x| f64::from(*x)))
            .collect()
    }

    fn total(&self) -> usize {
        self.sizes.iter().sum()
    }
}

/// Runs one Adam step per tensor (one dispatch each, separate buffers) and over the linked
/// workspace (one dispatch): one untimed run each — whose p ‖ m ‖ v is returned — and `runs`
/// timed runs (which keep stepping the state). Returned in the order linked, per-tensor.
///
/// # Errors
/// [`KernelError::InvalidOption`] for an inconsistent problem; shader, device and readback
/// errors from [`Runner`].
pub fn compute(
    ctx: &DeviceContext,
    p: &Problem,
    runs: u32,
) -> Result<Vec<VariantOutput>, KernelError> {
    compute_with(ctx, p, runs, Storage::F32)
}

/// [`compute`] with p and g stored as `storage`; [`Storage::F16`] needs the adapter's
/// `SHADER_F16` (else [`KernelError::InvalidOption`] saying it is not available) and returns
/// p (FP16, widened to f32) ‖ m ‖ v.
///
/// # Errors
/// As [`compute`]; `SHADER_F16` missing for [`Storage::F16`].
pub fn compute_with(
    ctx: &DeviceContext,
    p: &Problem,
    runs: u32,
    storage: Storage,
) -> Result<Vec<VariantOutput>, KernelError> {
    if storage == Storage::F16 && !ctx.report.shader_f16 {
        return Err(KernelError::InvalidOption {
            name: "storage".into(),
            value: "f16".into(),
            expected: format!(
                "an adapter with SHADER_F16: f16 storage is not available on {}",
                ctx.report.name
            ),
        });
    }
    let n = p.total();
    if p.sizes.is_empty()
        || p.sizes.contains(&0)
        || [p.p.len(), p.g.len(), p.m.len(), p.v.len()] != [n; 4]
    {
        return Err(KernelError::InvalidOption {
            name: "problem".into(),
            value: format!("{} tensors, {n} elements", p.sizes.len()),
            expected: "non-empty tensors with p, g, m, v of Σ sizes elements each".into(),
        });
    }
    let r = Runner::new(ctx, "adam");
    let pipe = match storage {
        Storage::F32 => r.pipeline(ADAM, "adam", &[])?,
        Storage::F16 => r.pipeline(ADAM_F16, "adam", &[])?,
    };
    let (read_b, write_b) = storage.bytes();
    let (p16, g16) = (to_f16(&p.p), to_f16(&p.g));
    // p and g in the layout's storage type.
    let half_store = |label: &str, f32s: &[f32], f16s: &[f16]| match storage {
        Storage::F32 => r.storage(label, f32s),
        Storage::F16 => r.storage_bytes(label, &f16_bytes(f16s)),
    };
    let read_p = |buf: &wgpu::Buffer, count: usize| -> Result<Vec<f32>, KernelError> {
        match storage {
            Storage::F32 => r.read_f32(buf, count),
            Storage::F16 => Ok(r
                .read_f32(buf, count.div_ceil(2))?
                .into_iter()
                .flat_map(|w| {
                    let b = w.to_bits();
                    [b as u16, (b >> 16) as u16]
                })
                .take(count)
                .map(|h| f16::from_bits(h).to_f32())
                .collect()),
        }
    };
    let (c1, c2) = p.corrections();
    let c = p.config;
    let uniform = |count: usize| {
        r.uniform(
            "params",
            &[
                count as u32,
                c.lr.to_bits(),
                c.beta1.to_bits(),
                c.beta2.to_bits(),
                c.eps.to_bits(),
                c1.to_bits(),
                c2.to_bits(),
                0,
            ],
        )
    };

    // Per tensor: four buffers and one dispatch each.
    let mut per_tensor = Vec::with_capacity(p.sizes.len());
    let mut tensor_bufs = Vec::with_capacity(p.sizes.len());
    let mut start = 0;
    for (k, &size) in p.sizes.iter().enumerate() {
        let range = start..start + size;
        start += size;
        let params = uniform(size);
        let pb = half_store("p", &p.p[range.clone()], &p16[range.clone()])?;
        let gb = half_store("g", &p.g[range.clone()], &g16[range.clone()])?;
        let mb = r.storage("m", &p.m[range.clone()])?;
        let vb = r.storage("v", &p.v[range])?;
        per_tensor.push(Dispatch {
            name: format!("adam tensor {k} ({size} elements)"),
            bind_group: r.bind(
                &pipe,
                &[(0, &params), (1, &pb), (2, &gb), (3, &mb), (4, &vb)],
            ),
            pipeline: pipe.clone(),
            groups: [groups_for(size as u64, WG), 1, 1],
            bytes_read: read_b * size as u64,
            bytes_written: write_b * size as u64,
        });
        tensor_bufs.push((pb, mb, vb, size));
    }

    // Linked workspace: one buffer per role, one dispatch.
    let params = uniform(n);
    let pb = half_store("p linked", &p.p, &p16)?;
    let gb = half_store("g linked", &p.g, &g16)?;
    let mb = r.storage("m linked", &p.m)?;
    let vb = r.storage("v linked", &p.v)?;
    let linked = vec![Dispatch {
        name: format!("adam over the linked workspace ({n} elements)"),
        bind_group: r.bind(
            &pipe,
            &[(0, &params), (1, &pb), (2, &gb), (3, &mb), (4, &vb)],
        ),
        pipeline: pipe,
        groups: [groups_for(n as u64, WG), 1, 1],
        bytes_read: read_b * n as u64,
        bytes_written: write_b * n as u64,
    }];

    let mut out = Vec::with_capacity(2);
    // Linked.
    r.run_once(&linked)?;
    let mut lo = read_p(&pb, n)?;
    lo.extend(r.read_f32(&mb, n)?);
    lo.extend(r.read_f32(&vb, n)?);
    out.push(VariantOutput {
        name: match storage {
            Storage::F32 => "linked",
            Storage::F16 => "linked-f16",
        },
        kernels: linked.iter().map(|d| d.name.clone()).collect(),
        output: lo,
        timing: r.time(&linked, runs)?,
        bytes_moved: bytes_moved(&linked),
    });
    // Per tensor.
    r.run_once(&per_tensor)?;
    let (mut po, mut mo, mut vo) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for (pb, mb, vb, size) in &tensor_bufs {
        po.extend(read_p(pb, *size)?);
        mo.extend(r.read_f32(mb, *size)?);
        vo.extend(r.read_f32(vb, *size)?);
    }
    po.extend(mo);
    po.extend(vo);
    out.push(VariantOutput {
        name: match storage {
            Storage::F32 => "per-tensor",
            Storage::F16 => "per-tensor-f16",
        },
        kernels: per_tensor.iter().map(|d| d.name.clone()).collect(),
        output: po,
        timing: r.time(&per_tensor, runs)?,
        bytes_moved: bytes_moved(&per_tensor),
    });
    Ok(out)
}

/// The tensor sizes of a small pre-LN transformer encoder (token and position embeddings;
/// per layer LN γ/β, QKV weight and bias, output projection, LN γ/β, two FFN matrices with
/// biases (4× hidden); a final LN): 12·layers + 4 tensors of very different sizes — the
/// census shape that makes per-tensor launches expensive.
pub fn transformer_sizes(
    layers: usize,
    hidden: usize,
    vocab: usize,
    positions: usize,
) -> Vec<usize> {
    let h = hidden;
    let mut s = vec![vocab * h, positions * h];
    for _ in 0..layers {
        s.extend([
            h,
            h,
            h * 3 * h,
            3 * h,
            h * h,
            h,
            h,
            h,
            h * 4 * h,
            4 * h,
            4 * h * h,
            h,
        ]);
    }
    s.extend([h, h]);
    s
}
