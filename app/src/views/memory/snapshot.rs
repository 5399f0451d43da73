//! `memory-snapshot`: a real PyTorch memory snapshot: its segments, blocks and replay (below the
//! timeline of `snapshot_timeline`).

use super::allocator::MAP_ROWS;
use super::snapshot_timeline::{self, ColumnCache, SnapshotRun};
use crate::i18n::tr;
use crate::trf;
use crate::views::{View, ViewContext};
use crate::widgets::{self, BlockUse, MapBlock, MapSegment, mib_text};
use warpscope_core::Error;
use warpscope_core::memory::snapshot::{self, BlockState, SnapshotOutput};
use warpscope_core::memory::timeline;
use warpscope_core::params::ParamValues;
use warpscope_core::scene::Scene;

/// The `memory-snapshot` view and its state.
#[derive(Debug, Clone, Default)]
pub struct SnapshotView {
    /// Which of the devices with a trace is shown.
    pub device: usize,
    /// The range of events shown (`None`: the whole trace).
    pub zoom: Option<(usize, usize)>,
    /// The columns last drawn.
    pub columns: ColumnCache,
}

impl View for SnapshotView {
    const SCENE: &'static str = "memory-snapshot";
    type Output = SnapshotRun;

    fn compute(_scene: &'static Scene, values: &ParamValues) -> Result<Self::Output, Error> {
        let path = values.text("path")?.trim();
        let (label, s) = if path.is_empty() {
            (
                "(built-in mini fixture)",
                snapshot::parse(snapshot::BUILTIN_FIXTURE)?,
            )
        } else {
            (path, snapshot::read_file(path)?)
        };
        let timelines = (0..s.device_traces.len())
            .filter(|&d| s.device_traces.get(d).is_some_and(|t| !t.is_empty()))
            .map(|d| timeline::timeline(&s, d))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SnapshotRun {
            output: snapshot::summarise(label, &s),
            timelines,
        })
    }

    fn events(&self, out: &Self::Output) -> usize {
        snapshot_timeline::shown(out, self.device).map_or(0, |t| t.events.len())
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Self::Output, cx: &mut ViewContext<'_>) {
        snapshot_timeline::show(ui, out, self, cx);
        ui.separator();
        show_summary(ui, &out.output);
    }
}

fn block_use(s: &BlockState) -> BlockUse {
    match s {
        BlockState::ActiveAllocated => BlockUse::Allocated,
        BlockState::ActivePendingFree => BlockUse::PendingFree,
        BlockState::Inactive | BlockState::Other(_) => BlockUse::Free,
    }
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
        o.path
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
                "{:.2} MiB ({} B)",
                o.reserved_mib, o.reserved_bytes
            ));
            ui.end_row();
            ui.label(tr(
                ui,
                "allocated (Σ segment allocated_size)",
                "已分配（Σ 段的 allocated_size）",
            ));
            ui.strong(format!(
                "{:.2} MiB ({} B)",
                o.allocated_mib, o.allocated_bytes
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
                    .map(|(k, v)| format!("{k} = {v}"))
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
                Some(true) => {
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
    if !o.replay_note.is_empty() {
        let note = tr(ui, &o.replay_note, &o.replay_note_zh);
        ui.add(egui::Label::new(egui::RichText::new(note).italics()).wrap());
    }
    if o.replay_unmatched_frees > 0 {
        ui.label(trf!(
            ui,
            "{} frees of blocks allocated before the trace began were skipped.",
            "跳过了 {} 次释放（这些块在轨迹开始前就已分配）。",
            o.replay_unmatched_frees
        ));
    }
    ui.add_space(4.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "The file's segments (in file order) and their blocks",
            "文件里的段（按文件顺序）和它们的块",
        ))
        .strong(),
    );
    let segs: Vec<MapSegment> = o
        .segment_map
        .iter()
        .map(|s| MapSegment {
            address: s.address,
            size: s.size,
            pool: if s.device == 0 {
                s.pool.clone()
            } else {
                format!("{} · cuda:{}", s.pool, s.device)
            },
            blocks: s
                .blocks
                .iter()
                .map(|b| MapBlock {
                    offset: b.offset,
                    size: b.size,
                    requested: b.requested,
                    state: block_use(&b.state),
                })
                .collect(),
        })
        .collect();
    widgets::segment_map(ui, &segs, MAP_ROWS);
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Reading executes nothing from the file: every pickle opcode is checked first; files over {} MiB are refused.",
            "读取时不执行文件里的任何东西：每个 pickle 操作码都先检查；超过 {} MiB 的文件拒绝读取。",
            snapshot::MAX_FILE_BYTES >> 20
        ))
        .small(),
    );
}
