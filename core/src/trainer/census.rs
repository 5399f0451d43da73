//! Scene `trainer-census` (lecture §4.1): the parameter tensors of real architectures, built
//! from their hyper-parameters — never typed-in totals.
//!
//! Two families:
//! - [`Family::EncoderDecoderPreNorm`]: the fairseq Transformer (Vaswani et al. 2017) with
//!   pre-norm layers (`normalize_before`, so each stack ends in a final LayerNorm), one token
//!   embedding shared by encoder, decoder and output projection (`share_all_embeddings`) and
//!   sinusoidal positions (no parameters). Per encoder layer 16 tensors (q/k/v/out projections
//!   with biases, two LayerNorms, two FFN linears with biases), per decoder layer 26 (plus
//!   encoder-decoder attention and its LayerNorm): 6·16 + 6·26 + 1 + 4 = 257.
//! - [`Family::Gpt2`]: OpenAI GPT-2 as Hugging Face stores it: token and learned position
//!   embeddings, per block `ln_1`, fused `c_attn` (d → 3d), `c_proj`, `ln_2`, `mlp.c_fc`
//!   (d → 4d), `mlp.c_proj`, each with bias (12 tensors), a final `ln_f`; the LM head is tied
//!   to the token embedding. GPT-2 large: 36·12 + 4 = 436 tensors, 774,030,080 parameters.
//!
//! Shapes follow the source framework: fairseq `nn.Linear` is `[out, in]`, GPT-2's `Conv1D`
//! is `[in, out]`. Element counts, not bytes, unless a field says bytes.

use crate::text::Text;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};

use super::workspace::{TrainerScheme, trainer_stages};

/// What role a parameter tensor plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TensorKind {
    /// A linear layer's weight matrix.
    Weight,
    /// A linear layer's bias vector.
    Bias,
    /// A LayerNorm scale γ.
    LayerNormGamma,
    /// A LayerNorm shift β.
    LayerNormBeta,
    /// A token or learned position embedding table.
    Embedding,
}

/// Every kind, in display order.
pub const KINDS: [TensorKind; 5] = [
    TensorKind::Weight,
    TensorKind::Bias,
    TensorKind::LayerNormGamma,
    TensorKind::LayerNormBeta,
    TensorKind::Embedding,
];

/// One parameter tensor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParamTensor {
    /// Its name in the source framework's state dict, e.g. `h.0.attn.c_attn.weight`.
    pub name: String,
    /// Its shape (elements per dimension).
    pub shape: Vec<usize>,
    /// Its role.
    pub kind: TensorKind,
}

impl ParamTensor {
    fn new(name: impl Into<String>, shape: &[usize], kind: TensorKind) -> Self {
        ParamTensor {
            name: name.into(),
            shape: shape.to_vec(),
            kind,
        }
    }

    /// Number of elements (the product of the shape).
    pub fn numel(&self) -> u64 {
        self.shape.iter().map(|&d| d as u64).product()
    }
}

/// The architecture family (how the hyper-parameters turn into tensors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// fairseq encoder–decoder Transformer, pre-norm, all embeddings shared.
    EncoderDecoderPreNorm,
    /// GPT-2 (decoder-only, pre-norm, learned positions, tied LM head).
    Gpt2,
}

/// A model described by its hyper-parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSpec {
    /// Id used by `--set model=…`.
    pub id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// Architecture family.
    pub family: Family,
    /// Layers per stack (encoder and decoder each, for encoder–decoder models).
    pub layers: usize,
    /// Hidden size d.
    pub d_model: usize,
    /// Feed-forward inner size.
    pub d_ff: usize,
    /// Attention heads (no effect on parameter shapes; listed for completeness).
    pub heads: usize,
    /// Vocabulary size (rows of the token embedding).
    pub vocab: usize,
    /// Learned positions (rows of the position embedding); 0 = sinusoidal, no parameters.
    pub context: usize,
    /// Where the hyper-parameters come from.
    pub source: &'static str,
}

