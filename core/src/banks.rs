//! Scene `banks` (the bank playground): a 2-D array `a[rows][cols + pad]` of `elem_bytes`-byte
//! elements in shared memory, read by warps of 32 lanes in an access pattern; each warp request
//! is costed by the bank rule of [`crate::simt::shared`].
//!
//! Patterns (request `r`, lane `l`, `i` = the request's `32·r + l`-th element in pattern order):
//! - `row`: row-major order, `a[i / cols][i % cols]` — consecutive lanes, consecutive elements;
//! - `column`: column-major order, `a[i % rows][i / rows]` — a warp walks down a column (the
//!   transposed read of the ∇γ/∇β kernel, lecture §2.4);
//! - `diagonal`: lane `l` reads `a[l % rows][(l + r) % cols]` — the skewed layout's access;
//! - `stride`: lane `l` reads row-major element `(r + l·stride) mod (rows·cols)`.
//!
//! Input (`--input`, [`INPUT`]): one warp request given directly, `{byte_addresses: [32
//! numbers], elem_bytes}` or `{expression: "(lane * 33 + 5) * 4", elem_bytes}` — the byte
//! address of lane `lane` = 0 … 31 as a formula ([`crate::input::expr`]).

use crate::text::Text;
use serde::Serialize;

use crate::Error;
use crate::input::{expr, json};
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, InputSpec, Scene, SceneDef, erase};
use crate::simt::shared::{BankConfig, SharedCost};

/// Lanes per warp request in this scene.
pub const WARP: u32 = 32;

/// The access patterns.
pub const PATTERNS: &[&str] = &["row", "column", "diagonal", "stride"];

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("rows", "rows", "行数", 1, 256, 32),
    ParamSpec::int("cols", "columns", "列数", 1, 256, 32),
    ParamSpec::int(
        "pad",
        "padding (elements per row)",
        "每行填充（元素）",
        0,
        8,
        0,
    ),
    ParamSpec::choice(
        "elem_bytes",
        "element size (bytes)",
        "元素大小（字节）",
        &["1", "2", "4", "8", "16"],
        "4",
    ),
    ParamSpec::choice("pattern", "access pattern", "访问模式", PATTERNS, "column"),
    ParamSpec::int(
        "stride",
        "stride (elements, pattern=stride)",
        "步长（元素）",
        1,
        64,
        2,
    ),
];

/// The scene's typed definition (`banks`).
pub struct BanksScene;

