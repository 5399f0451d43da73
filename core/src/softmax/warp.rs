//! Scene `softmax-warp` (lecture §3.1, §3.4): HW4's `ker_attn_softmax_bw<T, ITERATIONS>`
//! simulated on the SIMT [`Block`], one row, one warp.
//!
//! The kernel (HW4 `softmax.cu`; launched with `blockDim = (32, warps_per_block)`, one warp per
//! row):
//!
//! ```text
//! T grad_reg[ITERATIONS], inp_reg[ITERATIONS]; float sum = 0;
//! for i in 0..ITERATIONS:                       // element lane + 32·i: coalesced
//!     if (lane + 32 i < L) { grad_reg[i] = grad[32 i]; inp_reg[i] = inp[32 i];
//!                            sum += (float)grad_reg[i] * (float)inp_reg[i]; }
//! for mask in 16, 8, 4, 2, 1: sum += shfl_xor(sum, mask)   // every lane ends with Σ∇y·y
//! for i in 0..ITERATIONS:
//!     if (lane + 32 i < L) grad[32 i] = (T)((float)inp_reg[i] * ((float)grad_reg[i] - sum));
//! ```
//!
//! (HW4 loops the masks upward, 1 → 16; the butterfly leaves the same total in every lane
//! either way. The simulation reuses the foundation's [`warp_sum`], 16 → 1.)
//!
//! Register arrays must have a compile-time size and fully unrolled loops, or they spill to
//! local memory, so ITERATIONS is a template parameter: HW4 instantiates one kernel per bucket
//! {32, 64, 128, 256, 384, 512, 768, 1024, 2048} (ITERATIONS = bucket / 32) and picks the
//! smallest bucket ≥ L at run time; L > 2048 is refused (HW4 throws). Each lane holds
//! 2 · ITERATIONS values (∇y and y): 128 at L = 2048, half of the 255-register limit.
//!
//! For comparison the forward kernel on the same row: two butterfly reductions (max, then
//! Σ exp), also with no block barrier. The trace of both runs is kept for the GUI stepper
//! (`#[serde(skip)]`); the bucket table is analytic.

use crate::text::Text;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::Serialize;

use super::{DTYPES, Dtype, check_range, int_in};
use crate::Error;
use crate::device::{self, DEVICE_IDS, Device};
use crate::params::{ParamSpec, ParamValues};
use crate::reduction::warp_sum;
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};
use crate::simt::shuffle::ShuffleMode;
use crate::simt::trace::TraceSummary;
use crate::simt::{Block, BlockShape, Mask, Trace};

/// HW4's template buckets: the largest row length each `ker_attn_softmax_bw` instance handles.
pub const BUCKETS: &[u32] = &[32, 64, 128, 256, 384, 512, 768, 1024, 2048];

/// The largest row length the kernel accepts (the last bucket).
pub const MAX_LEN: u32 = 2048;

/// Widest `len` the parameter accepts (past [`MAX_LEN`] the scene answers with the kernel's
/// refusal, naming 2048).
const LEN_SPEC_MAX: i64 = 1 << 16;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("len", "row length L", "行长 L", 1, LEN_SPEC_MAX, 512).log(),
    ParamSpec::choice("dtype", "storage type T", "存储类型 T", DTYPES, "f16"),
    ParamSpec::choice("device", "device", "设备", DEVICE_IDS, "a100"),
    ParamSpec::int("seed", "random seed", "随机种子", 0, 1 << 31, 0),
];

/// The scene's typed definition (`softmax-warp`).
pub struct WarpScene;

impl SceneDef for WarpScene {
    const ID: &'static str = "softmax-warp";
    type Output = WarpOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&WarpParams::from_values(v)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: WarpScene::ID,
    section: "§3.1, §3.4",
    title: Text::new(
        "ker_attn_softmax_bw: one warp per row, one butterfly, no barrier",
        "ker_attn_softmax_bw：一行一个线程束，一次蝶形归约，无块级栅栏",
    ),
    summary: Text::new(
        "Each lane keeps ITERATIONS = ⌈L/32⌉ values of ∇y and y in registers; one shfl_xor butterfly sums Σ∇y·y; the template bucket sets the register cost.",
        "每个线程把 ITERATIONS = ⌈L/32⌉ 个 ∇y 和 y 放在寄存器里；一次 shfl_xor 蝶形归约求出 Σ∇y·y；模板档位决定寄存器开销。",
    ),
    params: PARAMS,
    run: erase::<WarpScene>(),
    input: None,
    chapter: &Chapter::SOFTMAX,
    featured: Featured::Event(4),
    cost: Cost::Moderate,
};

