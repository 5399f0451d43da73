//! Scene `softmax-saved` (lecture §3.3, script 02 part 3): what the forward keeps for this
//! backward, and three ways to keep less.
//!
//! The formula decides: softmax backward needs y, dropout backward needs the mask M. Both are
//! score-sized, B·h·L·L elements per attention layer, so they grow with L². Kept:
//!
//! 1. y in T (fp16: 2 bytes) and M as one byte per element (uint8) — the baseline;
//! 2. M as a bit mask: ⌈B·h·L·L / 8⌉ bytes (1/8 of the byte mask);
//! 3. only the RNG seed (8 bytes, one u64): the backward regenerates M from it (Philox is
//!    counter-based, so any element's bit can be recomputed independently);
//! 4. not even y: the backward recomputes it from Q, K (kept anyway for their own gradients)
//!    and the row log-sum-exp, one f32 per row (B·h·L · 4 bytes) — FlashAttention (lecture 21).
//!
//! Sizes are bytes; `*_mib` are MiB (2²⁰ bytes).

use crate::text::Text;
use serde::Serialize;

use super::{DTYPES, Dtype, check_range, int_in};
use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};

/// Bytes of a kept RNG seed (one u64).
pub const SEED_BYTES: u64 = 8;
/// Bytes per row of the log-sum-exp FlashAttention keeps (f32).
pub const LSE_BYTES: u64 = 4;
/// Longest sequence the scene sizes (2²⁰).
pub const MAX_LEN: u64 = 1 << 20;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("batch", "batch B", "批大小 B", 1, 1024, 8).log(),
    ParamSpec::int("heads", "heads h", "头数 h", 1, 256, 16).log(),
    ParamSpec::int(
        "len",
        "sequence length L",
        "序列长度 L",
        1,
        MAX_LEN as i64,
        512,
    )
    .log(),
    ParamSpec::choice("dtype", "dtype of y", "y 的类型", DTYPES, "f16"),
];

/// The scene's typed definition (`softmax-saved`).
pub struct SavedScene;

impl SceneDef for SavedScene {
    const ID: &'static str = "softmax-saved";
    type Output = SavedOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&SavedParams::from_values(v)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: SavedScene::ID,
    section: "§3.3",
    title: Text::new(
        "What the forward saves for softmax and dropout backward",
        "为了反向，前向要存什么",
    ),
    summary: Text::new(
        "y and the dropout mask are both B·h·L·L; a bit mask, a seed, or recomputing y (FlashAttention) keep less.",
        "y 和 dropout 掩码都是 B·h·L·L；位掩码、随机种子或重算 y（FlashAttention）存得更少。",
    ),
    params: PARAMS,
    run: erase::<SavedScene>(),
    input: None,
    chapter: &Chapter::SOFTMAX,
    featured: Featured::Nothing,
    cost: Cost::Light,
};

/// Validated parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SavedParams {
    /// Batch B (1..=1024).
    pub batch: u64,
    /// Heads h (1..=256).
    pub heads: u64,
    /// Sequence length L (1..=2²⁰).
    pub len: u64,
    /// Storage type of y.
    pub dtype: Dtype,
}

impl SavedParams {
    /// Reads and validates the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let p = SavedParams {
            batch: int_in(v, "batch", 1, 1024)?,
            heads: int_in(v, "heads", 1, 256)?,
            len: int_in(v, "len", 1, MAX_LEN as i64)?,
            dtype: Dtype::parse("dtype", v.text("dtype")?)?,
        };
        p.validate()?;
        Ok(p)
    }

    /// Checks the ranges.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn validate(&self) -> Result<(), Error> {
        check_range("batch", self.batch, 1, 1024)?;
        check_range("heads", self.heads, 1, 256)?;
        check_range("len", self.len, 1, MAX_LEN)
    }
}

/// The sizes at one length.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SavedSizes {
    /// Sequence length L.
    pub len: u64,
    /// Score elements B·h·L·L.
    pub elements: u64,
    /// y in T, bytes.
    pub y_bytes: u64,
    /// Byte mask, bytes.
    pub mask_bytes: u64,
    /// Bit mask, bytes (⌈elements / 8⌉).
    pub bitmask_bytes: u64,
    /// Seed only, bytes.
    pub seed_bytes: u64,
    /// Row log-sum-exp kept instead of y (FlashAttention), bytes: B·h·L · 4.
    pub lse_bytes: u64,
    /// y, MiB.
    pub y_mib: f64,
    /// Byte mask, MiB.
    pub mask_mib: f64,
    /// Bit mask, MiB.
    pub bitmask_mib: f64,
    /// Log-sum-exp, MiB.
    pub lse_mib: f64,
}

/// One way of keeping what the backward needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scheme {
    /// What is kept.
    pub name: &'static str,
    /// Bytes kept.
    pub bytes: u64,
    /// MiB kept.
    pub mib: f64,
    /// Fraction of the baseline (y + byte mask).
    pub fraction_of_baseline: f64,
    /// What the backward must redo.
    pub recompute: &'static str,
}

/// What the scene computes.
#[derive(Debug, Clone, Serialize)]
pub struct SavedOutput {
    /// Score elements B·h·L·L.
    pub elements: u64,
    /// y in T, bytes.
    pub y_bytes: u64,
    /// Dropout mask at one byte per element, bytes.
    pub mask_bytes: u64,
    /// Dropout mask at one bit per element, bytes.
    pub bitmask_bytes: u64,
    /// The RNG seed alone, bytes.
    pub seed_bytes: u64,
    /// FlashAttention's row log-sum-exp (f32), bytes.
    pub lse_bytes: u64,
    /// The four schemes, most to least kept.
    pub schemes: Vec<Scheme>,
    /// Sizes for L = 64, 128, … up to max(2L, 128) (capped at 2²⁰), and L itself.
    pub sweep: Vec<SavedSizes>,
}

