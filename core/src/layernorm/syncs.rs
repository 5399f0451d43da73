//! Scene `layernorm-syncs` (lecture §2.2, script 01 part 2): why the rewrite needs one block
//! synchronisation where the autograd-style chain needs two.
//!
//! - **Autograd-style** (the backward of the 7-op decomposition, op by op): ∇x̂ = γ⊙∇y, then
//!   reduce Σ∇x̂·xc to get ∇σ (and ∇var), then the per-element ∇xc, then reduce Σ∇xc to get ∇μ:
//!   the second reduction consumes the first one's result — two block reductions in sequence.
//! - **Rewrite** (HW4 form, `ker_ln_bw_dinp`): Σg and Σg·x̂ depend only on the inputs, so both
//!   travel up one tree together — one block reduction.
//!
//! The graphs are data (nodes = ops, edges = values, reductions marked); the count of dependent
//! row reductions is derived from them (longest path, counting row reductions, with reductions
//! that share a tree counted once). The block reductions themselves run on the SIMT model with
//! [`crate::reduction::block_reduce`] / [`crate::reduction::warp_sum`] (LightSeq's
//! `blockReduce` shape: butterfly in each warp, partials to shared, barrier, warp 0 reduces,
//! barrier, broadcast) — **two `__syncthreads()` per block reduction**, so the trace shows
//! 4 barriers for the chain and 2 for the rewrite; the lecture's "two syncs vs one" counts
//! block reductions (`autograd_syncs`, `fused_syncs`). Either way the ratio is 2.
//!
//! One block per row; thread t owns columns t, t + block, t + 2·block, … (coalesced), sums them
//! in f32 registers, and the block reduces the per-thread partials. Values are f32.

use crate::text::Text;
use serde::Serialize;

use super::formulas::inputs;
use super::{EPS, reference_row};
use crate::Error;
use crate::params::{ParamSpec, ParamValues, check_int};
use crate::reduction::block_reduce;
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};
use crate::simt::trace::TraceSummary;
use crate::simt::{Block, BlockShape, Mask, Trace};

/// Lanes per warp in this scene (NVIDIA).
pub const WARP: u32 = 32;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "rows",
        "rows (one block each)",
        "行数（每行一个块）",
        1,
        64,
        8,
    ),
    ParamSpec::int("cols", "columns m", "列数 m", 2, 4096, 64).log(),
    ParamSpec::int("block", "threads per block", "每块线程数", 32, 1024, 32).log(),
    ParamSpec::int("seed", "random seed", "随机种子", 0, 1 << 31, 1),
];

/// The scene's typed definition (`layernorm-syncs`).
pub struct SyncsScene;

impl SceneDef for SyncsScene {
    const ID: &'static str = "layernorm-syncs";
    type Output = SyncsOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&SyncsParams::from_values(v)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: SyncsScene::ID,
    section: "§2.2",
    title: Text::new(
        "Two dependent reductions vs two reductions together",
        "两次有依赖的归约 vs 一起做的两次归约",
    ),
    summary: Text::new(
        "Dependency graphs of the autograd-style chain and the rewrite, and their block reductions on the SIMT model.",
        "自动求导式的链与重排后的依赖图，以及它们在 SIMT 模型上的块内归约。",
    ),
    params: PARAMS,
    run: erase::<SyncsScene>(),
    input: None,
    chapter: &Chapter::LAYERNORM,
    featured: Featured::Event(8),
    cost: Cost::Moderate,
};

/// Validated parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SyncsParams {
    /// Rows, 1..=64 (one simulated block each).
    pub rows: usize,
    /// Columns m, 2..=4096.
    pub cols: usize,
    /// Threads per block: a multiple of 32 in 32..=1024.
    pub block: u32,
    /// Seed of the inputs.
    pub seed: u64,
}

impl SyncsParams {
    /// Reads and validates the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let p = SyncsParams {
            rows: v.usize("rows")?,
            cols: v.usize("cols")?,
            block: u32::try_from(v.int("block")?).map_err(|_| {
                Error::invalid(
                    "block",
                    v.int("block").unwrap_or(0),
                    crate::error::Expected::Between { min: 32, max: 1024 },
                )
            })?,
            seed: v.int("seed")? as u64,
        };
        p.validate()?;
        Ok(p)
    }

    /// Range checks: the specs' ranges ([`check_int`]), and whole warps per block.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn validate(&self) -> Result<(), Error> {
        check_int(PARAMS, "rows", self.rows)?;
        check_int(PARAMS, "cols", self.cols)?;
        if !(32..=1024).contains(&self.block) || !self.block.is_multiple_of(WARP) {
            return Err(Error::invalid(
                "block",
                self.block,
                crate::error::Expected::MultipleOf {
                    step: 32,
                    min: 32,
                    max: 1024,
                }
                .noted("whole warps", "整数个线程束"),
            ));
        }
        Ok(())
    }
}

