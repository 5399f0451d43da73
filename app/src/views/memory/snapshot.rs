//! `memory-snapshot`: a real PyTorch memory snapshot: what is wrong with the file (if anything),
//! its trace to scrub (`snapshot_timeline`), the allocator's segments and blocks at the cursor's
//! event (`snapshot_map`), then the file's figures and its replay.

use super::snapshot_frames::{self, FrameSearch};
use super::snapshot_map;
use super::snapshot_timeline;
use super::snapshot_whatif;
use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::stepper::figure_mode;
use crate::widgets::{self, mib_text};
use warpscope_core::torch::snapshot::SnapshotRun;
use warpscope_core::torch::snapshot::{self, SnapshotOutput};

/// The `memory-snapshot` view and its state.
#[derive(Debug, Clone, Default)]
pub struct SnapshotView {
    /// The timeline's device, range, columns and play cursor.
    pub timeline: snapshot_timeline::Options,
    /// The block map's state, scale and clicked block.
    pub map: snapshot_map::Options,
    /// The run last drawn: its id, file and `event` (see [`SnapshotView::follow_run`]).
    pub seen_run: Option<(u64, warpscope_core::torch::snapshot::Source, i64)>,
    /// The search box: an address or frame text.
    pub search: FrameSearch,
}

impl SnapshotView {
    /// On a new run the cursor may jump to the run's `event` (the last by default): when the
    /// file or `event` changed since the run before (a file opened, typed or dropped opens on its
    /// own final state; `--set event=N` on event N), and for the first run when the cursor is
    /// still at 0 — not when something placed it (a session's step, `--step`, the window's
    /// cursor in an export, a GIF's frames: [`crate::widgets::stepper::event_placed`]). So an
    /// export without `--step` shows the event the caption's `event` names, as the window does.
    fn follow_run(&mut self, ui: &egui::Ui, run: &SnapshotRun, cx: &mut ViewContext<'_>) {
        if self
            .seen_run
            .as_ref()
            .is_some_and(|(id, _, _)| *id == run.id)
        {
            return;
        }
        let changed = match &self.seen_run {
            Some((_, path, event)) => *path != run.output.path || *event != run.event,
            None => {
                cx.stepper.pos == 0
                    && (run.event >= 0 || !crate::widgets::stepper::event_placed(ui.ctx()))
            }
        };
        self.seen_run = Some((run.id, run.output.path.clone(), run.event));
        let n = run.timelines.first().map_or(0, |t| t.events.len());
        if self.timeline.zoom.is_some_and(|(_, b)| b > n) {
            self.timeline.zoom = None;
        }
        if let Some(at) = &run.output.at_event
            && changed
        {
            self.timeline.device = 0;
            self.timeline.zoom = None;
            cx.stepper.pos = at.index;
            cx.stepper.playing = false;
        }
    }
}

impl View for SnapshotView {
    type Scene = warpscope_core::torch::snapshot::SnapshotScene;

    fn events(&self, out: &Out<Self>) -> usize {
        snapshot_timeline::shown(out, self.timeline.device).map_or(0, |t| t.events.len())
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, cx: &mut ViewContext<'_>) {
        self.follow_run(ui, out, cx);
        warnings(ui, &out.output);
        snapshot_timeline::show(ui, out, &mut self.timeline, cx);
        ui.separator();
        if !figure_mode(ui.ctx()) {
            snapshot_frames::search_ui(ui, out, &mut self.search, self.timeline.device, cx);
        }
        let pos = cx.stepper.pos;
        snapshot_map::show(
            ui,
            out,
            &mut self.map,
            (self.timeline.device, &self.search),
            pos,
        );
        ui.separator();
        if out.output.trace_events > 0 {
            snapshot_whatif::show(ui, out);
            ui.separator();
        }
        show_summary(ui, &out.output);
    }
}

/// The file's problems, above everything else: never drawn as if the file were fine.
fn warnings(ui: &mut egui::Ui, o: &SnapshotOutput) {
    if o.warnings.is_empty() {
        return;
    }
    let zh = crate::i18n::zh(ui);
    let colour = ui.visuals().warn_fg_color;
    egui::Frame::group(ui.style())
        .stroke(egui::Stroke::new(1.0, colour))
        .show(ui, |ui| {
            ui.colored_label(
                colour,
                egui::RichText::new(tr(
                    ui,
                    "⚠ This file decodes, but parts of it are not what PyTorch's allocator writes — the figures below may be wrong there:",
                    "⚠ 这个文件能解码，但有些地方不是 PyTorch 分配器会写出的样子——下面的数字在那些地方可能不对：",
                ))
                .strong(),
            );
            for w in &o.warnings {
                let line = format!("• {}", w.text().get(zh));
                ui.add(egui::Label::new(egui::RichText::new(line).small()).wrap());
            }
        });
}

