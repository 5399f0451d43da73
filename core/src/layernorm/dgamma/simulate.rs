//! The SIMT simulations behind the scene: block 0 of the tiled ∇γ/∇β kernel on the warp model
//! (partials to shared memory, the transposed read, the `shfl_down` tree) with its column sums,
//! the two warps of the atomic scheme (row-major and column-major), and an f32 sum taken in a
//! given order.

use super::TILE;
use crate::Error;
use crate::simt::shuffle::ShuffleMode;
use crate::simt::{Block, BlockShape, Mask, Trace};
use crate::text::Text;

/// Sum of `values` in f32, taken in the order `order` (indices into `values`).
pub fn sum_in_order(values: &[f32], order: &[usize]) -> f32 {
    order
        .iter()
        .filter_map(|&i| values.get(i))
        .fold(0.0f32, |a, v| a + v)
}

/// Simulates block 0 of the tile kernel. `dy`, `xh`: n × w row-major (w = columns of the
/// block, ≤ 32). Returns the trace and the block's (∇β, ∇γ) per column.
pub(super) fn simulate_tile(
    n: usize,
    w: usize,
    d: u64,
    pad: u32,
    dy: &[f32],
    xh: &[f32],
    tick: &mut dyn FnMut(u64) -> Result<(), Error>,
) -> Result<(Trace, Vec<f32>, Vec<f32>), Error> {
    let shape = BlockShape::new(TILE * TILE, TILE)?;
    let mut b = Block::new(
        Text::new(
            "ker_ln_bw_dgamma_dbetta (block 0)",
            "ker_ln_bw_dgamma_dbetta（块 0）",
        ),
        shape,
    );
    let stride = u64::from(TILE + pad);
    let base_beta = 0u64;
    let base_gamma = 4 * u64::from(TILE) * stride;
    let all = Mask::first(TILE);
    let iters = n.div_ceil(TILE as usize);
    let mut partial_b = vec![[0.0f32; 32]; 32];
    let mut partial_g = vec![[0.0f32; 32]; 32];
    // Phase 1: each warp y walks rows y, y+32, …; record its first row's loads.
    for y in 0..TILE {
        tick(u64::from(y))?;
        let addr = |base: u64| -> Vec<Option<u64>> {
            (0..TILE)
                .map(|x| ((x as usize) < w).then(|| base + 4 * (u64::from(y) * d + u64::from(x))))
                .collect()
        };
        let vals = |v: &[f32]| -> Vec<f64> {
            (0..TILE as usize)
                .map(|x| {
                    if x < w {
                        f64::from(v[y as usize * w + x])
                    } else {
                        0.0
                    }
                })
                .collect()
        };
        b.global(
            y,
            false,
            &addr(0),
            4,
            &vals(dy),
            Text::new(
                format!(
                    "load ∇y row {y} (iteration 1 of {iters}; the others repeat it 32 rows down)"
                ),
                format!("载入 ∇y 第 {y} 行（{iters} 轮中的第 1 轮；其余各轮往下隔 32 行重复）"),
            ),
        );
        b.global(
            y,
            false,
            &addr(1 << 40),
            4,
            &vals(xh),
            Text::new(
                format!("load x̂ row {y} (iteration 1 of {iters})"),
                format!("载入 x̂ 第 {y} 行（{iters} 轮中的第 1 轮）"),
            ),
        );
        for x in 0..w {
            let (mut sb, mut sg) = (0.0f32, 0.0f32);
            for r in (y as usize..n).step_by(TILE as usize) {
                let v = dy[r * w + x];
                sb += v;
                sg += v * xh[r * w + x];
            }
            partial_b[y as usize][x] = sb;
            partial_g[y as usize][x] = sg;
        }
        let show: Vec<f64> = partial_b[y as usize]
            .iter()
            .map(|v| f64::from(*v))
            .collect();
        b.compute(
            y,
            &show,
            all,
            Text::new(
                format!(
                    "∇β partial: column x over rows {y}, {}, … ({iters} adds)",
                    y + 32
                ),
                format!(
                    "∇β 部分和：第 x 列在第 {y}、{}、… 行上（{iters} 次加法）",
                    y + 32
                ),
            ),
            Some(0),
        );
    }
    // Phase 2: partials to shared buf[y][x] (row-wise).
    for y in 0..TILE {
        for (base, part, name) in [
            (base_beta, &partial_b, "∇β"),
            (base_gamma, &partial_g, "∇γ"),
        ] {
            let addr: Vec<Option<u64>> = (0..TILE)
                .map(|x| Some(base + 4 * (u64::from(y) * stride + u64::from(x))))
                .collect();
            let vals: Vec<f64> = part[y as usize].iter().map(|v| f64::from(*v)).collect();
            b.st_shared(
                y,
                &addr,
                4,
                &vals,
                Text::new(
                    format!("{name} partial → buf[{y}][x]"),
                    format!("{name} 部分和 → buf[{y}][x]"),
                ),
                Some(0),
            )?;
        }
    }
    b.barrier(Text::new(
        "partials visible to the transposed read",
        "部分和对转置读取可见",
    ));
    // Phase 3: transposed read buf[x][y]: warp y gets column y's 32 partials.
    let mut sums_b = vec![0.0f32; w];
    let mut sums_g = vec![0.0f32; w];
    let mut loaded = Vec::with_capacity(TILE as usize);
    for y in 0..TILE {
        let mut pair = Vec::with_capacity(2);
        for (base, name) in [(base_beta, "∇β"), (base_gamma, "∇γ")] {
            let addr: Vec<Option<u64>> = (0..TILE)
                .map(|x| Some(base + 4 * (u64::from(x) * stride + u64::from(y))))
                .collect();
            let v = b.ld_shared(
                y,
                &addr,
                4,
                Text::new(
                    format!("{name}: transposed read buf[x][{y}]"),
                    format!("{name}: 转置读取 buf[x][{y}]"),
                ),
                Some(0),
            )?;
            pair.push(v.iter().map(|a| *a as f32).collect::<Vec<f32>>());
        }
        loaded.push(pair);
    }
    b.barrier(Text::new(
        "buffers free again (LightSeq's second __syncthreads)",
        "缓冲区重新空出（LightSeq 的第二个 __syncthreads）",
    ));
    // Phase 4: shfl_down 1, 2, 4, 8, 16; lane 0 holds the column sum.
    for (y, pair) in loaded.into_iter().enumerate() {
        let wy = y as u32;
        let mut regs = pair;
        let mut level = 1;
        let mut i = 1;
        while i < TILE {
            for (k, name) in ["∇β", "∇γ"].iter().enumerate() {
                let other = b.shfl(
                    wy,
                    ShuffleMode::Down,
                    i,
                    &regs[k],
                    all,
                    &format!("{name}: shfl_down {i}"),
                    Some(level),
                );
                regs[k] = regs[k].iter().zip(&other).map(|(a, o)| a + o).collect();
                let show: Vec<f64> = regs[k].iter().map(|v| f64::from(*v)).collect();
                b.compute(
                    wy,
                    &show,
                    all,
                    Text::new(
                        format!("{name}: add (lane 0 accumulates)"),
                        format!("{name}: 相加（lane 0 累加）"),
                    ),
                    Some(level),
                );
            }
            i *= 2;
            level += 1;
        }
        if y < w {
            sums_b[y] = regs[0][0];
            sums_g[y] = regs[1][0];
            let addr: Vec<Option<u64>> =
                (0..TILE).map(|l| (l == 0).then(|| 4 * y as u64)).collect();
            b.global(
                wy,
                true,
                &addr,
                4,
                &[f64::from(regs[0][0])],
                &format!("lane 0: ∇β[{y}]"),
            );
            b.global(
                wy,
                true,
                &addr
                    .iter()
                    .map(|a| a.map(|v| v + (1 << 40)))
                    .collect::<Vec<_>>(),
                4,
                &[f64::from(regs[1][0])],
                &format!("lane 0: ∇γ[{y}]"),
            );
        }
    }
    Ok((b.finish(), sums_b, sums_g))
}

