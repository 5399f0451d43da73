//! Scene `trainer-timing` (lecture §4.2 ⏱): per-tensor Adam vs one Adam over the whole buffer,
//! measured on this machine's CPU, in f32 — the "many small calls" effect, measured rather than
//! modelled.
//!
//! The tensors are the census's (each dimension ÷ `shrink`, rounded up; the lecture used
//! Transformer-big ÷ 8), laid out in one flat buffer each for p, g, m, v. Per run: Adam called
//! once per tensor on its slices, Adam called once on the whole buffers, and a plain copy of the
//! same number of bytes (the bandwidth reference). Medians over `runs` runs after one warm-up.
//!
//! Lecture (NumPy): per tensor ≈ 5.4 ms, whole buffer ≈ 3.8 ms; PyTorch per tensor ≈ 4.5 ms,
//! `foreach` ≈ 3.9 ms, `fused` ≈ 1.7 ms. A compiled loop has no interpreter or kernel-launch
//! cost per call, so on a CPU the gap is expected to be small; the numbers are what this
//! machine measures (and depend on the build: `release_build`).

use crate::text::Text;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};

use super::adam::{AdamConfig, adam_f32};
use super::census::{MODEL_IDS, model, total_parameters};
use super::workspace::{Precision, shrink_tensors};

/// Largest buffer the scene allocates, elements per buffer (4 buffers + the copy's 2 × 3.5).
pub const MAX_ELEMENTS: u64 = 1 << 24;

/// Most parameter updates per scheme, `parameters × (runs + 1)`: about a second of Adam on one
/// core in a release build.
pub const MAX_ELEMENT_RUNS: u64 = 1 << 26;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::choice("model", "model", "模型", MODEL_IDS, "transformer-big"),
    ParamSpec::int(
        "shrink",
        "each dimension ÷ shrink",
        "每一维缩小倍数",
        1,
        4096,
        8,
    )
    .log()
    .bounded_by(shrink_bounds),
    ParamSpec::int("runs", "timed runs", "计时次数", 1, 50, 5).bounded_by(runs_bounds),
    ParamSpec::int("seed", "random seed", "随机种子", 0, 1 << 31, 1),
];

/// The scene's typed definition (`trainer-timing`).
pub struct TimingScene;

impl SceneDef for TimingScene {
    const ID: &'static str = "trainer-timing";
    type Output = TimingOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&TimingParams::from_values(v)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: TimingScene::ID,
    section: "§4.2",
    title: Text::new(
        "Measured here: per-tensor vs one-buffer Adam",
        "本机实测：逐张量 Adam 与整块 Adam",
    ),
    summary: Text::new(
        "Adam called once per parameter tensor vs once over the linked buffer, timed on this CPU, against a plain copy of the same bytes.",
        "Adam 逐个参数张量调用 vs 对链接好的整块调用一次，在本机 CPU 上计时，并与同样字节数的普通拷贝对比。",
    ),
    params: PARAMS,
    run: erase::<TimingScene>(),
    input: None,
    chapter: &Chapter::TRAINER,
    featured: Featured::Nothing,
    cost: Cost::Measured,
};

/// Parameters of `model` with every dimension ÷ `shrink` (rounded up); `None` for an unknown
/// model.
fn parameters(model_id: &str, shrink: i64) -> Option<u64> {
    let spec = model(model_id).ok()?;
    Some(total_parameters(&shrink_tensors(
        &spec.tensors(),
        usize::try_from(shrink.max(1)).ok()?,
    )))
}

/// The model and runs of `v`, defaults where missing or mistyped.
fn model_and_runs(v: &ParamValues) -> (String, i64) {
    (
        v.text("model").unwrap_or("transformer-big").to_owned(),
        v.int("runs").unwrap_or(5),
    )
}

