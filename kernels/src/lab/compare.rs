//! The GPU's buffers against the simulation's, element by element, with a tolerance per
//! element type:
//!
//! - `u32`, `i32`: exact.
//! - `f32`: |gpu − simulated| ≤ 1e-5 + 1e-4·|simulated| ([`Tolerance::F32`]). The simulator
//!   evaluates each invocation's arithmetic in the order the source writes it, but a GPU
//!   compiler may contract `a * b + c` into one fused multiply-add, a subgroup reduction
//!   (`subgroupAdd`) may add in any order, and WGSL allows `exp`, `log`, division and the like
//!   a few ulp of error; 1e-4 relative is about 1,700 ulp, room for a reassociated sum of a
//!   few thousand terms of one sign, and 1e-5 absolute covers results that cancel to near 0.
//! - `f16`: [`Tolerance::F16`], one f16 ulp relative (2⁻¹⁰) and 2⁻²⁴ absolute.
//!
//! Two NaNs match (whatever their payloads), as do two infinities of one sign.

use std::collections::BTreeMap;

use serde::Serialize;
use warpscope_core::lab::dispatch::{Binding, ElementType, ScalarType};
use warpscope_core::lab::output::{BufferOut, Element};

use crate::runner::Tolerance;

/// Mismatching elements listed per buffer (the count covers them all).
pub const MAX_LISTED: usize = 8;

/// One element that differs beyond the tolerance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// The element's index in the buffer.
    pub index: usize,
    /// The GPU's value (components of a vector).
    pub gpu: Element,
    /// The simulation's.
    pub simulated: Element,
}

/// One binding compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BufferComparison {
    /// The element type (as the dispatch declares it).
    #[serde(rename = "type")]
    pub ty: ElementType,
    /// The tolerance applied (exact for integers: abs = rel = 0).
    pub tolerance: Tolerance,
    /// Elements the GPU run gave (0 when it has no such buffer).
    pub gpu_elements: usize,
    /// Elements the simulation gave (0 when it has no such buffer).
    pub simulated_elements: usize,
    /// Elements outside the tolerance among those both have.
    pub mismatches: usize,
    /// Largest |gpu − simulated| over the components both have (0 when none differ; +∞ when
    /// one side is NaN or infinite and the other is not).
    pub max_abs_error: f64,
    /// The first [`MAX_LISTED`] mismatching elements, in index order.
    pub first_mismatches: Vec<Mismatch>,
    /// Same length, every element within tolerance.
    pub passed: bool,
}

/// Every writable binding of both runs compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Whether every binding passed and both sides have the same bindings.
    pub passed: bool,
    /// Per binding (the union of both sides).
    pub buffers: BTreeMap<Binding, BufferComparison>,
}

/// The tolerance for elements of `ty` (see the module docs).
pub fn tolerance_for(ty: ElementType) -> Tolerance {
    match ty.scalar {
        ScalarType::F32 => Tolerance::F32,
        ScalarType::F16 => Tolerance::F16,
        ScalarType::U32 => Tolerance {
            dtype: "u32",
            abs: 0.0,
            rel: 0.0,
        },
        ScalarType::I32 => Tolerance {
            dtype: "i32",
            abs: 0.0,
            rel: 0.0,
        },
    }
}

/// |got − want| for one component, and whether it is within `tol` (see the module docs).
fn component(got: f64, want: f64, tol: Tolerance) -> (f64, bool) {
    if got.is_nan() || want.is_nan() {
        return if got.is_nan() && want.is_nan() {
            (0.0, true)
        } else {
            (f64::INFINITY, false)
        };
    }
    if got.is_infinite() || want.is_infinite() {
        return if got == want {
            (0.0, true)
        } else {
            (f64::INFINITY, false)
        };
    }
    let d = (got - want).abs();
    (d, d <= tol.abs + tol.rel * want.abs())
}

/// Compares one buffer; `gpu` or `simulated` may be missing.
fn compare_buffer(gpu: Option<&BufferOut>, simulated: Option<&BufferOut>) -> BufferComparison {
    let ty = gpu.or(simulated).map_or(
        ElementType {
            scalar: ScalarType::F32,
            components: 1,
        },
        |b| b.ty,
    );
    let tolerance = tolerance_for(ty);
    let empty: &[Element] = &[];
    let g = gpu.map_or(empty, |b| b.values.as_slice());
    let s = simulated.map_or(empty, |b| b.values.as_slice());
    let mut c = BufferComparison {
        ty,
        tolerance,
        gpu_elements: g.len(),
        simulated_elements: s.len(),
        mismatches: 0,
        max_abs_error: 0.0,
        first_mismatches: Vec::new(),
        passed: gpu.is_some() && simulated.is_some() && g.len() == s.len(),
    };
    for (index, (ge, se)) in g.iter().zip(s).enumerate() {
        let mut ok = ge.0.len() == se.0.len();
        for (a, b) in ge.0.iter().zip(&se.0) {
            let (d, within) = component(*a, *b, tolerance);
            c.max_abs_error = c.max_abs_error.max(d);
            ok &= within;
        }
        if !ok {
            c.mismatches += 1;
            c.passed = false;
            if c.first_mismatches.len() < MAX_LISTED {
                c.first_mismatches.push(Mismatch {
                    index,
                    gpu: ge.clone(),
                    simulated: se.clone(),
                });
            }
        }
    }
    c
}

