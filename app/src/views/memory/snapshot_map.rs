//! The allocator's segments and blocks right after the cursor's event (PyTorch's *Allocator State
//! History*, rebuilt by [`warpscope_core::torch::snapshot::history`]): one row per segment,
//! blocks coloured by state, a legend, the block under the pointer named (address, size, state).
//!
//! The state is computed once per event and kept ([`MapCache`], keyed on the run — a new file or
//! a re-read is a new run — the device and the event), so idle frames redraw without undoing any
//! trace event. Rows shrink to fit; where even 8-pixel rows do not fit, the window scrolls them
//! (only the visible rows are drawn) and a figure draws the [`FIGURE_ROWS`] largest, labelled.

use egui::{Color32, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};
use warpscope_core::torch::frames::FrameTable;
use warpscope_core::torch::snapshot::{BlockState, StateAt, StateBlock, StateSegment};

use super::snapshot_frames::{self, FrameSearch};
use super::snapshot_timeline::SnapshotRun;
use crate::i18n::tr;
use crate::trf;
use crate::widgets::stepper::figure_mode;
use crate::widgets::{self, mib_text};

/// Most segment rows a figure draws (the largest segments): few enough for rows that carry
/// their address and size.
pub const FIGURE_ROWS: usize = 48;

/// Height the window gives the rows before it scrolls them (points).
const WINDOW_HEIGHT: f32 = 560.0;

/// Height a figure gives the rows (points).
const FIGURE_HEIGHT: f32 = 1200.0;

/// What the block map keeps between frames: the state last drawn, the rows' scale and the
/// clicked block. The `memory-snapshot` view holds it; the map alone changes it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The allocator state last drawn (the cursor's event).
    pub cache: MapCache,
    /// Rows of the block map: each segment spans the width (else one scale for all).
    pub fit_rows: bool,
    /// The block clicked in the map (its address), whose frames are listed below it.
    pub selected: Option<u64>,
}

/// The state last drawn, with what it was computed for.
#[derive(Debug, Clone, Default)]
pub struct MapCache {
    /// (run id, history index, event) the state belongs to.
    key: Option<(u64, usize, usize)>,
    /// The state.
    state: Option<StateAt>,
    /// Largest segment of the state (bytes): the rows' common scale.
    largest: u64,
    /// How many times a state was computed (tests check that idle frames compute none).
    pub computed: usize,
}

impl MapCache {
    /// The state shown, if any.
    pub fn state(&self) -> Option<&StateAt> {
        self.state.as_ref()
    }
}

fn free_colour(ui: &egui::Ui) -> Color32 {
    if ui.visuals().dark_mode {
        Color32::from_gray(70)
    } else {
        Color32::from_gray(215)
    }
}

fn colour(ui: &egui::Ui, s: &BlockState) -> Color32 {
    match s {
        BlockState::ActiveAllocated => widgets::MAP_ALLOCATED,
        BlockState::ActivePendingFree => widgets::MAP_PENDING,
        BlockState::Inactive => free_colour(ui),
        BlockState::Other(_) => widgets::PURPLE,
    }
}

/// A block state as PyTorch spells it, and in the language of `ui`.
fn state_name(ui: &egui::Ui, s: &BlockState) -> String {
    match s {
        BlockState::ActiveAllocated => tr(ui, "active_allocated", "已分配（active_allocated）"),
        BlockState::ActivePendingFree => tr(
            ui,
            "active_pending_free (freed, waiting for its stream events)",
            "等待释放（active_pending_free：已释放，等它的流事件完成）",
        ),
        BlockState::Inactive => tr(ui, "inactive (cached free)", "空闲（inactive，缓存中）"),
        BlockState::Other(o) => o,
    }
    .to_owned()
}