impl SceneDef for BanksScene {
    const ID: &'static str = "banks";
    type Output = BanksOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&BanksParams::from_values(v)?)
    }

    fn run_input(v: &ParamValues, input: &serde_json::Value) -> Result<Self::Output, Error> {
        run_input(input, &BanksParams::from_values(v)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: BanksScene::ID,
    section: "§2.4",
    title: Text::new(
        "Bank playground: shared-memory conflicts",
        "bank 实验场：共享内存冲突",
    ),
    summary: Text::new(
        "Which banks each warp request hits, and the wavefronts it costs.",
        "每次线程束请求落在哪些 bank 上，要花多少轮。",
    ),
    params: PARAMS,
    run: erase::<BanksScene>(),
    input: Some(&INPUT),
    chapter: &Chapter::FOUNDATIONS,
    featured: Featured::Nothing,
    cost: Cost::Light,
};

/// Largest byte address an input may give (shared memory is a 32-bit space; a block has far
/// less).
pub const MAX_ADDRESS: u64 = u32::MAX as u64;

/// The scene's input: one warp request, by address or by formula.
pub const INPUT: InputSpec = InputSpec {
    keys: Text::new(
        "byte_addresses: [32 integers] the byte address each lane reads, or\n\
         expression: \"(lane * 33 + 5) * 4\" the byte address as a formula of lane = 0 … 31 \
         (integers, lane, + - * / %, parentheses; at most 200 characters)\n\
         elem_bytes: 1, 2, 4, 8 or 16 (default: the parameter); each address a multiple of it",
        "byte_addresses: [32 个整数] 每个线程读的字节地址，或\n\
         expression: \"(lane * 33 + 5) * 4\" 以 lane = 0 … 31 表示字节地址的公式\
         （整数、lane、+ - * / %、括号；至多 200 个字符）\n\
         elem_bytes: 1、2、4、8 或 16（默认取参数）；每个地址都须是它的倍数",
    ),
    example_params: &[],
    params: &["elem_bytes"],
    example: r#"{"expression": "(lane * 33 + 5) * 4", "elem_bytes": 4}"#,
};

/// Reads the input's 32 byte addresses and element size (`p.elem_bytes` when it has none).
///
/// # Errors
/// [`Error::InvalidInput`] naming the key: neither or both of `byte_addresses` and
/// `expression`; not 32 addresses; an address that is not a whole number 0 ..= [`MAX_ADDRESS`]
/// or not a multiple of `elem_bytes` (CUDA's natural alignment); an expression that does not
/// parse or evaluates out of range; `elem_bytes` not 1, 2, 4, 8 or 16.
pub fn read_input(input: &serde_json::Value, p: &BanksParams) -> Result<(Vec<u64>, u32), Error> {
    let map = json::object(input, &["byte_addresses", "expression", "elem_bytes"])?;
    let elem_bytes = match map.get("elem_bytes") {
        None => p.elem_bytes,
        Some(v) => {
            let n = json::integer(v, "elem_bytes", 1, 16)?;
            if ![1, 2, 4, 8, 16].contains(&n) {
                return Err(Error::input(
                    "elem_bytes",
                    Text::new(
                        format!("{n}: expected 1, 2, 4, 8 or 16"),
                        format!("{n}：应为 1、2、4、8 或 16"),
                    ),
                ));
            }
            n as u32
        }
    };
    let (addresses, key): (Vec<u64>, &str) =
        match (map.get("byte_addresses"), map.get("expression")) {
            (Some(_), Some(_)) => {
                return Err(Error::input_fixed(
                    "expression",
                    "give either byte_addresses or expression, not both",
                    "byte_addresses 与 expression 只给其一，不可都给",
                ));
            }
            (None, None) => {
                return Err(Error::input_fixed(
                    "byte_addresses",
                    "missing: give byte_addresses (32 integers) or expression (a formula of lane)",
                    "缺失：请给 byte_addresses（32 个整数）或 expression（关于 lane 的公式）",
                ));
            }
            (Some(v), None) => {
                let items = json::list(v, "byte_addresses", WARP as usize)?;
                if items.len() != WARP as usize {
                    return Err(Error::input(
                        "byte_addresses",
                        Text::new(
                            format!(
                                "{} addresses; a warp request has one per lane, {WARP}",
                                items.len()
                            ),
                            format!(
                                "{} 个地址；一次 warp 请求每个 lane 一个，共 {WARP} 个",
                                items.len()
                            ),
                        ),
                    ));
                }
                let a = items
                    .iter()
                    .enumerate()
                    .map(|(l, a)| json::integer(a, &format!("byte_addresses[{l}]"), 0, MAX_ADDRESS))
                    .collect::<Result<_, _>>()?;
                (a, "byte_addresses")
            }
            (None, Some(v)) => {
                let text = json::string(v, "expression")?;
                let e = expr::parse(text, "lane", "expression")?;
                let a = (0..i64::from(WARP))
                    .map(|l| {
                        let a = e.eval(l, "expression")?;
                        u64::try_from(a).ok().filter(|a| *a <= MAX_ADDRESS).ok_or_else(|| {
                        Error::input(
                            "expression",
                            Text::new(
                                format!(
                                    "lane {l} gives {a}: a byte address is 0 ..= {MAX_ADDRESS}"
                                ),
                                format!("lane {l} 得 {a}：字节地址须在 0 ..= {MAX_ADDRESS} 之内"),
                            ),
                        )
                    })
                    })
                    .collect::<Result<_, _>>()?;
                (a, "expression")
            }
        };
    if let Some((l, a)) = addresses
        .iter()
        .enumerate()
        .find(|(_, a)| *a % u64::from(elem_bytes) != 0)
    {
        let k = if key == "expression" {
            "expression".to_owned()
        } else {
            format!("byte_addresses[{l}]")
        };
        return Err(Error::input(
            k,
            Text::new(
                format!(
                    "lane {l} reads byte {a}, not a multiple of elem_bytes = {elem_bytes} \
                     (CUDA requires natural alignment)"
                ),
                format!(
                    "lane {l} 读第 {a} 字节，不是 elem_bytes = {elem_bytes} 的倍数\
                     （CUDA 要求自然对齐）"
                ),
            ),
        ));
    }
    Ok((addresses, elem_bytes))
}

/// Costs the input's one warp request: the result has one request, whose elements are
/// `(0, address / elem_bytes)` (the element index in a flat array).
///
/// # Errors
/// As [`read_input`].
pub fn run_input(input: &serde_json::Value, p: &BanksParams) -> Result<BanksOutput, Error> {
    let (addresses, elem_bytes) = read_input(input, p)?;
    let opt: Vec<Option<u64>> = addresses.iter().map(|a| Some(*a)).collect();
    let cost = BankConfig::default().request(&opt, elem_bytes)?;
    let elements = addresses
        .iter()
        .map(|a| {
            (
                0,
                u32::try_from(a / u64::from(elem_bytes)).unwrap_or(u32::MAX),
            )
        })
        .collect();
    Ok(BanksOutput {
        conflict_degree: cost.conflict_degree,
        wavefronts: cost.wavefronts,
        ideal_wavefronts: cost.ideal_wavefronts,
        requests: 1,
        total_wavefronts: u64::from(cost.wavefronts),
        total_ideal_wavefronts: u64::from(cost.ideal_wavefronts),
        avg_wavefronts_per_request: f64::from(cost.wavefronts),
        elem_bytes,
        from_input: true,
        shown: vec![Request {
            elements,
            addresses,
            cost,
        }],
    })
}

/// Validated parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BanksParams {
    /// Rows of the array.
    pub rows: u32,
    /// Columns used per row.
    pub cols: u32,
    /// Extra elements per row (the `[32][33]` trick is `pad = 1`).
    pub pad: u32,
    /// Bytes per element: 1, 2, 4, 8 or 16.
    pub elem_bytes: u32,
    /// One of [`PATTERNS`].
    pub pattern: String,
    /// Element stride for `pattern = stride`.
    pub stride: u32,
}

