//! Scene `memory-lifetimes` (lecture §5.1; slides p.30 = LightSeq2 paper fig. 8): the ten steps
//! of self-attention backward as data — each step's inputs, the gradient tensors it creates (in
//! units of BLH and BL²N and in bytes) and when each dies — and the live temporaries per step.
//!
//! The forward pass these steps reverse (pre-LayerNorm self-attention, LightSeq2's layout):
//! `Y″ = LayerNorm(in)`; `Q̃K̃Ṽ = Y″·W_qkv` (fused, `[B, L, 3H]`); `Q, K, V` = the per-head
//! views `[B, N, L, d_h]`; `S = Q·Kᵀ/√d_h` (`[B, N, L, L]`); `P′ = dropout(softmax(S))`;
//! `Y′ = P′·V` (per-head context); `Z` = `Y′` with heads merged (`[B, L, H]`);
//! `Y = Z·W_o + b_o`; `out = in + dropout(Y)`.
//!
//! The lecture names the ten tensors and how the static plan packs them (§5.2); the per-step text
//! below is our reconstruction that matches that packing and the two peak steps the lecture names
//! (step 6: 3BLH + BL²N; step 7: 6BLH). `∇out` comes from the layer above: it is an input, not a
//! temporary, and is never counted. Parameter gradients (∇W, ∇b, ∇γ, ∇β) live in the parameter
//! workspace, not among the temporaries.

#![deny(clippy::indexing_slicing)]

use crate::text::Text;
use serde::Serialize;

use super::{DTYPES, Dtype, MIB, mib};
use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};

/// The size class of a temporary: a multiple of BLH (a `[B, L, H]` tensor) or of BL²N (one
/// `[B, N, L, L]` score tensor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SizeUnit {
    /// Elements of a `[B, L, H]` tensor.
    #[serde(rename = "BLH")]
    Blh,
    /// Elements of a `[B, N, L, L]` tensor.
    #[serde(rename = "BL²N")]
    Bl2n,
}

/// One gradient temporary of self-attention backward (a row of paper fig. 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorDef {
    /// Name as the lecture writes it, e.g. `∇S`.
    pub name: &'static str,
    /// What it is.
    pub what: Text<&'static str>,
    /// How many `unit`s it holds.
    pub multiple: u64,
    /// BLH or BL²N.
    pub unit: SizeUnit,
    /// The step (1-based) that creates it.
    pub created: usize,
    /// The last step (1-based) that reads or writes it; it dies after this step.
    pub last_use: usize,
}

/// One step of self-attention backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepDef {
    /// What the step computes.
    pub what: Text<&'static str>,
    /// Tensors it reads (temporaries and saved activations; `∇out` is the layer's input).
    pub inputs: &'static [&'static str],
    /// Temporaries it writes in place (none are created by an in-place step).
    pub in_place: &'static [&'static str],
}