/// Compares the GPU run's buffers with the simulation's, binding by binding (see the module
/// docs for the tolerances). A binding on one side only fails.
pub fn compare(
    gpu: &BTreeMap<Binding, BufferOut>,
    simulated: &BTreeMap<Binding, BufferOut>,
) -> Comparison {
    let mut buffers = BTreeMap::new();
    for b in gpu.keys().chain(simulated.keys()) {
        buffers
            .entry(*b)
            .or_insert_with(|| compare_buffer(gpu.get(b), simulated.get(b)));
    }
    Comparison {
        passed: buffers.values().all(|c| c.passed),
        buffers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(ty: &str, values: &[&[f64]]) -> BufferOut {
        BufferOut {
            ty: ty.parse().unwrap(),
            values: values.iter().map(|v| Element(v.to_vec())).collect(),
        }
    }

    fn b(binding: u32) -> Binding {
        Binding { group: 0, binding }
    }

    #[test]
    fn floats_within_tolerance_integers_exact() {
        // 1000 + 0.05 is 5e-5 relative: within 1e-5 + 1e-4·1000 = 0.10001.
        let gpu = BTreeMap::from([
            (b(0), buf("f32", &[&[1000.05], &[0.0], &[f64::NAN]])),
            (b(1), buf("u32", &[&[7.0], &[8.0]])),
        ]);
        let sim = BTreeMap::from([
            (b(0), buf("f32", &[&[1000.0], &[9e-6], &[f64::NAN]])),
            (b(1), buf("u32", &[&[7.0], &[9.0]])),
        ]);
        let c = compare(&gpu, &sim);
        assert!(!c.passed);
        let f = &c.buffers[&b(0)];
        assert!(f.passed, "{f:?}");
        assert_eq!(f.mismatches, 0);
        // The largest difference is the 0.05 (up to f64 rounding of 1000.05).
        assert!((f.max_abs_error - 0.05).abs() < 1e-9, "{}", f.max_abs_error);
        let u = &c.buffers[&b(1)];
        assert!(!u.passed);
        assert_eq!(u.mismatches, 1);
        assert_eq!(u.first_mismatches[0].index, 1);
        assert_eq!(u.first_mismatches[0].gpu, Element(vec![8.0]));
        assert_eq!(u.max_abs_error, 1.0);
    }

    #[test]
    fn vectors_lengths_and_missing_buffers() {
        // A vec2 element fails when either component does: 2 vs 2.1 is 0.1 > 1e-5 + 2.1e-4.
        let gpu = BTreeMap::from([(b(0), buf("vec2<f32>", &[&[1.0, 2.0], &[3.0, 4.0]]))]);
        let sim = BTreeMap::from([
            (b(0), buf("vec2<f32>", &[&[1.0, 2.1], &[3.0, 4.0]])),
            (b(2), buf("i32", &[&[-1.0]])),
        ]);
        let c = compare(&gpu, &sim);
        assert_eq!(c.buffers[&b(0)].mismatches, 1);
        let missing = &c.buffers[&b(2)];
        assert_eq!((missing.gpu_elements, missing.simulated_elements), (0, 1));
        assert!(!missing.passed);
        let short = compare(
            &BTreeMap::from([(b(0), buf("f32", &[&[1.0]]))]),
            &BTreeMap::from([(b(0), buf("f32", &[&[1.0], &[2.0]]))]),
        );
        assert!(!short.passed);
        assert_eq!(short.buffers[&b(0)].mismatches, 0);
        let inf = compare(
            &BTreeMap::from([(b(0), buf("f32", &[&[f64::INFINITY], &[1.0]]))]),
            &BTreeMap::from([(b(0), buf("f32", &[&[f64::INFINITY], &[f64::NAN]]))]),
        );
        assert_eq!(inf.buffers[&b(0)].mismatches, 1);
        assert_eq!(inf.buffers[&b(0)].first_mismatches[0].index, 1);
    }
}