/// What a node of a dependency graph is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// A value the backward starts from (∇y, saved tensors, γ).
    Input,
    /// Element by element over the row: no communication.
    Elementwise,
    /// Per-row scalar arithmetic on reduced values.
    RowScalar,
    /// A sum over the row: a block reduction, ending in a block synchronisation.
    RowReduction,
    /// A sum over the rows (∇γ, ∇β): another kernel's parallelisation (§2.4), no block barrier
    /// in the row kernel.
    ColumnReduction,
}

/// One op (or input).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// Index in [`Graph::nodes`] (topological order).
    pub id: usize,
    /// The formula, e.g. `∇σ = −Σⱼ ∇x̂ⱼ·xcⱼ / σ²` (the same in both languages), or a saved
    /// input, `σ (saved)` / `σ（已保存）`.
    pub label: Text<&'static str>,
    /// Its kind.
    pub kind: NodeKind,
    /// Row reductions with the same tree id travel up one reduction tree together.
    pub tree: Option<u32>,
    /// Row reductions on the longest path up to and including this node (its "sync level").
    pub sync_level: u32,
}

/// A data dependency `from → to`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Edge {
    /// Producer node id.
    pub from: usize,
    /// Consumer node id.
    pub to: usize,
}

/// A dependency graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Graph {
    /// Which version.
    pub name: Text<&'static str>,
    /// Nodes in topological order.
    pub nodes: Vec<Node>,
    /// Edges.
    pub edges: Vec<Edge>,
    /// Row reductions that must run one after another (the longest chain): block syncs.
    pub dependent_row_reductions: u32,
}

/// One node as a graph is written: its label, kind, reduction tree and predecessors.
type NodeSpec<'a> = (Text<&'static str>, NodeKind, Option<u32>, &'a [usize]);

impl Graph {
    fn build(name: Text<&'static str>, spec: &[NodeSpec]) -> Graph {
        let mut nodes: Vec<Node> = Vec::with_capacity(spec.len());
        let mut edges = Vec::new();
        for (id, (label, kind, tree, preds)) in spec.iter().enumerate() {
            let before = preds
                .iter()
                .filter_map(|&p| nodes.get(p).map(|n: &Node| n.sync_level))
                .max()
                .unwrap_or(0);
            let own = u32::from(*kind == NodeKind::RowReduction);
            edges.extend(preds.iter().map(|&from| Edge { from, to: id }));
            nodes.push(Node {
                id,
                label: *label,
                kind: *kind,
                tree: *tree,
                sync_level: before + own,
            });
        }
        let dependent_row_reductions = nodes.iter().map(|n| n.sync_level).max().unwrap_or(0);
        Graph {
            name,
            nodes,
            edges,
            dependent_row_reductions,
        }
    }
}

/// The autograd-style backward of the 7-op decomposition (∇x path, plus ∇γ, ∇β).
pub fn autograd_graph() -> Graph {
    use NodeKind::*;
    Graph::build(
        Text::new("autograd-style chain", "自动求导式的链"),
        &[
            (Text::same("∇y"), Input, None, &[]), // 0
            (Text::same("γ"), Input, None, &[]),  // 1
            (
                Text::new("xc = x − μ (saved)", "xc = x − μ（已保存）"),
                Input,
                None,
                &[],
            ), // 2
            (Text::new("σ (saved)", "σ（已保存）"), Input, None, &[]), // 3
            (Text::new("x̂ (saved)", "x̂（已保存）"), Input, None, &[]), // 4
            (Text::same("∇x̂ = γ ⊙ ∇y"), Elementwise, None, &[0, 1]), // 5
            (
                Text::same("∇σ = −Σⱼ ∇x̂ⱼ·xcⱼ / σ²"),
                RowReduction,
                Some(1),
                &[5, 2, 3],
            ), // 6
            (Text::same("∇var = ∇σ / (2σ)"), RowScalar, None, &[6, 3]), // 7
            (
                Text::same("∇xc = ∇x̂/σ + 2·xc·∇var/m"),
                Elementwise,
                None,
                &[5, 3, 2, 7],
            ), // 8
            (Text::same("∇μ = −Σⱼ ∇xcⱼ"), RowReduction, Some(2), &[8]), // 9
            (Text::same("∇x = ∇xc + ∇μ/m"), Elementwise, None, &[8, 9]), // 10
            (
                Text::same("∇γ = Σ_rows ∇y ⊙ x̂"),
                ColumnReduction,
                None,
                &[0, 4],
            ), // 11
            (Text::same("∇β = Σ_rows ∇y"), ColumnReduction, None, &[0]), // 12
        ],
    )
}