/// Draws the state of `run` at event `pos` of the shown device.
pub fn show(
    ui: &mut egui::Ui,
    run: &SnapshotRun,
    opts: &mut Options,
    (device, search): (usize, &FrameSearch),
    pos: usize,
) {
    let hi = device.min(run.histories.len().saturating_sub(1));
    let Some(h) = run.histories.get(hi) else {
        return;
    };
    let event = pos.min(h.len().saturating_sub(1));
    let key = (run.id, hi, event);
    if opts.cache.key != Some(key) {
        let state = h.at(event);
        opts.cache.largest = state
            .segments
            .iter()
            .map(|s| s.total_size)
            .max()
            .unwrap_or(1)
            .max(1);
        opts.cache.state = Some(state);
        opts.cache.key = Some(key);
        opts.cache.computed += 1;
    }
    let Some(st) = opts.cache.state.as_ref() else {
        return;
    };
    let heading = if h.is_empty() {
        tr(
            ui,
            "The file's segments and blocks (no trace: the state when the snapshot was taken)",
            "文件里的段和块（没有轨迹：拍快照时的状态）",
        )
        .to_owned()
    } else {
        let last = event + 1 == h.len();
        trf!(
            ui,
            "Segments and blocks right after event {} ({}){}",
            "第 {} 个事件（{}）之后的段和块{}",
            st.index,
            st.action,
            if last {
                tr(
                    ui,
                    " — the last event: the file's own segments",
                    " —— 最后一个事件：就是文件里的段",
                )
            } else {
                ""
            }
        )
    };
    ui.add(egui::Label::new(egui::RichText::new(heading).strong()).wrap());
    let blocks: usize = st.segments.iter().map(|s| s.blocks.len()).sum();
    let figures = if h.is_empty() {
        trf!(
            ui,
            "{} segments, {} blocks · reserved {} · allocated {} (active_allocated blocks)",
            "{} 个段，{} 个块 · 保留 {} · 已分配 {}（active_allocated 块）",
            st.segments.len(),
            blocks,
            mib_text(st.reserved_bytes),
            mib_text(st.allocated_bytes)
        )
    } else {
        trf!(
            ui,
            "{} segments, {} blocks · reserved {} · allocated {} (active_allocated blocks) · live requested {}",
            "{} 个段，{} 个块 · 保留 {} · 已分配 {}（active_allocated 块）· 存活的请求字节 {}",
            st.segments.len(),
            blocks,
            mib_text(st.reserved_bytes),
            mib_text(st.allocated_bytes),
            mib_text(st.requested_bytes)
        )
    };
    ui.add(egui::Label::new(figures).wrap());
    legend(ui);
    if !figure_mode(ui.ctx()) {
        ui.horizontal(|ui| {
            ui.label(tr(ui, "Row width:", "行宽："));
            ui.radio_value(&mut opts.fit_rows, false, tr(ui, "to scale", "按比例"))
                .on_hover_text(tr(
                    ui,
                    "Every row on one scale: the largest segment spans the width",
                    "所有行同一比例：最大的段占满宽度",
                ));
            ui.radio_value(
                &mut opts.fit_rows,
                true,
                tr(ui, "each segment full width", "每个段占满一行"),
            )
            .on_hover_text(tr(
                ui,
                "Each segment spans the width: the blocks of small segments become visible",
                "每个段都占满宽度：小段里的块也看得清",
            ));
        });
    }
    if st.segments.is_empty() {
        ui.label(tr(ui, "No segments at this event.", "这个事件时没有段。"));
        return;
    }
    let fit = opts.fit_rows;
    let largest = opts.cache.largest;
    let n = st.segments.len();
    // A searched address selects the block holding it until a block is clicked.
    let marks = Marks {
        frames: &run.frames,
        search,
        selected: opts.selected.or(search.address),
    };
    let mut clicked = None;
    if figure_mode(ui.ctx()) {
        // A figure draws rows tall enough to carry their labels: the largest segments, kept
        // in address order, when there are more than that.
        let rows = n.min(FIGURE_ROWS);
        let shown: Vec<StateSegment> = if rows < n {
            ui.label(trf!(
                ui,
                "The {} largest of {} segments, in address order (`warpscope report memory-snapshot --json` lists all).",
                "最大的 {} 个段（共 {} 个），按地址排列（`warpscope report memory-snapshot --json` 列出全部）。",
                rows,
                n
            ));
            let mut by_size: Vec<&StateSegment> = st.segments.iter().collect();
            by_size.sort_by_key(|g| std::cmp::Reverse(g.total_size));
            by_size.truncate(rows);
            by_size.sort_by_key(|g| g.address);
            by_size.into_iter().cloned().collect()
        } else {
            st.segments.clone()
        };
        let row_h = (FIGURE_HEIGHT / rows as f32).clamp(3.0, 18.0);
        let width = ui.available_width();
        rows_ui(ui, &shown, width, (row_h, fit, largest), &marks);
        selected_ui(ui, st, &run.frames, marks.selected);
        return;
    }
    let row_h = (WINDOW_HEIGHT / n as f32).clamp(8.0, 18.0);
    // Measured here: inside the scroll area the width is only what its content took last frame.
    let width = ui.available_width();
    if row_h * n as f32 <= WINDOW_HEIGHT + 1.0 {
        clicked = rows_ui(ui, &st.segments, width, (row_h, fit, largest), &marks);
    } else {
        ui.label(
            egui::RichText::new(trf!(
                ui,
                "{} segments, one row each: scroll the rows.",
                "{} 个段，每段一行：可以滚动。",
                n
            ))
            .small(),
        );
        ui.scope(|ui| {
            ui.spacing_mut().item_spacing.y = 0.0;
            egui::ScrollArea::vertical()
                .id_salt("snapshot-state-rows")
                .max_height(WINDOW_HEIGHT)
                .auto_shrink([false, true])
                .show_rows(ui, row_h, n, |ui, range| {
                    clicked = rows_ui(
                        ui,
                        st.segments.get(range).unwrap_or_default(),
                        width,
                        (row_h, fit, largest),
                        &marks,
                    );
                });
        });
    }
    if st
        .segments
        .iter()
        .flat_map(|s| &s.blocks)
        .any(|b| b.estimated)
    {
        ui.label(
            egui::RichText::new(tr(
                ui,
                "Blocks freed after this event are put back at the size PyTorch's rules give their requested bytes (round_size, should_split): the trace records requested sizes, not block sizes.",
                "这个事件之后才释放的块按 PyTorch 的规则由申请字节推出大小（round_size、should_split）放回：轨迹记录的是申请的大小，不是块的大小。",
            ))
            .small()
            .italics(),
        );
    }
    selected_ui(ui, st, &run.frames, marks.selected);
    if let Some(a) = clicked {
        opts.selected = (opts.selected != Some(a)).then_some(a);
    }
}