impl BanksParams {
    /// Reads the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when the array does not fit in 48 KiB of shared memory.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let p = BanksParams {
            rows: v.int("rows")? as u32,
            cols: v.int("cols")? as u32,
            pad: v.int("pad")? as u32,
            elem_bytes: v.text("elem_bytes")?.parse().map_err(|_| {
                Error::invalid(
                    "elem_bytes",
                    v.text("elem_bytes").unwrap_or(""),
                    crate::error::Expected::either(&["1", "2", "4", "8", "16"]),
                )
            })?,
            pattern: v.text("pattern")?.to_owned(),
            stride: v.int("stride")? as u32,
        };
        let bytes = u64::from(p.rows) * u64::from(p.cols + p.pad) * u64::from(p.elem_bytes);
        if bytes > crate::simt::block::DEFAULT_SHARED_BYTES {
            return Err(Error::invalid(
                "rows",
                p.rows,
                crate::error::Expected::custom(
                    format!(
                        "the array needs {bytes} bytes; shared memory holds 49152 per block — \
                         fewer rows or columns"
                    ),
                    format!(
                        "数组需要 {bytes} 字节；每个线程块的共享内存只有 49152 字节——请减少行数或列数"
                    ),
                ),
            ));
        }
        if !PATTERNS.contains(&p.pattern.as_str()) {
            return Err(Error::invalid(
                "pattern",
                &p.pattern,
                crate::error::Expected::one_of(PATTERNS),
            ));
        }
        Ok(p)
    }

    /// The (row, column) lane `lane` of request `r` reads.
    pub fn element(&self, r: u32, lane: u32) -> (u32, u32) {
        let n = self.rows * self.cols;
        let i = (r * WARP + lane) % n;
        match self.pattern.as_str() {
            "column" => (i % self.rows, i / self.rows),
            "diagonal" => (lane % self.rows, (lane + r) % self.cols),
            "stride" => {
                let j = (u64::from(r) + u64::from(lane) * u64::from(self.stride)) % u64::from(n);
                (
                    (j / u64::from(self.cols)) as u32,
                    (j % u64::from(self.cols)) as u32,
                )
            }
            _ => (i / self.cols, i % self.cols),
        }
    }

    /// Number of warp requests that read the array once: `ceil(rows·cols / 32)`.
    pub fn requests(&self) -> u32 {
        (self.rows * self.cols).div_ceil(WARP)
    }
}