/// The rewrite (HW4 form): Σg and Σg·x̂ in one tree.
pub fn fused_graph() -> Graph {
    use NodeKind::*;
    Graph::build(
        Text::new("rewrite (HW4 form)", "重排（HW4 形式）"),
        &[
            (Text::same("∇y"), Input, None, &[]), // 0
            (Text::same("γ"), Input, None, &[]),  // 1
            (Text::same("x"), Input, None, &[]),  // 2
            (
                Text::new("μ, r (saved)", "μ, r（已保存）"),
                Input,
                None,
                &[],
            ), // 3
            (Text::same("g = γ ⊙ ∇y"), Elementwise, None, &[0, 1]), // 4
            (Text::same("x̂ = (x − μ)·r"), Elementwise, None, &[2, 3]), // 5
            (Text::same("Σg"), RowReduction, Some(1), &[4]), // 6
            (Text::same("Σg·x̂"), RowReduction, Some(1), &[4, 5]), // 7
            (
                Text::same("∇x = r·(g − (Σg + x̂·Σg·x̂)/m)"),
                Elementwise,
                None,
                &[4, 5, 6, 7, 3],
            ), // 8
            (
                Text::same("∇γ = Σ_rows ∇y ⊙ x̂"),
                ColumnReduction,
                None,
                &[0, 5],
            ), // 9
            (Text::same("∇β = Σ_rows ∇y"), ColumnReduction, None, &[0]), // 10
        ],
    )
}

/// The scene's result.
#[derive(Debug, Clone, Serialize)]
pub struct SyncsOutput {
    /// `__syncthreads()` in the simulated autograd-style row kernel (2 block reductions × 2).
    pub autograd_barriers: u32,
    /// `__syncthreads()` in the simulated rewrite (1 block reduction × 2).
    pub fused_barriers: u32,
    /// Dependent block reductions of the chain, from its graph (lecture: 2 syncs).
    pub autograd_syncs: u32,
    /// Block reductions of the rewrite, from its graph (lecture: 1 sync).
    pub fused_syncs: u32,
    /// Barriers inside one `block_reduce` (measured on the trace).
    pub barriers_per_block_reduction: u32,
    /// The chain's dependency graph.
    pub autograd_graph: Graph,
    /// The rewrite's dependency graph.
    pub fused_graph: Graph,
    /// Warps per block.
    pub warps: u32,
    /// Elements each thread sums before the block reduction, ⌈cols / block⌉.
    pub values_per_thread: u32,
    /// Per row, the block sums (Σg, Σg·x̂) of the rewrite, f32.
    pub fused_sums: Vec<[f32; 2]>,
    /// Per row, the same sums in f64 from the same f32 inputs.
    pub fused_sums_reference: Vec<[f64; 2]>,
    /// Per row, the chain's block sums (Σ∇x̂·xc, Σ∇xc), f32.
    pub autograd_sums: Vec<[f32; 2]>,
    /// max |∇x − ∇x_ref| of the simulated rewrite (f32) vs the f64 reference.
    pub max_abs_diff_fused: f64,
    /// max |∇x − ∇x_ref| of the simulated chain (f32).
    pub max_abs_diff_autograd: f64,
    /// Totals of the chain's trace (row 0).
    pub summary_autograd: TraceSummary,
    /// Totals of the rewrite's trace (row 0).
    pub summary_fused: TraceSummary,
    /// Row 0's block running the chain, warp by warp, for the stepper.
    #[serde(skip)]
    pub trace_autograd: Trace,
    /// Row 0's block running the rewrite.
    #[serde(skip)]
    pub trace_fused: Trace,
}