fn legend(ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        for (s, name) in [
            (
                BlockState::ActiveAllocated,
                tr(
                    ui,
                    "allocated (active_allocated)",
                    "已分配（active_allocated）",
                ),
            ),
            (
                BlockState::ActivePendingFree,
                tr(
                    ui,
                    "pending free (active_pending_free)",
                    "等待释放（active_pending_free）",
                ),
            ),
            (
                BlockState::Inactive,
                tr(ui, "cached free (inactive)", "缓存中空闲（inactive）"),
            ),
        ] {
            let (r, _) = ui.allocate_exact_size(Vec2::new(14.0, 14.0), Sense::hover());
            ui.painter().rect_filled(r, 2.0, colour(ui, &s));
            ui.label(name);
            ui.add_space(8.0);
        }
    });
}

/// What the rows mark besides the blocks' states: the stack frames to name on hover, the
/// search's matches (outlined) and the selected block.
struct Marks<'a> {
    frames: &'a FrameTable,
    search: &'a FrameSearch,
    /// The block whose frames are listed (clicked, or holding the searched address).
    selected: Option<u64>,
}

impl Marks<'_> {
    fn outlined(&self, b: &StateBlock) -> bool {
        b.state != BlockState::Inactive
            && (self.search.matches(b.frames) || self.selected == Some(b.address))
    }
}

