//! The kernel lab's *Recorded on this GPU* pane: the source shown, instrumented by the record
//! pass and run on the adapter by `warpscope_kernels::lab::record` off the UI thread (the GPU
//! panel's [`Slot`]), its workgroup 0 trace steppable with its own stepper, and the lines whose
//! recorded counters differ from a simulation at the adapter's subgroup size marked — as a
//! difference, not an error: the hardware may interleave warps differently.

use warpscope_core::lab::record::decode::OrderedAccess;
use warpscope_kernels::DeviceContext;
use warpscope_kernels::lab::record::{RecordOptions, Recorded, record};

use super::LabShown;
use super::gpu::{RunState, Slot};
use crate::i18n::tr;
use crate::trf;
use crate::widgets;
use crate::widgets::stepper::Stepper;

/// The recording of the source shown and where its own stepper stands.
#[derive(Debug, Clone, Default)]
pub struct RecordPane {
    /// The recording, made on a background thread.
    pub slot: Slot<Recorded>,
    /// The recorded trace's stepper (the simulated trace keeps the scene's).
    pub stepper: Stepper,
}

impl RecordPane {
    /// Starts recording `shown` on a background thread; `wait` blocks until it is done.
    pub fn start(&mut self, shown: &LabShown, ctx: &egui::Context, wait: bool) {
        self.stepper = Stepper::default();
        let shown2 = shown.clone();
        self.slot
            .run(&shown.source, "kernel-lab record", ctx, wait, move || {
                let shown = shown2;
                let dev = DeviceContext::open().map_err(|e| e.to_string())?;
                record(
                    &shown.source,
                    Some(&shown.out.entry),
                    &shown.dispatch,
                    &dev,
                    &RecordOptions::default(),
                )
                .map_err(|e| e.to_string())
            });
    }
}

/// Draws the pane: the button (not in figures), then the recording's figures, the lines that
/// differ from the simulation at the recorded subgroup size, and the recorded trace.
pub fn pane(ui: &mut egui::Ui, pane: &mut RecordPane, shown: &LabShown) {
    let state = pane.slot.state(&shown.source);
    let figure = widgets::stepper::figure_mode(ui.ctx());
    if figure && matches!(state, RunState::Idle) {
        return;
    }
    ui.label(
        egui::RichText::new(tr(ui, "Recorded on this GPU", "在这块 GPU 上实录"))
            .strong()
            .color(widgets::VERMILLION),
    );
    if !figure {
        ui.horizontal_wrapped(|ui| {
            let running = matches!(state, RunState::Running);
            if ui
                .add_enabled(
                    !running,
                    egui::Button::new(tr(ui, "Record on GPU", "在 GPU 上实录")),
                )
                .on_hover_text(tr(
                    ui,
                    "Instrument this source (a record after every shared access, barrier and subgroup operation), run it on the adapter and decode what each warp did",
                    "给这份源码插桩（每次共享内存访问、栅栏和子组操作之后写一条记录），在适配器上运行，再解码出每个线程束做了什么",
                ))
                .clicked()
            {
                pane.start(shown, ui.ctx(), false);
            }
            if running {
                ui.spinner();
                ui.label(tr(ui, "recording on the adapter…", "正在适配器上实录…"));
            }
        });
    }
    let RunState::Done(done) = state else {
        return;
    };
    let r = match done.as_deref() {
        Ok(r) => r,
        Err(e) => {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                trf!(ui, "No recording: {e}", "没有实录：{e}"),
            );
            return;
        }
    };
    ui.label(trf!(
        ui,
        "{}, subgroups of {} lanes: {} records, {} dropped; buffers {} the plain run's.",
        "{}，子组 {} 个线程：{} 条记录，丢弃 {} 条；缓冲区{}普通运行的结果。",
        r.adapter,
        r.subgroup_size,
        r.records,
        r.dropped,
        if r.buffers_equal {
            tr(ui, "equal", "等于")
        } else {
            tr(ui, "DIFFER from", "不同于")
        }
    ));
    lines(ui, r);
    if let Some(d) = &r.comparison.first_order_difference {
        let (rec, sim) = (
            OrderedAccess::text(d.recorded.as_ref()),
            OrderedAccess::text(d.simulated.as_ref()),
        );
        ui.label(
            egui::RichText::new(trf!(
                ui,
                "The order first differs at access {}: recorded {}, simulated {}. The hardware may interleave warps differently from the simulator's order; that is not an error.",
                "访问顺序从第 {} 次起不同：实录 {}，模拟 {}。硬件交替执行线程束的顺序可以与模拟不同，这不是错误。",
                d.position,
                crate::i18n::pick(ui, &rec),
                crate::i18n::pick(ui, &sim)
            ))
            .small(),
        );
    }
    ui.push_id("recorded-trace", |ui| {
        widgets::trace::show(ui, &r.trace, &mut pane.stepper);
    });
}

/// Per line, recorded against simulated at the recorded subgroup size; differing lines marked.
fn lines(ui: &mut egui::Ui, r: &Recorded) {
    let c = &r.comparison;
    if c.lines.is_empty() {
        return;
    }
    let hot = widgets::VERMILLION;
    egui::Grid::new("kernel-lab-recorded-lines")
        .striped(true)
        .show(ui, |ui| {
            for (en, zh) in [
                ("line", "行"),
                ("requests rec. / sim.", "请求 实录 / 模拟"),
                ("wavefronts rec. / sim.", "轮数 实录 / 模拟"),
                ("", ""),
            ] {
                ui.strong(tr(ui, en, zh));
            }
            ui.end_row();
            for l in &c.lines {
                ui.monospace(l.line.to_string());
                ui.monospace(format!(
                    "{} / {}",
                    l.recorded_requests, l.simulated_requests
                ));
                ui.monospace(format!(
                    "{} / {}",
                    l.recorded_wavefronts, l.simulated_wavefronts
                ));
                if l.equal {
                    ui.label(tr(ui, "same", "相同"));
                } else {
                    ui.label(
                        egui::RichText::new(trf!(
                            ui,
                            "differs at subgroup size {}",
                            "子组为 {} 时不同",
                            r.subgroup_size
                        ))
                        .strong()
                        .color(hot),
                    );
                }
                ui.end_row();
            }
        });
    if !c.all_equal {
        ui.label(
            egui::RichText::new(tr(
                ui,
                "Marked lines count differently on this GPU than in the simulation at its subgroup size: the hardware may interleave warps differently (say, which lanes meet on a shared atomic), so a difference is not a wrong answer.",
                "标出的行在这块 GPU 上的计数与同样子组大小的模拟不同：硬件交替执行线程束的方式可以不同（比如哪些 lane 在同一个共享原子操作上相遇），所以不同并不等于结果错误。",
            ))
            .small(),
        );
    }
}
