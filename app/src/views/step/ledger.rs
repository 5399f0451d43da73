//! `step-ledger`: stacked stage bars for both versions, the sweeps as plots, the model beside the
//! paper's measured figures.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::format_number;
use crate::widgets::{self, LedgerBar};
use warpscope_core::step::ledger::{StageId, StepOutput, SweepPoint};

/// The `step-ledger` view.
#[derive(Debug, Clone, Default)]
pub struct LedgerView;

impl View for LedgerView {
    type Scene = warpscope_core::step::ledger::StepScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

/// One sweep as a line plot; `categories` names the x positions 0, 1, … (the devices) instead
/// of numbering them. A legend below the plot when there is more than one series.
fn sweep_plot(
    ui: &mut egui::Ui,
    id: &str,
    x_label: &str,
    y_label: &str,
    series: &[(&str, Vec<[f64; 2]>)],
    categories: Option<&[String]>,
) {
    let mut plot = egui_plot::Plot::new(id)
        .height(200.0)
        .x_axis_label(x_label)
        .y_axis_label(y_label)
        .allow_scroll(false);
    if let Some(names) = categories {
        let names = names.to_vec();
        plot = plot
            .x_grid_spacer(egui_plot::uniform_grid_spacer(|_| [1.0, 1.0, 1.0]))
            .x_axis_formatter(move |m, _| {
                let i = m.value.round();
                if (m.value - i).abs() < 1e-6 && i >= 0.0 {
                    names.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .include_x(-0.3)
            .include_x(names_len(categories) + 0.3 - 1.0);
    }
    plot.show(ui, |plot| {
        for (i, (name, pts)) in series.iter().enumerate() {
            let c = widgets::PALETTE[i % widgets::PALETTE.len()];
            plot.line(egui_plot::Line::new(*name, pts.clone()).width(2.0).color(c));
            plot.points(
                egui_plot::Points::new(*name, pts.clone())
                    .radius(3.0)
                    .color(c),
            );
        }
    });
    if series.len() > 1 {
        let legend: Vec<widgets::Series> = series
            .iter()
            .enumerate()
            .map(|(i, (name, _))| widgets::Series {
                name: (*name).to_owned(),
                colour: widgets::PALETTE[i % widgets::PALETTE.len()],
            })
            .collect();
        widgets::legend(ui, &legend);
    }
}

/// How many categories there are (0 for none).
fn names_len(categories: Option<&[String]>) -> f64 {
    categories.map_or(0, <[String]>::len) as f64
}

/// A stage's name in the language of `ui` (core names it in English).
fn stage_name(ui: &egui::Ui, id: StageId, en: &'static str) -> &'static str {
    tr(
        ui,
        en,
        match id {
            StageId::Embedding => "嵌入（前向 + 反向）",
            StageId::ForwardGemm => "前向：GEMM",
            StageId::ForwardOther => "前向：LayerNorm、softmax、dropout、偏置+激活、残差",
            StageId::CrossEntropy => "输出层 GEMM + 交叉熵（前向 + 反向）",
            StageId::BackwardGemm => "反向：GEMM（数据梯度 + 权重梯度）",
            StageId::BackwardOther => "反向：LayerNorm、softmax、dropout、偏置+激活、残差",
            StageId::Trainer => "训练器（参数更新）",
        },
    )
}

fn pts(
    points: &[SweepPoint],
    x: impl Fn(&SweepPoint) -> f64,
    y: impl Fn(&SweepPoint) -> f64,
) -> Vec<[f64; 2]> {
    points.iter().map(|p| [x(p), y(p)]).collect()
}

/// `step-ledger`.
fn draw(ui: &mut egui::Ui, o: &StepOutput) {
    ui.label(trf!(
        ui,
        "{} ({} layers, d = {}, {} tokens) on {}, GEMMs at {:.0}% of peak: baseline {} ms, LightSeq2-style {} ms → {:.2}× per step. Trainer: {:.1}% of the baseline step.",
        "{}（{} 层，d = {}，{} 个 token），{} 上，GEMM 达到峰值的 {:.0}%：基线 {} ms，LightSeq2 式 {} ms → 每步快 {:.2} 倍。训练器占基线一步的 {:.1}%。",
        o.model,
        o.shape.layers,
        o.shape.d,
        o.tokens,
        o.device,
        100.0 * o.gemm_efficiency,
        format_number(o.baseline_ms),
        format_number(o.lightseq2_ms),
        o.speedup,
        100.0 * o.trainer_share_baseline
    ));
    ui.label(
        egui::RichText::new(if crate::widgets::stepper::figure_mode(ui.ctx()) {
            tr(ui, "One step, ms per stage", "一步训练，各阶段的 ms")
        } else {
            tr(
                ui,
                "One step, ms per stage (hover a segment for its figures)",
                "一步训练，各阶段的 ms（鼠标悬停看每段的数字）",
            )
        })
        .strong(),
    );
    let bar = |name: &str, f: &dyn Fn(&warpscope_core::step::ledger::Stage) -> f64| LedgerBar {
        name: name.to_owned(),
        parts: o
            .stages
            .iter()
            .map(|s| (stage_name(ui, s.id, s.name).to_owned(), f(s)))
            .collect(),
    };
    widgets::ledger_bars(
        ui,
        &[
            bar(tr(ui, "baseline", "基线"), &|s| s.baseline.ms),
            bar("LightSeq2", &|s| s.lightseq2.ms),
        ],
        "ms",
    );
    // Long stage names and notes wrap inside a capped column instead of pushing the numbers
    // off the right edge (the Slides theme's larger text on a 1280-point window).
    let max_col = (ui.available_width() * 0.4).max(160.0);
    egui::Grid::new("step-stages")
        .striped(true)
        .max_col_width(max_col)
        .show(ui, |ui| {
            for (en, zh) in [
                ("stage", "阶段"),
                ("baseline ms", "基线 ms"),
                ("launches", "发射次数"),
                ("LightSeq2 ms", "LightSeq2 ms"),
                ("launches", "发射次数"),
                ("speedup", "加速比"),
            ] {
                ui.strong(tr(ui, en, zh));
            }
            ui.end_row();
            for s in &o.stages {
                ui.label(stage_name(ui, s.id, s.name));
                ui.monospace(format_number(s.baseline.ms));
                ui.monospace(s.baseline.launches.to_string());
                ui.monospace(format_number(s.lightseq2.ms));
                ui.monospace(s.lightseq2.launches.to_string());
                ui.monospace(format!("{:.2}×", s.speedup));
                ui.end_row();
            }
        });
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Sweeps, recomputed with the same model",
            "扫描：用同一个模型重新计算",
        ))
        .strong(),
    );
    let zh = crate::i18n::zh(ui);
    let l = |en: &'static str, zh_text: &'static str| if zh { zh_text } else { en };
    ui.columns(3, |cols| {
        let t = &o.sweeps.tokens;
        sweep_plot(
            &mut cols[0],
            "sweep-tokens",
            l("tokens per batch", "每批 token 数"),
            l("trainer share, %", "训练器占比 %"),
            &[
                (
                    l("baseline", "基线"),
                    pts(t, |p| p.tokens as f64, |p| 100.0 * p.trainer_share_baseline),
                ),
                (
                    "LightSeq2",
                    pts(
                        t,
                        |p| p.tokens as f64,
                        |p| 100.0 * p.trainer_share_lightseq2,
                    ),
                ),
            ],
            None,
        );
        let e = &o.sweeps.gemm_efficiency;
        sweep_plot(
            &mut cols[1],
            "sweep-eff",
            l("GEMM efficiency", "GEMM 效率"),
            l("step speedup", "每步加速比"),
            &[(
                l("speedup", "加速比"),
                pts(e, |p| p.gemm_efficiency, |p| p.speedup),
            )],
            None,
        );
        let d = &o.sweeps.devices;
        let devices: Vec<String> = d.iter().map(|p| p.device.to_uppercase()).collect();
        sweep_plot(
            &mut cols[2],
            "sweep-dev",
            l("device", "设备"),
            l("step speedup", "每步加速比"),
            &[(
                l("speedup", "加速比"),
                pts(
                    d,
                    |p| d.iter().position(|q| q.device == p.device).unwrap_or(0) as f64,
                    |p| p.speedup,
                ),
            )],
            Some(&devices),
        );
    });
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Model beside the lecture and the paper",
            "模型与讲义、论文的数字对照",
        ))
        .strong(),
    );
    // Four columns, two of them long text: a narrower cap than the stage table's, so the notes
    // wrap inside the view instead of running past its right edge.
    let note_col = (ui.available_width() * 0.28).max(140.0);
    egui::Grid::new("step-lecture")
        .striped(true)
        .max_col_width(note_col)
        .show(ui, |ui| {
            for (en, zh) in [
                ("figure", "数字"),
                ("lecture", "讲义"),
                ("this model", "本模型"),
                ("note", "说明"),
            ] {
                ui.strong(tr(ui, en, zh));
            }
            ui.end_row();
            for c in &o.lecture {
                ui.label(crate::i18n::pick(ui, &c.figure));
                ui.monospace(format_number(c.lecture));
                ui.monospace(c.computed.map_or("—".into(), format_number));
                ui.add(
                    egui::Label::new(egui::RichText::new(crate::i18n::pick(ui, &c.note)).small())
                        .wrap(),
                );
                ui.end_row();
            }
            for r in &o.reported {
                ui.label(crate::i18n::pick(ui, &r.figure));
                // One figure where the source gives one, a range where it gives two.
                let range = if format_number(r.low) == format_number(r.high) {
                    format_number(r.low)
                } else {
                    format!("{}–{}", format_number(r.low), format_number(r.high))
                };
                ui.monospace(trf!(
                    ui,
                    "{range} {} (measured, quoted)",
                    "{range} {}（实测，引用）",
                    r.unit
                ));
                ui.monospace(r.modelled.map_or("—".into(), format_number));
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(trf!(
                            ui,
                            "{} {}",
                            "{}。{}",
                            crate::i18n::pick(ui, &r.source),
                            crate::i18n::pick(ui, &r.gap)
                        ))
                        .small(),
                    )
                    .wrap(),
                );
                ui.end_row();
            }
        });
}