/// The ten temporaries, in creation order (slides p.30 / paper fig. 8; lecture §5.1–5.2).
pub const TENSORS: &[TensorDef] = &[
    TensorDef {
        name: "∇Y",
        what: Text::new(
            "gradient of the output projection's result (after residual-dropout backward)",
            "输出投影结果的梯度（残差 dropout 反向之后）",
        ),
        multiple: 1,
        unit: SizeUnit::Blh,
        created: 1,
        last_use: 2,
    },
    TensorDef {
        name: "∇Z",
        what: Text::new(
            "gradient of the merged-head context (∇Y·W_oᵀ)",
            "合并多头之后上下文的梯度（∇Y·W_oᵀ）",
        ),
        multiple: 1,
        unit: SizeUnit::Blh,
        created: 2,
        last_use: 3,
    },
    TensorDef {
        name: "∇Y′",
        what: Text::new(
            "the same gradient in per-head layout [B, N, L, d_h]",
            "同一个梯度，按头排布 [B, N, L, d_h]",
        ),
        multiple: 1,
        unit: SizeUnit::Blh,
        created: 3,
        last_use: 4,
    },
    TensorDef {
        name: "∇S",
        what: Text::new(
            "gradient of the attention scores (∇Y′·Vᵀ; dropout and softmax backward in place)",
            "注意力分数的梯度（∇Y′·Vᵀ；dropout 与 softmax 反向在它上面原地进行）",
        ),
        multiple: 1,
        unit: SizeUnit::Bl2n,
        created: 4,
        last_use: 6,
    },
    TensorDef {
        name: "∇V",
        what: Text::new("gradient of the values (P′ᵀ·∇Y′)", "V 的梯度（P′ᵀ·∇Y′）"),
        multiple: 1,
        unit: SizeUnit::Blh,
        created: 4,
        last_use: 7,
    },
    TensorDef {
        name: "∇Q",
        what: Text::new(
            "gradient of the queries (∇S·K/√d_h)",
            "Q 的梯度（∇S·K/√d_h）",
        ),
        multiple: 1,
        unit: SizeUnit::Blh,
        created: 6,
        last_use: 7,
    },
    TensorDef {
        name: "∇K",
        what: Text::new(
            "gradient of the keys (∇Sᵀ·Q/√d_h)",
            "K 的梯度（∇Sᵀ·Q/√d_h）",
        ),
        multiple: 1,
        unit: SizeUnit::Blh,
        created: 6,
        last_use: 7,
    },
    TensorDef {
        name: "∇Q̃∇K̃∇Ṽ",
        what: Text::new(
            "the three gradients in the fused [B, L, 3H] layout of the QKV projection",
            "三个梯度，排成 QKV 投影融合后的 [B, L, 3H] 布局",
        ),
        multiple: 3,
        unit: SizeUnit::Blh,
        created: 7,
        last_use: 8,
    },
    TensorDef {
        name: "∇Y″",
        what: Text::new(
            "gradient of the LayerNorm output (∇Q̃K̃Ṽ·W_qkvᵀ)",
            "LayerNorm 输出的梯度（∇Q̃K̃Ṽ·W_qkvᵀ）",
        ),
        multiple: 1,
        unit: SizeUnit::Blh,
        created: 8,
        last_use: 9,
    },
    TensorDef {
        name: "∇in",
        what: Text::new(
            "gradient of the layer's input (LayerNorm backward, then + ∇out)",
            "这一层输入的梯度（LayerNorm 反向，再加上 ∇out）",
        ),
        multiple: 1,
        unit: SizeUnit::Blh,
        created: 9,
        last_use: 10,
    },
];

/// The ten steps (1-based in every output; this slice is 0-based).
pub const STEPS: &[StepDef] = &[
    StepDef {
        what: Text::new(
            "residual-dropout backward: ∇Y = mask ⊙ ∇out / (1 − p); ∇b_o",
            "残差 dropout 反向：∇Y = mask ⊙ ∇out / (1 − p)；∇b_o",
        ),
        inputs: &["∇out", "dropout mask"],
        in_place: &[],
    },
    StepDef {
        what: Text::new(
            "output projection backward: ∇Z = ∇Y·W_oᵀ; ∇W_o",
            "输出投影反向：∇Z = ∇Y·W_oᵀ；∇W_o",
        ),
        inputs: &["∇Y", "Z"],
        in_place: &[],
    },
    StepDef {
        what: Text::new(
            "split heads: ∇Y′ = ∇Z as [B, N, L, d_h]",
            "拆分多头：∇Y′ = ∇Z 排成 [B, N, L, d_h]",
        ),
        inputs: &["∇Z"],
        in_place: &[],
    },
    StepDef {
        what: Text::new(
            "context backward: ∇S = ∇Y′·Vᵀ and ∇V = P′ᵀ·∇Y′",
            "上下文反向：∇S = ∇Y′·Vᵀ，∇V = P′ᵀ·∇Y′",
        ),
        inputs: &["∇Y′", "V", "P′"],
        in_place: &[],
    },
    StepDef {
        what: Text::new(
            "attention-dropout + softmax backward, fused, in place on ∇S",
            "注意力 dropout + softmax 反向，融合成一个内核，在 ∇S 上原地进行",
        ),
        inputs: &["∇S", "P", "dropout mask"],
        in_place: &["∇S"],
    },
    StepDef {
        what: Text::new(
            "score backward: ∇Q = ∇S·K/√d_h and ∇K = ∇Sᵀ·Q/√d_h",
            "分数反向：∇Q = ∇S·K/√d_h，∇K = ∇Sᵀ·Q/√d_h",
        ),
        inputs: &["∇S", "Q", "K"],
        in_place: &[],
    },
    StepDef {
        what: Text::new(
            "merge heads: ∇Q, ∇K, ∇V → ∇Q̃∇K̃∇Ṽ in the fused [B, L, 3H] layout",
            "合并多头：∇Q、∇K、∇V → ∇Q̃∇K̃∇Ṽ，QKV 投影融合后的 [B, L, 3H] 布局",
        ),
        inputs: &["∇Q", "∇K", "∇V"],
        in_place: &[],
    },
    StepDef {
        what: Text::new(
            "QKV projection backward: ∇Y″ = ∇Q̃K̃Ṽ·W_qkvᵀ; ∇W_qkv, ∇b_qkv",
            "QKV 投影反向：∇Y″ = ∇Q̃K̃Ṽ·W_qkvᵀ；∇W_qkv、∇b_qkv",
        ),
        inputs: &["∇Q̃∇K̃∇Ṽ", "Y″"],
        in_place: &[],
    },
    StepDef {
        what: Text::new(
            "LayerNorm backward: ∇in = LN′(∇Y″); ∇γ, ∇β",
            "LayerNorm 反向：∇in = LN′(∇Y″)；∇γ、∇β",
        ),
        inputs: &["∇Y″", "in"],
        in_place: &[],
    },
    StepDef {
        what: Text::new(
            "residual: ∇in += ∇out, in place",
            "残差：∇in += ∇out，原地进行",
        ),
        inputs: &["∇in", "∇out"],
        in_place: &["∇in"],
    },
];

