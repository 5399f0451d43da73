//! "Run on GPU": the scene's kernel (when `warpscope-kernels` has one) executed on the wgpu
//! adapter off the UI thread, verified against `core` and timed, shown beside the simulation.

use std::sync::mpsc;

use warpscope_kernels::{
    DeviceContext, KernelRun, RunOptions, kernel_info, kernel_names, run_kernel_with,
};

/// The kernel that runs scene `scene_id` for real, if any.
pub fn kernel_for(scene_id: &str) -> Option<&'static str> {
    kernel_names().into_iter().find(|k| {
        kernel_info(k).is_ok_and(|i| {
            i.scene == scene_id || (i.scene == "trainer" && scene_id == "trainer-workspace")
        })
    })
}

/// A run in flight or finished.
#[derive(Default)]
pub struct GpuPanel {
    rx: Option<mpsc::Receiver<Result<KernelRun, String>>>,
    /// The last outcome: the run, or why there is none.
    pub last: Option<Result<KernelRun, String>>,
}

impl GpuPanel {
    /// Starts `kernel` at its default shape on a background thread.
    pub fn start(&mut self, kernel: &'static str, ctx: &egui::Context) {
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("gpu {kernel}"))
            .spawn(move || {
                let r = DeviceContext::open()
                    .map_err(|e| e.to_string())
                    .and_then(|dev| {
                        run_kernel_with(kernel, &dev, &RunOptions::default())
                            .map_err(|e| e.to_string())
                    });
                let _ = tx.send(r);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => self.rx = Some(rx),
            Err(e) => self.last = Some(Err(format!("could not start the run: {e}"))),
        }
    }

    /// Whether a run is in flight.
    pub fn running(&self) -> bool {
        self.rx.is_some()
    }

    /// Draws the panel for `kernel`; `synchronous` waits for the run (tests).
    pub fn ui(&mut self, ui: &mut egui::Ui, kernel: &'static str, synchronous: bool) {
        if let Some(rx) = &self.rx {
            let got = if synchronous {
                rx.recv().ok()
            } else {
                rx.try_recv().ok()
            };
            match got {
                Some(r) => {
                    self.last = Some(r);
                    self.rx = None;
                }
                None => ui
                    .ctx()
                    .request_repaint_after(std::time::Duration::from_millis(50)),
            }
        }
        ui.horizontal(|ui| {
            let button = ui.add_enabled(!self.running(), egui::Button::new("Run on GPU"));
            if button.on_hover_text(format!("Run the WGSL kernel `{kernel}` on the GPU adapter, check it against the simulation and time it")).clicked() {
                self.start(kernel, ui.ctx());
            }
            if self.running() {
                ui.spinner();
                ui.label(format!("running {kernel} on the adapter…"));
            }
        });
        match &self.last {
            None => {}
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().warn_fg_color, format!("No GPU run: {e}"));
            }
            Some(Ok(r)) => {
                ui.label(format!(
                    "{} on {} ({}, subgroups {}–{} lanes): {}",
                    r.kernel,
                    r.adapter.name,
                    r.adapter.backend,
                    r.adapter.subgroup_min_size,
                    r.adapter.subgroup_max_size,
                    if r.verified {
                        "matches core within tolerance"
                    } else {
                        "DOES NOT match core"
                    }
                ));
                egui::Grid::new("gpu-run").striped(true).show(ui, |ui| {
                    for h in [
                        "variant",
                        "launches",
                        "max abs error",
                        "verified",
                        "median µs",
                        "GB/s",
                    ] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for v in &r.variants {
                        ui.label(&v.name);
                        ui.monospace(v.launches.to_string());
                        ui.monospace(format!("{:.1e}", v.verification.max_abs_error));
                        ui.monospace(if v.verification.passed { "yes" } else { "no" });
                        ui.monospace(format!("{:.1}", v.timing.median_us));
                        ui.monospace(format!("{:.2}", v.achieved_gbps));
                        ui.end_row();
                    }
                });
                ui.label(format!(
                    "{} vs {}: {:.2}× the time, {:.2}× the bytes, {:.0}× the launches.",
                    r.comparison.baseline,
                    r.comparison.optimised,
                    r.comparison.time_ratio,
                    r.comparison.bytes_ratio,
                    r.comparison.launch_ratio
                ));
                for n in &r.notes {
                    ui.label(egui::RichText::new(n).small());
                }
            }
        }
    }
}
