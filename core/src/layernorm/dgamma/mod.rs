//! Scene `layernorm-dgamma` (lecture §2.4, exercise 7): ∇γⱼ = Σ_rows ∇y·x̂ and ∇βⱼ = Σ_rows ∇y
//! over N rows × d columns — one sum per column, across the tokens — parallelised four ways:
//!
//! - `per_column`: one thread per column, N sequential adds; coalesced, but only d threads.
//! - `atomic`: one thread per element, `atomicAdd` into ∇γⱼ, ∇βⱼ: N·d threads, but N updates
//!   queue on each address, and the order (hence the f32 result) depends on arrival order.
//! - `tiled`: HW4 / LightSeq `ker_ln_bw_dgamma_dbetta`: block (32, 32) per 32 columns; thread
//!   (x, y) sums column x over rows y, y+32, …; partials to shared `buf[y][x]`; barrier; the
//!   transposed read `buf[x][y]` gives warp y the 32 partials of column y; `shfl_down` 1, 2, 4,
//!   8, 16 leaves the column sum in lane 0. Parallelism 32·d threads. (Shipped LightSeq writes
//!   `buf[x][y]` and reads `buf[y][x]`: the transposed access is then the store; the counts are
//!   the same. Both ship `[32][32]`; the padding `[32][33]` is the optimisation.)
//! - `two_stage` (exercise 7): stage 1 splits the N rows into P segments (P·d threads, ⌈N/P⌉
//!   adds each, P × d partials of ∇γ and ∇β in f32 to DRAM); stage 2 (a second, small kernel)
//!   sums the P partials of each column (d threads).
//!
//! The tile is simulated on the SIMT [`Block`](crate::simt::Block) for **one** block (columns 0..32, all N rows,
//! seeded ∇y, x̂ ~ N(0, 1) in f32), so its trace exists for the stepper and its ∇γ, ∇β are
//! checked against f64 sums. Every block issues the same shared-memory requests, so the
//! whole-kernel counts are the block's × ⌈d/32⌉ blocks.
//!
//! **What `avg_wavefronts_per_request` averages**: total shared-memory wavefronts / total
//! shared-memory requests over every warp of every block of the chosen scheme's kernel. In the
//! tile each warp issues 4 requests — store ∇β partial, store ∇γ partial (row-wise, 1 wavefront
//! each) and the two transposed loads (32 wavefronts each with pad 0, 1 with pad 1) — so the
//! average is (2·1 + 2·32)/4 = 16.5 with pad 0 and exactly 1.0 with pad 1. The lecture quotes
//! "whole-kernel average rounds 2.63 → 1.00" without saying what it averages; 2.63 is not the
//! per-request average of this kernel under the bank rule (that is 16.5), nor the per-load
//! average (32), and adding the kernel's global loads (1 request per row iteration) dilutes it
//!
//! Layout: `simulate` holds the SIMT simulations (block 0 of the tile kernel, the two atomic
//! warps) and [`sum_in_order`]; this module the parameters, the output types and [`run`],
//! which costs every scheme.

mod simulate;
#[cfg(test)]
mod tests;

use crate::text::Text;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::normals;
use crate::Error;
use crate::params::{ParamSpec, ParamValues, check_int};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};
use crate::simt::trace::TraceSummary;
use crate::simt::{EventKind, Trace};

pub use simulate::sum_in_order;

use simulate::{atomic_trace, simulate_tile};

/// Tile width (threads per side of the (32, 32) block, lanes per warp).
pub const TILE: u32 = 32;

/// The schemes.
pub const SCHEMES: &[&str] = &["per_column", "atomic", "tiled", "two_stage"];

/// Largest N: the simulated block holds 32 columns × N rows of ∇y and x̂ in f32
/// (256·N bytes, 64 MiB at this limit).
pub const MAX_ROWS: u64 = 1 << 18;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "rows",
        "rows N (tokens)",
        "行数 N（token）",
        32,
        1 << 18,
        8192,
    )
    .log(),
    ParamSpec::int(
        "cols",
        "columns d (hidden size)",
        "列数 d（隐藏维度）",
        1,
        1 << 16,
        1024,
    )
    .log(),
    ParamSpec::choice("scheme", "parallel scheme", "并行方式", SCHEMES, "tiled"),
    ParamSpec::int(
        "pad",
        "shared buffer padding (buf[32][32+pad])",
        "共享数组填充（buf[32][32+pad]）",
        0,
        8,
        0,
    ),
    ParamSpec::int(
        "segments",
        "two-stage segments P",
        "两段式的段数 P",
        1,
        1 << 16,
        216,
    )
    .log(),
    ParamSpec::int(
        "orders",
        "atomic arrival orders tried",
        "原子加尝试的到达顺序数",
        2,
        64,
        8,
    ),
    ParamSpec::int("seed", "random seed", "随机种子", 0, 1 << 31, 1),
];