/// Model ids, in display order.
pub const MODEL_IDS: &[&str] = &[
    "transformer-base",
    "transformer-big",
    "gpt2-small",
    "gpt2-medium",
    "gpt2-large",
    "gpt2-xl",
];

/// Every model the census knows.
pub fn models() -> &'static [ModelSpec] {
    const WMT: &str = "Vaswani et al. 2017 table 3; fairseq transformer_wmt_en_de(_big) with \
                       --share-all-embeddings and pre-norm; vocab 32,768 = fairseq's joined \
                       WMT16 en-de BPE dictionary";
    const GPT2: &str = "Radford et al. 2019 table 2; Hugging Face gpt2 configs (n_vocab 50257, \
                        n_ctx 1024, n_inner = 4·d); lecture §4.1 and exercise 8";
    static M: &[ModelSpec] = &[
        ModelSpec {
            id: "transformer-base",
            name: "Transformer-base (6+6 layers, d 512)",
            family: Family::EncoderDecoderPreNorm,
            layers: 6,
            d_model: 512,
            d_ff: 2048,
            heads: 8,
            vocab: 32768,
            context: 0,
            source: WMT,
        },
        ModelSpec {
            id: "transformer-big",
            name: "Transformer-big (6+6 layers, d 1024)",
            family: Family::EncoderDecoderPreNorm,
            layers: 6,
            d_model: 1024,
            d_ff: 4096,
            heads: 16,
            vocab: 32768,
            context: 0,
            source: WMT,
        },
        ModelSpec {
            id: "gpt2-small",
            name: "GPT-2 small (12 layers, d 768)",
            family: Family::Gpt2,
            layers: 12,
            d_model: 768,
            d_ff: 3072,
            heads: 12,
            vocab: 50257,
            context: 1024,
            source: GPT2,
        },
        ModelSpec {
            id: "gpt2-medium",
            name: "GPT-2 medium (24 layers, d 1024)",
            family: Family::Gpt2,
            layers: 24,
            d_model: 1024,
            d_ff: 4096,
            heads: 16,
            vocab: 50257,
            context: 1024,
            source: GPT2,
        },
        ModelSpec {
            id: "gpt2-large",
            name: "GPT-2 large (36 layers, d 1280)",
            family: Family::Gpt2,
            layers: 36,
            d_model: 1280,
            d_ff: 5120,
            heads: 20,
            vocab: 50257,
            context: 1024,
            source: GPT2,
        },
        ModelSpec {
            id: "gpt2-xl",
            name: "GPT-2 XL (48 layers, d 1600)",
            family: Family::Gpt2,
            layers: 48,
            d_model: 1600,
            d_ff: 6400,
            heads: 25,
            vocab: 50257,
            context: 1024,
            source: GPT2,
        },
    ];
    M
}

/// The model with this id.
///
/// # Errors
/// [`Error::InvalidParam`] (`model`) listing the known ids.
pub fn model(id: &str) -> Result<&'static ModelSpec, Error> {
    models()
        .iter()
        .find(|m| m.id == id)
        .ok_or_else(|| Error::invalid("model", id, crate::error::Expected::one_of(MODEL_IDS)))
}

impl ModelSpec {
    /// The parameter tensors in the order the framework registers them (the order a workspace
    /// lays them out).
    pub fn tensors(&self) -> Vec<ParamTensor> {
        match self.family {
            Family::EncoderDecoderPreNorm => self.encoder_decoder(),
            Family::Gpt2 => self.gpt2(),
        }
    }

