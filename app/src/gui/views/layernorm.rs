//! LayerNorm backward views (lecture §2): the two dependency graphs and their block reductions
//! stepped warp by warp, the byte ledgers, the error plot, and the ∇γ/∇β schemes.

use warpscope_core::layernorm::bytes::{BytesOutput, Ledger};
use warpscope_core::layernorm::dgamma::DgammaOutput;
use warpscope_core::layernorm::numerics::ErrorOutput;
use warpscope_core::layernorm::syncs::{Graph, NodeKind, SyncsOutput};

use super::generic::format_number;
use super::widgets::{self, LedgerBar};
use crate::gui::SceneState;

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
    ui.label(format!(
        "Autograd-style chain: {} dependent block reductions → {} barriers. Rewrite: Σg and Σg·x̂ in one tree → {} reduction, {} barriers ({} barriers per block reduction).",
        o.autograd_syncs, o.autograd_barriers, o.fused_syncs, o.fused_barriers, o.barriers_per_block_reduction
    ));
    for (title, g) in [
        (
            "Autograd-style chain (orange: reductions)",
            &o.autograd_graph,
        ),
        ("One-barrier rewrite", &o.fused_graph),
    ] {
        ui.label(egui::RichText::new(title).strong());
        draw_graph(ui, g);
    }
    ui.separator();
    ui.horizontal(|ui| {
        ui.label("Step through:");
        if ui
            .radio_value(
                &mut state.view.sequential,
                false,
                "the rewrite (Σg, Σg·x̂ together)",
            )
            .changed()
            | ui.radio_value(&mut state.view.sequential, true, "the autograd-style chain")
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
    ui.label(format!(
        "One tensor is {} MB. Autograd-style: {} kernels, {} MB ({}× the tensor), {} µs. Fused: {} kernel, {} MB ({}×), {} µs. Bytes ratio {:.2}, time ratio {:.2} on {}.",
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
    ui.label(egui::RichText::new("MB moved per kernel (1 MB = 10⁶ bytes)").strong());
    widgets::ledger_bars(
        ui,
        &[
            ledger_bar("autograd", &o.autograd, |k| k.cost.bytes() / 1e6),
            ledger_bar("fused", &o.fused, |k| k.cost.bytes() / 1e6),
        ],
        "MB",
    );
    ui.label(
        egui::RichText::new("Modelled µs per kernel: bytes / bandwidth + 4 µs per launch").strong(),
    );
    widgets::ledger_bars(
        ui,
        &[
            ledger_bar("autograd", &o.autograd, |k| k.us),
            ledger_bar("fused", &o.fused, |k| k.us),
        ],
        "µs",
    );
    for (title, l) in [
        ("Every byte, autograd-style", &o.autograd),
        ("Every byte, fused", &o.fused),
    ] {
        ui.collapsing(title, |ui| {
            egui::Grid::new(title).striped(true).show(ui, |ui| {
                ui.strong("kernel");
                ui.strong("reads");
                ui.strong("writes");
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
    ui.label(egui::RichText::new(format!(
        "Lecture ({}): autograd {} MB / {} µs, fused {} MB / {} µs — quoted for comparison, not used. {}",
        q.source, q.autograd_mb, q.autograd_us, q.fused_mb, q.fused_us, q.note
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
        egui::RichText::new(
            "Max relative error of ∇x vs f64, as the row mean grows (rows ~ N(mean, 1))",
        )
        .strong(),
    );
    widgets::log_log_plot(
        ui,
        "ln-error",
        &[
            ("HW4 form (x̂ first)", pts(&o.rel_error_hw4)),
            ("slides/paper form (raw x)", pts(&o.rel_error_slides)),
        ],
        "row mean",
        "max relative error",
    );
    ui.label(
        egui::RichText::new("Forward variance beside it: E[x²]−E[x]² (one pass) vs two passes")
            .strong(),
    );
    widgets::log_log_plot(
        ui,
        "ln-var",
        &[
            ("one pass E[x²]−E[x]²", pts(&o.rel_error_var_one_pass)),
            ("two passes", pts(&o.rel_error_var_two_pass)),
        ],
        "row mean",
        "relative error of var",
    );
    egui::Grid::new("ln-error-table")
        .striped(true)
        .show(ui, |ui| {
            for h in ["mean", "HW4", "slides", "slides / HW4", "rows with var ≤ 0"] {
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
    ui.label(egui::RichText::new(o.error_definition).small());
}

/// `layernorm-dgamma`.
pub fn show_dgamma(ui: &mut egui::Ui, o: &DgammaOutput, state: &mut SceneState) {
    egui::Grid::new("dgamma-schemes")
        .striped(true)
        .show(ui, |ui| {
            for h in [
                "scheme",
                "threads",
                "serial steps",
                "launches",
                "shared wavefronts / request",
                "conflict degree",
                "updates per address",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for s in &o.schemes {
                ui.label(s.scheme);
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
    ui.label(egui::RichText::new(format!("Averaged: {}", o.averaged_over)).small());
    ui.label(format!(
        "Atomics: {} updates queue on each address; {} arrival orders gave {} distinct f32 results (spread {:.1e}).",
        o.atomic.updates_per_address,
        o.atomic.order_sums.len(),
        o.atomic.distinct_results,
        o.atomic.spread
    ));
    ui.separator();
    ui.horizontal(|ui| {
        ui.label("Step through one block of:");
        if ui
            .radio_value(
                &mut state.view.sequential,
                false,
                format!("the 32 × 32 tile (pad {})", o.tile.pad),
            )
            .changed()
            | ui.radio_value(&mut state.view.sequential, true, "atomics")
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
