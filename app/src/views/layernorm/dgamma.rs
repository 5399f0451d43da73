//! `layernorm-dgamma`: the ∇γ/∇β schemes (atomics, the padded tile, two-stage), the tile stepped.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use warpscope_core::layernorm::dgamma::DgammaOutput;

/// The `layernorm-dgamma` view and its state.
#[derive(Debug, Clone, Default)]
pub struct DgammaView {
    /// Shows the one-thread-per-column atomics instead of the tile.
    pub sequential: bool,
}

impl View for DgammaView {
    type Scene = warpscope_core::layernorm::dgamma::DgammaScene;

    fn events(&self, out: &Out<Self>) -> usize {
        if self.sequential {
            &out.trace_atomic
        } else {
            &out.trace_tiled
        }
        .timeline()
        .len()
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, cx: &mut ViewContext<'_>) {
        draw(ui, out, self, cx);
    }
}

/// `layernorm-dgamma`.
fn draw(ui: &mut egui::Ui, o: &DgammaOutput, view: &mut DgammaView, cx: &mut ViewContext<'_>) {
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
    {
        let tile = trf!(
            ui,
            "the 32 × 32 tile (pad {})",
            "32 × 32 分块（pad {}）",
            o.tile.pad
        );
        let atomics = tr(ui, "atomics", "原子加");
        let caption = tr(ui, "Step through one block of:", "逐步查看一个线程块：");
        if crate::widgets::run_choice(ui, caption, &mut view.sequential, &tile, atomics) {
            cx.stepper.pos = 0;
        }
    }
    let trace = if view.sequential {
        &o.trace_atomic
    } else {
        &o.trace_tiled
    };
    crate::widgets::trace::show(ui, trace, cx.stepper);
}