    fn encoder_decoder(&self) -> Vec<ParamTensor> {
        use TensorKind::*;
        let (d, f) = (self.d_model, self.d_ff);
        let mut t = vec![ParamTensor::new(
            "encoder.embed_tokens.weight",
            &[self.vocab, d],
            Embedding,
        )];
        let attn = |t: &mut Vec<ParamTensor>, p: &str| {
            for proj in ["k_proj", "v_proj", "q_proj", "out_proj"] {
                t.push(ParamTensor::new(
                    format!("{p}.{proj}.weight"),
                    &[d, d],
                    Weight,
                ));
                t.push(ParamTensor::new(format!("{p}.{proj}.bias"), &[d], Bias));
            }
        };
        let ln = |t: &mut Vec<ParamTensor>, p: &str| {
            t.push(ParamTensor::new(
                format!("{p}.weight"),
                &[d],
                LayerNormGamma,
            ));
            t.push(ParamTensor::new(format!("{p}.bias"), &[d], LayerNormBeta));
        };
        let ffn = |t: &mut Vec<ParamTensor>, p: &str| {
            t.push(ParamTensor::new(format!("{p}.fc1.weight"), &[f, d], Weight));
            t.push(ParamTensor::new(format!("{p}.fc1.bias"), &[f], Bias));
            t.push(ParamTensor::new(format!("{p}.fc2.weight"), &[d, f], Weight));
            t.push(ParamTensor::new(format!("{p}.fc2.bias"), &[d], Bias));
        };
        for i in 0..self.layers {
            let p = format!("encoder.layers.{i}");
            attn(&mut t, &format!("{p}.self_attn"));
            ln(&mut t, &format!("{p}.self_attn_layer_norm"));
            ffn(&mut t, &p);
            ln(&mut t, &format!("{p}.final_layer_norm"));
        }
        ln(&mut t, "encoder.layer_norm");
        // decoder.embed_tokens and the output projection share encoder.embed_tokens.
        for i in 0..self.layers {
            let p = format!("decoder.layers.{i}");
            attn(&mut t, &format!("{p}.self_attn"));
            ln(&mut t, &format!("{p}.self_attn_layer_norm"));
            attn(&mut t, &format!("{p}.encoder_attn"));
            ln(&mut t, &format!("{p}.encoder_attn_layer_norm"));
            ffn(&mut t, &p);
            ln(&mut t, &format!("{p}.final_layer_norm"));
        }
        ln(&mut t, "decoder.layer_norm");
        t
    }

    fn gpt2(&self) -> Vec<ParamTensor> {
        use TensorKind::*;
        let (d, f) = (self.d_model, self.d_ff);
        let mut t = vec![
            ParamTensor::new("wte.weight", &[self.vocab, d], Embedding),
            ParamTensor::new("wpe.weight", &[self.context, d], Embedding),
        ];
        let ln = |t: &mut Vec<ParamTensor>, p: &str| {
            t.push(ParamTensor::new(
                format!("{p}.weight"),
                &[d],
                LayerNormGamma,
            ));
            t.push(ParamTensor::new(format!("{p}.bias"), &[d], LayerNormBeta));
        };
        let conv = |t: &mut Vec<ParamTensor>, p: &str, n_in: usize, n_out: usize| {
            t.push(ParamTensor::new(
                format!("{p}.weight"),
                &[n_in, n_out],
                Weight,
            ));
            t.push(ParamTensor::new(format!("{p}.bias"), &[n_out], Bias));
        };
        for i in 0..self.layers {
            let p = format!("h.{i}");
            ln(&mut t, &format!("{p}.ln_1"));
            conv(&mut t, &format!("{p}.attn.c_attn"), d, 3 * d);
            conv(&mut t, &format!("{p}.attn.c_proj"), d, d);
            ln(&mut t, &format!("{p}.ln_2"));
            conv(&mut t, &format!("{p}.mlp.c_fc"), d, f);
            conv(&mut t, &format!("{p}.mlp.c_proj"), f, d);
        }
        ln(&mut t, "ln_f");
        t
    }
}

/// The parameter tensors of model `model_id`, in registration order (for Lab E and the
/// workspace scene).
///
/// # Errors
/// [`Error::InvalidParam`] (`model`) for an unknown id.
pub fn parameter_tensors(model_id: &str) -> Result<Vec<ParamTensor>, Error> {
    Ok(model(model_id)?.tensors())
}