/// Loads of one row's x and ∇y, iteration by iteration (thread t, iteration k: column t + k·block).
fn record_loads(b: &mut Block, row: usize, cols: usize, x: &[f32], dy: &[f32]) {
    let shape = b.shape();
    let iters = cols.div_ceil(shape.threads as usize);
    for k in 0..iters {
        for w in 0..shape.warps() {
            let col = |l: u32| k * shape.threads as usize + (w * WARP + l) as usize;
            for (name, base, v) in [("x", 0u64, x), ("∇y", 1u64 << 32, dy)] {
                let addr: Vec<Option<u64>> = (0..WARP)
                    .map(|l| {
                        let c = col(l);
                        (c < cols).then(|| base + 4 * (row * cols + c) as u64)
                    })
                    .collect();
                let vals: Vec<f64> = (0..WARP)
                    .map(|l| v.get(col(l)).map_or(0.0, |a| f64::from(*a)))
                    .collect();
                b.global(
                    w,
                    false,
                    &addr,
                    4,
                    &vals,
                    Text::new(
                        format!("load {name}, columns of iteration {k}"),
                        format!("载入 {name}，第 {k} 轮的各列"),
                    ),
                );
            }
        }
    }
}

/// Per-thread partial sums of `f(column)` over the thread's columns, f32, left to right.
fn partials(threads: u32, cols: usize, f: impl Fn(usize) -> f32) -> Vec<f32> {
    (0..threads as usize)
        .map(|t| {
            (t..cols)
                .step_by(threads as usize)
                .fold(0.0f32, |a, c| a + f(c))
        })
        .collect()
}

fn show(b: &mut Block, v: &[f32], label: Text<&'static str>) {
    for w in 0..b.shape().warps() {
        let lanes: Vec<f64> = (0..WARP)
            .map(|l| f64::from(v[(w * WARP + l) as usize]))
            .collect();
        b.compute(w, &lanes, Mask::first(WARP), label, Some(0));
    }
}

struct RowRun {
    dx: Vec<f32>,
    sums: [f32; 2],
}

/// The rewrite on one row (one block).
fn fused_row(
    b: &mut Block,
    row: usize,
    x: &[f32],
    dy: &[f32],
    gamma: &[f32],
) -> Result<RowRun, Error> {
    let m = x.len();
    let threads = b.shape().threads;
    record_loads(b, row, m, x, dy);
    let s = super::forward_row(x, EPS as f32);
    let g: Vec<f32> = dy.iter().zip(gamma).map(|(d, c)| c * d).collect();
    let xh: Vec<f32> = x.iter().map(|v| (v - s.mu) * s.r).collect();
    let pg = partials(threads, m, |c| g[c]);
    let pgx = partials(threads, m, |c| g[c] * xh[c]);
    show(
        b,
        &pg,
        Text::new("thread partial of Σg", "每个线程的 Σg 部分和"),
    );
    show(
        b,
        &pgx,
        Text::new("thread partial of Σg·x̂", "每个线程的 Σg·x̂ 部分和"),
    );
    let sums = block_reduce(b, &[pg, pgx], &[0, 1], u64::from(WARP))?;
    let (sg, sgx) = (sums[0], sums[1]);
    let mf = m as f32;
    let dx: Vec<f32> = g
        .iter()
        .zip(&xh)
        .map(|(&gi, &xi)| s.r * (gi - (sg + xi * sgx) / mf))
        .collect();
    Ok(RowRun {
        dx,
        sums: [sg, sgx],
    })
}