/// One warp request.
#[derive(Debug, Clone, Serialize)]
pub struct Request {
    /// (row, column) per lane.
    pub elements: Vec<(u32, u32)>,
    /// Byte address per lane.
    pub addresses: Vec<u64>,
    /// Its cost.
    pub cost: SharedCost,
}

/// The scene's result.
#[derive(Debug, Clone, Serialize)]
pub struct BanksOutput {
    /// Worst conflict degree over the requests (1 = conflict-free, 32 = all lanes in one bank).
    pub conflict_degree: u32,
    /// Wavefronts of the worst request.
    pub wavefronts: u32,
    /// Ideal wavefronts of that request.
    pub ideal_wavefronts: u32,
    /// Requests to read the whole array once.
    pub requests: u32,
    /// Wavefronts summed over all requests.
    pub total_wavefronts: u64,
    /// Ideal wavefronts summed over all requests.
    pub total_ideal_wavefronts: u64,
    /// `total_wavefronts / requests`.
    pub avg_wavefronts_per_request: f64,
    /// Bytes per element.
    pub elem_bytes: u32,
    /// Whether the request came from the user's input (one request, elements as flat indices).
    pub from_input: bool,
    /// The first requests in full (at most 64), for the bank grid.
    pub shown: Vec<Request>,
}

