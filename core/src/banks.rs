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

use crate::text::Text;
use serde::Serialize;

use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Scene, to_json};
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

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: "banks",
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
    run: |v| to_json(&run(&BanksParams::from_values(v)?)?),
    input: None,
};

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
                    "expected 1, 2, 4, 8 or 16",
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
                format!(
                    "the array needs {bytes} bytes; shared memory holds 49152 per block — fewer rows or columns"
                ),
            ));
        }
        if !PATTERNS.contains(&p.pattern.as_str()) {
            return Err(Error::invalid(
                "pattern",
                &p.pattern,
                format!("expected one of {}", PATTERNS.join(", ")),
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
    let worst = worst.ok_or_else(|| Error::invalid("rows", p.rows, "the array is empty"))?;
    let requests = p.requests();
    Ok(BanksOutput {
        conflict_degree: worst.conflict_degree,
        wavefronts: worst.wavefronts,
        ideal_wavefronts: worst.ideal_wavefronts,
        requests,
        total_wavefronts: total,
        total_ideal_wavefronts: total_ideal,
        avg_wavefronts_per_request: total as f64 / f64::from(requests),
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

    #[test]
    fn too_big_for_shared_memory_is_refused() {
        let mut v = ParamValues::defaults(PARAMS);
        v.set(PARAMS, "rows", "256").unwrap();
        v.set(PARAMS, "cols", "256").unwrap();
        let e = BanksParams::from_values(&v).unwrap_err();
        assert!(e.to_string().contains("49152"), "{e}");
    }
}