/// What the file's contents say about the PyTorch that wrote it.
fn generation_hints(ui: &egui::Ui, o: &SnapshotOutput) -> Vec<String> {
    let mut h = Vec::new();
    if o.layout == "list" {
        h.push(
            tr(
                ui,
                "a bare list of segments (torch.cuda.memory_snapshot()): no trace, no settings",
                "只是一串段（torch.cuda.memory_snapshot()）：没有轨迹，没有设置",
            )
            .to_owned(),
        );
    }
    if o.blocks_have_addresses {
        h.push(
            tr(
                ui,
                "blocks carry their own addresses (the layout after PyTorch 2.0)",
                "块带有自己的地址（PyTorch 2.0 之后的格式）",
            )
            .to_owned(),
        );
    } else {
        h.push(
            tr(
                ui,
                "blocks carry no addresses (PyTorch 2.0 or older layout; addresses derived from the segment)",
                "块不带地址（PyTorch 2.0 或更早的格式；地址由段推出）",
            )
            .to_owned(),
        );
    }
    if o.allocator_settings.is_empty() {
        h.push(
            tr(
                ui,
                "no allocator_settings recorded (older PyTorch, or not a _snapshot() dict)",
                "没有记录 allocator_settings（较旧的 PyTorch，或不是 _snapshot() 字典）",
            )
            .to_owned(),
        );
    } else {
        h.push(trf!(
            ui,
            "allocator_settings recorded ({} entries; newer PyTorch)",
            "记录了 allocator_settings（{} 项；较新的 PyTorch）",
            o.allocator_settings.len()
        ));
    }
    if o.private_pool_segments > 0 {
        h.push(trf!(
            ui,
            "{} segments in private (CUDA-graph) pools",
            "{} 个段在私有（CUDA graph）池里",
            o.private_pool_segments
        ));
    }
    h.push(trf!(ui, "pickle protocol {}", "pickle 协议 {}", o.protocol));
    h
}

fn join_counts(ui: &egui::Ui, m: &std::collections::BTreeMap<String, usize>) -> String {
    if m.is_empty() {
        return tr(ui, "none", "无").to_owned();
    }
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A snapshot block state in the language of `ui` (PyTorch names them in English; a state this
/// table does not know stays as the file spells it).
fn block_state_name<'a>(ui: &egui::Ui, state: &'a str) -> &'a str {
    let zh = match state {
        "active_allocated" => "已分配",
        "active_pending_free" => "等待释放",
        "inactive" => "空闲",
        _ => return state,
    };
    tr(ui, state, zh)
}

/// [`join_counts`] for block states, each state named in the language of `ui`.
fn join_states(ui: &egui::Ui, m: &std::collections::BTreeMap<String, usize>) -> String {
    if m.is_empty() {
        return tr(ui, "none", "无").to_owned();
    }
    m.iter()
        .map(|(k, v)| format!("{} {v}", block_state_name(ui, k)))
        .collect::<Vec<_>>()
        .join(if crate::i18n::zh(ui) { "，" } else { ", " })
}