/// The scene's typed definition (`layernorm-dgamma`).
pub struct DgammaScene;

impl SceneDef for DgammaScene {
    const ID: &'static str = "layernorm-dgamma";
    type Output = DgammaOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&DgammaParams::from_values(v)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: DgammaScene::ID,
    section: "§2.4",
    title: Text::new(
        "∇γ, ∇β: column sums, atomics, the 32 × 32 tile and bank conflicts",
        "∇γ、∇β：按列求和、原子加、32 × 32 分块与 bank 冲突",
    ),
    summary: Text::new(
        "Three (and a two-stage) parallelisations of the column sums, the tile simulated warp by warp.",
        "按列求和的三种（外加两段式）并行方式，分块版逐个线程束模拟。",
    ),
    params: PARAMS,
    run: erase::<DgammaScene>(),
    input: None,
    chapter: &Chapter::LAYERNORM,
    featured: Featured::Event(40),
    cost: Cost::Heavy {
        caps: &[("rows", 1 << 13), ("cols", 1 << 12), ("segments", 1 << 10)],
    },
};

/// Validated parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DgammaParams {
    /// Rows N, 32..=2¹⁸.
    pub rows: u64,
    /// Columns d, 1..=2¹⁶.
    pub cols: u64,
    /// One of [`SCHEMES`].
    pub scheme: String,
    /// Padding of the shared buffers, 0..=8 words per row.
    pub pad: u32,
    /// Two-stage segments P, 1..=65536 (capped at N when larger: one row per segment).
    pub segments: u64,
    /// Random arrival orders for the atomic experiment, 2..=64.
    pub orders: u32,
    /// Seed.
    pub seed: u64,
}

impl DgammaParams {
    /// Reads and validates the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let p = DgammaParams {
            rows: v.int("rows")? as u64,
            cols: v.int("cols")? as u64,
            scheme: v.text("scheme")?.to_owned(),
            pad: v.int("pad")? as u32,
            segments: v.int("segments")? as u64,
            orders: v.int("orders")? as u32,
            seed: v.int("seed")? as u64,
        };
        p.validate()?;
        Ok(p)
    }

    /// Range, consistency and memory checks.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn validate(&self) -> Result<(), Error> {
        if self.rows > MAX_ROWS {
            return Err(Error::invalid(
                "rows",
                self.rows,
                crate::error::Expected::custom(
                    format!(
                        "the simulated block would hold {} bytes of ∇y and x̂; at most {MAX_ROWS} \
                         rows (64 MiB) — expected 32..=262144",
                        self.rows * 32 * 2 * 4
                    ),
                    format!(
                        "模拟的线程块将存放 {} 字节的 ∇y 和 x̂；至多 {MAX_ROWS} 行（64 MiB）——\
                         应在 32..=262144 之间",
                        self.rows * 32 * 2 * 4
                    ),
                ),
            ));
        }
        check_int(PARAMS, "rows", self.rows)?;
        check_int(PARAMS, "cols", self.cols)?;
        if !SCHEMES.contains(&self.scheme.as_str()) {
            return Err(Error::invalid(
                "scheme",
                &self.scheme,
                crate::error::Expected::one_of(SCHEMES),
            ));
        }
        check_int(PARAMS, "pad", self.pad)?;
        check_int(PARAMS, "segments", self.segments)?;
        check_int(PARAMS, "orders", self.orders)
    }
}