/// The shape of one self-attention layer's backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AttentionShape {
    /// Batch size B (sequences).
    pub batch: u64,
    /// Sequence length L (tokens).
    pub len: u64,
    /// Hidden size H.
    pub hidden: u64,
    /// Attention heads N (H is a multiple of N).
    pub heads: u64,
    /// Element type.
    pub dtype: Dtype,
}

impl AttentionShape {
    /// Elements in one BLH tensor.
    pub fn blh(&self) -> u64 {
        self.batch * self.len * self.hidden
    }

    /// Elements in one BL²N tensor.
    pub fn bl2n(&self) -> u64 {
        self.batch * self.len * self.len * self.heads
    }

    /// BL²N / BLH = L·N/H = L / d_h (8 at the lecture case).
    pub fn bl2n_in_blh(&self) -> f64 {
        (self.len * self.heads) as f64 / self.hidden as f64
    }

    /// Per-head dimension d_h = H / N.
    pub fn d_head(&self) -> u64 {
        self.hidden / self.heads
    }

    /// Elements of `multiple` × `unit`.
    pub fn elements(&self, multiple: u64, unit: SizeUnit) -> u64 {
        multiple
            * match unit {
                SizeUnit::Blh => self.blh(),
                SizeUnit::Bl2n => self.bl2n(),
            }
    }

    /// The same in BLH units.
    pub fn in_blh(&self, multiple: u64, unit: SizeUnit) -> f64 {
        multiple as f64
            * match unit {
                SizeUnit::Blh => 1.0,
                SizeUnit::Bl2n => self.bl2n_in_blh(),
            }
    }
}

/// The lower bound on self-attention backward's temporaries, 3BLH + max{BL²N, 3BLH}, in bytes
/// (lecture §5.1, paper §IV-D).
pub fn lower_bound_bytes(s: &AttentionShape) -> u64 {
    (3 * s.blh() + s.bl2n().max(3 * s.blh())) * s.dtype.bytes()
}

/// Whether the score matrix dominates: BL²N ≥ 3BLH ⇔ L·N ≥ 3H ⇔ L ≥ 3·d_h (§9 exercise 6).
pub fn scores_dominate(s: &AttentionShape) -> bool {
    s.len * s.heads >= 3 * s.hidden
}

/// The shortest length at which BL²N ≥ 3BLH for hidden size `hidden` and `heads` heads:
/// ⌈3H/N⌉ = 3·d_h when N divides H (§9 exercise 6: d_h = 64 → L ≥ 192). `heads` must be ≥ 1.
pub fn crossover_len(hidden: u64, heads: u64) -> u64 {
    (3 * hidden).div_ceil(heads.max(1))
}

/// §9 exercise 6 in the lecture's form: the shortest L with BL²N ≥ 3BLH for per-head dimension
/// `d_head` (3·d_head tokens).
pub fn exercise6_min_len(d_head: u64) -> u64 {
    crossover_len(d_head, 1)
}

/// §9 exercise 5: the lower bound at B = 4, L = 2048, H = 4096, N = 32, fp16, in MiB (2²⁰ bytes).
pub fn exercise5_mib() -> f64 {
    mib(lower_bound_bytes(&AttentionShape {
        batch: 4,
        len: 2048,
        hidden: 4096,
        heads: 32,
        dtype: Dtype::F16,
    }))
}