/// Validated parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WarpParams {
    /// Row length L (softmax length), 1..=2048.
    pub len: u32,
    /// Storage type T of ∇y, y and ∇x.
    pub dtype: Dtype,
    /// Device id (warp width and the per-thread register limit come from its table entry).
    pub device: String,
    /// Seed of the row: x and ∇y standard normal (ChaCha8), y = softmax(x).
    pub seed: u64,
}

/// The template instance chosen for a row length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bucket {
    /// Largest length the instance handles (one of [`BUCKETS`]).
    pub bucket: u32,
    /// ITERATIONS = bucket / warp width: register-array slots per lane.
    pub iterations: u32,
}

/// The smallest bucket ≥ `len` for a warp of `warp_size` lanes.
///
/// # Errors
/// [`Error::InvalidParam`] (`len`) for 0 or a length past 2048, naming the largest bucket.
pub fn bucket_for(len: u32, warp_size: u32) -> Result<Bucket, Error> {
    let largest = BUCKETS.last().copied().unwrap_or(MAX_LEN);
    let bucket = BUCKETS
        .iter()
        .copied()
        .find(|b| len >= 1 && len <= *b)
        .ok_or_else(|| {
            let per_lane = 2 * largest / warp_size.max(1);
            Error::invalid(
                "len",
                len,
                crate::error::Expected::custom(
                    format!(
                        "expected 1..={largest}: the largest ITERATIONS bucket of \
                         ker_attn_softmax_bw is {largest} ({per_lane} values of ∇y and y per \
                         lane); a longer row needs several warps per row"
                    ),
                    format!(
                        "应在 1..={largest} 之间：ker_attn_softmax_bw 最大的 ITERATIONS 档是 \
                         {largest}（每条通道 {per_lane} 个 ∇y 和 y 的值）；更长的行需要每行多个线程束"
                    ),
                ),
            )
        })?;
    Ok(Bucket {
        bucket,
        iterations: bucket / warp_size.max(1),
    })
}

impl WarpParams {
    /// Reads and validates the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range; `len` past 2048
    /// names the largest bucket.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let len = int_in(v, "len", 1, LEN_SPEC_MAX)?;
        let p = WarpParams {
            len: u32::try_from(len).map_err(|_| {
                Error::invalid(
                    "len",
                    len,
                    crate::error::Expected::Between {
                        min: 1,
                        max: MAX_LEN as i64,
                    },
                )
            })?,
            dtype: Dtype::parse("dtype", v.text("dtype")?)?,
            device: v.text("device")?.to_owned(),
            seed: int_in(v, "seed", 0, 1 << 31)?,
        };
        p.validate()?;
        Ok(p)
    }

    /// Checks the length against the buckets and the device id.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] (`len`, `device`, `seed`).
    pub fn validate(&self) -> Result<&'static Device, Error> {
        let dev = device::device(&self.device)?;
        if dev.warp_size != 32 {
            return Err(Error::invalid(
                "device",
                &self.device,
                crate::error::Expected::custom(
                    "expected a device with 32-lane warps (HW4's buckets assume WARP_SIZE = 32)",
                    "应为线程束有 32 条通道的设备（HW4 的分档假定 WARP_SIZE = 32）",
                ),
            ));
        }
        bucket_for(self.len, dev.warp_size)?;
        check_range("seed", self.seed, 0, 1 << 31)?;
        Ok(dev)
    }
}

/// One row of the bucket table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BucketRow {
    /// Largest row length of the instance.
    pub bucket: u32,
    /// ITERATIONS = bucket / 32.
    pub iterations: u32,
    /// Register-array values per thread, 2 · ITERATIONS (∇y and y).
    pub registers_per_thread: u32,
    /// registers_per_thread / the device's per-thread limit (255).
    pub fraction_of_limit: f64,
    /// Whether the arrays fit under the limit (ignoring the kernel's few scalar registers).
    pub fits: bool,
}

