//! LayerNorm backward views (lecture §2): the two dependency graphs and their block reductions
//! stepped warp by warp, the byte ledgers, the error plot, and the ∇γ/∇β schemes.

use warpscope_core::layernorm::bytes::{BytesOutput, Ledger};
use warpscope_core::layernorm::dgamma::DgammaOutput;
use warpscope_core::layernorm::numerics::ErrorOutput;
use warpscope_core::layernorm::syncs::{Graph, NodeKind, SyncsOutput};

use super::generic::format_number;
use super::widgets::{self, LedgerBar};
use crate::gui::SceneState;
use crate::i18n::tr;
use crate::trf;

fn draw_graph(ui: &mut egui::Ui, g: &Graph) {
    let n = g.nodes.len();
    let mut layer = vec![0usize; n];
    // Longest path from an input: edges are few, so relax until nothing changes.
    for _ in 0..n {
        let mut changed = false;
        for e in &g.edges {
            if e.from < n && e.to < n && layer[e.to] < layer[e.from] + 1 {
                layer[e.to] = layer[e.from] + 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let labels: Vec<String> = g.nodes.iter().map(|x| x.label.clone()).collect();
    let red: Vec<bool> = g
        .nodes
        .iter()
        .map(|x| matches!(x.kind, NodeKind::RowReduction | NodeKind::ColumnReduction))
        .collect();
    let edges: Vec<(usize, usize)> = g.edges.iter().map(|e| (e.from, e.to)).collect();
    widgets::dag(ui, &labels, &layer, &red, &edges);
}

/// `layernorm-syncs`.
pub fn show_syncs(ui: &mut egui::Ui, o: &SyncsOutput, state: &mut SceneState) {
    ui.label(trf!(
        ui,
        "Autograd-style chain: {} dependent block reductions → {} barriers. Rewrite: Σg and Σg·x̂ in one tree → {} reduction, {} barriers ({} barriers per block reduction).",
        "自动求导式的链：{} 次有依赖的块内归约 → {} 次栅栏。重排：Σg 和 Σg·x̂ 放进同一棵树 → {} 次归约，{} 次栅栏（每次块内归约 {} 次栅栏）。",
        o.autograd_syncs, o.autograd_barriers, o.fused_syncs, o.fused_barriers, o.barriers_per_block_reduction
    ));
    for (title, g) in [
        (
            tr(
                ui,
                "Autograd-style chain (orange: reductions)",
                "自动求导式的链（橙色：归约）",
            ),
            &o.autograd_graph,
        ),
        (
            tr(ui, "One-barrier rewrite", "重排成一次栅栏"),
            &o.fused_graph,
        ),
    ] {
        ui.label(egui::RichText::new(title).strong());
        draw_graph(ui, g);
    }
    ui.separator();
    ui.horizontal(|ui| {
        ui.label(tr(ui, "Step through:", "逐步查看："));
        let rewrite = tr(
            ui,
            "the rewrite (Σg, Σg·x̂ together)",
            "重排（Σg、Σg·x̂ 一起归约）",
        );
        let chain = tr(ui, "the autograd-style chain", "自动求导式的链");
        if ui
            .radio_value(&mut state.view.sequential, false, rewrite)
            .changed()
            | ui.radio_value(&mut state.view.sequential, true, chain)
                .changed()
        {
            state.stepper.pos = 0;
        }
    });
    let trace = if state.view.sequential {
        &o.trace_autograd
    } else {
        &o.trace_fused
    };
    let recordable = !state.view.sequential;
    super::recorded::show(ui, "layernorm-syncs", trace, recordable, state);
}

fn ledger_bar(
    name: &str,
    l: &Ledger,
    f: impl Fn(&warpscope_core::layernorm::bytes::LedgerKernel) -> f64,
) -> LedgerBar {
    LedgerBar {
        name: name.to_owned(),
        parts: l.kernels.iter().map(|k| (k.name.clone(), f(k))).collect(),
    }
}

/// `layernorm-bytes`.
pub fn show_bytes(ui: &mut egui::Ui, o: &BytesOutput) {
    ui.label(trf!(
        ui,
        "One tensor is {} MB. Autograd-style: {} kernels, {} MB ({}× the tensor), {} µs. Fused: {} kernel, {} MB ({}×), {} µs. Bytes ratio {:.2}, time ratio {:.2} on {}.",
        "一个张量 {} MB。自动求导式：{} 个内核，{} MB（张量的 {} 倍），{} µs。融合：{} 个内核，{} MB（{} 倍），{} µs。字节比 {:.2}，时间比 {:.2}（{}）。",
        format_number(o.tensor_mb),
        o.autograd_launches,
        format_number(o.autograd_mb),
        format_number(o.autograd.tensor_multiple),
        format_number(o.autograd_us),
        o.fused_launches,
        format_number(o.fused_mb),
        format_number(o.fused.tensor_multiple),
        format_number(o.fused_us),
        o.ratio_mb,
        o.speedup,
        o.device.name
    ));
    ui.label(
        egui::RichText::new(tr(
            ui,
            "MB moved per kernel (1 MB = 10⁶ bytes)",
            "每个内核读写的 MB（1 MB = 10⁶ 字节）",
        ))
        .strong(),
    );
    let (autograd, fused) = (tr(ui, "autograd", "自动求导式"), tr(ui, "fused", "融合"));
    widgets::ledger_bars(
        ui,
        &[
            ledger_bar(autograd, &o.autograd, |k| k.cost.bytes() / 1e6),
            ledger_bar(fused, &o.fused, |k| k.cost.bytes() / 1e6),
        ],
        "MB",
    );
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Modelled µs per kernel: bytes / bandwidth + 4 µs per launch",
            "每个内核的模型时间 µs：字节 / 带宽 + 每次发射 4 µs",
        ))
        .strong(),
    );
    widgets::ledger_bars(
        ui,
        &[
            ledger_bar(autograd, &o.autograd, |k| k.us),
            ledger_bar(fused, &o.fused, |k| k.us),
        ],
        "µs",
    );
    for (id, title, l) in [
        (
            "bytes-autograd",
            tr(ui, "Every byte, autograd-style", "每个字节：自动求导式"),
            &o.autograd,
        ),
        (
            "bytes-fused",
            tr(ui, "Every byte, fused", "每个字节：融合"),
            &o.fused,
        ),
    ] {
        ui.collapsing(title, |ui| {
            egui::Grid::new(id).striped(true).show(ui, |ui| {
                ui.strong(tr(ui, "kernel", "内核"));
                ui.strong(tr(ui, "reads", "读"));
                ui.strong(tr(ui, "writes", "写"));
                ui.strong("MB");
                ui.strong("µs");
                ui.end_row();
                for k in &l.kernels {
                    ui.label(&k.name);
                    ui.label(
                        k.reads
                            .iter()
                            .map(|a| format!("{} ({}×{} B)", a.name, a.elements, a.elem_bytes))
                            .collect::<Vec<_>>()
                            .join(", "),
                    );
                    ui.label(
                        k.writes
                            .iter()
                            .map(|a| format!("{} ({}×{} B)", a.name, a.elements, a.elem_bytes))
                            .collect::<Vec<_>>()
                            .join(", "),
                    );
                    ui.monospace(format_number(k.cost.bytes() / 1e6));
                    ui.monospace(format_number(k.us));
                    ui.end_row();
                }
            });
        });
    }
    let q = &o.lecture_quoted;
    ui.label(egui::RichText::new(trf!(
        ui,
        "Lecture ({}): autograd {} MB / {} µs, fused {} MB / {} µs — quoted for comparison, not used. {}",
        "讲义（{}）：自动求导式 {} MB / {} µs，融合 {} MB / {} µs — 仅供对比，计算中不使用。{}",
        tr(ui, q.source, q.source_zh),
        q.autograd_mb,
        q.autograd_us,
        q.fused_mb,
        q.fused_us,
        tr(ui, q.note, q.note_zh)
    ))
    .small());
}