/// The shape's parameters followed by `extra` ones (a scene over the same shape with more
/// parameters, e.g. `memory-plan`'s planner).
macro_rules! shape_params {
    ($($extra:expr),* $(,)?) => {
        &[
            ParamSpec::int(
                "batch",
                "batch size B (sequences)",
                "批大小 B（句）",
                1,
                4096,
                16,
            )
            .log(),
            ParamSpec::int(
                "len",
                "sequence length L (tokens)",
                "序列长度 L（token）",
                1,
                65536,
                512,
            )
            .log(),
            ParamSpec::int("hidden", "hidden size H", "隐藏维度 H", 1, 65536, 1024).log(),
            ParamSpec::int("heads", "attention heads N", "注意力头数 N", 1, 1024, 16).log(),
            ParamSpec::choice("dtype", "element type", "元素类型", DTYPES, "f16"),
            $($extra,)*
        ]
    };
}
pub(crate) use shape_params;

/// The shape's parameters (B, L, H, N, dtype) with the lecture's values.
pub(crate) const SHAPE_PARAMS: &[ParamSpec] = shape_params!();

impl AttentionShape {
    /// Reads and cross-checks `batch`, `len`, `hidden`, `heads`, `dtype`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a value out of range or `hidden` not a multiple of `heads`.
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
        let s = AttentionShape {
            batch: get("batch", 1, 4096)?,
            len: get("len", 1, 65536)?,
            hidden: get("hidden", 1, 65536)?,
            heads: get("heads", 1, 1024)?,
            dtype: Dtype::parse(v.text("dtype")?)?,
        };
        if !s.hidden.is_multiple_of(s.heads) {
            return Err(Error::invalid(
                "hidden",
                s.hidden,
                crate::error::Expected::MultipleOfParam {
                    param: "heads".into(),
                    value: s.heads as i64,
                }
                .noted("each head gets H/N dimensions", "每个头分到 H/N 维"),
            ));
        }
        // B·L²·N·4 bytes must fit in u64: 4096 · 65536² · 1024 · 4 = 2^56 — always does.
        Ok(s)
    }
}

/// The scene's typed definition (`memory-lifetimes`).
pub struct LifetimesScene;

impl SceneDef for LifetimesScene {
    const ID: &'static str = "memory-lifetimes";
    type Output = LifetimesOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        Ok(run(&AttentionShape::from_values(v)?))
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: LifetimesScene::ID,
    section: "§5.1",
    title: Text::new(
        "Lifetimes: the temporaries of self-attention backward",
        "生命周期：自注意力反向的临时张量",
    ),
    summary: Text::new(
        "Which gradient tensors are alive at each of the ten steps, and the lower bound 3BLH + max{BL²N, 3BLH}.",
        "十个步骤中每一步活着哪些梯度张量，以及下界 3BLH + max{BL²N, 3BLH}。",
    ),
    params: SHAPE_PARAMS,
    run: erase::<LifetimesScene>(),
    input: None,
    chapter: &Chapter::MEMORY,
    featured: Featured::Nothing,
    cost: Cost::Light,
};

/// A temporary at this shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tensor {
    /// Name, e.g. `∇S`.
    pub name: &'static str,
    /// What it is.
    pub what: Text<&'static str>,
    /// How many `unit`s.
    pub multiple: u64,
    /// BLH or BL²N.
    pub unit: SizeUnit,
    /// Size in BLH units (BL²N counts L/d_h).
    pub size_blh: f64,
    /// Size in bytes.
    pub bytes: u64,
    /// Step (1-based) that creates it.
    pub created_step: usize,
    /// Last step (1-based) that uses it; it dies after this step.
    pub last_use_step: usize,
}

/// One step at this shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// 1-based step number.
    pub step: usize,
    /// What it computes.
    pub what: Text<&'static str>,
    /// What it reads.
    pub inputs: Vec<&'static str>,
    /// Temporaries it creates.
    pub creates: Vec<&'static str>,
    /// Temporaries it overwrites in place.
    pub in_place: Vec<&'static str>,
    /// Temporaries that die after it.
    pub frees_after: Vec<&'static str>,
    /// Temporaries alive during it.
    pub live: Vec<&'static str>,
    /// Their total, in BLH units.
    pub live_blh: f64,
    /// Their total, in bytes.
    pub live_bytes: u64,
}