/// What the scene computes.
#[derive(Debug, Clone, Serialize)]
pub struct WarpOutput {
    /// The row length L.
    pub len: u32,
    /// The instance HW4's launcher picks: smallest bucket ≥ L.
    pub bucket: u32,
    /// Its ITERATIONS (bucket / 32): register-array slots per lane.
    pub iterations: u32,
    /// Slots that hold a real element in some lane, ⌈L/32⌉ (≤ iterations).
    pub iterations_used: u32,
    /// Register-array values per thread, 2 · ITERATIONS (∇y and y; lecture §3.4).
    pub registers_per_thread: u32,
    /// The device's per-thread register limit (255).
    pub register_limit: u32,
    /// Butterfly `shfl_xor` steps of the one reduction (log2 32 = 5), counted in the trace.
    pub shuffle_steps: u32,
    /// The masks, in the order the simulation applies them.
    pub shuffle_masks: Vec<u32>,
    /// `__syncthreads()` in the backward kernel, counted in the trace (0: a warp per row).
    pub block_barriers: u32,
    /// Reductions per row in the backward (1: Σ∇y·y).
    pub reductions: u32,
    /// Reductions per row in the forward (2: max, then Σ exp).
    pub forward_reductions: u32,
    /// Shuffle steps of the simulated forward (2 × 5).
    pub forward_shuffle_steps: u32,
    /// Barriers of the simulated forward (0).
    pub forward_block_barriers: u32,
    /// Σ∇y·y as every lane holds it after the butterfly (f32).
    pub dot: f32,
    /// The same dot product in f64 on the stored inputs.
    pub dot_reference: f64,
    /// max |simulated ∇x − f64 formula on the stored inputs|.
    pub max_abs_error: f64,
    /// max |simulated forward y − f64 softmax of the same x|.
    pub forward_max_abs_error: f64,
    /// Global-memory sectors (32 bytes) the backward touched, and the ideal (coalesced) count.
    pub global_sectors: u64,
    /// DRAM bytes of the backward for this row: reads ∇y and y, writes ∇x (3 · L · bytes(T)).
    pub bytes_per_row: u64,
    /// Every bucket: ITERATIONS, registers, share of the limit.
    pub buckets: Vec<BucketRow>,
    /// What a row past the largest bucket would need with one warp (2 × 2048 = 4096).
    pub past_largest: BucketRow,
    /// Totals of the backward trace.
    pub summary: TraceSummary,
    /// Totals of the forward trace.
    pub forward_summary: TraceSummary,
    /// Inputs of the row as stored: ∇y (length L).
    #[serde(skip)]
    pub dy: Vec<f32>,
    /// y as stored (length L).
    #[serde(skip)]
    pub y: Vec<f32>,
    /// ∇x as the kernel wrote it (length L).
    #[serde(skip)]
    pub dx: Vec<f32>,
    /// The backward run, lane by lane (one warp).
    #[serde(skip)]
    pub trace: Trace,
    /// The forward run on the same row.
    #[serde(skip)]
    pub forward_trace: Trace,
}

fn bucket_row(bucket: u32, warp_size: u32, limit: u32) -> BucketRow {
    let iterations = bucket.div_ceil(warp_size);
    let registers_per_thread = 2 * iterations;
    BucketRow {
        bucket,
        iterations,
        registers_per_thread,
        fraction_of_limit: f64::from(registers_per_thread) / f64::from(limit.max(1)),
        fits: registers_per_thread <= limit,
    }
}

/// The butterfly max of `values` on warp `warp` (shfl_xor masks 16 … 1, then `fmaxf`).
fn warp_max(block: &mut Block, warp: u32, values: &[f32], tag: &str) -> Vec<f32> {
    let n = block.shape().warp_size;
    let active = Mask::first(n);
    let mut v = values.to_vec();
    let (mut mask, mut level) = (n / 2, 1);
    while mask >= 1 {
        let other = block.shfl(
            warp,
            ShuffleMode::Xor,
            mask,
            &v,
            active,
            Text::new(
                format!("{tag}: partner lane ^ {mask}"),
                format!("{tag}: 伙伴 lane ^ {mask}"),
            ),
            Some(level),
        );
        v = v.iter().zip(&other).map(|(a, b)| a.max(*b)).collect();
        let shown: Vec<f64> = v.iter().map(|x| f64::from(*x)).collect();
        block.compute(
            warp,
            &shown,
            active,
            Text::new(
                format!("{tag}: max with partner"),
                format!("{tag}: 与伙伴取 max"),
            ),
            Some(level),
        );
        mask /= 2;
        level += 1;
    }
    v
}