/// `layernorm-error`.
pub fn show_error(ui: &mut egui::Ui, o: &ErrorOutput) {
    let pts = |v: &[f64]| {
        o.means
            .iter()
            .zip(v)
            .map(|(m, e)| [*m, *e])
            .collect::<Vec<_>>()
    };
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Max relative error of ∇x vs f64, as the row mean grows (rows ~ N(mean, 1))",
            "∇x 与 f64 相比的最大相对误差，随行均值增大（每行 ~ N(均值, 1)）",
        ))
        .strong(),
    );
    widgets::log_log_plot(
        ui,
        "ln-error",
        &[
            (
                tr(ui, "HW4 form (x̂ first)", "HW4 写法（先求 x̂）"),
                pts(&o.rel_error_hw4),
            ),
            (
                tr(ui, "slides/paper form (raw x)", "slides/论文写法（原始 x）"),
                pts(&o.rel_error_slides),
            ),
        ],
        tr(ui, "row mean", "行均值"),
        tr(ui, "max relative error", "最大相对误差"),
    );
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Forward variance beside it: E[x²]−E[x]² (one pass) vs two passes",
            "对照前向方差：E[x²]−E[x]²（一遍）与两遍",
        ))
        .strong(),
    );
    widgets::log_log_plot(
        ui,
        "ln-var",
        &[
            (
                tr(ui, "one pass E[x²]−E[x]²", "一遍 E[x²]−E[x]²"),
                pts(&o.rel_error_var_one_pass),
            ),
            (tr(ui, "two passes", "两遍"), pts(&o.rel_error_var_two_pass)),
        ],
        tr(ui, "row mean", "行均值"),
        tr(ui, "relative error of var", "方差的相对误差"),
    );
    egui::Grid::new("ln-error-table")
        .striped(true)
        .show(ui, |ui| {
            for h in [
                tr(ui, "mean", "均值"),
                "HW4",
                "slides",
                "slides / HW4",
                tr(ui, "rows with var ≤ 0", "方差 ≤ 0 的行数"),
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for i in 0..o.means.len() {
                ui.monospace(format_number(o.means[i]));
                ui.monospace(format!("{:.2e}", o.rel_error_hw4[i]));
                ui.monospace(format!("{:.2e}", o.rel_error_slides[i]));
                ui.monospace(format!("{:.2}", o.ratio_slides_over_hw4[i]));
                ui.monospace(
                    o.nonpositive_var_rows
                        .get(i)
                        .map_or("—".into(), |n| n.to_string()),
                );
                ui.end_row();
            }
        });
    ui.label(
        egui::RichText::new(tr(
            ui,
            o.error_definition,
            "每行 max|∇x − ∇x_ref| / max|∇x_ref|（在同样存储的输入上以 f64 为参考），再对所有行取最大",
        ))
        .small(),
    );
}

