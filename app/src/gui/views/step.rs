//! The whole training step (lecture §6): stacked stage bars for both versions, the sweeps as
//! plots, the model beside the paper's measured figures; and the §9 exercises as a table.

use warpscope_core::step::ledger::{StepOutput, SweepPoint};

use super::generic::format_number;
use super::widgets::{self, LedgerBar};

fn sweep_plot(
    ui: &mut egui::Ui,
    id: &str,
    x_label: &str,
    y_label: &str,
    series: &[(&str, Vec<[f64; 2]>)],
) {
    egui_plot::Plot::new(id)
        .height(200.0)
        .legend(egui_plot::Legend::default())
        .x_axis_label(x_label)
        .y_axis_label(y_label)
        .allow_scroll(false)
        .show(ui, |plot| {
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
}

fn pts(
    points: &[SweepPoint],
    x: impl Fn(&SweepPoint) -> f64,
    y: impl Fn(&SweepPoint) -> f64,
) -> Vec<[f64; 2]> {
    points.iter().map(|p| [x(p), y(p)]).collect()
}

/// `step-ledger`.
pub fn show_ledger(ui: &mut egui::Ui, o: &StepOutput) {
    ui.label(format!(
        "{} ({} layers, d = {}, {} tokens) on {}, GEMMs at {:.0}% of peak: baseline {} ms, LightSeq2-style {} ms → {:.2}× per step. Trainer: {:.1}% of the baseline step.",
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
        egui::RichText::new("One step, ms per stage (hover a segment for its figures)").strong(),
    );
    let bar = |name: &str, f: &dyn Fn(&warpscope_core::step::ledger::Stage) -> f64| LedgerBar {
        name: name.to_owned(),
        parts: o.stages.iter().map(|s| (s.name.to_owned(), f(s))).collect(),
    };
    widgets::ledger_bars(
        ui,
        &[
            bar("baseline", &|s| s.baseline.ms),
            bar("LightSeq2", &|s| s.lightseq2.ms),
        ],
        "ms",
    );
    egui::Grid::new("step-stages").striped(true).show(ui, |ui| {
        for h in [
            "stage",
            "baseline ms",
            "launches",
            "LightSeq2 ms",
            "launches",
            "speedup",
        ] {
            ui.strong(h);
        }
        ui.end_row();
        for s in &o.stages {
            ui.label(s.name);
            ui.monospace(format_number(s.baseline.ms));
            ui.monospace(s.baseline.launches.to_string());
            ui.monospace(format_number(s.lightseq2.ms));
            ui.monospace(s.lightseq2.launches.to_string());
            ui.monospace(format!("{:.2}×", s.speedup));
            ui.end_row();
        }
    });
    ui.label(egui::RichText::new("Sweeps, recomputed with the same model").strong());
    ui.columns(3, |cols| {
        let t = &o.sweeps.tokens;
        sweep_plot(
            &mut cols[0],
            "sweep-tokens",
            "tokens per batch",
            "trainer share of the step, %",
            &[
                (
                    "baseline",
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
        );
        let e = &o.sweeps.gemm_efficiency;
        sweep_plot(
            &mut cols[1],
            "sweep-eff",
            "GEMM efficiency",
            "step speedup",
            &[("speedup", pts(e, |p| p.gemm_efficiency, |p| p.speedup))],
        );
        let d = &o.sweeps.devices;
        sweep_plot(
            &mut cols[2],
            "sweep-dev",
            "device (V100, A100, H100, H200)",
            "step speedup",
            &[(
                "speedup",
                pts(
                    d,
                    |p| d.iter().position(|q| q.device == p.device).unwrap_or(0) as f64,
                    |p| p.speedup,
                ),
            )],
        );
    });
    ui.label(egui::RichText::new("Model beside the lecture and the paper").strong());
    egui::Grid::new("step-lecture")
        .striped(true)
        .show(ui, |ui| {
            for h in ["figure", "lecture", "this model", "note"] {
                ui.strong(h);
            }
            ui.end_row();
            for c in &o.lecture {
                ui.label(c.figure);
                ui.monospace(format_number(c.lecture));
                ui.monospace(c.computed.map_or("—".into(), format_number));
                ui.add(egui::Label::new(egui::RichText::new(c.note).small()).wrap());
                ui.end_row();
            }
            for r in &o.reported {
                ui.label(r.figure);
                ui.monospace(format!(
                    "{}–{} {} (measured, quoted)",
                    format_number(r.low),
                    format_number(r.high),
                    r.unit
                ));
                ui.monospace(r.modelled.map_or("—".into(), format_number));
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(format!("{} {}", r.source, r.gap)).small(),
                    )
                    .wrap(),
                );
                ui.end_row();
            }
        });
}

/// `exercises`: each exercise's question, the lecture's answer, whether the computation agrees,
/// and the computed answer.
pub fn show_exercises(ui: &mut egui::Ui, result: &serde_json::Value) {
    let Some(map) = result.as_object() else {
        return;
    };
    let mut keys: Vec<&String> = map.keys().filter(|k| k.starts_with("ex")).collect();
    keys.sort_by_key(|k| k[2..].parse::<u32>().unwrap_or(99));
    for k in keys {
        let e = &map[k];
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.horizontal_wrapped(|ui| {
                ui.strong(format!("Exercise {}", &k[2..]));
                match e["agrees"].as_bool() {
                    Some(true) => {
                        ui.colored_label(widgets::GREEN, "computed answer agrees with the lecture")
                    }
                    Some(false) => ui.colored_label(
                        widgets::VERMILLION,
                        "computed answer differs from the lecture",
                    ),
                    None => ui.label("open question: computed, no single answer in the lecture"),
                };
            });
            ui.add(egui::Label::new(e["question"].as_str().unwrap_or("")).wrap());
            if let Some(a) = e["lecture_answer"].as_str() {
                ui.add(
                    egui::Label::new(egui::RichText::new(format!("Lecture: {a}")).italics()).wrap(),
                );
            }
            ui.collapsing(format!("computed answer ({k})"), |ui| {
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(e["computed"].as_str().unwrap_or("")).small(),
                    )
                    .wrap(),
                );
                ui.monospace(serde_json::to_string_pretty(&e["answer"]).unwrap_or_default());
            });
        });
    }
}
