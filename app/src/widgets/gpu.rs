//! "Run on GPU": the scene's kernel (when `warpscope-kernels` has one) executed on the wgpu
//! adapter off the UI thread, verified against `core` and timed, shown beside the simulation.

use std::sync::mpsc;

use crate::i18n::tr;
use crate::trf;
use warpscope_core::params::ParamValues;
use warpscope_kernels::record::{self, Recording};
use warpscope_kernels::{
    DeviceContext, KernelRun, RunOptions, kernel_info, kernel_names, run_kernel_with,
};

use super::stepper::Stepper;

/// The kernel that runs scene `scene_id` for real, if any. Scenes with a recorded variant
/// (`softmax-warp`, `layernorm-syncs`) run the kernel of the same reduction
/// ([`record::scene_for_kernel`]) and, beside it, the recording.
pub fn kernel_for(scene_id: &str) -> Option<&'static str> {
    kernel_names().into_iter().find(|k| {
        kernel_info(k).is_ok_and(|i| {
            i.scene == scene_id
                || (i.scene == "trainer" && scene_id == "trainer-workspace")
                || record::scene_for_kernel(k) == Some(scene_id)
        })
    })
}

/// A run in flight or finished.
#[derive(Default)]
pub struct GpuPanel {
    rx: Option<mpsc::Receiver<Result<KernelRun, String>>>,
    /// The last outcome: the run, or why there is none.
    pub last: Option<Result<KernelRun, String>>,
    /// "Run on GPU" was pressed: the scene's view starts the recording with the scene's
    /// parameters (it has them; the panel does not).
    record_wanted: bool,
    /// Whether the last `ui` call was synchronous (tests): the view then waits for the recording.
    synchronous: bool,
    rec_rx: Option<mpsc::Receiver<Result<Recording, String>>>,
    /// The last recording and the scene parameters it was made with, or why there is none.
    pub recording: Option<(ParamValues, Result<Recording, String>)>,
    /// Where the recorded replay stands when it is not linked to the scene's stepper.
    pub rec_stepper: Stepper,
    /// Whether the recorded replay follows the scene's stepper (by phase).
    pub unlinked: bool,
    rec_values: Option<ParamValues>,
}

impl GpuPanel {
    /// Takes a pending recording request ("Run on GPU" pressed since the last call).
    pub fn take_record_request(&mut self) -> bool {
        std::mem::take(&mut self.record_wanted)
    }

    /// Starts recording scene `scene` at `values` on a background thread.
    pub fn start_recording(
        &mut self,
        scene: &'static str,
        values: ParamValues,
        ctx: &egui::Context,
    ) {
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        let v = values.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("record {scene}"))
            .spawn(move || {
                let r = DeviceContext::open()
                    .map_err(|e| e.to_string())
                    .and_then(|dev| {
                        record::record_scene(&dev, scene, &v).map_err(|e| e.to_string())
                    });
                let _ = tx.send(r);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => {
                self.rec_rx = Some(rx);
                self.rec_values = Some(values);
            }
            Err(e) => {
                self.recording = Some((values, Err(format!("could not start the recording: {e}"))))
            }
        }
    }

    /// Whether a recording is in flight.
    pub fn recording_running(&self) -> bool {
        self.rec_rx.is_some()
    }

    /// Collects a finished recording (waits for it when the panel runs synchronously).
    pub fn poll_recording(&mut self, ctx: &egui::Context) {
        let Some(rx) = &self.rec_rx else { return };
        let got = if self.synchronous {
            rx.recv().ok()
        } else {
            rx.try_recv().ok()
        };
        match got {
            Some(r) => {
                let values = self.rec_values.take().unwrap_or_default();
                self.recording = Some((values, r));
                self.rec_rx = None;
                self.rec_stepper = Stepper::default();
            }
            None if self.synchronous => {
                self.recording = Some((
                    self.rec_values.take().unwrap_or_default(),
                    Err("the recording stopped unexpectedly".to_owned()),
                ));
                self.rec_rx = None;
            }
            None => ctx.request_repaint_after(std::time::Duration::from_millis(50)),
        }
    }

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
        self.synchronous = synchronous;
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
            let button = ui.add_enabled(!self.running(), egui::Button::new(tr(ui, "Run on GPU", "在 GPU 上运行")));
            if button.on_hover_text(trf!(ui, "Run the WGSL kernel `{kernel}` on the GPU adapter, check it against the simulation and time it", "在 GPU 适配器上运行 WGSL 内核 `{kernel}`，与模拟结果核对并计时")).clicked() {
                self.start(kernel, ui.ctx());
                self.record_wanted = record::scene_for_kernel(kernel).is_some();
            }
            if self.running() {
                ui.spinner();
                ui.label(trf!(ui, "running {kernel} on the adapter…", "正在适配器上运行 {kernel}…"));
            }
        });
        match &self.last {
            None => {}
            Some(Err(e)) => {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    trf!(ui, "No GPU run: {e}", "没有 GPU 运行结果：{e}"),
                );
            }
            Some(Ok(r)) => {
                ui.label(trf!(
                    ui,
                    "{} on {} ({}, subgroups {}–{} lanes): {}",
                    "{} 在 {} 上（{}，子组 {}–{} 个线程）：{}",
                    r.kernel,
                    r.adapter.name,
                    r.adapter.backend,
                    r.adapter.subgroup_min_size,
                    r.adapter.subgroup_max_size,
                    if r.verified {
                        tr(
                            ui,
                            "matches core within tolerance",
                            "与 core 的结果在容差内一致",
                        )
                    } else {
                        tr(ui, "DOES NOT match core", "与 core 的结果不一致")
                    }
                ));
                egui::Grid::new("gpu-run").striped(true).show(ui, |ui| {
                    for (en, zh) in [
                        ("variant", "版本"),
                        ("launches", "发射次数"),
                        ("max abs error", "最大绝对误差"),
                        ("verified", "核对通过"),
                        ("median µs", "中位数 µs"),
                        ("GB/s", "GB/s"),
                    ] {
                        ui.strong(tr(ui, en, zh));
                    }
                    ui.end_row();
                    // Adam's FP16-storage layouts (when the adapter has SHADER_F16) below f32's.
                    let f16 = r.f16_storage.iter().flat_map(|f| &f.variants);
                    for v in r.variants.iter().chain(f16) {
                        super::marks::label(ui, &v.name);
                        ui.monospace(v.launches.to_string());
                        ui.monospace(format!("{:.1e}", v.verification.max_abs_error));
                        ui.monospace(if v.verification.passed {
                            tr(ui, "yes", "是")
                        } else {
                            tr(ui, "no", "否")
                        });
                        ui.monospace(format!("{:.1}", v.timing.median_us));
                        ui.monospace(format!("{:.2}", v.achieved_gbps));
                        ui.end_row();
                    }
                });
                ui.label(trf!(
                    ui,
                    "{} vs {}: {:.2}× the time, {:.2}× the bytes, {:.0}× the launches.",
                    "{} 对比 {}：时间 {:.2} 倍，字节 {:.2} 倍，发射次数 {:.0} 倍。",
                    r.comparison.baseline,
                    r.comparison.optimised,
                    r.comparison.time_ratio,
                    r.comparison.bytes_ratio,
                    r.comparison.launch_ratio
                ));
                for n in &r.notes {
                    super::marks::label(ui, egui::RichText::new(n).small());
                }
            }
        }
    }
}