/// The shrinks [`TimingParams::from_values`] accepts for `v`'s model and runs: from the
/// smallest whose buffers and work fit ([`MAX_ELEMENTS`], [`MAX_ELEMENT_RUNS`]) to 4096. The
/// parameter count only falls as the shrink grows, so a binary search finds it.
fn shrink_bounds(v: &ParamValues) -> Option<(i64, i64)> {
    let (m, runs) = model_and_runs(v);
    let fits = |s: i64| {
        parameters(&m, s).is_some_and(|n| {
            n <= MAX_ELEMENTS && n.saturating_mul(runs.max(0) as u64 + 1) <= MAX_ELEMENT_RUNS
        })
    };
    let (mut lo, mut hi) = (1_i64, 4096_i64);
    if !fits(hi) {
        return None;
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some((lo, 4096))
}

/// The runs [`TimingParams::from_values`] accepts for `v`'s model and shrink: 1 up to the
/// most whose work fits [`MAX_ELEMENT_RUNS`].
fn runs_bounds(v: &ParamValues) -> Option<(i64, i64)> {
    let (m, _) = model_and_runs(v);
    let n = parameters(&m, v.int("shrink").unwrap_or(8))?.max(1);
    let most = (MAX_ELEMENT_RUNS / n).saturating_sub(1).min(50);
    (most >= 1).then_some((1, most as i64))
}

/// Validated parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimingParams {
    /// Model id.
    pub model: String,
    /// Each dimension ÷ this.
    pub shrink: usize,
    /// Timed runs.
    pub runs: u32,
    /// Seed of the values.
    pub seed: u64,
}

impl TimingParams {
    /// Reads the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a value out of range or buffers over [`MAX_ELEMENTS`]
    /// (message gives the elements and bytes).
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        // Ranges come from the specs; only cross-parameter rules are checked here.
        let v = &v.clone().validated(PARAMS)?;
        let m = v.text("model")?;
        let spec = model(m)?;
        let shrink = v.int("shrink")?;
        let runs = v.int("runs")?;
        let seed = v.int("seed")?;
        let n = total_parameters(&shrink_tensors(&spec.tensors(), shrink as usize));
        if n > MAX_ELEMENTS {
            let bytes = n * bytes_allocated_per_param();
            return Err(Error::invalid(
                "shrink",
                shrink,
                crate::error::Expected::custom(
                    format!(
                        "the buffers would hold {n} parameters ({bytes} bytes); at most \
                         {MAX_ELEMENTS} parameters — a larger shrink"
                    ),
                    format!(
                        "缓冲区将存放 {n} 个参数（{bytes} 字节）；至多 {MAX_ELEMENTS} 个参数\
                         ——请加大 shrink"
                    ),
                ),
            ));
        }
        // Each run updates every parameter twice (per tensor, whole buffer); bound the work so
        // a slider at its top cannot freeze the explorer for seconds.
        let work = n.saturating_mul(runs as u64 + 1);
        if work > MAX_ELEMENT_RUNS {
            return Err(Error::invalid(
                "runs",
                runs,
                crate::error::Expected::custom(
                    format!(
                        "{n} parameters × ({runs} runs + 1 warm-up) = {work} parameter \
                         updates per scheme; at most {MAX_ELEMENT_RUNS} (about a second) — fewer \
                         runs or a larger shrink"
                    ),
                    format!(
                        "{n} 个参数 × （{runs} 次运行 + 1 次预热）= 每种方案 {work} 次参数更新；\
                         至多 {MAX_ELEMENT_RUNS}（约一秒）——请减少 runs 或加大 shrink"
                    ),
                ),
            ));
        }
        Ok(TimingParams {
            model: m.to_owned(),
            shrink: shrink as usize,
            runs: runs as u32,
            seed: seed as u64,
        })
    }
}

/// Bytes Adam moves per parameter in f32: reads p, g, m, v, writes p, m, v.
fn adam_bytes_per_param() -> u64 {
    7 * Precision::Fp32.bytes() as u64
}

/// Bytes allocated per parameter: p, g, m, v (f32) + copy source and destination (half of
/// Adam's bytes each).
fn bytes_allocated_per_param() -> u64 {
    4 * Precision::Fp32.bytes() as u64 + adam_bytes_per_param()
}

/// Median, min and max of one measurement, ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Timing {
    /// Median, ms.
    pub median_ms: f64,
    /// Fastest run, ms.
    pub min_ms: f64,
    /// Slowest run, ms.
    pub max_ms: f64,
    /// Bytes moved / median time, bytes per second.
    pub bytes_per_s: f64,
}

fn summarise(mut ms: Vec<f64>, bytes: f64) -> Timing {
    ms.sort_by(f64::total_cmp);
    let median = ms.get(ms.len() / 2).copied().unwrap_or(0.0);
    Timing {
        median_ms: median,
        min_ms: ms.first().copied().unwrap_or(0.0),
        max_ms: ms.last().copied().unwrap_or(0.0),
        bytes_per_s: if median > 0.0 {
            bytes / (median * 1e-3)
        } else {
            0.0
        },
    }
}