/// The scene's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LifetimesOutput {
    /// The shape.
    pub shape: AttentionShape,
    /// Bytes of one BLH tensor.
    pub blh_bytes: u64,
    /// Bytes of one BL²N tensor.
    pub bl2n_bytes: u64,
    /// BL²N in BLH units (L/d_h).
    pub bl2n_blh: f64,
    /// The ten temporaries.
    pub tensors: Vec<Tensor>,
    /// The ten steps.
    pub steps: Vec<Step>,
    /// Live temporaries per step, in BLH units (index 0 = step 1).
    pub live_per_step: Vec<f64>,
    /// Live temporaries per step, in bytes.
    pub live_bytes_per_step: Vec<u64>,
    /// The step with the most live bytes (the first if tied), 1-based.
    pub peak_step: usize,
    /// The two steps whose live sets give the bound's two terms: the one holding BL²N + 3BLH
    /// and the one holding 6BLH (lecture: steps 6 and 7).
    pub peak_steps: Vec<usize>,
    /// Max over steps of live temporaries, in BLH units.
    pub peak_blh: f64,
    /// 3BLH + max{BL²N, 3BLH} in BLH units (the formula; equals `peak_blh`).
    pub lower_bound_blh: f64,
    /// The bound in bytes.
    pub lower_bound_bytes: u64,
    /// The bound in MiB (2²⁰ bytes).
    pub lower_bound_mib: f64,
    /// Whether BL²N ≥ 3BLH here.
    pub scores_dominate: bool,
    /// Per-head dimension H/N.
    pub d_head: u64,
    /// The shortest L at which BL²N ≥ 3BLH for this H and N (3·d_h; exercise 6).
    pub crossover_len: u64,
}

/// The temporaries at shape `s`.
pub fn tensors(s: &AttentionShape) -> Vec<Tensor> {
    TENSORS
        .iter()
        .map(|t| Tensor {
            name: t.name,
            what: t.what,
            multiple: t.multiple,
            unit: t.unit,
            size_blh: s.in_blh(t.multiple, t.unit),
            bytes: s.elements(t.multiple, t.unit) * s.dtype.bytes(),
            created_step: t.created,
            last_use_step: t.last_use,
        })
        .collect()
}

