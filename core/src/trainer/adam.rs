//! The one Adam update (Kingma & Ba 2015, algorithm 1; no weight decay) every trainer scene
//! uses, element by element in f32 — as the trainer kernels compute it in registers (lecture
//! §4.2; LightSeq2 paper §IV-C). Adam is element-wise, so how the parameters are cut into
//! tensors cannot change any result.

use half::f16;
use serde::Serialize;

/// Adam's hyper-parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AdamConfig {
    /// Learning rate.
    pub lr: f32,
    /// First-moment decay β₁.
    pub beta1: f32,
    /// Second-moment decay β₂.
    pub beta2: f32,
    /// ε added to √v̂.
    pub eps: f32,
}

impl AdamConfig {
    /// PyTorch's and the paper's defaults (β₁ 0.9, β₂ 0.999, ε 1e-8) at learning rate `lr`.
    pub fn with_lr(lr: f32) -> Self {
        AdamConfig {
            lr,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        }
    }

    /// The constants of step `t` (1-based): bias corrections `1 − β₁ᵗ`, `1 − β₂ᵗ`.
    pub fn step(&self, t: u32) -> AdamStep {
        let t = t.max(1) as i32;
        AdamStep {
            lr: self.lr,
            beta1: self.beta1,
            beta2: self.beta2,
            eps: self.eps,
            c1: 1.0 - self.beta1.powi(t),
            c2: 1.0 - self.beta2.powi(t),
        }
    }
}

/// One step's constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamStep {
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    c1: f32,
    c2: f32,
}

impl AdamStep {
    /// Updates the moments `m`, `v` with gradient `g` and returns the new parameter:
    /// `m ← β₁m + (1−β₁)g`, `v ← β₂v + (1−β₂)g²`, `p − lr · (m/c₁) / (√(v/c₂) + ε)`.
    #[inline]
    pub fn update(&self, p: f32, g: f32, m: &mut f32, v: &mut f32) -> f32 {
        *m = self.beta1 * *m + (1.0 - self.beta1) * g;
        *v = self.beta2 * *v + (1.0 - self.beta2) * g * g;
        let m_hat = *m / self.c1;
        let v_hat = *v / self.c2;
        p - self.lr * m_hat / (v_hat.sqrt() + self.eps)
    }

    /// The FP16-workspace kernel on one element: read p, g in FP16, convert to f32 in
    /// registers, update, round p back to FP16 (to nearest, ties to even); m, v stay f32.
    #[inline]
    pub fn update_f16(&self, p: &mut f16, g: f16, m: &mut f32, v: &mut f32) {
        *p = f16::from_f32(self.update(p.to_f32(), g.to_f32(), m, v));
    }
}

/// Adam over f32 slices of equal length (one "kernel call"); extra elements of longer slices
/// are ignored.
pub fn adam_f32(p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], s: &AdamStep) {
    for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
        *p = s.update(*p, g, m, v);
    }
}

/// Adam over an FP16 workspace's slices (p, g in FP16; m, v in f32), bitwise the same as
/// [`AdamStep::update_f16`] element by element. Where the CPU has AVX2 and F16C (checked at
/// run time) one loop converts, updates and rounds back 8 elements at a time in registers
/// ([`x86::adam_f16_avx2`]); elsewhere, and for the last < 8 elements, [`adam_f16_chunked`].
/// Extra elements of longer slices are ignored.
pub fn adam_f16(p: &mut [f16], g: &[f16], m: &mut [f32], v: &mut [f32], s: &AdamStep) {
    let n = p.len().min(g.len()).min(m.len()).min(v.len());
    let (p, g, m, v) = (&mut p[..n], &g[..n], &mut m[..n], &mut v[..n]);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c") {
        // SAFETY: the CPU has AVX2 and F16C (checked just above), the only requirement of
        // calling a `#[target_feature(enable = "avx2,f16c")]` function.
        let done = unsafe { x86::adam_f16_avx2(p, g, m, v, s) };
        adam_f16_chunked(
            &mut p[done..],
            &g[done..],
            &mut m[done..],
            &mut v[done..],
            s,
        );
        return;
    }
    adam_f16_chunked(p, g, m, v, s);
}