/// Lane addresses of slot `i`: element `lane + 32 i` at `base + elem · bytes`, `None` past L.
fn slot_addresses(base: u64, i: u32, n: u32, len: u32, bytes: u32) -> Vec<Option<u64>> {
    (0..n)
        .map(|l| {
            let e = l + n * i;
            (e < len).then(|| base + u64::from(e) * u64::from(bytes))
        })
        .collect()
}

/// Per-lane register values of slot `i` (0 where the lane holds no element).
fn slot_values(row: &[f32], i: u32, n: u32) -> Vec<f32> {
    (0..n)
        .map(|l| row.get((l + n * i) as usize).copied().unwrap_or(0.0))
        .collect()
}

fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|x| f64::from(*x)).collect()
}

/// The forward kernel on one row: load x, butterfly max, exp, butterfly sum, store y.
fn simulate_forward(x: &[f32], dtype: Dtype, it: u32, shape: BlockShape) -> (Vec<f32>, Trace) {
    let n = shape.warp_size;
    let len = x.len() as u32;
    let e = dtype.bytes();
    let mut b = Block::new(
        Text::new(
            "ker_attn_softmax<T, ITERATIONS> (forward)",
            "ker_attn_softmax<T, ITERATIONS>（前向）",
        ),
        shape,
    );
    let mut regs = Vec::with_capacity(it as usize);
    let mut local_max = vec![f32::NEG_INFINITY; n as usize];
    for i in 0..it {
        let addr = slot_addresses(0, i, n, len, e);
        let v = slot_values(x, i, n);
        b.global(
            0,
            false,
            &addr,
            e,
            &widen(&v),
            &format!("x_reg[{i}] = x[{i}·32]"),
        );
        for (l, a) in addr.iter().enumerate() {
            if a.is_some() {
                local_max[l] = local_max[l].max(v[l]);
            }
        }
        regs.push(v);
    }
    let m = warp_max(&mut b, 0, &local_max, "max");
    let mut local_sum = vec![0.0f32; n as usize];
    for (i, v) in regs.iter_mut().enumerate() {
        for (l, val) in v.iter_mut().enumerate() {
            let in_row = (l as u32 + n * i as u32) < len;
            *val = if in_row { (*val - m[l]).exp() } else { 0.0 };
            local_sum[l] += *val;
        }
        b.compute(
            0,
            &widen(v),
            Mask::first(n),
            &format!("exp(x_reg[{i}] − max)"),
            Some(0),
        );
    }
    let s = warp_sum(&mut b, 0, &local_sum, "Σ exp");
    let mut y = vec![0.0f32; len as usize];
    for (i, v) in regs.iter().enumerate() {
        let i = i as u32;
        let out: Vec<f32> = v
            .iter()
            .zip(&s)
            .map(|(ev, sv)| dtype.store(ev / sv))
            .collect();
        let addr = slot_addresses(1 << 24, i, n, len, e);
        b.global(
            0,
            true,
            &addr,
            e,
            &widen(&out),
            &format!("y[{i}·32] = exp / Σ"),
        );
        for (l, a) in addr.iter().enumerate() {
            if a.is_some() {
                y[(l as u32 + n * i) as usize] = out[l];
            }
        }
    }
    (y, b.finish())
}