/// One scheme's figures (whole kernel).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchemeSummary {
    /// The scheme.
    pub scheme: &'static str,
    /// Threads launched (first stage for `two_stage`).
    pub threads: u64,
    /// Sequential adds one thread performs (plus shuffle levels for the tile).
    pub serial_steps: u64,
    /// Kernel launches.
    pub launches: u32,
    /// Shared-memory requests, whole kernel.
    pub shared_requests: u64,
    /// Their wavefronts.
    pub shared_wavefronts: u64,
    /// Their conflict-free wavefronts.
    pub shared_ideal_wavefronts: u64,
    /// Worst conflict degree of the transposed access (0: the scheme has none).
    pub transposed_conflict_degree: u32,
    /// shared_wavefronts / shared_requests (`None`: no shared memory).
    pub avg_wavefronts_per_request: Option<f64>,
    /// Updates that serialise on one ∇γ (or ∇β) address (atomics: N; others 1).
    pub updates_per_address: u64,
    /// DRAM bytes of intermediate partials (two-stage: P·d·2 f32 written and read again).
    pub partial_bytes: u64,
}

/// The simulated tile block (block 0).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TileDetail {
    /// Padding used.
    pub pad: u32,
    /// Blocks in the kernel, ⌈d/32⌉.
    pub blocks: u64,
    /// Shared bytes per block: 2 buffers × 32 × (32 + pad) × 4.
    pub shared_bytes_per_block: u64,
    /// Shared requests of one block (32 warps × 4).
    pub block_shared_requests: u64,
    /// Their wavefronts.
    pub block_shared_wavefronts: u64,
    /// Wavefronts of one partial-sum store (row-wise `buf[y][x]`).
    pub store_wavefronts: u32,
    /// Wavefronts of one transposed load (`buf[x][y]`).
    pub load_wavefronts: u32,
    /// Conflict degree of the store.
    pub store_conflict_degree: u32,
    /// Bank of each lane in warp 0's store (bank = (byte address / 4) mod 32).
    pub store_banks: Vec<u32>,
    /// Bank of each lane in warp 0's transposed load.
    pub load_banks: Vec<u32>,
    /// ∇β of the block's columns from the simulation (lane 0 of each warp), f32.
    pub dbeta: Vec<f32>,
    /// ∇γ of the block's columns, f32.
    pub dgamma: Vec<f32>,
    /// max |∇β − f64 sum| over the block's columns.
    pub max_abs_error_dbeta: f64,
    /// max |∇γ − f64 sum|.
    pub max_abs_error_dgamma: f64,
    /// Totals of the block's trace.
    pub summary: TraceSummary,
}

/// The atomics experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AtomicDetail {
    /// Updates per ∇β address over the grid: N.
    pub updates_per_address: u64,
    /// Lanes of one warp on one address when a warp covers 32 columns of a row (row-major).
    pub warp_contention_row_major: u32,
    /// … when a warp covers 32 rows of a column (column-major thread order).
    pub warp_contention_column_major: u32,
    /// ∇β₀ = Σ_rows ∇y\[·\]\[0\] accumulated in f32 in row order.
    pub in_order_sum: f32,
    /// The same sum in each of `orders` seeded random arrival orders, f32.
    pub order_sums: Vec<f32>,
    /// Distinct values among `order_sums`.
    pub distinct_results: usize,
    /// max − min of `order_sums`.
    pub spread: f64,
    /// f64 sum of the same f32 values.
    pub reference: f64,
}

/// The two-stage variant (exercise 7).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TwoStageDetail {
    /// P as used: the parameter, capped at N.
    pub segments: u64,
    /// Stage 1 threads, P·d.
    pub stage1_threads: u64,
    /// Rows each stage-1 thread adds, ⌈N/P⌉.
    pub stage1_steps: u64,
    /// Stage 2 threads, d.
    pub stage2_threads: u64,
    /// Partials each stage-2 thread adds, P.
    pub stage2_steps: u64,
    /// f32 partials of ∇γ and ∇β written by stage 1 and read by stage 2: 2 × P·d·2·4 bytes.
    pub partial_bytes: u64,
}