/// Total elements of `tensors`.
pub fn total_parameters(tensors: &[ParamTensor]) -> u64 {
    tensors.iter().map(ParamTensor::numel).sum()
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::choice("model", "model", "模型", MODEL_IDS, "transformer-big"),
    ParamSpec::int(
        "small_max",
        "a 'small' tensor has at most this many elements",
        "“小”张量的元素上限",
        1,
        1 << 20,
        4096,
    )
    .log(),
];

/// The scene's typed definition (`trainer-census`).
pub struct CensusScene;

impl SceneDef for CensusScene {
    const ID: &'static str = "trainer-census";
    type Output = CensusOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&CensusParams::from_values(v)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: CensusScene::ID,
    section: "§4.1",
    title: Text::new(
        "Census: how many parameter tensors a trainer touches",
        "参数张量普查：训练器每步要碰多少个张量",
    ),
    summary: Text::new(
        "Parameter tensors built from each architecture's hyper-parameters: by kind, by size; most are ~1k-element biases and LayerNorm γ/β.",
        "由各架构的超参数构造出参数张量：按种类、按大小统计；大多数是约 1k 个元素的偏置和 LayerNorm γ/β。",
    ),
    params: PARAMS,
    run: erase::<CensusScene>(),
    input: None,
    chapter: &Chapter::TRAINER,
    featured: Featured::Nothing,
    cost: Cost::Light,
};

/// Validated parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CensusParams {
    /// One of [`MODEL_IDS`].
    pub model: String,
    /// Largest element count that counts as a small (~1k-element) tensor. Default 4096: the
    /// lecture's "一千来个元素" biases and γ/β (d = 1024, and the 4d FFN bias).
    pub small_max: u64,
}

impl CensusParams {
    /// Reads the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an unknown model or `small_max` outside 1..=1048576.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let model_id = v.text("model")?;
        model(model_id)?;
        let small_max = v.int("small_max")?;
        if !(1..=1 << 20).contains(&small_max) {
            return Err(Error::invalid(
                "small_max",
                small_max,
                crate::error::Expected::IntRange {
                    min: 1,
                    max: 1_048_576,
                },
            ));
        }
        Ok(CensusParams {
            model: model_id.to_owned(),
            small_max: small_max as u64,
        })
    }
}

/// Tensors and parameters of one kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KindCount {
    /// The kind.
    pub kind: TensorKind,
    /// Tensors of this kind.
    pub tensors: usize,
    /// Their elements.
    pub parameters: u64,
}

/// One log2 bucket of the size histogram: tensors with `2^log2 ≤ elements < 2^(log2+1)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeBucket {
    /// The bucket's exponent.
    pub log2: u32,
    /// Smallest element count in the bucket (`2^log2`).
    pub min_elements: u64,
    /// Tensors in the bucket.
    pub tensors: usize,
    /// Their elements.
    pub parameters: u64,
    /// Tensors per kind in the bucket (kind → count; kinds absent are 0).
    pub by_kind: BTreeMap<String, usize>,
}

/// One tensor in the listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorRow {
    /// Name in the source framework.
    pub name: String,
    /// Shape.
    pub shape: Vec<usize>,
    /// Kind.
    pub kind: TensorKind,
    /// Elements.
    pub elements: u64,
}

