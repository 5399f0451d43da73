//! The kernel lab's GPU panel: the very source and dispatch the simulation ran, run on the
//! wgpu adapter by `warpscope_kernels::lab` off the UI thread, its buffers compared element by
//! element with the simulation's (a tolerance per type) and its time shown.

use std::sync::{Arc, Mutex};

use warpscope_kernels::DeviceContext;
use warpscope_kernels::lab::{self, Comparison, GpuRun, RunOptions};

use super::LabShown;
use crate::i18n::tr;
use crate::trf;
use crate::widgets;

/// Where a run on a background thread stands (the GPU run, the recording).
#[derive(Debug, Clone, Default)]
pub enum RunState<T> {
    /// Not asked for.
    #[default]
    Idle,
    /// Running on a background thread.
    Running,
    /// Finished: the result, or why there is none.
    Done(Result<Arc<T>, String>),
}

/// Where the GPU run stands: the run and its comparison.
pub type GpuState = RunState<(GpuRun, Comparison)>;

/// A run shared with the thread that makes it, and the source it ran (a result for another
/// source is not shown against this one).
#[derive(Debug, Clone)]
pub struct Slot<T> {
    state: Shared<T>,
}

/// The source a run is for and where it stands, shared with its thread.
type Shared<T> = Arc<Mutex<(Option<Arc<str>>, RunState<T>)>>;

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot {
            state: Arc::new(Mutex::new((None, RunState::Idle))),
        }
    }
}

/// The GPU run of the source shown.
pub type GpuSlot = Slot<(GpuRun, Comparison)>;

impl<T: Send + Sync + 'static> Slot<T> {
    /// The state for `source` (idle when the last run was of another source).
    pub fn state(&self, source: &Arc<str>) -> RunState<T> {
        self.state.lock().map_or(RunState::Idle, |g| match &g.0 {
            Some(s) if s == source => match &g.1 {
                RunState::Idle => RunState::Idle,
                RunState::Running => RunState::Running,
                RunState::Done(r) => RunState::Done(r.clone()),
            },
            _ => RunState::Idle,
        })
    }

    /// Runs `work` for `source` on a thread named `name`, the window repainted when it is
    /// done; `wait` blocks until then (tests, figures). A result for a source no longer shown
    /// is dropped.
    pub fn run(
        &self,
        source: &Arc<str>,
        name: &str,
        ctx: &egui::Context,
        wait: bool,
        work: impl FnOnce() -> Result<T, String> + Send + 'static,
    ) {
        if let Ok(mut g) = self.state.lock() {
            *g = (Some(source.clone()), RunState::Running);
        }
        let (slot, source, ctx) = (self.state.clone(), source.clone(), ctx.clone());
        let job = move || {
            let r = work().map(Arc::new);
            if let Ok(mut g) = slot.lock()
                && g.0.as_ref() == Some(&source)
            {
                g.1 = RunState::Done(r);
            }
            ctx.request_repaint();
        };
        match std::thread::Builder::new().name(name.into()).spawn(job) {
            Ok(h) if wait => {
                let _ = h.join();
            }
            Ok(_) => {}
            Err(e) => {
                if let Ok(mut g) = self.state.lock() {
                    g.1 = RunState::Done(Err(format!("could not start the run: {e}")));
                }
            }
        }
    }
}

impl GpuSlot {
    /// Starts the run of `shown` on a background thread; `wait` blocks until it is done
    /// (tests, figures).
    pub fn start(&self, shown: &LabShown, ctx: &egui::Context, wait: bool) {
        let shown2 = shown.clone();
        self.run(&shown.source, "kernel-lab gpu", ctx, wait, move || {
            let shown = shown2;
            DeviceContext::open()
                .map_err(|e| e.to_string())
                .and_then(|dev| {
                    lab::run(
                        &shown.source,
                        Some(&shown.out.entry),
                        &shown.dispatch,
                        &dev,
                        RunOptions::default(),
                    )
                    .map_err(|e| e.to_string())
                })
                .map(|run| {
                    let cmp = lab::compare(&run.buffers, &shown.out.buffers);
                    (run, cmp)
                })
        });
    }
}