/// The portable FP16-workspace Adam, bitwise the same as [`AdamStep::update_f16`]: p and g
/// are widened to f32 a chunk at a time with `half`'s slice conversions (F16C/NEON when the CPU
/// has them), the f32 update runs over the chunk (a loop the compiler vectorises), and p is
/// rounded back to FP16. Extra elements of longer slices are ignored.
pub fn adam_f16_chunked(p: &mut [f16], g: &[f16], m: &mut [f32], v: &mut [f32], s: &AdamStep) {
    use half::slice::HalfFloatSliceExt;
    const CHUNK: usize = 512;
    let n = p.len().min(g.len()).min(m.len()).min(v.len());
    let (mut pf, mut gf) = ([0.0f32; CHUNK], [0.0f32; CHUNK]);
    let mut start = 0;
    while start < n {
        let end = (start + CHUNK).min(n);
        let k = end - start;
        p[start..end].convert_to_f32_slice(&mut pf[..k]);
        g[start..end].convert_to_f32_slice(&mut gf[..k]);
        adam_f32(
            &mut pf[..k],
            &gf[..k],
            &mut m[start..end],
            &mut v[start..end],
            s,
        );
        p[start..end].convert_from_f32_slice(&pf[..k]);
        start = end;
    }
}

/// The x86-64 kernel: F16C conversions and AVX arithmetic in one loop.
#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use std::arch::x86_64::{
        __m128i, _MM_FROUND_TO_NEAREST_INT, _mm_loadu_si128, _mm_storeu_si128, _mm256_add_ps,
        _mm256_cvtph_ps, _mm256_cvtps_ph, _mm256_div_ps, _mm256_loadu_ps, _mm256_mul_ps,
        _mm256_set1_ps, _mm256_sqrt_ps, _mm256_storeu_ps, _mm256_sub_ps,
    };

    use half::f16;

    use super::AdamStep;

    /// Adam on the first `8 · ⌊n / 8⌋` elements (n = the shortest slice's length), 8 at a
    /// time: `vcvtph2ps` widens p and g (exact), the update is [`AdamStep::update`]'s IEEE
    /// operations in its order (multiplies and adds stay separate: no FMA), `vcvtps2ph` with
    /// round-to-nearest-even narrows p — so each element's bits are those of
    /// [`AdamStep::update_f16`]. Returns the number of elements updated; the caller finishes
    /// the rest.
    ///
    /// # Safety
    /// Callable only where the CPU has AVX2 and F16C (hence `unsafe` to call from code not
    /// compiled for them): [`super::adam_f16`] checks with `is_x86_feature_detected!`.
    #[target_feature(enable = "avx2,f16c")]
    pub fn adam_f16_avx2(
        p: &mut [f16],
        g: &[f16],
        m: &mut [f32],
        v: &mut [f32],
        s: &AdamStep,
    ) -> usize {
        let n = p.len().min(g.len()).min(m.len()).min(v.len());
        let b1 = _mm256_set1_ps(s.beta1);
        let b1c = _mm256_set1_ps(1.0 - s.beta1);
        let b2 = _mm256_set1_ps(s.beta2);
        let b2c = _mm256_set1_ps(1.0 - s.beta2);
        let (c1, c2) = (_mm256_set1_ps(s.c1), _mm256_set1_ps(s.c2));
        let (lr, eps) = (_mm256_set1_ps(s.lr), _mm256_set1_ps(s.eps));
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: i + 8 ≤ n ≤ each slice's length, so each 8-element load and store
            // (16 bytes of f16, 32 bytes of f32; unaligned forms) stays inside its slice; `p`,
            // `m` and `v` are exclusive borrows, so the stores alias nothing else; f16 is a
            // plain 2-byte value (`repr(transparent)` over u16), so its bytes are what
            // `vcvtph2ps` reads and `vcvtps2ph` writes.
            unsafe {
                let pp = p.as_mut_ptr().add(i);
                let pf = _mm256_cvtph_ps(_mm_loadu_si128(pp.cast::<__m128i>()));
                let gf = _mm256_cvtph_ps(_mm_loadu_si128(g.as_ptr().add(i).cast::<__m128i>()));
                let mp = m.as_mut_ptr().add(i);
                let vp = v.as_mut_ptr().add(i);
                // m ← β₁m + (1−β₁)g;  v ← β₂v + ((1−β₂)g)g
                let mf = _mm256_add_ps(
                    _mm256_mul_ps(b1, _mm256_loadu_ps(mp)),
                    _mm256_mul_ps(b1c, gf),
                );
                let vf = _mm256_add_ps(
                    _mm256_mul_ps(b2, _mm256_loadu_ps(vp)),
                    _mm256_mul_ps(_mm256_mul_ps(b2c, gf), gf),
                );
                _mm256_storeu_ps(mp, mf);
                _mm256_storeu_ps(vp, vf);
                // p − (lr · (m/c₁)) / (√(v/c₂) + ε)
                let m_hat = _mm256_div_ps(mf, c1);
                let v_hat = _mm256_div_ps(vf, c2);
                let upd = _mm256_div_ps(
                    _mm256_mul_ps(lr, m_hat),
                    _mm256_add_ps(_mm256_sqrt_ps(v_hat), eps),
                );
                let ph = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_sub_ps(pf, upd));
                _mm_storeu_si128(pp.cast::<__m128i>(), ph);
            }
            i += 8;
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_f16_adam_is_bitwise_the_per_element_update() {
        let n = 1501; // three chunks, the last one partial; not a multiple of 8
        let p0: Vec<f16> = (0..n)
            .map(|i| f16::from_f32((i as f32 * 0.37).sin() * 0.05))
            .collect();
        let g: Vec<f16> = (0..n)
            .map(|i| f16::from_f32((i as f32 * 1.3).cos() * 0.01))
            .collect();
        let (mut pa, mut ma, mut va) = (p0.clone(), vec![0.0f32; n], vec![0.0f32; n]);
        let (mut pb, mut mb, mut vb) = (p0, vec![0.0f32; n], vec![0.0f32; n]);
        let cfg = AdamConfig::with_lr(1e-3);
        for t in 1..=3 {
            let s = cfg.step(t);
            adam_f16(&mut pa, &g, &mut ma, &mut va, &s);
            for i in 0..n {
                s.update_f16(&mut pb[i], g[i], &mut mb[i], &mut vb[i]);
            }
        }
        let bits = |x: &[f32]| x.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert!(pa.iter().zip(&pb).all(|(a, b)| a.to_bits() == b.to_bits()));
        assert_eq!(bits(&ma), bits(&mb));
        assert_eq!(bits(&va), bits(&vb));
    }

    #[test]
    fn every_path_is_bitwise_the_per_element_update_on_edge_values() {
        // Subnormal, tiny, huge (rounding to ±∞ after the update), signed zeros, and ties: the
        // conversions' corner cases, through the dispatching kernel, the portable one and the
        // per-element update, for several steps and learning rates.
        let specials = [
            0.0f32,
            -0.0,
            6e-8,
            -6e-8,
            3e-5,
            1e-3,
            0.5,
            1.0,
            1.0 + 1.0 / 2048.0,
            -1.5,
            2.0,
            1000.0,
            65504.0,
            -65504.0,
            60000.0,
        ];
        let n = 8 * 40 + 5;
        let p0: Vec<f16> = (0..n)
            .map(|i| {
                f16::from_f32(specials[i % specials.len()] * if i % 7 == 0 { -1.0 } else { 1.0 })
            })
            .collect();
        let g: Vec<f16> = (0..n)
            .map(|i| f16::from_f32(specials[(i * 5 + 3) % specials.len()] * 0.5))
            .collect();
        for lr in [1e-4f32, 1e-3, 0.5, 3000.0] {
            let cfg = AdamConfig::with_lr(lr);
            let mut a = (p0.clone(), vec![0.0f32; n], vec![0.0f32; n]);
            let mut b = a.clone();
            let mut c = a.clone();
            for t in 1..=4 {
                let s = cfg.step(t);
                adam_f16(&mut a.0, &g, &mut a.1, &mut a.2, &s);
                adam_f16_chunked(&mut b.0, &g, &mut b.1, &mut b.2, &s);
                for (i, &gi) in g.iter().enumerate() {
                    s.update_f16(&mut c.0[i], gi, &mut c.1[i], &mut c.2[i]);
                }
            }
            let bits16 = |x: &[f16]| x.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let bits = |x: &[f32]| x.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits16(&a.0), bits16(&c.0), "lr {lr}");
            assert_eq!(bits16(&b.0), bits16(&c.0), "lr {lr}");
            assert_eq!(
                (bits(&a.1), bits(&a.2)),
                (bits(&c.1), bits(&c.2)),
                "lr {lr}"
            );
            assert_eq!(
                (bits(&b.1), bits(&b.2)),
                (bits(&c.1), bits(&c.2)),
                "lr {lr}"
            );
            if lr == 3000.0 {
                assert!(
                    c.0.iter().any(|x| x.is_infinite()),
                    "overflow case exercised"
                );
            }
        }
    }

    #[test]
    fn first_step_moves_by_lr_against_the_gradient_sign() {
        // Step 1: m̂ = g, v̂ = g², so the update is lr·g/(|g| + ε) ≈ lr·sign(g).
        let s = AdamConfig::with_lr(1e-3).step(1);
        let (mut m, mut v) = (0.0, 0.0);
        let p = s.update(1.0, 0.5, &mut m, &mut v);
        assert!((p - (1.0 - 1e-3)).abs() < 1e-7, "{p}");
        let (mut m, mut v) = (0.0, 0.0);
        let p = s.update(1.0, -2.0, &mut m, &mut v);
        assert!((p - (1.0 + 1e-3)).abs() < 1e-7, "{p}");
    }
}