/// Simulates the forward and the backward on one seeded row.
///
/// # Errors
/// [`Error::InvalidParam`] from [`WarpParams::validate`] (a length past 2048 names 2048).
pub fn run(p: &WarpParams) -> Result<WarpOutput, Error> {
    let dev = p.validate()?;
    let n = dev.warp_size;
    let limit = dev.max_registers_per_thread;
    let Bucket { bucket, iterations } = bucket_for(p.len, n)?;
    let shape = BlockShape::new(n, n)?;
    let e = p.dtype.bytes();
    let len = p.len;

    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let x: Vec<f32> = (0..len)
        .map(|_| p.dtype.store(rng.sample::<f32, _>(StandardNormal)))
        .collect();
    let dy: Vec<f32> = (0..len)
        .map(|_| p.dtype.store(rng.sample::<f32, _>(StandardNormal)))
        .collect();

    // Forward, for comparison (and to produce y as a kernel would store it).
    let (y, forward_trace) = simulate_forward(&x, p.dtype, iterations, shape);
    let x64 = widen(&x);
    let y_ref = super::softmax_f64(&x64);
    let forward_max_abs_error = widen(&y)
        .iter()
        .zip(&y_ref)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);

    // Backward: ∇y at byte 0 (overwritten in place by ∇x), y at byte 2²⁴.
    let (grad_base, inp_base) = (0u64, 1u64 << 24);
    let mut b = Block::new(
        &format!("ker_attn_softmax_bw<{}, {iterations}>", p.dtype.name()),
        shape,
    );
    let mut grad_reg = Vec::with_capacity(iterations as usize);
    let mut inp_reg = Vec::with_capacity(iterations as usize);
    let mut sum = vec![0.0f32; n as usize];
    for i in 0..iterations {
        let ga = slot_addresses(grad_base, i, n, len, e);
        let g = slot_values(&dy, i, n);
        b.global(
            0,
            false,
            &ga,
            e,
            &widen(&g),
            &format!("grad_reg[{i}] = grad[{i}·32]"),
        );
        let ia = slot_addresses(inp_base, i, n, len, e);
        let yv = slot_values(&y, i, n);
        b.global(
            0,
            false,
            &ia,
            e,
            &widen(&yv),
            &format!("inp_reg[{i}] = inp[{i}·32]"),
        );
        for l in 0..n as usize {
            if ga[l].is_some() {
                sum[l] += g[l] * yv[l];
            }
        }
        b.compute(
            0,
            &widen(&sum),
            Mask::first(n),
            &format!("sum += grad_reg[{i}] · inp_reg[{i}]"),
            Some(0),
        );
        grad_reg.push(g);
        inp_reg.push(yv);
    }
    let total = warp_sum(&mut b, 0, &sum, "Σ∇y·y");
    let mut dx = vec![0.0f32; len as usize];
    for i in 0..iterations {
        let out: Vec<f32> = (0..n as usize)
            .map(|l| {
                p.dtype
                    .store(inp_reg[i as usize][l] * (grad_reg[i as usize][l] - total[l]))
            })
            .collect();
        let ga = slot_addresses(grad_base, i, n, len, e);
        let active = Mask(
            ga.iter()
                .enumerate()
                .filter(|(_, a)| a.is_some())
                .fold(0, |m, (l, _)| m | 1 << l),
        );
        b.compute(
            0,
            &widen(&out),
            active,
            &format!("∇x = inp_reg[{i}] · (grad_reg[{i}] − sum)"),
            None,
        );
        b.global(
            0,
            true,
            &ga,
            e,
            &widen(&out),
            Text::new(
                format!("grad[{i}·32] = ∇x (in place)"),
                format!("grad[{i}·32] = ∇x（原地）"),
            ),
        );
        for (l, a) in ga.iter().enumerate() {
            if a.is_some() {
                dx[(l as u32 + n * i) as usize] = out[l];
            }
        }
    }
    let trace = b.finish();
    let summary = trace.summary();
    let forward_summary = forward_trace.summary();

    let (y64, dy64) = (widen(&y), widen(&dy));
    let dot_reference: f64 = y64.iter().zip(&dy64).map(|(a, b)| a * b).sum();
    let dx_ref = super::backward_row(&y64, &dy64)?;
    let max_abs_error = widen(&dx)
        .iter()
        .zip(&dx_ref)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let shuffle_masks: Vec<u32> = trace
        .warps
        .iter()
        .flat_map(|w| &w.events)
        .filter_map(|ev| match ev.kind {
            crate::simt::EventKind::Shuffle { arg, .. } => Some(arg),
            _ => None,
        })
        .collect();

    Ok(WarpOutput {
        len,
        bucket,
        iterations,
        iterations_used: len.div_ceil(n),
        registers_per_thread: 2 * iterations,
        register_limit: limit,
        shuffle_steps: summary.shuffles as u32,
        shuffle_masks,
        block_barriers: summary.barriers,
        reductions: 1,
        forward_reductions: 2,
        forward_shuffle_steps: forward_summary.shuffles as u32,
        forward_block_barriers: forward_summary.barriers,
        dot: total.first().copied().unwrap_or(0.0),
        dot_reference,
        max_abs_error,
        forward_max_abs_error,
        global_sectors: summary.global_sectors,
        bytes_per_row: 3 * u64::from(len) * u64::from(e),
        buckets: BUCKETS.iter().map(|bk| bucket_row(*bk, n, limit)).collect(),
        past_largest: bucket_row(2 * MAX_LEN, n, limit),
        summary,
        forward_summary,
        dy,
        y,
        dx,
        trace,
        forward_trace,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(len: u32) -> WarpParams {
        WarpParams {
            len,
            dtype: Dtype::F16,
            device: "a100".into(),
            seed: 5,
        }
    }

    #[test]
    fn len_2048_needs_64_iterations_and_no_barrier() {
        let o = run(&params(2048)).unwrap();
        assert_eq!((o.bucket, o.iterations), (2048, 64));
        assert_eq!(o.block_barriers, 0);
        assert_eq!(o.shuffle_steps, 5, "log2(32) butterfly steps");
        // 2 arrays × 64 = 128 values: half of 255 (lecture §3.4).
        assert_eq!(o.registers_per_thread, 128);
        assert!(o.registers_per_thread * 2 <= o.register_limit + 1);
    }

    #[test]
    fn len_384_uses_its_own_bucket_and_odd_lengths_round_up() {
        let o = run(&params(384)).unwrap();
        assert_eq!((o.bucket, o.iterations), (384, 12));
        let o = run(&params(300)).unwrap();
        // ⌈300/32⌉ = 10 slots used in a 12-slot instance.
        assert_eq!((o.bucket, o.iterations, o.iterations_used), (384, 12, 10));
        let o = run(&params(1)).unwrap();
        assert_eq!((o.bucket, o.iterations), (32, 1));
    }

    #[test]
    fn past_2048_is_refused_naming_2048() {
        let e = run(&params(2049)).unwrap_err();
        assert!(matches!(e, Error::InvalidParam { ref name, .. } if name == "len"));
        assert!(e.to_string().contains("2048"), "{e}");
        assert!(run(&params(0)).is_err());
        let mut v = ParamValues::defaults(PARAMS);
        v.set(PARAMS, "len", "4096").unwrap();
        let e = WarpParams::from_values(&v).unwrap_err();
        assert!(e.to_string().contains("2048"), "{e}");
    }

    #[test]
    fn bucket_table_is_the_lectures() {
        let o = run(&params(512)).unwrap();
        let its: Vec<u32> = o.buckets.iter().map(|b| b.iterations).collect();
        assert_eq!(its, [1, 2, 4, 8, 12, 16, 24, 32, 64]);
        assert!(o.buckets.iter().all(|b| b.fits));
        assert_eq!(o.past_largest.registers_per_thread, 256);
        assert!(!o.past_largest.fits, "256 > 255");
    }

    #[test]
    fn simulated_row_matches_the_formula() {
        for len in [1, 31, 33, 512, 700] {
            let o = run(&params(len)).unwrap();
            // Each |∇xⱼ| ≤ yⱼ(|∇yⱼ| + |s|); the f16 store rounds by ≤ 2⁻¹¹ relative,
            // the f32 sum adds ~L·2⁻²⁴ — 1e-3 absolute covers both for N(0,1) inputs.
            assert!(o.max_abs_error < 1e-3, "len {len}: {}", o.max_abs_error);
            assert!((f64::from(o.dot) - o.dot_reference).abs() < 1e-4);
            assert_eq!(o.dx.len(), len as usize);
            assert_eq!(o.forward_shuffle_steps, 10);
            assert_eq!(o.forward_block_barriers, 0);
            assert!(o.forward_max_abs_error < 1e-3);
        }
        // Σ∇x ≈ 0 for the simulated row as well.
        let o = run(&params(512)).unwrap();
        let s: f64 = o.dx.iter().map(|v| f64::from(*v)).sum();
        assert!(s.abs() < 1e-2, "{s}");
    }

    #[test]
    fn loads_are_coalesced() {
        // f16, 32 lanes × 2 bytes = 64 bytes = 2 sectors per full request. L = 64: 2 slots ×
        // (2 loads + 1 store) × 2 sectors = 12.
        let o = run(&params(64)).unwrap();
        assert_eq!(o.global_sectors, 12);
        assert_eq!(o.bytes_per_row, 3 * 64 * 2);
    }
}