/// Draws `segs` as rows of `row_h` points, each bar on one scale (`largest` bytes = the bar
/// width) or, with `fit`, each segment spanning it; hover names the block under the pointer and
/// its innermost user frame; answers the address of a block clicked.
fn rows_ui(
    ui: &mut egui::Ui,
    segs: &[StateSegment],
    width: f32,
    (row_h, fit, largest): (f32, bool, u64),
    marks: &Marks<'_>,
) -> Option<u64> {
    let width = width.max(300.0);
    let labelled = row_h >= 12.0;
    let (label_w, size_w) = if labelled { (150.0, 80.0) } else { (0.0, 0.0) };
    let bar_w = (width - label_w - size_w).max(100.0);
    let (rect, resp) =
        ui.allocate_exact_size(Vec2::new(width, row_h * segs.len() as f32), Sense::click());
    let p = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let font = crate::theme::label_font(ui.ctx(), (row_h - 4.0).clamp(8.0, 11.0));
    let left = rect.left() + label_w;
    let hover = resp.hover_pos();
    let mut hovered: Option<String> = None;
    let mut hovered_block: Option<u64> = None;
    let mut outlines: Vec<Rect> = Vec::new();
    let gap = (row_h * 0.12).min(1.0);
    for (r, seg) in segs.iter().enumerate() {
        let y = rect.top() + r as f32 * row_h;
        let scale = if fit {
            seg.total_size.max(1)
        } else {
            largest.max(1)
        };
        let px = |bytes: u64| (bytes as f64 / scale as f64 * f64::from(bar_w)) as f32;
        let whole = Rect::from_min_size(
            Pos2::new(left, y + gap),
            Vec2::new(px(seg.total_size).max(2.0), row_h - 2.0 * gap),
        );
        p.rect_filled(whole, 0.0, free_colour(ui));
        for b in &seg.blocks {
            let x0 = left + px(b.address.saturating_sub(seg.address));
            let w = px(b.size).max(0.5);
            let r0 = Rect::from_min_size(Pos2::new(x0, whole.top()), Vec2::new(w, whole.height()));
            if b.state != BlockState::Inactive {
                p.rect_filled(r0, 0.0, colour(ui, &b.state));
            }
            if w >= 3.0 {
                p.line_segment(
                    [r0.left_top(), r0.left_bottom()],
                    Stroke::new(0.5, ui.visuals().panel_fill),
                );
            }
            if marks.outlined(b) {
                outlines.push(r0.expand2(Vec2::new(w.max(3.0) * 0.5 - w * 0.5, 0.0)));
            }
            if hover.is_some_and(|h| r0.contains(h)) {
                hovered_block = Some(b.address);
                let requested = if b.requested_size > 0 && b.state != BlockState::Inactive {
                    trf!(ui, "\nrequested {} B", "\n申请 {} B", b.requested_size)
                } else {
                    String::new()
                };
                let estimated = if b.estimated {
                    tr(
                        ui,
                        "\nsize estimated from the trace's requested bytes (PyTorch's rounding rules)",
                        "\n大小由轨迹里申请的字节按 PyTorch 的取整规则推出",
                    )
                } else {
                    ""
                };
                hovered = Some(trf!(
                    ui,
                    "block {:#x}: {} ({} B)\n{}{}{}\nin segment {:#x} ({}), at +{}{}",
                    "块 {:#x}：{}（{} B）\n{}{}{}\n在段 {:#x}（{}）中，偏移 +{}{}",
                    b.address,
                    mib_text(b.size),
                    b.size,
                    state_name(ui, &b.state),
                    requested,
                    estimated,
                    seg.address,
                    mib_text(seg.total_size),
                    mib_text(b.address.saturating_sub(seg.address)),
                    snapshot_frames::hover_line(ui, marks.frames, b.frames)
                ));
            }
        }
        if row_h >= 6.0 {
            p.rect_stroke(
                whole,
                0.0,
                Stroke::new(0.6, text.gamma_multiply(0.5)),
                StrokeKind::Inside,
            );
        }
        if labelled {
            p.text(
                Pos2::new(rect.left() + 2.0, y + row_h * 0.5),
                egui::Align2::LEFT_CENTER,
                format!("{:#x}", seg.address),
                font.clone(),
                text,
            );
            p.text(
                Pos2::new(whole.right() + 6.0, y + row_h * 0.5),
                egui::Align2::LEFT_CENTER,
                mib_text(seg.total_size),
                font.clone(),
                text,
            );
        } else if hovered.is_none()
            && hover.is_some_and(|h| h.y >= y && h.y < y + row_h && h.x < whole.left())
        {
            hovered = Some(trf!(
                ui,
                "segment {:#x}: {}",
                "段 {:#x}：{}",
                seg.address,
                mib_text(seg.total_size)
            ));
        }
    }
    // Outlines last, so the next block's fill does not cover them.
    let mark = ui.visuals().strong_text_color();
    for r in outlines {
        p.rect_stroke(r, 0.0, Stroke::new(1.5, mark), StrokeKind::Outside);
    }
    let clicked = resp.clicked().then_some(hovered_block).flatten();
    if let Some(h) = hovered {
        resp.on_hover_text(h);
    }
    clicked
}

/// The block of `st` that holds `address`, if any.
fn block_at(st: &StateAt, address: u64) -> Option<&StateBlock> {
    st.segments
        .iter()
        .flat_map(|s| &s.blocks)
        .find(|b| address >= b.address && address - b.address < b.size.max(1))
}

/// The selected block's frames under the map (clicked, else the block holding a searched
/// address).
fn selected_ui(ui: &mut egui::Ui, st: &StateAt, frames: &FrameTable, selected: Option<u64>) {
    let Some(b) = selected.and_then(|a| block_at(st, a)) else {
        return;
    };
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Block {:#x} ({}, {}) — its stack:",
            "块 {:#x}（{}，{}）—— 它的调用栈：",
            b.address,
            mib_text(b.size),
            state_name(ui, &b.state)
        ))
        .strong(),
    );
    snapshot_frames::stack_ui(ui, frames, b.frames, "block");
}