pub(super) fn atomic_trace(d: u64, n: u64) -> Result<(Trace, u32, u32), Error> {
    let mut b = Block::new(
        "atomicAdd(∇β[col], ∇y[row][col])",
        BlockShape::new(2 * TILE, TILE)?,
    );
    // Warp 0, row-major threads: lanes take columns 0..32 of row 0 (fewer if d < 32).
    let row_major: Vec<Option<u64>> = (0..u64::from(TILE)).map(|l| Some(4 * (l % d))).collect();
    // Warp 1, column-major threads: lanes take rows 0..32 of column 0.
    let col_major: Vec<Option<u64>> = (0..u64::from(TILE)).map(|l| (l < n).then_some(0)).collect();
    b.atomic_add(
        0,
        &row_major,
        4,
        &[1.0; 32],
        Text::new("row-major: 32 columns of one row", "行优先：一行的 32 列"),
    );
    b.atomic_add(
        1,
        &col_major,
        4,
        &[1.0; 32],
        Text::new(
            "column-major: 32 rows of one column",
            "列优先：一列的 32 行",
        ),
    );
    let c0 = crate::simt::atomic::contention(&row_major).max_lanes_per_address;
    let c1 = crate::simt::atomic::contention(&col_major).max_lanes_per_address;
    Ok((b.finish(), c0, c1))
}
