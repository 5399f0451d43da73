//! `memory-diff`: two snapshots side by side — reserved and allocated in each and the
//! difference, the segments only one holds, and live bytes by the user frame that allocated
//! them as grouped bars (the largest groups; the table lists them all).

use crate::i18n::{tr, zh};
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::{self, Bar, BarGroup, Scale, Series, mib_text};
use warpscope_core::torch::diff::{self, DiffOutput};

/// Frame groups drawn as bars (the table lists every group).
const BARS: usize = 10;

/// The `memory-diff` view.
#[derive(Debug, Clone, Default)]
pub struct DiffView;

impl View for DiffView {
    type Scene = warpscope_core::torch::diff::DiffScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

/// Bytes with a sign (b − a).
fn signed(delta: i128) -> String {
    let sign = if delta > 0 {
        "+"
    } else if delta < 0 {
        "−"
    } else {
        "±"
    };
    let bytes = u64::try_from(delta.unsigned_abs()).unwrap_or(u64::MAX);
    format!("{sign}{}", mib_text(bytes))
}

fn draw(ui: &mut egui::Ui, o: &DiffOutput) {
    ui.label(trf!(
        ui,
        "a: {} · b: {}. Memory in MiB = 2²⁰ bytes; differences are b − a.",
        "a：{} · b：{}。显存以 MiB 计，1 MiB = 2²⁰ 字节；差值是 b − a。",
        o.a.text().get(zh(ui)),
        o.b.text().get(zh(ui))
    ));
    egui::Grid::new("diff-figures")
        .num_columns(4)
        .striped(true)
        .show(ui, |ui| {
            ui.label("");
            ui.strong("a");
            ui.strong("b");
            ui.strong("b − a");
            ui.end_row();
            ui.label(tr(
                ui,
                "reserved (Σ segment total_size)",
                "保留（Σ 段的 total_size）",
            ));
            ui.label(mib_text(o.reserved_bytes.0));
            ui.label(mib_text(o.reserved_bytes.1));
            ui.strong(signed(o.reserved_delta_bytes));
            ui.end_row();
            ui.label(tr(
                ui,
                "allocated (Σ segment allocated_size)",
                "已分配（Σ 段的 allocated_size）",
            ));
            ui.label(mib_text(o.allocated_bytes.0));
            ui.label(mib_text(o.allocated_bytes.1));
            ui.strong(signed(o.allocated_delta_bytes));
            ui.end_row();
            ui.label(tr(
                ui,
                "segments only in this file (same address and size)",
                "只在这个文件里的段（地址和大小都相同才算同一个）",
            ));
            let only = |v: &[diff::OnlySegment]| {
                format!(
                    "{} ({})",
                    v.len(),
                    mib_text(v.iter().map(|s| s.total_size).fold(0, u64::saturating_add))
                )
            };
            ui.label(only(&o.segments_only_in_a));
            ui.label(only(&o.segments_only_in_b));
            ui.label("");
            ui.end_row();
        });
    ui.add_space(6.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Live bytes (active_allocated blocks) by the innermost user frame that allocated them",
            "存活字节（active_allocated 块），按分配它们的最内层用户栈帧分组",
        ))
        .strong(),
    );
    if o.by_frame.is_empty() {
        ui.label(tr(
            ui,
            "Neither file holds an allocated block.",
            "两个文件里都没有已分配的块。",
        ));
        return;
    }
    let series = [
        Series {
            name: "a".to_owned(),
            colour: widgets::GREY,
        },
        Series {
            name: "b".to_owned(),
            colour: widgets::BLUE,
        },
    ];
    let bar = |series: usize, bytes: u64| Bar {
        series,
        value: warpscope_core::memory::mib(bytes),
        range: None,
        text: mib_text(bytes),
    };
    let groups: Vec<BarGroup> = o
        .by_frame
        .iter()
        .take(BARS)
        .map(|r| BarGroup {
            name: shorten(r.frame.text().get(zh(ui)), 48),
            bars: vec![bar(0, r.bytes_a), bar(1, r.bytes_b)],
        })
        .collect();
    widgets::grouped_bars(ui, &groups, &series, Scale::Linear, "MiB");
    // A figure has no expander: it names what it leaves out (`report memory-diff` lists all).
    let figure = crate::widgets::stepper::figure_mode(ui.ctx());
    if o.by_frame.len() > BARS {
        ui.label(
            egui::RichText::new(if figure {
                trf!(
                    ui,
                    "The {} largest of {} groups (`warpscope report memory-diff` lists all).",
                    "只画出最大的 {} 组（共 {} 组；`warpscope report memory-diff` 列出全部）。",
                    BARS,
                    o.by_frame.len()
                )
            } else {
                trf!(
                    ui,
                    "The {} largest of {} groups; the table lists all.",
                    "只画出最大的 {} 组（共 {} 组）；下表列出全部。",
                    BARS,
                    o.by_frame.len()
                )
            })
            .small(),
        );
    }
    if figure {
        return;
    }
    egui::CollapsingHeader::new(tr(ui, "Every group", "全部分组"))
        .id_salt("diff-groups")
        .default_open(false)
        .show(ui, |ui| {
            egui::Grid::new("diff-by-frame")
                .num_columns(4)
                .striped(true)
                .show(ui, |ui| {
                    ui.strong(tr(ui, "frame", "栈帧"));
                    ui.strong("a");
                    ui.strong("b");
                    ui.strong("b − a");
                    ui.end_row();
                    for r in &o.by_frame {
                        ui.label(r.frame.text().get(zh(ui)));
                        ui.label(mib_text(r.bytes_a));
                        ui.label(mib_text(r.bytes_b));
                        ui.label(signed(i128::from(r.bytes_b) - i128::from(r.bytes_a)));
                        ui.end_row();
                    }
                });
        });
}

/// `s` cut to `n` characters with an ellipsis.
fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}
