//! The FP16 number format: rounding to nearest (ties to even), the neighbouring values and the
//! spacing in each binade, what one update does to a stored FP16 value (exercise 9), and
//! branch-free FP16 ↔ f32 bit conversions that vectorise.

use half::f16;
use serde::Serialize;

/// Rounds to FP16: to nearest, ties to even (IEEE 754 roundTiesToEven), overflow to ±∞.
pub fn to_f16(x: f32) -> f16 {
    f16::from_f32(x)
}

/// The FP16 value next to `h` toward +∞ (`up`) or −∞.
pub fn fp16_neighbour(h: f16, up: bool) -> f16 {
    let b = h.to_bits();
    let mag = b & 0x7fff;
    let negative = b & 0x8000 != 0;
    if mag == 0 {
        return f16::from_bits(if up { 0x0001 } else { 0x8001 });
    }
    // Moving away from zero adds one to the magnitude bits, toward zero subtracts one.
    let away = up != negative;
    f16::from_bits(if away {
        b.wrapping_add(1)
    } else {
        b.wrapping_sub(1)
    })
}

/// The spacing of FP16 values around `x`: the gap from `fp16(x)` to its neighbour above
/// (`2ᵉ⁻¹⁰` for normal values in `[2ᵉ, 2ᵉ⁺¹)`, 2⁻²⁴ for subnormals; 32 at the largest finite
/// value 65504, where the gap below is used).
pub fn fp16_spacing(x: f32) -> f32 {
    let h = to_f16(x.abs());
    if h.is_infinite() || h.is_nan() {
        return f32::NAN;
    }
    let up = fp16_neighbour(h, true);
    if up.is_infinite() {
        h.to_f32() - fp16_neighbour(h, false).to_f32()
    } else {
        up.to_f32() - h.to_f32()
    }
}

/// One binade of FP16.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Binade {
    /// Smallest value of the binade (0 for the subnormals).
    pub from: f32,
    /// Its upper end (exclusive).
    pub to: f32,
    /// Gap between neighbouring values.
    pub spacing: f32,
    /// Half of it: smaller updates are swallowed.
    pub half_spacing: f32,
}

/// The positive FP16 binades, subnormals first, each from its bit patterns.
pub fn fp16_binades() -> Vec<Binade> {
    let mut out = Vec::new();
    let sub = f16::from_bits(0x0001).to_f32();
    out.push(Binade {
        from: 0.0,
        to: f16::from_bits(0x0400).to_f32(),
        spacing: sub,
        half_spacing: sub / 2.0,
    });
    for e in 1u16..=30 {
        let lo = f16::from_bits(e << 10);
        let spacing = f16::from_bits((e << 10) + 1).to_f32() - lo.to_f32();
        out.push(Binade {
            from: lo.to_f32(),
            to: 2.0 * lo.to_f32(),
            spacing,
            half_spacing: spacing / 2.0,
        });
    }
    out
}

/// What an update does to an FP16-stored value (exercise 9).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fp16Update {
    /// The parameter as given.
    pub gamma: f32,
    /// The update added (e.g. Adam's ≈ ±lr).
    pub update: f32,
    /// `fp16(gamma)`: what the workspace stores.
    pub stored: f32,
    /// The gap from `stored` to its neighbour in the update's direction.
    pub gap: f32,
    /// Half of it.
    pub half_gap: f32,
    /// `fp16(stored + update)` (the sum in f32 registers, then rounded).
    pub stored_after: f32,
    /// What was really added: `stored_after − stored`.
    pub added: f32,
    /// Nothing was added.
    pub swallowed: bool,
    /// `added / update` (1 = exact; 0 = swallowed; > 1 = amplified).
    pub amplification: f32,
}

