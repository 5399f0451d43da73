//! The kernel lab's header (the kernel that ran, the bundled examples with their lessons),
//! the sanitizer's warnings (each a button to its line) and the totals.

use warpscope_core::lab::examples::EXAMPLES;
use warpscope_core::lab::output::{LabOutput, Warning, WarningKind};
use warpscope_core::params::ParamValue;

use super::LabShown;
use crate::i18n::{pick, tr};
use crate::trf;
use crate::views::ViewContext;
use crate::widgets;

/// The kernel that ran, and the example picker with the lesson of the example shown.
pub fn header(ui: &mut egui::Ui, shown: &LabShown, cx: &mut ViewContext<'_>) {
    let o = &shown.out;
    let [x, y, z] = o.workgroup_size;
    let threads = u64::from(x) * u64::from(y) * u64::from(z);
    let per_group = o.warps_per_workgroup;
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Kernel `{}` · @workgroup_size({x}, {y}, {z}) = {threads} invocations · warps of {} lanes → {per_group} warps per workgroup, {} in the dispatch",
            "内核 `{}` · @workgroup_size({x}, {y}, {z}) = {threads} 个调用 · 每个线程束 {} 个线程 → 每个工作组 {per_group} 个线程束，整个调度共 {} 个",
            o.entry,
            o.subgroup_size,
            o.totals.warps
        ))
        .strong(),
    );
    let example = EXAMPLES.iter().find(|e| e.name == shown.name);
    if crate::widgets::stepper::figure_mode(ui.ctx()) {
        // A figure names what it shows; the picker is the window's.
        let what = match example {
            Some(e) => trf!(
                ui,
                "Example `{}`: {}",
                "示例 `{}`：{}",
                e.name,
                pick(ui, &e.lesson)
            ),
            None => trf!(ui, "Source: {}", "源码：{}", shown.name),
        };
        ui.label(what);
        return;
    }
    ui.horizontal_wrapped(|ui| {
        let label = ui.label(tr(ui, "Example:", "示例："));
        let selected = example.map_or_else(
            || tr(ui, "your file", "你的文件").to_owned(),
            |e| e.name.to_owned(),
        );
        egui::ComboBox::from_id_salt("kernel-lab-example")
            .selected_text(selected)
            .show_ui(ui, |ui| {
                for e in EXAMPLES {
                    let r = ui
                        .selectable_label(Some(e.name) == example.map(|x| x.name), e.name)
                        .on_hover_text(pick(ui, &e.lesson));
                    if r.clicked() && Some(e.name) != example.map(|x| x.name) {
                        cx.set_values
                            .push(("source", ParamValue::Text(e.name.to_owned())));
                    }
                }
            })
            .response
            .labelled_by(label.id);
        match example {
            Some(e) => {
                ui.label(pick(ui, &e.lesson));
            }
            None => {
                ui.label(trf!(ui, "Source: {}", "源码：{}", shown.name));
            }
        }
    });
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Your own kernel: type the path of a .wgsl file in the `source` field on the left (~ is your home folder) and its dispatch under Your input (JSON); edit the file in your editor and enter the path again to rerun it.",
            "你自己的内核：在左侧 `source` 栏里输入 .wgsl 文件的路径（~ 表示你的主目录），在“你的输入（JSON）”里写调度；在编辑器里改完文件后再输入一次路径即可重新运行。",
        ))
        .small(),
    );
}

/// The warning kind's name.
fn kind_name(ui: &egui::Ui, kind: WarningKind) -> &'static str {
    match kind {
        WarningKind::Race => tr(ui, "race", "数据竞争"),
        WarningKind::OutOfBounds => tr(ui, "out of bounds", "越界"),
        WarningKind::UninitializedRead => tr(ui, "uninitialized read", "读未初始化内存"),
        WarningKind::BarrierDivergence => tr(ui, "barrier divergence", "屏障分歧"),
    }
}

/// The sanitizer's warnings, each a button to its line; returns the line clicked.
pub fn warnings(ui: &mut egui::Ui, warnings: &[Warning]) -> Option<u32> {
    if warnings.is_empty() {
        ui.label(
            egui::RichText::new(tr(
                ui,
                "Sanitizers: no race, out-of-bounds access, uninitialized read or barrier divergence found.",
                "检查结果：没有发现数据竞争、越界访问、读未初始化内存或屏障分歧。",
            ))
            .color(widgets::GREEN),
        );
        return None;
    }
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Sanitizers: {} warning(s) — click one to go to its line",
            "检查结果：{} 条警告 — 点击跳到对应的行",
            warnings.len()
        ))
        .strong()
        .color(widgets::VERMILLION),
    );
    let mut out = None;
    let figure = crate::widgets::stepper::figure_mode(ui.ctx());
    for w in warnings {
        let text = trf!(
            ui,
            "line {} · {}: {}",
            "第 {} 行 · {}：{}",
            w.line,
            kind_name(ui, w.kind),
            pick(ui, &w.message)
        );
        if figure {
            ui.label(text);
        } else if ui
            .add(egui::Button::new(text).wrap())
            .on_hover_text(tr(ui, "Go to this line", "跳到这一行"))
            .clicked()
        {
            out = Some(w.line);
        }
    }
    out
}

/// The counters over the whole dispatch.
pub fn totals(ui: &mut egui::Ui, o: &LabOutput) {
    let t = &o.totals;
    let c = &t.counters;
    ui.label(egui::RichText::new(tr(ui, "Totals over the dispatch", "整个调度的总计")).strong());
    let ratio = |a: u64, b: u64| {
        if b > 0 {
            format!("{a} / {b} ({:.2}×)", a as f64 / b as f64)
        } else {
            format!("{a} / {b}")
        }
    };
    let rows: [(&str, &str, String); 10] = [
        ("warps", "线程束", t.warps.to_string()),
        (
            "warp instructions",
            "线程束指令",
            c.warp_instructions.to_string(),
        ),
        (
            "lane instructions",
            "线程指令",
            t.lane_instructions.to_string(),
        ),
        (
            "shared wavefronts / ideal",
            "共享内存轮数 / 理想",
            ratio(c.shared_wavefronts, c.shared_ideal_wavefronts),
        ),
        (
            "shared requests",
            "共享内存请求",
            c.shared_requests.to_string(),
        ),
        (
            "global sectors / ideal",
            "全局内存扇区 / 理想",
            ratio(c.global_sectors, c.global_ideal_sectors),
        ),
        (
            "global requests",
            "全局内存请求",
            c.global_requests.to_string(),
        ),
        (
            "divergent branches",
            "分支发散",
            c.divergent_branches.to_string(),
        ),
        (
            "subgroup ops · atomics",
            "子组操作 · 原子操作",
            format!("{} · {}", c.subgroup_ops, c.atomics),
        ),
        ("barriers passed", "通过的屏障", t.barriers.to_string()),
    ];
    egui::Grid::new("kernel-lab-totals")
        .striped(true)
        .num_columns(4)
        .show(ui, |ui| {
            // Two pairs per row: the table stays short beside a long source.
            for pair in rows.chunks(2) {
                for (en, zh, v) in pair {
                    ui.label(tr(ui, en, zh));
                    ui.monospace(v);
                }
                ui.end_row();
            }
        });
}
