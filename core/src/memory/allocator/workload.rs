//! The workload: a pre-LN encoder trained on variable-length batches. Its parameters
//! ([`AllocatorParams`], validated against the scene's specs), the batches' lengths (ChaCha8),
//! each batch's allocation sequence as [`Op`]s, forward then backward, and the peak bytes live
//! during it.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::Error;
use crate::memory::{DTYPES, Dtype, MIB};
use crate::params::{ParamSpec, ParamValues};

/// The encoder workload's parameters (validated).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllocatorParams {
    /// Encoder layers.
    pub layers: u64,
    /// Target tokens per batch (B = ⌊tokens / L⌋ sequences of length L, at least 1).
    pub tokens: u64,
    /// Shortest sequence length.
    pub len_min: u64,
    /// Longest sequence length.
    pub len_max: u64,
    /// Batches.
    pub batches: u64,
    /// Seed of the lengths (ChaCha8).
    pub seed: u64,
    /// Hidden size H.
    pub hidden: u64,
    /// Attention heads N.
    pub heads: u64,
    /// Feed-forward size F.
    pub ffn: u64,
    /// Element type of activations.
    pub dtype: Dtype,
    /// Device capacity for the simulator (bytes).
    pub capacity: u64,
}

pub(super) const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("layers", "encoder layers", "编码器层数", 1, 48, 6),
    ParamSpec::int(
        "tokens",
        "tokens per batch",
        "每批 token 数",
        64,
        65536,
        4096,
    )
    .log(),
    ParamSpec::int(
        "len_min",
        "shortest sequence (tokens)",
        "最短序列（token）",
        1,
        4096,
        32,
    )
    .log(),
    ParamSpec::int(
        "len_max",
        "longest sequence (tokens)",
        "最长序列（token）",
        1,
        4096,
        256,
    )
    .log(),
    ParamSpec::int("batches", "batches", "批数", 1, 2000, 300),
    ParamSpec::int("seed", "random seed", "随机种子", 0, 1 << 31, 1),
    ParamSpec::int("hidden", "hidden size H", "隐藏维度 H", 8, 8192, 512).log(),
    ParamSpec::int("heads", "attention heads N", "注意力头数 N", 1, 128, 8),
    ParamSpec::int("ffn", "feed-forward size F", "前馈层维度 F", 8, 32768, 2048).log(),
    ParamSpec::choice(
        "dtype",
        "activation element type",
        "激活元素类型",
        DTYPES,
        "f32",
    ),
    ParamSpec::int(
        "capacity_mib",
        "device memory (MiB)",
        "设备显存（MiB）",
        64,
        1 << 20,
        32768,
    )
    .log(),
];

/// Most allocator events a run may simulate (each event keeps a few words of timeline).
pub const MAX_EVENTS: u64 = 4_000_000;

/// Allocations per layer per batch in [`batch_ops`] (forward + backward).
pub(super) const ALLOCS_PER_LAYER: u64 = 33;

impl AllocatorParams {
    /// Reads and cross-checks the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a value out of range, `len_min > len_max`, `hidden` not a
    /// multiple of `heads`, or a run that would simulate more than [`MAX_EVENTS`] events.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let get = |name: &str, lo: i64, hi: i64| -> Result<u64, Error> {
            let x = v.int(name)?;
            match u64::try_from(x) {
                Ok(u) if (lo..=hi).contains(&x) => Ok(u),
                _ => Err(Error::invalid(
                    name,
                    x,
                    crate::error::Expected::IntRange { min: lo, max: hi },
                )),
            }
        };
        let p = AllocatorParams {
            layers: get("layers", 1, 48)?,
            tokens: get("tokens", 64, 65536)?,
            len_min: get("len_min", 1, 4096)?,
            len_max: get("len_max", 1, 4096)?,
            batches: get("batches", 1, 2000)?,
            seed: get("seed", 0, 1 << 31)?,
            hidden: get("hidden", 8, 8192)?,
            heads: get("heads", 1, 128)?,
            ffn: get("ffn", 8, 32768)?,
            dtype: Dtype::parse(v.text("dtype")?)?,
            capacity: get("capacity_mib", 64, 1 << 20)? * MIB,
        };
        if p.len_min > p.len_max {
            return Err(Error::invalid(
                "len_min",
                p.len_min,
                crate::error::Expected::AtMostParam {
                    param: "len_max".into(),
                    value: p.len_max as i64,
                },
            ));
        }
        if !p.hidden.is_multiple_of(p.heads) {
            return Err(Error::invalid(
                "hidden",
                p.hidden,
                crate::error::Expected::MultipleOfParam {
                    param: "heads".into(),
                    value: p.heads as i64,
                },
            ));
        }
        let events = 2 * (ALLOCS_PER_LAYER * p.layers + 2) * p.batches;
        if events > MAX_EVENTS {
            return Err(Error::invalid(
                "batches",
                p.batches,
                crate::error::Expected::custom(
                    format!(
                        "layers × batches would simulate about {events} allocator events; at \
                         most {MAX_EVENTS} — fewer batches or layers"
                    ),
                    format!(
                        "layers × batches 将模拟约 {events} 个分配器事件；至多 {MAX_EVENTS} 个\
                         ——请减少 batches 或 layers"
                    ),
                ),
            ));
        }
        Ok(p)
    }
}

