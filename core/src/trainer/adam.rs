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
/// [`AdamStep::update_f16`] element by element, but in chunks: p and g are widened to f32 a
/// chunk at a time with `half`'s slice conversions (F16C/NEON when the CPU has them), the f32
/// update runs over the chunk (a loop the compiler vectorises), and p is rounded back to FP16.
/// Per-element conversion calls check the CPU's features each time and keep the loop scalar.
/// Extra elements of longer slices are ignored.
pub fn adam_f16(p: &mut [f16], g: &[f16], m: &mut [f32], v: &mut [f32], s: &AdamStep) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_f16_adam_is_bitwise_the_per_element_update() {
        let n = 1500; // three chunks, the last one partial
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