const MIB: f64 = (1u64 << 20) as f64;

/// Sizes at `len`.
///
/// # Errors
/// [`Error::InvalidParam`] (`len`) if a size overflows 64 bits (not reachable in range).
pub fn sizes(batch: u64, heads: u64, len: u64, dtype: Dtype) -> Result<SavedSizes, Error> {
    let overflow = || {
        Error::invalid(
            "len",
            len,
            crate::error::Expected::custom("sizes overflow 64 bits", "大小超出了 64 位"),
        )
    };
    let rows = batch
        .checked_mul(heads)
        .and_then(|x| x.checked_mul(len))
        .ok_or_else(overflow)?;
    let elements = rows.checked_mul(len).ok_or_else(overflow)?;
    let y_bytes = elements
        .checked_mul(u64::from(dtype.bytes()))
        .ok_or_else(overflow)?;
    let lse_bytes = rows.checked_mul(LSE_BYTES).ok_or_else(overflow)?;
    let bitmask_bytes = elements.div_ceil(8);
    Ok(SavedSizes {
        len,
        elements,
        y_bytes,
        mask_bytes: elements,
        bitmask_bytes,
        seed_bytes: SEED_BYTES,
        lse_bytes,
        y_mib: y_bytes as f64 / MIB,
        mask_mib: elements as f64 / MIB,
        bitmask_mib: bitmask_bytes as f64 / MIB,
        lse_mib: lse_bytes as f64 / MIB,
    })
}

/// Sizes at the chosen shape, the four schemes, and the sweep over L.
///
/// # Errors
/// [`Error::InvalidParam`] from [`SavedParams::validate`].
pub fn run(p: &SavedParams) -> Result<SavedOutput, Error> {
    p.validate()?;
    let s = sizes(p.batch, p.heads, p.len, p.dtype)?;
    let baseline = s.y_bytes + s.mask_bytes;
    let scheme = |name, bytes: u64, recompute| Scheme {
        name,
        bytes,
        mib: bytes as f64 / MIB,
        fraction_of_baseline: bytes as f64 / baseline as f64,
        recompute,
    };
    let schemes = vec![
        scheme("y + byte mask", baseline, "nothing"),
        scheme(
            "y + bit mask",
            s.y_bytes + s.bitmask_bytes,
            "unpack mask bits",
        ),
        scheme(
            "y + RNG seed",
            s.y_bytes + s.seed_bytes,
            "regenerate the dropout mask from the seed",
        ),
        scheme(
            "log-sum-exp + RNG seed (FlashAttention)",
            s.lse_bytes + s.seed_bytes,
            "recompute y = exp(QKᵀ/√d − lse) tile by tile, and the mask",
        ),
    ];
    let top = (2 * p.len).clamp(128, MAX_LEN);
    let mut lens: Vec<u64> = std::iter::successors(Some(64u64), |l| Some(l * 2))
        .take_while(|l| *l <= top)
        .collect();
    if !lens.contains(&p.len) {
        lens.push(p.len);
        lens.sort_unstable();
    }
    let sweep = lens
        .into_iter()
        .map(|l| sizes(p.batch, p.heads, l, p.dtype))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SavedOutput {
        elements: s.elements,
        y_bytes: s.y_bytes,
        mask_bytes: s.mask_bytes,
        bitmask_bytes: s.bitmask_bytes,
        seed_bytes: s.seed_bytes,
        lse_bytes: s.lse_bytes,
        schemes,
        sweep,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(batch: u64, heads: u64, len: u64) -> SavedParams {
        SavedParams {
            batch,
            heads,
            len,
            dtype: Dtype::F16,
        }
    }

    #[test]
    fn sizes_by_hand() {
        // 8 · 16 · 512 · 512 = 2²⁵ elements: y 2²⁶ B = 64 MiB, mask 32 MiB, bits 4 MiB.
        let o = run(&params(8, 16, 512)).unwrap();
        assert_eq!(o.elements, 1 << 25);
        assert_eq!(o.y_bytes, 64 << 20);
        assert_eq!(o.mask_bytes, 32 << 20);
        assert_eq!(o.bitmask_bytes, 4 << 20);
        assert_eq!(o.seed_bytes, 8);
        // Log-sum-exp: 8 · 16 · 512 rows × 4 B = 256 KiB.
        assert_eq!(o.lse_bytes, 256 << 10);
        assert_eq!(o.schemes[0].mib, 96.0);
        assert_eq!(o.schemes[1].mib, 68.0);
    }

    #[test]
    fn quadratic_in_len_and_odd_bit_masks_round_up() {
        let o = run(&params(1, 1, 512)).unwrap();
        let at = |l| o.sweep.iter().find(|s| s.len == l).unwrap().y_bytes;
        assert_eq!(at(1024), 4 * at(512));
        assert_eq!(at(64), 64 * 64 * 2);
        // 3 × 3 = 9 bits need 2 bytes.
        assert_eq!(run(&params(1, 1, 3)).unwrap().bitmask_bytes, 2);
        let o = run(&params(1, 1, 300)).unwrap();
        assert!(o.sweep.iter().any(|s| s.len == 300));
    }

    #[test]
    fn largest_shape_does_not_overflow_and_bad_ranges_are_refused() {
        let o = run(&params(1024, 256, MAX_LEN)).unwrap();
        assert_eq!(o.elements, 1u64 << 58);
        assert!(params(0, 1, 1).validate().is_err());
        assert!(params(1, 1, MAX_LEN + 1).validate().is_err());
    }
}
