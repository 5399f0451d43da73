//! Seeded test data: a ChaCha8 stream (the generator every random experiment in `core` uses),
//! uniforms in [0, 1) and standard normals. Deterministic across platforms for a given seed.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

/// A seeded stream of uniforms and normals.
#[derive(Debug, Clone)]
pub struct Seeded(ChaCha8Rng);

impl Seeded {
    /// The stream for `seed`.
    pub fn new(seed: u64) -> Self {
        Seeded(ChaCha8Rng::seed_from_u64(seed))
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0.random::<f64>()
    }

    /// Standard normal.
    pub fn normal(&mut self) -> f64 {
        self.0.sample::<f64, _>(StandardNormal)
    }

    /// `n` standard normals as f32.
    pub fn normals_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.normal() as f32).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_are_roughly_standard_and_a_seed_repeats() {
        let mut r = Seeded::new(7);
        let v: Vec<f64> = (0..20_000).map(|_| r.normal()).collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
        assert!(mean.abs() < 0.05, "{mean}");
        assert!((var - 1.0).abs() < 0.05, "{var}");
        let u: Vec<f64> = (0..1000).map(|_| r.uniform()).collect();
        assert!(u.iter().all(|x| (0.0..1.0).contains(x)));
        assert_eq!(Seeded::new(3).normals_f32(5), Seeded::new(3).normals_f32(5));
        assert_ne!(Seeded::new(3).normals_f32(5), Seeded::new(4).normals_f32(5));
    }
}