/// The autograd-style chain on one row (one block): two block reductions in sequence.
fn autograd_row(
    b: &mut Block,
    row: usize,
    x: &[f32],
    dy: &[f32],
    gamma: &[f32],
) -> Result<RowRun, Error> {
    let m = x.len();
    let mf = m as f32;
    let threads = b.shape().threads;
    record_loads(b, row, m, x, dy);
    let s = super::forward_row(x, EPS as f32);
    let dxh: Vec<f32> = dy.iter().zip(gamma).map(|(d, c)| c * d).collect();
    let xc: Vec<f32> = x.iter().map(|v| v - s.mu).collect();
    let pa = partials(threads, m, |c| dxh[c] * xc[c]);
    show(
        b,
        &pa,
        Text::new("thread partial of Σ∇x̂·xc", "每个线程的 Σ∇x̂·xc 部分和"),
    );
    let zeros = vec![0.0f32; threads as usize];
    let a = block_reduce(b, &[pa.clone(), zeros], &[0], u64::from(WARP))?[0];
    let d_sigma = -a / (s.sigma * s.sigma);
    let d_var = d_sigma / (2.0 * s.sigma);
    let dxc: Vec<f32> = dxh
        .iter()
        .zip(&xc)
        .map(|(&d, &c)| d / s.sigma + 2.0 * c * d_var / mf)
        .collect();
    let pb = partials(threads, m, |c| dxc[c]);
    show(
        b,
        &pb,
        Text::new(
            "∇xc needs ∇var (after reduction 1); thread partial of Σ∇xc",
            "∇xc 要等 ∇var（第 1 次归约之后）；每个线程的 Σ∇xc 部分和",
        ),
    );
    let bsum = block_reduce(b, &[pa, pb], &[1], u64::from(WARP))?[0];
    let d_mu = -bsum;
    let dx = dxc.iter().map(|d| d + d_mu / mf).collect();
    Ok(RowRun {
        dx,
        sums: [a, bsum],
    })
}