/// The scene's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimingOutput {
    /// Model id.
    pub model: String,
    /// Tensors (calls per step of the per-tensor trainer).
    pub tensors: usize,
    /// Parameters after shrinking.
    pub parameters: u64,
    /// Bytes Adam moves per step (28 per parameter in f32).
    pub bytes_per_step: u64,
    /// Adam once per tensor.
    pub per_tensor: Timing,
    /// Adam once over the whole buffer.
    pub whole_buffer: Timing,
    /// A plain copy of `bytes_per_step` bytes (half read, half written).
    pub copy: Timing,
    /// `per_tensor.median_ms / whole_buffer.median_ms`.
    pub ratio: f64,
    /// `(per_tensor − whole_buffer) / tensors`, µs: the measured cost of one extra call. Can
    /// come out negative; see [`TimingOutput::overhead_resolved`].
    pub per_call_overhead_us: f64,
    /// Whether the per-tensor run was slower than the whole-buffer run by more than the runs'
    /// spread (the larger of the two ways' max − min). `false`: on this CPU, now, one extra
    /// call costs less than the measurement resolves (cache and frequency effects dominate), so
    /// `per_call_overhead_us` is not a result — a CPU function call has no kernel-launch cost.
    pub overhead_resolved: bool,
    /// Results of the two ways bitwise identical (checked on the measured buffers).
    pub bitwise_identical: bool,
    /// Built without debug assertions (a release build). Dev builds (this workspace compiles
    /// them at opt-level 1) time slower and noisier; compare ratios, not absolute times.
    pub release_build: bool,
    /// Runs timed.
    pub runs: u32,
}