/// `memory-snapshot`.
fn show_summary(ui: &mut egui::Ui, o: &SnapshotOutput) {
    ui.label(trf!(
        ui,
        "File: {}. Memory in MiB = 2²⁰ bytes.",
        "文件：{}。显存以 MiB 计，1 MiB = 2²⁰ 字节。",
        o.path.text().get(crate::i18n::zh(ui))
    ));
    egui::Grid::new("snapshot-figures")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label(tr(ui, "segments", "段"));
            ui.strong(o.segments.to_string());
            ui.end_row();
            ui.label(tr(ui, "blocks", "块"));
            ui.label(format!(
                "{} ({})",
                o.blocks,
                join_states(ui, &o.blocks_by_state)
            ));
            ui.end_row();
            ui.label(tr(
                ui,
                "reserved (Σ segment total_size)",
                "保留（Σ 段的 total_size）",
            ));
            ui.strong(format!(
                "{} ({} B)",
                mib_text(o.reserved_bytes),
                crate::widgets::format::group_thousands(&o.reserved_bytes.to_string())
            ));
            ui.end_row();
            ui.label(tr(
                ui,
                "allocated (Σ segment allocated_size)",
                "已分配（Σ 段的 allocated_size）",
            ));
            ui.strong(format!(
                "{} ({} B)",
                mib_text(o.allocated_bytes),
                crate::widgets::format::group_thousands(&o.allocated_bytes.to_string())
            ));
            ui.end_row();
            ui.label(tr(
                ui,
                "internal fragmentation (size − requested, active blocks)",
                "内部碎片（大小 − 申请量，活动块）",
            ));
            ui.label(mib_text(o.internal_fragmentation_bytes));
            ui.end_row();
            ui.label(tr(
                ui,
                "external fragmentation (cached free blocks)",
                "外部碎片（缓存中的空闲块）",
            ));
            ui.label(trf!(
                ui,
                "{}; the largest free block is {}",
                "{}；最大的空闲块是 {}",
                mib_text(o.external_fragmentation_bytes),
                mib_text(o.largest_free_block_bytes)
            ));
            ui.end_row();
            ui.label(tr(ui, "trace events", "轨迹事件"));
            ui.label(format!(
                "{} ({})",
                o.trace_events,
                join_counts(ui, &o.trace_actions)
            ));
            ui.end_row();
        });
    ui.add(
        egui::Label::new(trf!(
            ui,
            "What the file says about the PyTorch that wrote it: {}.",
            "从文件看写出它的 PyTorch：{}。",
            generation_hints(ui, o).join(tr(ui, "; ", "；"))
        ))
        .wrap(),
    );
    if !o.allocator_settings.is_empty() {
        ui.add(
            egui::Label::new(trf!(
                ui,
                "Allocator settings as recorded: {}.",
                "记录下的分配器设置：{}。",
                o.allocator_settings
                    .iter()
                    .map(|(k, v)| if v.is_empty() {
                        format!("{k} {}", tr(ui, "(empty)", "（空）"))
                    } else {
                        format!("{k} = {v}")
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .wrap(),
        );
    }
    ui.add_space(4.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Replay of the trace (alloc and free_completed, in order) through the simulator",
            "用模拟器按顺序重放轨迹（alloc 和 free_completed）",
        ))
        .strong(),
    );
    egui::Grid::new("snapshot-replay")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label(tr(ui, "reserved, peak (final)", "保留，峰值（最终）"));
            ui.strong(format!(
                "{} ({})",
                mib_text(o.replay_reserved_peak_bytes),
                mib_text(o.replay_reserved_final_bytes)
            ));
            ui.end_row();
            ui.label(tr(ui, "allocated, peak", "已分配，峰值"));
            ui.label(mib_text(o.replay_allocated_peak_bytes));
            ui.end_row();
            ui.label(tr(
                ui,
                "LightSeq2-style: one allocation of the peak live bytes",
                "LightSeq2 式：按峰值活字节一次性分配",
            ));
            ui.label(mib_text(o.replay_preallocated_bytes));
            ui.end_row();
            ui.label(tr(ui, "segments the replay creates", "重放产生的段数"));
            ui.label(o.replay_segments.len().to_string());
            ui.end_row();
            ui.label(tr(
                ui,
                "recreates the file's segments one for one?",
                "是否一一重现文件里的段？",
            ));
            match o.segments_match {
                Some(true) if o.trace_starts_empty => {
                    ui.colored_label(
                        widgets::GREEN,
                        trf!(
                            ui,
                            "yes — all {} segments, same sizes, same order",
                            "是 — 全部 {} 个段，大小相同，顺序相同",
                            o.segments
                        ),
                    );
                }
                Some(true) => {
                    ui.colored_label(
                        widgets::GREEN,
                        trf!(
                            ui,
                            "yes — all {} segments, same sizes, replayed from the state rebuilt at the first event",
                            "是 — 全部 {} 个段，大小相同，从第一个事件处重建的状态开始重放",
                            o.segments
                        ),
                    );
                }
                Some(false) => {
                    ui.colored_label(
                        widgets::VERMILLION,
                        tr(
                            ui,
                            "no — the replayed segments differ from the file's",
                            "否 — 重放出的段与文件里的不同",
                        ),
                    );
                }
                None => {
                    ui.label(if o.trace_starts_empty {
                        tr(ui, "no claim: the trace is empty", "不作判断：轨迹是空的")
                    } else {
                        tr(
                            ui,
                            "no claim: the trace starts mid-run",
                            "不作判断：轨迹从运行中途开始",
                        )
                    });
                }
            }
            ui.end_row();
        });
    if !o.replay_note.en.is_empty() {
        let note = crate::i18n::pick(ui, &o.replay_note);
        ui.add(egui::Label::new(egui::RichText::new(note).italics()).wrap());
    }
    if o.replay_unmatched_frees > 0 {
        ui.label(trf!(
            ui,
            "{} frees of blocks allocated before the trace began were matched to blocks of the rebuilt start.",
            "{} 次释放的块在轨迹开始前就已分配，回放时对应到重建出的起始状态里的块。",
            o.replay_unmatched_frees
        ));
    }
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Reading executes nothing from the file: every pickle opcode is checked first; large files are memory-mapped, and one is refused only when reading it would need more memory than is available ({} bytes per byte of file).",
            "读取时不执行文件里的任何东西：每个 pickle 操作码都先检查；大文件用内存映射读取，只有当读取所需内存超过可用内存时才拒绝（每字节文件约需 {} 字节）。",
            snapshot::MEMORY_PER_FILE_BYTE
        ))
        .small(),
    );
}