/// Runs both versions on every row and builds the graphs.
///
/// # Errors
/// [`Error::InvalidParam`] from [`SyncsParams::validate`] or the SIMT model.
pub fn run(p: &SyncsParams) -> Result<SyncsOutput, Error> {
    p.validate()?;
    let shape = BlockShape::new(p.block, WARP)?;
    let (x, dy, gamma, _) = inputs(p.rows, p.cols, p.seed);
    let f = |v: &[f64]| v.iter().map(|&a| a as f32).collect::<Vec<f32>>();
    let (x, dy, gamma) = (f(&x), f(&dy), f(&gamma));
    let wide = |v: &[f32]| v.iter().map(|&a| f64::from(a)).collect::<Vec<f64>>();
    let gamma64 = wide(&gamma);
    let (mut fused_sums, mut autograd_sums, mut fused_sums_reference) = (vec![], vec![], vec![]);
    let (mut dmax_f, mut dmax_a) = (0.0f64, 0.0f64);
    let (mut trace_f, mut trace_a) = (None, None);
    for r in 0..p.rows {
        let span = r * p.cols..(r + 1) * p.cols;
        let (xr, dyr) = (&x[span.clone()], &dy[span]);
        let mut bf = Block::new(
            Text::new(
                "ker_ln_bw_dinp (rewrite: Σg, Σg·x̂ together)",
                "ker_ln_bw_dinp（重排：Σg、Σg·x̂ 一起归约）",
            ),
            shape,
        );
        let mut ba = Block::new(
            Text::new(
                "autograd-style row kernel (Σ∇x̂·xc, then Σ∇xc)",
                "自动求导式的行内核（先 Σ∇x̂·xc，再 Σ∇xc）",
            ),
            shape,
        );
        let fr = fused_row(&mut bf, r, xr, dyr, &gamma)?;
        let ar = autograd_row(&mut ba, r, xr, dyr, &gamma)?;
        let (xr64, dyr64) = (wide(xr), wide(dyr));
        let (dref, xh) = reference_row(&xr64, &dyr64, &gamma64, EPS);
        for ((f, a), r) in fr.dx.iter().zip(&ar.dx).zip(&dref) {
            dmax_f = dmax_f.max((f64::from(*f) - r).abs());
            dmax_a = dmax_a.max((f64::from(*a) - r).abs());
        }
        let g: Vec<f64> = dyr64.iter().zip(&gamma64).map(|(d, c)| d * c).collect();
        fused_sums_reference.push([g.iter().sum(), g.iter().zip(&xh).map(|(a, b)| a * b).sum()]);
        fused_sums.push(fr.sums);
        autograd_sums.push(ar.sums);
        if r == 0 {
            trace_f = Some(bf.finish());
            trace_a = Some(ba.finish());
        }
    }
    let (trace_fused, trace_autograd) = match (trace_f, trace_a) {
        (Some(f), Some(a)) => (f, a),
        _ => {
            return Err(Error::invalid(
                "rows",
                p.rows,
                crate::error::Expected::custom("expected at least 1 row", "至少应有 1 行"),
            ));
        }
    };
    let (sf, sa) = (trace_fused.summary(), trace_autograd.summary());
    let (ag, fg) = (autograd_graph(), fused_graph());
    Ok(SyncsOutput {
        autograd_barriers: sa.barriers,
        fused_barriers: sf.barriers,
        autograd_syncs: ag.dependent_row_reductions,
        fused_syncs: fg.dependent_row_reductions,
        barriers_per_block_reduction: sf.barriers / fg.dependent_row_reductions.max(1),
        autograd_graph: ag,
        fused_graph: fg,
        warps: shape.warps(),
        values_per_thread: p.cols.div_ceil(p.block as usize) as u32,
        fused_sums,
        fused_sums_reference,
        autograd_sums,
        max_abs_diff_fused: dmax_f,
        max_abs_diff_autograd: dmax_a,
        summary_autograd: sa,
        summary_fused: sf,
        trace_autograd,
        trace_fused,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simt::EventKind;

    fn p(rows: usize, cols: usize, block: u32) -> SyncsParams {
        SyncsParams {
            rows,
            cols,
            block,
            seed: 1,
        }
    }

    #[test]
    fn lecture_example_barriers_halve() {
        let o = run(&p(8, 64, 32)).unwrap();
        assert_eq!(o.autograd_barriers, 2 * o.fused_barriers);
        assert_eq!((o.autograd_syncs, o.fused_syncs), (2, 1));
        // LightSeq's blockReduce: one barrier after the partials, one after the block sum.
        assert_eq!((o.autograd_barriers, o.fused_barriers), (4, 2));
        assert_eq!(o.values_per_thread, 2);
        assert_eq!(o.warps, 1);
    }

    #[test]
    fn graph_levels_by_hand() {
        let a = autograd_graph();
        let lvl = |g: &Graph, s: &str| {
            g.nodes
                .iter()
                .find(|n| n.label.en.starts_with(s))
                .unwrap()
                .sync_level
        };
        assert_eq!(lvl(&a, "∇σ"), 1);
        assert_eq!(lvl(&a, "∇xc ="), 1);
        assert_eq!(lvl(&a, "∇μ"), 2);
        let f = fused_graph();
        assert_eq!(lvl(&f, "Σg·x̂"), 1);
        assert_eq!(lvl(&f, "Σg"), 1);
        assert_eq!(lvl(&f, "∇x"), 1);
        // Column reductions never add a row sync.
        assert_eq!(lvl(&f, "∇γ"), 0);
        for g in [&a, &f] {
            for e in &g.edges {
                assert!(e.from < e.to, "topological order");
            }
        }
    }

    #[test]
    fn both_versions_compute_the_gradient() {
        for (cols, block) in [(64, 32), (1000, 256), (5, 64)] {
            let o = run(&p(3, cols, block)).unwrap();
            assert!(o.max_abs_diff_fused < 1e-5, "{}", o.max_abs_diff_fused);
            assert!(
                o.max_abs_diff_autograd < 1e-5,
                "{}",
                o.max_abs_diff_autograd
            );
            for (s, r) in o.fused_sums.iter().zip(&o.fused_sums_reference) {
                assert!((f64::from(s[0]) - r[0]).abs() < 1e-4);
                assert!((f64::from(s[1]) - r[1]).abs() < 1e-4);
            }
            assert_eq!(o.fused_barriers * 2, o.autograd_barriers);
        }
    }

    #[test]
    fn trace_shows_both_sums_in_one_tree() {
        let o = run(&p(8, 64, 32)).unwrap();
        // Warp 0 of the rewrite: butterfly for v0 and v1 (5 levels each) in the first stage,
        // then again in warp 0's second stage — 20 shuffles, all before barrier 2.
        let ev = &o.trace_fused.warps[0].events;
        let shuffles = ev
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Shuffle { .. }))
            .count();
        assert_eq!(shuffles, 4 * 5);
        let labels: Vec<_> = ev
            .iter()
            .filter(|e| e.level == Some(1))
            .map(|e| e.label.en.clone())
            .collect();
        assert!(
            labels.iter().any(|l| l.starts_with("v0"))
                && labels.iter().any(|l| l.starts_with("v1"))
        );
        // The chain has the same number of shuffles but twice the barriers.
        let sa = o.summary_autograd;
        assert_eq!(sa.shuffles, o.summary_fused.shuffles);
    }

    #[test]
    fn bad_block_is_refused() {
        assert!(p(8, 64, 48).validate().is_err());
        assert!(p(8, 64, 2048).validate().is_err());
        assert!(p(0, 64, 32).validate().is_err());
    }
}