/// `layernorm-dgamma`.
pub fn show_dgamma(ui: &mut egui::Ui, o: &DgammaOutput, state: &mut SceneState) {
    egui::Grid::new("dgamma-schemes")
        .striped(true)
        .show(ui, |ui| {
            for (en, zh) in [
                ("scheme", "并行方式"),
                ("threads", "线程数"),
                ("serial steps", "串行步数"),
                ("launches", "发射次数"),
                ("shared wavefronts / request", "共享内存轮数 / 请求"),
                ("conflict degree", "冲突路数"),
                ("updates per address", "每个地址的更新次数"),
            ] {
                ui.strong(tr(ui, en, zh));
            }
            ui.end_row();
            for s in &o.schemes {
                ui.label(match s.scheme {
                    "per_column" => tr(ui, "per_column", "一个线程一列"),
                    "atomic" => tr(ui, "atomic", "原子加"),
                    "tiled" => tr(ui, "tiled", "32 × 32 分块"),
                    "two_stage" => tr(ui, "two_stage", "两段式"),
                    other => other,
                });
                ui.monospace(s.threads.to_string());
                ui.monospace(s.serial_steps.to_string());
                ui.monospace(s.launches.to_string());
                ui.monospace(
                    s.avg_wavefronts_per_request
                        .map_or("—".into(), |a| format!("{a:.2}")),
                );
                ui.monospace(if s.transposed_conflict_degree > 0 {
                    s.transposed_conflict_degree.to_string()
                } else {
                    "—".into()
                });
                ui.monospace(s.updates_per_address.to_string());
                ui.end_row();
            }
        });
    let averaged = tr(
        ui,
        o.averaged_over,
        "所选内核每个线程块的每个线程束：共享内存总轮数 / 共享内存总请求数（分块版：每个线程束按行写 2 次 ∇β、∇γ 部分和 + 转置着读 2 次）",
    );
    ui.label(egui::RichText::new(trf!(ui, "Averaged: {}", "平均范围：{}", averaged)).small());
    ui.label(trf!(
        ui,
        "Atomics: {} updates queue on each address; {} arrival orders gave {} distinct f32 results (spread {:.1e}).",
        "原子加：每个地址上排队 {} 次更新；{} 种到达顺序得到 {} 个不同的 f32 结果（极差 {:.1e}）。",
        o.atomic.updates_per_address,
        o.atomic.order_sums.len(),
        o.atomic.distinct_results,
        o.atomic.spread
    ));
    ui.separator();
    ui.horizontal(|ui| {
        ui.label(tr(ui, "Step through one block of:", "逐步查看一个线程块："));
        let tile = trf!(
            ui,
            "the 32 × 32 tile (pad {})",
            "32 × 32 分块（pad {}）",
            o.tile.pad
        );
        let atomics = tr(ui, "atomics", "原子加");
        if ui
            .radio_value(&mut state.view.sequential, false, tile)
            .changed()
            | ui.radio_value(&mut state.view.sequential, true, atomics)
                .changed()
        {
            state.stepper.pos = 0;
        }
    });
    let trace = if state.view.sequential {
        &o.trace_atomic
    } else {
        &o.trace_tiled
    };
    super::trace::show(ui, trace, &mut state.stepper);
}