/// One step of a batch's allocation sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Allocate tensor slot `slot` of `bytes` bytes.
    Alloc {
        /// Slot (index into the batch's tensors).
        slot: usize,
        /// Bytes.
        bytes: u64,
    },
    /// Free the tensor in slot `slot`.
    Free {
        /// Slot.
        slot: usize,
    },
}

/// The allocation sequence of one batch of `seqs` sequences of `len` tokens (the workload model).
///
/// Per layer, forward (a pre-LN encoder layer; `BLH` = seqs·len·hidden elements, `BNL²` =
/// seqs·heads·len² elements, masks 1 byte per element, LayerNorm statistics 2 f32 per token):
/// LN₁ output (BLH) and statistics, QKV (3BLH), scores (BNL², freed after softmax), softmax
/// output (BNL²), dropout mask (BNL² bytes), dropped probabilities (BNL²), context (BLH),
/// projection (BLH, freed after the residual), its dropout mask, residual sum h (BLH), LN₂ output
/// and statistics, FFN₁ (B·L·F), activation (B·L·F), FFN₂ (BLH, freed after the residual), its
/// mask, and the layer output (BLH) — everything but the three marked temporaries is saved for
/// backward. The batch starts with the embeddings (BLH) and the loss gradient (BLH).
///
/// Backward, layer by layer from the top, allocates the gradient temporaries in the order of
/// lecture §5.1 for attention (∇Y, ∇Z, ∇Y′, ∇S and ∇V, ∇Q and ∇K, ∇Q̃K̃Ṽ, ∇Y″, ∇in) after the
/// FFN's (∇FFN₂ output, ∇activation, ∇FFN₁, ∇LN₂, ∇h), each freed after its last use, and frees
/// each saved activation when its layer's backward no longer needs it. Parameters, their
/// gradients and optimizer state are permanent and the same under both policies, so they are
/// left out.
pub fn batch_ops(p: &AllocatorParams, seqs: u64, len: u64) -> Vec<Op> {
    let e = p.dtype.bytes();
    let blh = seqs * len * p.hidden * e;
    let bnl2 = seqs * p.heads * len * len * e;
    let mask_s = seqs * p.heads * len * len;
    let mask_h = seqs * len * p.hidden;
    let blf = seqs * len * p.ffn * e;
    let stats = seqs * len * 2 * 4;
    let mut ops = Vec::new();
    let mut slots = 0usize;
    let mut alloc = |ops: &mut Vec<Op>, bytes: u64| {
        let slot = slots;
        slots += 1;
        ops.push(Op::Alloc { slot, bytes });
        slot
    };
    let free = |ops: &mut Vec<Op>, slot: usize| ops.push(Op::Free { slot });

    struct Saved {
        x: usize,
        ln1: usize,
        ln1s: usize,
        qkv: usize,
        probs: usize,
        mask: usize,
        probs_d: usize,
        ctx: usize,
        mask2: usize,
        h: usize,
        ln2: usize,
        ln2s: usize,
        f1: usize,
        act: usize,
        mask3: usize,
    }
    let mut x = alloc(&mut ops, blh); // embeddings
    let mut saved = Vec::new();
    for _ in 0..p.layers {
        let ln1 = alloc(&mut ops, blh);
        let ln1s = alloc(&mut ops, stats);
        let qkv = alloc(&mut ops, 3 * blh);
        let scores = alloc(&mut ops, bnl2);
        let probs = alloc(&mut ops, bnl2);
        free(&mut ops, scores);
        let mask = alloc(&mut ops, mask_s);
        let probs_d = alloc(&mut ops, bnl2);
        let ctx = alloc(&mut ops, blh);
        let proj = alloc(&mut ops, blh);
        let mask2 = alloc(&mut ops, mask_h);
        let h = alloc(&mut ops, blh);
        free(&mut ops, proj);
        let ln2 = alloc(&mut ops, blh);
        let ln2s = alloc(&mut ops, stats);
        let f1 = alloc(&mut ops, blf);
        let act = alloc(&mut ops, blf);
        let f2 = alloc(&mut ops, blh);
        let mask3 = alloc(&mut ops, mask_h);
        let out = alloc(&mut ops, blh);
        free(&mut ops, f2);
        saved.push(Saved {
            x,
            ln1,
            ln1s,
            qkv,
            probs,
            mask,
            probs_d,
            ctx,
            mask2,
            h,
            ln2,
            ln2s,
            f1,
            act,
            mask3,
        });
        x = out;
    }
    // Loss gradient w.r.t. the top output; the top output itself is no longer needed.
    let mut d_out = alloc(&mut ops, blh);
    free(&mut ops, x);
    while let Some(s) = saved.pop() {
        // FFN backward.
        let d_f2 = alloc(&mut ops, blh); // dropout backward
        free(&mut ops, s.mask3);
        let d_act = alloc(&mut ops, blf);
        free(&mut ops, d_f2);
        free(&mut ops, s.act);
        let d_f1 = alloc(&mut ops, blf);
        free(&mut ops, d_act);
        free(&mut ops, s.f1);
        let d_ln2 = alloc(&mut ops, blh);
        free(&mut ops, d_f1);
        free(&mut ops, s.ln2);
        let d_h = alloc(&mut ops, blh); // LN₂ backward + d_out (residual)
        free(&mut ops, d_ln2);
        free(&mut ops, s.ln2s);
        free(&mut ops, s.h);
        free(&mut ops, d_out);
        // Attention backward (lecture §5.1's ten steps).
        let d_y = alloc(&mut ops, blh);
        free(&mut ops, s.mask2);
        let d_z = alloc(&mut ops, blh);
        free(&mut ops, d_y);
        free(&mut ops, s.ctx);
        let d_y1 = alloc(&mut ops, blh);
        free(&mut ops, d_z);
        let d_s = alloc(&mut ops, bnl2);
        let d_v = alloc(&mut ops, blh);
        free(&mut ops, d_y1);
        free(&mut ops, s.probs_d);
        free(&mut ops, s.mask);
        free(&mut ops, s.probs);
        let d_q = alloc(&mut ops, blh);
        let d_k = alloc(&mut ops, blh);
        free(&mut ops, d_s);
        let d_qkv = alloc(&mut ops, 3 * blh);
        free(&mut ops, d_q);
        free(&mut ops, d_k);
        free(&mut ops, d_v);
        free(&mut ops, s.qkv);
        let d_y2 = alloc(&mut ops, blh);
        free(&mut ops, d_qkv);
        free(&mut ops, s.ln1);
        let d_in = alloc(&mut ops, blh);
        free(&mut ops, d_y2);
        free(&mut ops, s.ln1s);
        free(&mut ops, s.x);
        free(&mut ops, d_h);
        d_out = d_in;
    }
    free(&mut ops, d_out);
    ops
}

/// Peak of Σ bytes live during a sequence of ops (what the batch truly needs, bytes).
pub fn needed_bytes(ops: &[Op]) -> u64 {
    let mut sizes: Vec<u64> = Vec::new();
    let (mut live, mut peak) = (0u64, 0u64);
    for op in ops {
        match *op {
            Op::Alloc { slot, bytes } => {
                if sizes.len() <= slot {
                    sizes.resize(slot + 1, 0);
                }
                if let Some(s) = sizes.get_mut(slot) {
                    *s = bytes;
                }
                live += bytes;
                peak = peak.max(live);
            }
            Op::Free { slot } => live -= sizes.get(slot).copied().unwrap_or(0),
        }
    }
    peak
}

/// The lengths of the run's batches: uniform integers in `len_min..=len_max`, ChaCha8(seed).
pub fn batch_lengths(p: &AllocatorParams) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    (0..p.batches)
        .map(|_| rng.random_range(p.len_min..=p.len_max))
        .collect()
}