/// Lifetimes, live sets and the bound at shape `s`.
pub fn run(s: &AttentionShape) -> LifetimesOutput {
    let ts = tensors(s);
    let mut steps = Vec::with_capacity(STEPS.len());
    for (i, def) in STEPS.iter().enumerate() {
        let step = i + 1;
        let live: Vec<&Tensor> = ts
            .iter()
            .filter(|t| t.created_step <= step && step <= t.last_use_step)
            .collect();
        steps.push(Step {
            step,
            what: def.what,
            inputs: def.inputs.to_vec(),
            creates: ts
                .iter()
                .filter(|t| t.created_step == step)
                .map(|t| t.name)
                .collect(),
            in_place: def.in_place.to_vec(),
            frees_after: ts
                .iter()
                .filter(|t| t.last_use_step == step)
                .map(|t| t.name)
                .collect(),
            live: live.iter().map(|t| t.name).collect(),
            live_blh: live.iter().map(|t| t.size_blh).sum(),
            live_bytes: live.iter().map(|t| t.bytes).sum(),
        });
    }
    let live_per_step: Vec<f64> = steps.iter().map(|st| st.live_blh).collect();
    let live_bytes_per_step: Vec<u64> = steps.iter().map(|st| st.live_bytes).collect();
    let mut peak_step = 1;
    for st in &steps {
        if live_bytes_per_step
            .get(peak_step - 1)
            .is_some_and(|&b| st.live_bytes > b)
        {
            peak_step = st.step;
        }
    }
    // The bound's two terms: the step whose live set holds a BL²N tensor and the most BLH, and
    // the step with the most BLH-only bytes.
    let holds_scores = |st: &Step| {
        ts.iter()
            .any(|t| t.unit == SizeUnit::Bl2n && st.live.contains(&t.name))
    };
    let scores_step = steps
        .iter()
        .filter(|st| holds_scores(st))
        .max_by_key(|st| (st.live_bytes, std::cmp::Reverse(st.step)))
        .map_or(0, |st| st.step);
    let blh_step = steps
        .iter()
        .filter(|st| !holds_scores(st))
        .max_by_key(|st| (st.live_bytes, std::cmp::Reverse(st.step)))
        .map_or(0, |st| st.step);
    let blh_bytes = s.blh() * s.dtype.bytes();
    let lower_bound_bytes = lower_bound_bytes(s);
    LifetimesOutput {
        shape: *s,
        blh_bytes,
        bl2n_bytes: s.bl2n() * s.dtype.bytes(),
        bl2n_blh: s.bl2n_in_blh(),
        peak_blh: live_per_step.iter().copied().fold(0.0, f64::max),
        tensors: ts,
        steps,
        live_per_step,
        live_bytes_per_step,
        peak_step,
        peak_steps: vec![scores_step, blh_step],
        lower_bound_blh: 3.0 + s.bl2n_in_blh().max(3.0),
        lower_bound_bytes,
        lower_bound_mib: lower_bound_bytes as f64 / MIB as f64,
        scores_dominate: scores_dominate(s),
        d_head: s.d_head(),
        crossover_len: crossover_len(s.hidden, s.heads),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lecture() -> AttentionShape {
        AttentionShape {
            batch: 16,
            len: 512,
            hidden: 1024,
            heads: 16,
            dtype: Dtype::F16,
        }
    }

    #[test]
    fn lecture_case_peaks_at_steps_6_and_7_with_bound_11_blh() {
        let o = run(&lecture());
        // BL²N / BLH = L·N/H = 512·16/1024 = 8 (lecture §5.1).
        assert_eq!(o.bl2n_blh, 8.0);
        assert_eq!(o.lower_bound_blh, 11.0);
        assert_eq!(o.peak_blh, 11.0);
        assert_eq!(o.peak_step, 6);
        assert_eq!(o.peak_steps, vec![6, 7]);
        // Step 6 = 3BLH + BL²N = 11, step 7 = 6BLH (lecture §5.1).
        assert_eq!(o.live_per_step[5], 3.0 + 8.0);
        assert_eq!(o.live_per_step[6], 6.0);
        assert_eq!(o.steps.len(), 10);
        // ∇out is never a temporary.
        assert!(o.steps.iter().all(|s| !s.live.contains(&"∇out")));
        // BLH bytes = 16·512·1024·2 = 16 MiB.
        assert_eq!(o.blh_bytes, 16 * MIB);
        assert_eq!(o.lower_bound_bytes, 11 * 16 * MIB);
    }

    #[test]
    fn bound_equals_the_peak_of_the_live_sets_for_many_shapes() {
        for len in [1, 16, 64, 100, 191, 192, 193, 512, 4096] {
            for heads in [1, 4, 16] {
                let s = AttentionShape {
                    len,
                    heads,
                    ..lecture()
                };
                let o = run(&s);
                let peak = *o.live_bytes_per_step.iter().max().unwrap();
                assert_eq!(peak, o.lower_bound_bytes, "len {len} heads {heads}");
            }
        }
    }

    #[test]
    fn exercise_5_is_1216_mib() {
        // Lecture §9 answer 5: BLH = 4·2048·4096·2 B = 64 MiB; BL²N = 4·2048²·32·2 B = 1024 MiB;
        // 3·64 + max(1024, 192) = 1216 MiB.
        assert_eq!(exercise5_mib(), 1216.0);
    }

    #[test]
    fn exercise_6_crossover_is_three_head_dims() {
        // §9 answer 6: d_h = 64 → L ≥ 192.
        assert_eq!(exercise6_min_len(64), 192);
        // Brute force at H = 1024, N = 16 (d_h = 64): the first L where BL²N ≥ 3BLH.
        let first = (1..1000)
            .find(|&len| {
                let s = AttentionShape { len, ..lecture() };
                s.bl2n() >= 3 * s.blh()
            })
            .unwrap();
        assert_eq!(first, 192);
        assert!(scores_dominate(&AttentionShape {
            len: 192,
            ..lecture()
        }));
        assert!(!scores_dominate(&AttentionShape {
            len: 191,
            ..lecture()
        }));
        assert_eq!(run(&lecture()).crossover_len, 192);
    }

    #[test]
    fn hidden_must_divide_by_heads() {
        let mut v = ParamValues::defaults(SHAPE_PARAMS);
        v.set(SHAPE_PARAMS, "heads", "3").unwrap();
        let e = AttentionShape::from_values(&v).unwrap_err();
        assert!(e.to_string().contains("hidden"), "{e}");
        assert!((SCENE.run)(&ParamValues::defaults(SHAPE_PARAMS), None).is_ok());
    }
}