/// Measures. Reports progress ([`crate::progress`]) after the set-up and each timed run.
///
/// # Errors
/// [`Error::InvalidParam`] (`model`) for an unknown model; [`Error::Cancelled`] when the
/// current progress scope is cancelled.
pub fn run(p: &TimingParams) -> Result<TimingOutput, Error> {
    // Progress: the set-up, then one unit per timed run.
    crate::progress::report(0, u64::from(p.runs) + 1)?;
    let tensors = shrink_tensors(&model(&p.model)?.tensors(), p.shrink);
    let sizes: Vec<usize> = tensors.iter().map(|t| t.numel() as usize).collect();
    let n: usize = sizes.iter().sum();
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let init: Vec<f32> = (0..n).map(|_| rng.random_range(-0.1f32..0.1)).collect();
    let g: Vec<f32> = (0..n).map(|_| rng.random_range(-0.01f32..0.01)).collect();
    let step = AdamConfig::with_lr(1e-3).step(1);

    let fresh = || (init.clone(), vec![0.0f32; n], vec![0.0f32; n]);
    let per_tensor = |p: &mut [f32], m: &mut [f32], v: &mut [f32]| {
        let mut off = 0;
        for &k in &sizes {
            let r = off..off + k;
            adam_f32(
                &mut p[r.clone()],
                &g[r.clone()],
                &mut m[r.clone()],
                &mut v[r],
                &step,
            );
            off += k;
        }
    };
    let whole = |p: &mut [f32], m: &mut [f32], v: &mut [f32]| adam_f32(p, &g, m, v, &step);

    let copy_len = (n as u64 * adam_bytes_per_param() / 2).div_ceil(4) as usize;
    let src: Vec<f32> = (0..copy_len).map(|i| i as f32).collect();
    let mut dst = vec![0.0f32; copy_len];

    let (mut a, mut b) = (fresh(), fresh());
    per_tensor(&mut a.0, &mut a.1, &mut a.2);
    whole(&mut b.0, &mut b.1, &mut b.2);
    let same = |x: &[f32], y: &[f32]| x.iter().zip(y).all(|(x, y)| x.to_bits() == y.to_bits());
    let bitwise_identical = same(&a.0, &b.0) && same(&a.1, &b.1) && same(&a.2, &b.2);
    dst.copy_from_slice(&src);

    // Each run starts from the same state so both do identical arithmetic; the buffers of the
    // check above are reset and reused (fresh ones would cost page faults, outside the timed
    // part but most of the scene's time).
    let reset = |(p, m, v): &mut (Vec<f32>, Vec<f32>, Vec<f32>)| {
        p.copy_from_slice(&init);
        m.fill(0.0);
        v.fill(0.0);
    };
    let runs = u64::from(p.runs);
    let (mut tp, mut tw, mut tc) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..runs {
        crate::progress::report(r + 1, runs + 1)?;
        reset(&mut a);
        let t0 = Instant::now();
        per_tensor(&mut a.0, &mut a.1, &mut a.2);
        tp.push(t0.elapsed().as_secs_f64() * 1e3);
        reset(&mut b);
        let t0 = Instant::now();
        whole(&mut b.0, &mut b.1, &mut b.2);
        tw.push(t0.elapsed().as_secs_f64() * 1e3);
        let t0 = Instant::now();
        dst.copy_from_slice(&src);
        tc.push(t0.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box((&a.0, &b.0, &dst));
    }
    crate::progress::report(runs + 1, runs + 1)?;
    let bytes = n as f64 * adam_bytes_per_param() as f64;
    let per_tensor = summarise(tp, bytes);
    let whole_buffer = summarise(tw, bytes);
    let copy = summarise(tc, (copy_len * 2 * 4) as f64);
    Ok(TimingOutput {
        model: p.model.clone(),
        tensors: sizes.len(),
        parameters: n as u64,
        bytes_per_step: n as u64 * adam_bytes_per_param(),
        ratio: if whole_buffer.median_ms > 0.0 {
            per_tensor.median_ms / whole_buffer.median_ms
        } else {
            0.0
        },
        per_call_overhead_us: (per_tensor.median_ms - whole_buffer.median_ms) * 1e3
            / sizes.len().max(1) as f64,
        overhead_resolved: per_tensor.median_ms - whole_buffer.median_ms
            > (per_tensor.max_ms - per_tensor.min_ms)
                .max(whole_buffer.max_ms - whole_buffer.min_ms),
        per_tensor,
        whole_buffer,
        copy,
        bitwise_identical,
        release_build: !cfg!(debug_assertions),
        runs: p.runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_both_ways_and_they_agree_bitwise() {
        let o = run(&TimingParams {
            model: "transformer-big".into(),
            shrink: 64,
            runs: 3,
            seed: 1,
        })
        .unwrap();
        assert_eq!(o.tensors, 257);
        assert!(o.bitwise_identical);
        assert!(o.per_tensor.median_ms > 0.0 && o.whole_buffer.median_ms > 0.0);
        assert!(o.per_tensor.min_ms <= o.per_tensor.median_ms);
        assert!(o.per_tensor.median_ms <= o.per_tensor.max_ms);
        // 28 bytes per parameter in f32 (7 operands × 4 bytes).
        assert_eq!(o.bytes_per_step, 28 * o.parameters);
    }

    #[test]
    fn huge_buffers_are_refused() {
        let mut v = SCENE.defaults();
        v.set(SCENE.params, "shrink", "1").unwrap();
        let e = SCENE.report(v).unwrap_err().to_string();
        assert!(e.contains("`shrink`") && e.contains("209915904"), "{e}");
    }

    #[test]
    fn the_sliders_offer_exactly_the_shrinks_and_runs_the_scene_accepts() {
        use crate::trainer::census::MODEL_IDS;
        let spec = |name: &str| SCENE.params.iter().find(|p| p.name == name).unwrap();
        for m in MODEL_IDS {
            for runs in [1, 5, 50] {
                let mut v = SCENE.defaults();
                v.set(SCENE.params, "model", m).unwrap();
                v.set(SCENE.params, "runs", &runs.to_string()).unwrap();
                let Some((lo, hi)) = spec("shrink").int_range(&v) else {
                    continue;
                };
                assert_eq!(hi, 4096);
                // Each side of the lower end, checked by the scene's own validation.
                for (s, ok) in [(lo, true), (lo - 1, false)] {
                    if s < 1 {
                        continue;
                    }
                    v.set(SCENE.params, "shrink", &s.to_string()).unwrap();
                    assert_eq!(
                        TimingParams::from_values(&v).is_ok(),
                        ok,
                        "{m}, runs {runs}, shrink {s}"
                    );
                }
            }
        }
        // Shrink 1 of the big model is refused, so the slider starts above it.
        let v = SCENE.defaults();
        assert!(spec("shrink").int_range(&v).unwrap().0 > 1);
        // The runs slider ends where the work bound does.
        let (_, most) = spec("runs").int_range(&v).unwrap();
        let mut w = SCENE.defaults();
        w.set(SCENE.params, "runs", &most.to_string()).unwrap();
        assert!(TimingParams::from_values(&w).is_ok());
        if most < 50 {
            w.set(SCENE.params, "runs", &(most + 1).to_string())
                .unwrap();
            assert!(TimingParams::from_values(&w).is_err());
        }
    }
}