/// The scene's result.
#[derive(Debug, Clone, Serialize)]
pub struct DgammaOutput {
    /// The chosen scheme (the keys below are its figures).
    pub scheme: String,
    /// Threads launched.
    pub threads: u64,
    /// Shared-memory requests, whole kernel.
    pub shared_requests: u64,
    /// Their wavefronts.
    pub shared_wavefronts: u64,
    /// Worst conflict degree of the transposed access (tile: 32 with pad 0, 1 with pad 1;
    /// 0 for schemes with no shared memory).
    pub transposed_conflict_degree: u32,
    /// shared_wavefronts / shared_requests, null for schemes with no shared memory.
    pub avg_wavefronts_per_request: Option<f64>,
    /// What the average is over, in words.
    pub averaged_over: &'static str,
    /// All schemes side by side.
    pub schemes: Vec<SchemeSummary>,
    /// The simulated tile block.
    pub tile: TileDetail,
    /// The atomics experiment.
    pub atomic: AtomicDetail,
    /// Exercise 7.
    pub two_stage: TwoStageDetail,
    /// The tile block's trace (block 0), for the stepper.
    #[serde(skip)]
    pub trace_tiled: Trace,
    /// Two warps issuing one atomic request each: row-major (warp 0), column-major (warp 1).
    #[serde(skip)]
    pub trace_atomic: Trace,
}