/// The census of one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CensusOutput {
    /// The model's hyper-parameters.
    pub model: ModelSpec,
    /// Parameter tensors.
    pub tensors: usize,
    /// Parameters (elements) over all tensors.
    pub parameters: u64,
    /// The threshold used: a small tensor has at most this many elements.
    pub small_max: u64,
    /// Tensors with at most `small_max` elements.
    pub small_tensors: usize,
    /// `small_tensors / tensors` (lecture §4.1: about 60%).
    pub small_tensor_fraction: f64,
    /// Share of all parameters that live in small tensors.
    pub small_parameter_fraction: f64,
    /// One-dimensional tensors (biases, γ, β) over all tensors.
    pub vector_tensor_fraction: f64,
    /// Median elements per tensor.
    pub median_elements: u64,
    /// Per kind.
    pub by_kind: Vec<KindCount>,
    /// Size histogram, log2 buckets from the smallest to the largest tensor (empty buckets
    /// included).
    pub histogram: Vec<SizeBucket>,
    /// Parameter bytes at FP16 (2 bytes each).
    pub fp16_bytes: u64,
    /// Kernel launches per step of the per-tensor trainer (launches per tensor × tensors).
    pub launches_baseline: u64,
    /// DRAM bytes per step of the per-tensor FP32-master trainer (bytes per parameter ×
    /// parameters; see `trainer-workspace`).
    pub bytes_baseline: u64,
    /// Every tensor.
    pub list: Vec<TensorRow>,
}

/// Takes the census.
///
/// # Errors
/// [`Error::InvalidParam`] (`model`) for an unknown model.
pub fn run(p: &CensusParams) -> Result<CensusOutput, Error> {
    let spec = model(&p.model)?;
    Ok(census_of(spec, &spec.tensors(), p.small_max))
}