/// Adds `update` to `gamma` stored in FP16 the way the workspace kernel does: convert to f32,
/// add, round back to FP16 (ties to even). Exercise 9: `(1.5, 3e-4)` is swallowed; `(0.6,
/// 3e-4)` adds a whole spacing 2⁻¹¹ ≈ 4.88e-4.
pub fn fp16_stored_update(gamma: f32, update: f32) -> Fp16Update {
    let h = to_f16(gamma);
    let stored = h.to_f32();
    let gap = (fp16_neighbour(h, update >= 0.0).to_f32() - stored).abs();
    let after = to_f16(stored + update).to_f32();
    let added = after - stored;
    Fp16Update {
        gamma,
        update,
        stored,
        gap,
        half_gap: gap / 2.0,
        stored_after: after,
        added,
        swallowed: added == 0.0,
        amplification: if update != 0.0 { added / update } else { 0.0 },
    }
}

/// FP16 bits → f32, exactly as `half::f16::to_f32` (IEEE 754 widening is exact), written
/// without branches so a loop over many values vectorises (`half`'s per-value call checks the
/// CPU's features each time and keeps the loop scalar). NaN stays NaN (payload not promised).
#[inline(always)]
pub fn f16_bits_to_f32(h: u16) -> f32 {
    const EXP: u32 = 0x7c00 << 13; // FP16's exponent field, shifted to f32's position
    const MAGIC: u32 = 113 << 23; // 2⁻¹⁴, the smallest normal FP16
    let h = u32::from(h);
    let em = (h & 0x7fff) << 13; // exponent and fraction in f32's places
    let exp = em & EXP;
    // Normal: rebias the exponent from 15 to 127.
    let normal = em + ((127 - 15) << 23);
    // Inf/NaN: exponent all ones in f32 too.
    let infnan = em + ((255 - 31) << 23);
    // Zero/subnormal: k·2⁻²⁴ = (2⁻¹⁴ + k·2⁻²⁴) − 2⁻¹⁴, exact in f32.
    let sub = (f32::from_bits(em + MAGIC) - f32::from_bits(MAGIC)).to_bits();
    let r = if exp == EXP {
        infnan
    } else if exp == 0 {
        sub
    } else {
        normal
    };
    f32::from_bits(r | ((h & 0x8000) << 16))
}

/// f32 → FP16 bits rounded to nearest, ties to even, overflow to ±∞ — bitwise what
/// `half::f16::from_f32` returns (NaN → a quiet NaN keeping the top payload bits), without
/// branches so a loop over many values vectorises.
#[inline(always)]
pub fn f32_to_f16_bits(x: f32) -> u16 {
    const F16_OVERFLOW: u32 = (127 + 16) << 23; // 2¹⁶: at or above, ±∞ (or NaN)
    const F16_NORMAL_MIN: u32 = 113 << 23; // 2⁻¹⁴
    const DENORM_MAGIC: u32 = ((127 - 15) + (23 - 10) + 1) << 23; // 0.5: its ulp is 2⁻²⁴
    let u = x.to_bits();
    let sign = (u >> 16) & 0x8000;
    let a = u & 0x7fff_ffff;
    // Normal: rebias, then add 0xfff plus the kept lowest bit (ties to even) before dropping
    // 13 bits; a carry into the exponent is the correct rounding up (up to ∞ at 65520).
    let odd = (a >> 13) & 1;
    let normal = a.wrapping_sub((127 - 15) << 23).wrapping_add(0xfff + odd) >> 13;
    // Subnormal or zero: adding 0.5 rounds |x| to a multiple of 2⁻²⁴ (the FPU's own ties to
    // even); the low bits are then the FP16 subnormal's bits (0x400 = the smallest normal).
    let sub = (f32::from_bits(a) + f32::from_bits(DENORM_MAGIC))
        .to_bits()
        .wrapping_sub(DENORM_MAGIC);
    let infnan = if a > 0x7f80_0000 {
        0x7e00 | ((a >> 13) & 0x3ff)
    } else {
        0x7c00
    };
    let r = if a >= F16_OVERFLOW {
        infnan
    } else if a < F16_NORMAL_MIN {
        sub
    } else {
        normal
    };
    (r | sign) as u16
}

/// `fp16(x)` as an f32: what a value stored in FP16 reads back as.
#[inline(always)]
pub(super) fn round_f16(x: f32) -> f32 {
    f16_bits_to_f32(f32_to_f16_bits(x))
}
