//! The three number formats a parameter, its gradient and Adam's state can be stored in, and
//! what storing a value in each does: round to nearest, ties to even (IEEE 754
//! roundTiesToEven; bfloat16 as `half::bf16` rounds), overflow to ±∞; the gap to the
//! neighbouring value. FP16 reuses [`crate::trainer::fp16`]'s functions.

use half::bf16;
use serde::Serialize;

use crate::trainer::fp16::{fp16_neighbour, to_f16};

/// A storage format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// IEEE 754 binary32: 23 fraction bits, spacing 2⁻²³ ≈ 1.19e-7 at 1.
    F32,
    /// IEEE 754 binary16: 10 fraction bits, spacing 2⁻¹⁰ ≈ 9.77e-4 at 1, largest 65504,
    /// smallest subnormal 2⁻²⁴ ≈ 5.96e-8.
    F16,
    /// bfloat16 (f32's exponent, 7 fraction bits): spacing 2⁻⁷ ≈ 7.81e-3 at 1.
    Bf16,
}

impl Format {
    /// Parses `f32`, `f16` or `bf16`.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "f32" => Some(Format::F32),
            "f16" => Some(Format::F16),
            "bf16" => Some(Format::Bf16),
            _ => None,
        }
    }

    /// The name as the parameters spell it.
    pub fn name(self) -> &'static str {
        match self {
            Format::F32 => "f32",
            Format::F16 => "f16",
            Format::Bf16 => "bf16",
        }
    }

    /// `x` stored in this format, read back as an f32 (exact: every FP16 and bfloat16 value is
    /// an f32).
    pub fn round(self, x: f32) -> f32 {
        match self {
            Format::F32 => x,
            Format::F16 => to_f16(x).to_f32(),
            Format::Bf16 => bf16::from_f32(x).to_f32(),
        }
    }

    /// `x` (a real number given in f64) stored in this format, rounded once (no double rounding
    /// through f32 for FP16 and bfloat16).
    pub fn round64(self, x: f64) -> f32 {
        match self {
            Format::F32 => x as f32,
            Format::F16 => half::f16::from_f64(x).to_f32(),
            Format::Bf16 => bf16::from_f64(x).to_f32(),
        }
    }

    /// The gap from `stored` (a value of this format) to its neighbour toward +∞ (`up`) or −∞;
    /// NaN for a non-finite `stored`, and the gap below at the largest finite value.
    pub fn gap(self, stored: f32, up: bool) -> f32 {
        if !stored.is_finite() {
            return f32::NAN;
        }
        let next = match self {
            Format::F32 => f32::from_bits(neighbour_bits32(stored.to_bits(), up)),
            Format::F16 => fp16_neighbour(to_f16(stored), up).to_f32(),
            Format::Bf16 => {
                bf16::from_bits(neighbour_bits16(bf16::from_f32(stored).to_bits(), up)).to_f32()
            }
        };
        if next.is_infinite() {
            return self.gap(stored, !up);
        }
        (next - stored).abs()
    }

    /// The spacing at `x`: the gap from `x` stored in this format to the next value above
    /// (2⁻¹⁰ at 1.0 in FP16, 2⁻⁷ in bfloat16, 2⁻²³ in f32).
    pub fn spacing(self, x: f32) -> f32 {
        let s = self.round(x.abs());
        self.gap(s, true)
    }
}

/// The bits of the 16-bit sign-magnitude value next to `b` toward +∞ (`up`) or −∞.
fn neighbour_bits16(b: u16, up: bool) -> u16 {
    if b & 0x7fff == 0 {
        return if up { 0x0001 } else { 0x8001 };
    }
    // Away from zero adds one to the magnitude bits, toward zero subtracts one.
    if up != (b & 0x8000 != 0) {
        b.wrapping_add(1)
    } else {
        b.wrapping_sub(1)
    }
}

/// [`neighbour_bits16`] for binary32.
fn neighbour_bits32(b: u32, up: bool) -> u32 {
    if b & 0x7fff_ffff == 0 {
        return if up { 0x0000_0001 } else { 0x8000_0001 };
    }
    if up != (b & 0x8000_0000 != 0) {
        b.wrapping_add(1)
    } else {
        b.wrapping_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spacings_at_one_are_two_to_minus_the_fraction_bits() {
        assert_eq!(Format::F16.spacing(1.0), 2f32.powi(-10));
        assert_eq!(Format::Bf16.spacing(1.0), 2f32.powi(-7));
        assert_eq!(Format::F32.spacing(1.0), 2f32.powi(-23));
        // Below 1 the binade is [0.5, 1): half the spacing.
        assert_eq!(Format::F16.gap(1.0, false), 2f32.powi(-11));
        assert_eq!(Format::Bf16.gap(1.0, false), 2f32.powi(-8));
        // At FP16's largest finite value the gap below is used.
        assert_eq!(Format::F16.spacing(65504.0), 32.0);
    }

    #[test]
    fn rounding_flushes_what_is_below_half_the_smallest_subnormal() {
        // 2⁻²⁴ ≈ 5.96e-8 is FP16's smallest subnormal; 1e-8 < 2⁻²⁵ rounds to 0.
        assert_eq!(Format::F16.round(1e-8), 0.0);
        assert_eq!(Format::F16.round(2f32.powi(-24)), 2f32.powi(-24));
        // bfloat16 keeps f32's exponent: 1e-8 survives (to 7 fraction bits).
        assert!(Format::Bf16.round(1e-8) > 0.0);
        assert_eq!(Format::F16.round64(1e5), f32::INFINITY);
    }
}