/// Costs every request.
///
/// # Errors
/// Only from the bank rule (cannot happen for validated parameters: addresses are aligned).
pub fn run(p: &BanksParams) -> Result<BanksOutput, Error> {
    let banks = BankConfig::default();
    let row_bytes = u64::from(p.cols + p.pad) * u64::from(p.elem_bytes);
    let (mut total, mut total_ideal) = (0u64, 0u64);
    let mut worst: Option<SharedCost> = None;
    let mut shown = Vec::new();
    for r in 0..p.requests() {
        let elements: Vec<(u32, u32)> = (0..WARP).map(|l| p.element(r, l)).collect();
        let addresses: Vec<u64> = elements
            .iter()
            .map(|(i, j)| u64::from(*i) * row_bytes + u64::from(*j) * u64::from(p.elem_bytes))
            .collect();
        let opt: Vec<Option<u64>> = addresses.iter().map(|a| Some(*a)).collect();
        let cost = banks.request(&opt, p.elem_bytes)?;
        total += u64::from(cost.wavefronts);
        total_ideal += u64::from(cost.ideal_wavefronts);
        if worst.as_ref().is_none_or(|w| {
            (cost.conflict_degree, cost.wavefronts) > (w.conflict_degree, w.wavefronts)
        }) {
            worst = Some(cost.clone());
        }
        if shown.len() < 64 {
            shown.push(Request {
                elements,
                addresses,
                cost,
            });
        }
    }
    let worst = worst.ok_or_else(|| {
        Error::invalid(
            "rows",
            p.rows,
            crate::error::Expected::custom("the array is empty", "数组为空"),
        )
    })?;
    let requests = p.requests();
    Ok(BanksOutput {
        conflict_degree: worst.conflict_degree,
        wavefronts: worst.wavefronts,
        ideal_wavefronts: worst.ideal_wavefronts,
        requests,
        total_wavefronts: total,
        total_ideal_wavefronts: total_ideal,
        avg_wavefronts_per_request: total as f64 / f64::from(requests),
        elem_bytes: p.elem_bytes,
        from_input: false,
        shown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pattern: &str, pad: u32, elem_bytes: u32) -> BanksParams {
        BanksParams {
            rows: 32,
            cols: 32,
            pad,
            elem_bytes,
            pattern: pattern.into(),
            stride: 2,
        }
    }

    #[test]
    fn transposed_read_of_32x32_floats() {
        // The lecture's [32][32] → 32-way, [32][33] → conflict-free (§2.4).
        let o = run(&p("column", 0, 4)).unwrap();
        assert_eq!(
            (o.conflict_degree, o.wavefronts, o.ideal_wavefronts),
            (32, 32, 1)
        );
        assert_eq!(o.requests, 32);
        let o = run(&p("column", 1, 4)).unwrap();
        assert_eq!(
            (o.conflict_degree, o.wavefronts, o.ideal_wavefronts),
            (1, 1, 1)
        );
        assert_eq!(o.avg_wavefronts_per_request, 1.0);
    }

    #[test]
    fn row_reads_and_wide_elements() {
        let o = run(&p("row", 0, 4)).unwrap();
        assert_eq!((o.conflict_degree, o.wavefronts), (1, 1));
        // Doubles along a row: two half-warps, two wavefronts, no conflict.
        let o = run(&p("row", 0, 8)).unwrap();
        assert_eq!(
            (o.conflict_degree, o.wavefronts, o.ideal_wavefronts),
            (1, 2, 2)
        );
        // Doubles down a column of a [32][32] double array: a row is 256 bytes = 64 words, so
        // the 16 lanes of a half-warp hit banks {0,1} with 16 distinct words each.
        let o = run(&p("column", 0, 8)).unwrap();
        assert_eq!((o.conflict_degree, o.wavefronts), (16, 32));
        // Stride 2 floats: 2-way.
        let o = run(&p("stride", 0, 4)).unwrap();
        assert_eq!(o.conflict_degree, 2);
    }

    fn cost_of(input: serde_json::Value) -> Result<BanksOutput, Error> {
        run_input(&input, &p("column", 0, 4))
    }

    #[test]
    fn the_padded_transpose_as_a_formula_is_conflict_free() {
        // (lane·33 + 5)·4: word lane·33 + 5, bank (lane·33 + 5) mod 32 = (lane + 5) mod 32 —
        // 32 distinct banks.
        let o = cost_of(serde_json::json!({"expression": "(lane * 33 + 5) * 4"})).unwrap();
        assert_eq!(
            (o.conflict_degree, o.wavefronts, o.ideal_wavefronts),
            (1, 1, 1)
        );
        assert_eq!(o.shown[0].addresses[2], (2 * 33 + 5) * 4);
        // Unpadded, lane·32·4: every lane in bank 0, 32 distinct words → 32-way.
        let o = cost_of(serde_json::json!({"expression": "lane * 128"})).unwrap();
        assert_eq!((o.conflict_degree, o.wavefronts), (32, 32));
    }

    #[test]
    fn byte_addresses_and_small_elements() {
        // All 32 lanes read the same word: a broadcast, one wavefront.
        let same = serde_json::json!({"byte_addresses": vec![64; 32]});
        let o = cost_of(same).unwrap();
        assert_eq!((o.conflict_degree, o.wavefronts), (1, 1));
        // 2-byte elements, lane·2: lanes 2k and 2k+1 share word k (one bank serves one word
        // to both), 16 words in 16 banks → one wavefront.
        let o = cost_of(serde_json::json!({"expression": "lane * 2", "elem_bytes": 2})).unwrap();
        assert_eq!((o.conflict_degree, o.wavefronts, o.elem_bytes), (1, 1, 2));
        // 2-byte elements, lane·64: word lane·16, bank (lane·16) mod 32 ∈ {0, 16}, 16 distinct
        // words in each → 16-way.
        let o = cost_of(serde_json::json!({"expression": "lane * 64", "elem_bytes": 2})).unwrap();
        assert_eq!(o.conflict_degree, 16);
    }

    #[test]
    fn the_half_tile_preset_is_16_way() {
        let pr = crate::presets::find("banks-half-tile-column-read").unwrap();
        let v = pr.session.params.validated(SCENE.params).unwrap();
        let o = run_input(
            pr.session.input.as_ref().unwrap(),
            &BanksParams::from_values(&v).unwrap(),
        )
        .unwrap();
        // Lane l at byte 64·l: word 16·l, bank 16·l mod 32 ∈ {0, 16}; 16 lanes and 16 distinct
        // words per bank → 16 wavefronts where 1 would do (32 lanes × 2 bytes fit one).
        let banks: std::collections::BTreeSet<_> = o.shown[0]
            .cost
            .lane_bank
            .iter()
            .flatten()
            .copied()
            .collect();
        assert_eq!(banks.into_iter().collect::<Vec<_>>(), vec![0, 16]);
        assert_eq!(
            (o.conflict_degree, o.wavefronts, o.ideal_wavefronts),
            (16, 16, 1)
        );
    }

    #[test]
    fn bad_inputs_name_the_key() {
        let key = |v: serde_json::Value| match cost_of(v) {
            Err(Error::InvalidInput { key, problem }) => (key, problem.en),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            key(serde_json::json!({"byte_addresses": [0, 4]})).0,
            "byte_addresses"
        );
        let mut a: Vec<serde_json::Value> = (0..32).map(|l| serde_json::json!(l * 4)).collect();
        a[7] = serde_json::json!(30);
        let (k, p) = key(serde_json::json!({"byte_addresses": a}));
        assert_eq!(k, "byte_addresses[7]");
        assert!(p.contains("multiple of elem_bytes = 4"), "{p}");
        a[7] = serde_json::json!(-4);
        assert_eq!(
            key(serde_json::json!({"byte_addresses": a})).0,
            "byte_addresses[7]"
        );
        let (k, p) = key(serde_json::json!({"expression": "lane * 4 - 8"}));
        assert_eq!(k, "expression");
        assert!(p.contains("lane 0 gives -8"), "{p}");
        assert_eq!(
            key(serde_json::json!({"expression": "lane * 4", "elem_bytes": 3})).0,
            "elem_bytes"
        );
        assert_eq!(
            key(serde_json::json!({"expression": "lane * 4", "byte_addresses": []})).0,
            "expression"
        );
        assert_eq!(
            key(serde_json::json!({"elem_bytes": 4})).0,
            "byte_addresses"
        );
        assert_eq!(
            key(serde_json::json!({"expression": "lane * warp"})).0,
            "expression"
        );
    }

    #[test]
    fn too_big_for_shared_memory_is_refused() {
        let mut v = ParamValues::defaults(PARAMS);
        v.set(PARAMS, "rows", "256").unwrap();
        v.set(PARAMS, "cols", "256").unwrap();
        let e = BanksParams::from_values(&v).unwrap_err();
        assert!(e.to_string().contains("49152"), "{e}");
    }
}