/// The census of an explicit tensor list.
pub fn census_of(spec: &ModelSpec, tensors: &[ParamTensor], small_max: u64) -> CensusOutput {
    let n = tensors.len();
    let parameters = total_parameters(tensors);
    let small: Vec<&ParamTensor> = tensors.iter().filter(|t| t.numel() <= small_max).collect();
    let small_params: u64 = small.iter().map(|t| t.numel()).sum();
    let vectors = tensors.iter().filter(|t| t.shape.len() == 1).count();
    let frac = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };

    let by_kind = KINDS
        .iter()
        .map(|&kind| {
            let of: Vec<_> = tensors.iter().filter(|t| t.kind == kind).collect();
            KindCount {
                kind,
                tensors: of.len(),
                parameters: of.iter().map(|t| t.numel()).sum(),
            }
        })
        .collect();

    let log2 = |e: u64| 63 - e.max(1).leading_zeros();
    let lo = tensors.iter().map(|t| log2(t.numel())).min().unwrap_or(0);
    let hi = tensors.iter().map(|t| log2(t.numel())).max().unwrap_or(0);
    let histogram = (lo..=hi)
        .map(|b| {
            let of: Vec<_> = tensors.iter().filter(|t| log2(t.numel()) == b).collect();
            let mut by_kind = BTreeMap::new();
            for t in &of {
                let key = serde_json::to_value(t.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                *by_kind.entry(key).or_insert(0) += 1;
            }
            SizeBucket {
                log2: b,
                min_elements: 1u64 << b,
                tensors: of.len(),
                parameters: of.iter().map(|t| t.numel()).sum(),
                by_kind,
            }
        })
        .collect();

    let mut sizes: Vec<u64> = tensors.iter().map(ParamTensor::numel).collect();
    sizes.sort_unstable();
    let median_elements = sizes.get(sizes.len() / 2).copied().unwrap_or(0);

    let stages = trainer_stages(TrainerScheme::PerTensorFp32Master);
    let per_tensor_launches: u64 = stages.iter().filter(|s| s.per_tensor).count() as u64;
    let bytes_per_param: u64 = stages.iter().map(|s| s.bytes_per_param() as u64).sum();

    CensusOutput {
        model: spec.clone(),
        tensors: n,
        parameters,
        small_max,
        small_tensors: small.len(),
        small_tensor_fraction: frac(small.len() as f64, n as f64),
        small_parameter_fraction: frac(small_params as f64, parameters as f64),
        vector_tensor_fraction: frac(vectors as f64, n as f64),
        median_elements,
        by_kind,
        histogram,
        fp16_bytes: parameters * std::mem::size_of::<half::f16>() as u64,
        launches_baseline: per_tensor_launches * n as u64,
        bytes_baseline: bytes_per_param * parameters,
        list: tensors
            .iter()
            .map(|t| TensorRow {
                name: t.name.clone(),
                shape: t.shape.clone(),
                kind: t.kind,
                elements: t.numel(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn census(id: &str) -> CensusOutput {
        run(&CensusParams {
            model: id.into(),
            small_max: 4096,
        })
        .unwrap()
    }

    #[test]
    fn transformer_big_has_257_tensors() {
        // Lecture §4.1: 257. By hand: encoder layer 4·2 (attention) + 2·2 (LN) + 4 (FFN) = 16,
        // decoder layer 16 + 8 + 2 = 26; 6·16 + 6·26 + 1 shared embedding + 2 final LNs·2 = 257.
        let c = census("transformer-big");
        assert_eq!(c.tensors, 257);
        // Parameters by hand (vocab 32768, d 1024, ffn 4096):
        // emb 33,554,432; enc layer 4·(1024²+1024) + 4·1024 + (2·1024·4096 + 4096 + 1024)
        // = 4,198,400 + 4,096 + 8,393,728 = 12,596,224; dec layer 2·4,198,400 + 6,144 +
        // 8,393,728 = 16,796,672; final LNs 4,096.
        assert_eq!(
            c.parameters,
            33_554_432 + 6 * 12_596_224 + 6 * 16_796_672 + 4_096
        );
        // Small (≤ 4096): per encoder layer 4 attention biases + 4 LN + fc1 bias (4096) + fc2
        // bias = 10; per decoder layer 8 + 6 + 2 = 16; + 4 final LN vectors → 60 + 96 + 4 = 160.
        assert_eq!(c.small_tensors, 160);
        assert!((c.small_tensor_fraction - 160.0 / 257.0).abs() < 1e-12);
        // Lecture: "六成" (about 60%).
        assert!((0.55..0.65).contains(&c.small_tensor_fraction));
        let emb = c
            .by_kind
            .iter()
            .find(|k| k.kind == TensorKind::Embedding)
            .unwrap();
        assert_eq!(emb.tensors, 1);
        assert_eq!(c.launches_baseline, 3 * 257);
    }

    #[test]
    fn gpt2_large_matches_the_lecture() {
        // Lecture exercise 8: 436 tensors, 774 M parameters; Hugging Face: 774,030,080.
        let c = census("gpt2-large");
        assert_eq!(c.tensors, 436);
        assert_eq!(c.parameters, 774_030_080);
        assert_eq!(c.launches_baseline, 1308);
        let gammas = c
            .by_kind
            .iter()
            .find(|k| k.kind == TensorKind::LayerNormGamma)
            .unwrap();
        assert_eq!(gammas.tensors, 2 * 36 + 1);
        // Histogram covers every tensor exactly once.
        let h: usize = c.histogram.iter().map(|b| b.tensors).sum();
        assert_eq!(h, 436);
        let hp: u64 = c.histogram.iter().map(|b| b.parameters).sum();
        assert_eq!(hp, 774_030_080);
        // 1280-element vectors (ln γ/β ×4, two c_proj biases per block, ln_f ×2) land in the
        // 2^10 bucket: 6·36 + 2 = 218.
        let b10 = c.histogram.iter().find(|b| b.log2 == 10).unwrap();
        assert_eq!(b10.tensors, 218);
    }

    #[test]
    fn other_sizes_match_published_counts() {
        // Hugging Face parameter counts (tied LM head).
        assert_eq!(census("gpt2-small").parameters, 124_439_808);
        assert_eq!(census("gpt2-medium").parameters, 354_823_168);
        assert_eq!(census("gpt2-xl").parameters, 1_557_611_200);
        assert_eq!(census("gpt2-small").tensors, 12 * 12 + 4);
        assert_eq!(census("transformer-base").tensors, 257);
    }

    #[test]
    fn unknown_model_is_refused_by_name() {
        let e = model("bert").unwrap_err();
        assert!(e.to_string().contains("`model`"), "{e}");
        assert!(e.to_string().contains("gpt2-large"), "{e}");
    }
}