/// Runs every scheme; the chosen one fills the headline keys. Reports progress
/// ([`crate::progress`]) per warp of the tile and per arrival order.
///
/// # Errors
/// [`Error::InvalidParam`] from [`DgammaParams::validate`] or the SIMT model;
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub fn run(p: &DgammaParams) -> Result<DgammaOutput, Error> {
    p.validate()?;
    // Progress: drawing the inputs (1 unit), the tile's 32 warps, the arrival orders.
    let total = 1 + u64::from(TILE) + u64::from(p.orders);
    crate::progress::report(0, total)?;
    let (n, d) = (p.rows, p.cols);
    let w = d.min(u64::from(TILE)) as usize;
    let nu = n as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let dy: Vec<f32> = normals(&mut rng, nu * w)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let xh: Vec<f32> = normals(&mut rng, nu * w)
        .iter()
        .map(|&v| v as f32)
        .collect();

    // The tile.
    let (trace_tiled, sums_b, sums_g) = simulate_tile(nu, w, d, p.pad, &dy, &xh, &mut |y| {
        crate::progress::report(1 + y, total)
    })?;
    let summary = trace_tiled.summary();
    let events = || trace_tiled.warps.iter().flat_map(|wt| &wt.events);
    let worst = |store: bool| {
        events()
            .filter(|e| matches!(e.kind, EventKind::SharedStore { .. }) == store)
            .filter(|e| {
                matches!(
                    e.kind,
                    EventKind::SharedStore { .. } | EventKind::SharedLoad { .. }
                )
            })
            .fold((0u32, 0u32), |(c, wv), e| {
                (
                    c.max(e.metrics.conflict_degree.unwrap_or(0)),
                    wv.max(e.metrics.wavefronts.unwrap_or(0)),
                )
            })
    };
    let (store_deg, store_wf) = worst(true);
    let (load_deg, load_wf) = worst(false);
    let banks_of = |store: bool| -> Vec<u32> {
        trace_tiled
            .warps
            .first()
            .and_then(|wt| {
                wt.events.iter().find(|e| {
                    if store {
                        matches!(e.kind, EventKind::SharedStore { .. })
                    } else {
                        matches!(e.kind, EventKind::SharedLoad { .. })
                    }
                })
            })
            .map(|e| {
                e.lanes
                    .iter()
                    .map(|l| l.address.map_or(0, |a| ((a / 4) % 32) as u32))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (mut eb, mut eg) = (0.0f64, 0.0f64);
    for x in 0..w {
        let (mut rb, mut rg) = (0.0f64, 0.0f64);
        for r in 0..nu {
            rb += f64::from(dy[r * w + x]);
            rg += f64::from(dy[r * w + x]) * f64::from(xh[r * w + x]);
        }
        eb = eb.max((f64::from(sums_b[x]) - rb).abs());
        eg = eg.max((f64::from(sums_g[x]) - rg).abs());
    }
    let blocks = d.div_ceil(u64::from(TILE));
    let tile = TileDetail {
        pad: p.pad,
        blocks,
        shared_bytes_per_block: 2 * u64::from(TILE) * u64::from(TILE + p.pad) * 4,
        block_shared_requests: summary.shared_requests as u64,
        block_shared_wavefronts: summary.shared_wavefronts,
        store_wavefronts: store_wf,
        load_wavefronts: load_wf,
        store_conflict_degree: store_deg,
        store_banks: banks_of(true),
        load_banks: banks_of(false),
        dbeta: sums_b,
        dgamma: sums_g,
        max_abs_error_dbeta: eb,
        max_abs_error_dgamma: eg,
        summary,
    };

    // Atomics.
    let (trace_atomic, c_row, c_col) = atomic_trace(d, n)?;
    let col0: Vec<f32> = (0..nu).map(|r| dy[r * w]).collect();
    let in_order: Vec<usize> = (0..nu).collect();
    let mut order_sums = Vec::with_capacity(p.orders as usize);
    let mut perm_rng = ChaCha8Rng::seed_from_u64(p.seed);
    perm_rng.set_stream(1);
    for k in 0..p.orders {
        crate::progress::report(1 + u64::from(TILE) + u64::from(k), total)?;
        let mut order = in_order.clone();
        order.shuffle(&mut perm_rng);
        order_sums.push(sum_in_order(&col0, &order));
    }
    crate::progress::report(total, total)?;
    let mut distinct: Vec<u32> = order_sums.iter().map(|v| v.to_bits()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let (lo, hi) = order_sums
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let atomic = AtomicDetail {
        updates_per_address: n,
        warp_contention_row_major: c_row,
        warp_contention_column_major: c_col,
        in_order_sum: sum_in_order(&col0, &in_order),
        order_sums,
        distinct_results: distinct.len(),
        spread: f64::from(hi) - f64::from(lo),
        reference: col0.iter().map(|v| f64::from(*v)).sum(),
    };

    // Two-stage: more segments than rows would leave segments empty; P is capped at N.
    let segments = p.segments.min(n);
    let two_stage = TwoStageDetail {
        segments,
        stage1_threads: segments * d,
        stage1_steps: n.div_ceil(segments),
        stage2_threads: d,
        stage2_steps: segments,
        partial_bytes: 2 * segments * d * 2 * 4,
    };

    let none = |scheme, threads, serial_steps, launches, updates_per_address, partial_bytes| {
        SchemeSummary {
            scheme,
            threads,
            serial_steps,
            launches,
            shared_requests: 0,
            shared_wavefronts: 0,
            shared_ideal_wavefronts: 0,
            transposed_conflict_degree: 0,
            avg_wavefronts_per_request: None,
            updates_per_address,
            partial_bytes,
        }
    };
    let tiled_requests = blocks * tile.block_shared_requests;
    let tiled_wavefronts = blocks * tile.block_shared_wavefronts;
    let schemes = vec![
        none("per_column", d, n, 1, 1, 0),
        none("atomic", n * d, 1, 1, n, 0),
        SchemeSummary {
            scheme: "tiled",
            threads: blocks * u64::from(TILE * TILE),
            serial_steps: n.div_ceil(u64::from(TILE)) + u64::from(TILE.trailing_zeros()),
            launches: 1,
            shared_requests: tiled_requests,
            shared_wavefronts: tiled_wavefronts,
            shared_ideal_wavefronts: blocks * tile.summary.shared_ideal_wavefronts,
            transposed_conflict_degree: load_deg,
            avg_wavefronts_per_request: (tiled_requests > 0)
                .then(|| tiled_wavefronts as f64 / tiled_requests as f64),
            updates_per_address: 1,
            partial_bytes: 0,
        },
        none(
            "two_stage",
            two_stage.stage1_threads,
            two_stage.stage1_steps + two_stage.stage2_steps,
            2,
            1,
            two_stage.partial_bytes,
        ),
    ];
    let chosen = schemes
        .iter()
        .find(|s| s.scheme == p.scheme)
        .cloned()
        .ok_or_else(|| {
            Error::invalid("scheme", &p.scheme, crate::error::Expected::one_of(SCHEMES))
        })?;
    Ok(DgammaOutput {
        scheme: p.scheme.clone(),
        threads: chosen.threads,
        shared_requests: chosen.shared_requests,
        shared_wavefronts: chosen.shared_wavefronts,
        transposed_conflict_degree: chosen.transposed_conflict_degree,
        avg_wavefronts_per_request: chosen.avg_wavefronts_per_request,
        averaged_over: "total shared-memory wavefronts / total shared-memory requests over every \
                        warp of every block of the chosen kernel (tile: per warp 2 row-wise \
                        stores of the ∇β, ∇γ partials + 2 transposed loads)",
        schemes,
        tile,
        atomic,
        two_stage,
        trace_tiled,
        trace_atomic,
    })
}