/// Draws the panel: the *Run on GPU* button (not in figures), then the run's adapter, time and
/// buffer comparison.
pub fn panel(ui: &mut egui::Ui, slot: &GpuSlot, shown: &LabShown) {
    let state = slot.state(&shown.source);
    let figure = widgets::stepper::figure_mode(ui.ctx());
    if figure && matches!(state, GpuState::Idle) {
        return;
    }
    ui.label(
        egui::RichText::new(tr(
            ui,
            "The same source on the GPU",
            "同一份源码在 GPU 上运行",
        ))
        .strong(),
    );
    if !figure {
        ui.horizontal_wrapped(|ui| {
            let running = matches!(state, GpuState::Running);
            if ui
                .add_enabled(
                    !running,
                    egui::Button::new(tr(ui, "Run on GPU", "在 GPU 上运行")),
                )
                .on_hover_text(tr(
                    ui,
                    "Run this source with the same dispatch on the wgpu adapter, compare every writable buffer with the simulation and time it",
                    "用同样的调度在 wgpu 适配器上运行这份源码，把每个可写缓冲区与模拟结果逐元素比较，并计时",
                ))
                .clicked()
            {
                slot.start(shown, ui.ctx(), false);
            }
            if running {
                ui.spinner();
                ui.label(tr(ui, "running on the adapter…", "正在适配器上运行…"));
            }
        });
    }
    let GpuState::Done(done) = state else {
        return;
    };
    let (run, cmp) = match done.as_deref() {
        Ok((run, cmp)) => (run, cmp),
        Err(e) => {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                trf!(ui, "No GPU run: {e}", "没有 GPU 运行结果：{e}"),
            );
            return;
        }
    };
    let verdict = if cmp.passed {
        tr(
            ui,
            "every buffer matches the simulation",
            "每个缓冲区都与模拟一致",
        )
    } else {
        tr(
            ui,
            "buffers DIFFER from the simulation",
            "缓冲区与模拟不一致",
        )
    };
    ui.label(trf!(
        ui,
        "{} ({}): median {:.1} µs over {} runs ({}); {verdict}.",
        "{}（{}）：{} 次运行的中位数 {:.1} µs（{}）；{verdict}。",
        run.adapter.name,
        run.adapter.backend,
        run.time.median_us,
        run.time.runs,
        match run.time.timing {
            warpscope_kernels::runner::TimingMethod::GpuTimestamps =>
                tr(ui, "GPU timestamps", "GPU 时间戳"),
            _ => tr(ui, "host clock", "主机时钟"),
        }
    ));
    if let Some(s) = run.subgroup_size.filter(|s| *s != shown.out.subgroup_size) {
        ui.label(
            egui::RichText::new(trf!(
                ui,
                "The adapter's subgroups have {s} lanes, the simulation's {}: buffers compare, per-warp figures do not.",
                "适配器的子组有 {s} 个线程，模拟用的是 {} 个：缓冲区可以比较，按线程束的数字不能直接比较。",
                shown.out.subgroup_size
            ))
            .small(),
        );
    }
    egui::Grid::new("kernel-lab-gpu")
        .striped(true)
        .show(ui, |ui| {
            for (en, zh) in [
                ("binding", "绑定"),
                ("type", "类型"),
                ("elements", "元素数"),
                ("mismatches", "不一致"),
                ("max abs error", "最大绝对误差"),
                ("verified", "核对通过"),
            ] {
                ui.strong(tr(ui, en, zh));
            }
            ui.end_row();
            for (b, c) in &cmp.buffers {
                ui.monospace(b.to_string());
                ui.monospace(c.ty.to_string());
                ui.monospace(c.gpu_elements.to_string());
                ui.monospace(c.mismatches.to_string());
                ui.monospace(format!("{:.1e}", c.max_abs_error));
                ui.label(if c.passed {
                    tr(ui, "yes", "是")
                } else {
                    tr(ui, "no", "否")
                });
                ui.end_row();
            }
        });
}
