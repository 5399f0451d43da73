//! `layernorm-syncs`: the two dependency graphs and their block reductions stepped warp by warp.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets;
use warpscope_core::layernorm::syncs::{Graph, NodeKind, SyncsOutput};

/// The `layernorm-syncs` view and its state.
#[derive(Debug, Clone, Default)]
pub struct SyncsView {
    /// Shows the autograd-style chain instead of the one-barrier rewrite.
    pub sequential: bool,
}

impl View for SyncsView {
    type Scene = warpscope_core::layernorm::syncs::SyncsScene;

    fn events(&self, out: &Out<Self>) -> usize {
        if self.sequential {
            &out.trace_autograd
        } else {
            &out.trace_fused
        }
        .timeline()
        .len()
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, cx: &mut ViewContext<'_>) {
        draw(ui, out, self, cx);
    }
}

/// Draws `g`; its row reductions at sync level `stepped` (the reduction the stepper is in, when
/// this graph's kernel is the one stepped through) are ringed.
fn draw_graph(ui: &mut egui::Ui, g: &Graph, stepped: Option<u32>) {
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
    let zh = crate::i18n::zh(ui);
    let labels: Vec<String> = g.nodes.iter().map(|x| x.label.get(zh).to_owned()).collect();
    let styles: Vec<widgets::dag::NodeStyle> = g
        .nodes
        .iter()
        .map(|x| widgets::dag::NodeStyle {
            reduction: matches!(x.kind, NodeKind::RowReduction | NodeKind::ColumnReduction),
            highlight: x.kind == NodeKind::RowReduction && Some(x.sync_level) == stepped,
        })
        .collect();
    let edges: Vec<(usize, usize)> = g.edges.iter().map(|e| (e.from, e.to)).collect();
    widgets::dag(ui, &labels, &layer, &styles, &edges);
}

/// `layernorm-syncs`.
fn draw(ui: &mut egui::Ui, o: &SyncsOutput, view: &mut SyncsView, cx: &mut ViewContext<'_>) {
    widgets::marks::label(
        ui,
        trf!(
            ui,
            "Autograd-style chain: {} dependent block reductions → {} barriers. Rewrite: Σg and Σg·x̂ in one tree → {} reduction, {} barriers ({} barriers per block reduction).",
            "自动求导式的链：{} 次有依赖的块内归约 → {} 次栅栏。重排：Σg 和 Σg·x̂ 放进同一棵树 → {} 次归约，{} 次栅栏（每次块内归约 {} 次栅栏）。",
            o.autograd_syncs,
            o.autograd_barriers,
            o.fused_syncs,
            o.fused_barriers,
            o.barriers_per_block_reduction
        ),
    );
    // The reduction the stepper is in: one block reduction ends every
    // `barriers_per_block_reduction` barriers, and the first is at sync level 1.
    let stepped_trace = if view.sequential {
        &o.trace_autograd
    } else {
        &o.trace_fused
    };
    let passed = stepped_trace
        .timeline()
        .into_iter()
        .take(cx.stepper.pos + 1)
        .filter_map(|(w, i)| stepped_trace.warps.get(w)?.events.get(i))
        .filter_map(|e| match e.kind {
            warpscope_core::simt::trace::EventKind::Barrier { index } => Some(index),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let level = passed / o.barriers_per_block_reduction.max(1) + 1;
    for (title, g, stepped) in [
        (
            tr(
                ui,
                "Autograd-style chain (orange: reductions; ringed: the one being stepped through)",
                "自动求导式的链（橙色：归约；加框：正在逐步查看的那一次）",
            ),
            &o.autograd_graph,
            view.sequential,
        ),
        (
            tr(ui, "One-barrier rewrite", "重排成一次栅栏"),
            &o.fused_graph,
            !view.sequential,
        ),
    ] {
        ui.label(egui::RichText::new(title).strong());
        draw_graph(ui, g, stepped.then_some(level));
    }
    ui.separator();
    {
        let rewrite = tr(
            ui,
            "the rewrite (Σg, Σg·x̂ together)",
            "重排（Σg、Σg·x̂ 一起归约）",
        );
        let chain = tr(ui, "the autograd-style chain", "自动求导式的链");
        let caption = tr(ui, "Step through:", "逐步查看：");
        if crate::widgets::run_choice(ui, caption, &mut view.sequential, rewrite, chain) {
            cx.stepper.pos = 0;
        }
    }
    let trace = if view.sequential {
        &o.trace_autograd
    } else {
        &o.trace_fused
    };
    let recordable = !view.sequential;
    crate::widgets::recorded::show(
        ui,
        "layernorm-syncs",
        trace,
        recordable,
        cx.stepper,
        cx.gpu,
        cx.values,
    );
}
