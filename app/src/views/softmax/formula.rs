//! `softmax-formula`: ∇x = y ⊙ (∇y − Σ∇y·y) against the explicit Jacobian product — their
//! errors in f64 and f32 as bars on a log axis, and the cost per row over L (FLOPs and bytes,
//! L against L²) from the result's own sweep. On the user's input: each row's y and ∇x, and for
//! a fully masked row the convention (y = 0, ∇x = 0) beside what the naive forms give.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::{self, Bar, BarGroup, Scale, Series, bytes_text, format_sig};
use warpscope_core::params::ParamValues;
use warpscope_core::softmax::formula::{FormulaOutput, FormulaResult};
use warpscope_core::softmax::input::SoftmaxInputOutput;

/// The `softmax-formula` view.
#[derive(Debug, Clone, Default)]
pub struct FormulaView;

impl View for FormulaView {
    type Scene = warpscope_core::softmax::formula::FormulaScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, cx: &mut ViewContext<'_>) {
        match out {
            FormulaResult::Generated(o) => draw(ui, o, cx.values),
            FormulaResult::Input(o) => draw_input(ui, o),
        }
    }
}

/// Rows of the user's input drawn (the report has them all).
const MAX_ROWS_SHOWN: usize = 8;

/// Entries of a row written out.
const MAX_ENTRIES_SHOWN: usize = 8;

/// A row's first entries, NaN and ±∞ spelt out.
fn entries(v: &[f64]) -> String {
    let mut s: Vec<String> = v
        .iter()
        .take(MAX_ENTRIES_SHOWN)
        .map(|x| widgets::format_extended(*x, 4))
        .collect();
    if v.len() > MAX_ENTRIES_SHOWN {
        s.push(format!("… (+{})", v.len() - MAX_ENTRIES_SHOWN));
    }
    format!("({})", s.join(", "))
}

/// The user's rows.
fn draw_input(ui: &mut egui::Ui, o: &SoftmaxInputOutput) {
    let n = o.rows.len();
    ui.label(
        egui::RichText::new(if o.from_scores {
            trf!(
                ui,
                "Your input: {} rows × L = {}, y = softmax of your scores (masked entries left out); ∇x with respect to the scores, in f64.",
                "你的输入：{} 行 × L = {}，y = 你的分数的 softmax（屏蔽项不参与）；∇x 是对分数的梯度，用 f64 计算。",
                n,
                o.len
            )
        } else {
            trf!(
                ui,
                "Your input: {} rows × L = {}, y given; ∇x with respect to the scores, in f64.",
                "你的输入：{} 行 × L = {}，直接给出 y；∇x 是对分数的梯度，用 f64 计算。",
                n,
                o.len
            )
        })
        .strong(),
    );
    let g = match o.dropout_p {
        Some(p) => trf!(
            ui,
            "∇x = y ⊙ (g − Σ g·y) with g = ∇y ⊙ keep / (1 − p), p = {}",
            "∇x = y ⊙ (g − Σ g·y)，其中 g = ∇y ⊙ keep / (1 − p)，p = {}",
            num(p)
        ),
        None => tr(
            ui,
            "∇x = y ⊙ (g − Σ g·y) with g = ∇y",
            "∇x = y ⊙ (g − Σ g·y)，其中 g = ∇y",
        )
        .to_owned(),
    };
    ui.label(g);
    ui.label(match o.max_abs_diff_jacobian {
        Some(d) => trf!(
            ui,
            "Against the explicit L × L Jacobian product: largest |difference| {}.",
            "与显式 L × L 雅可比乘积相比，最大 |差|：{}。",
            diff_text(ui, d)
        ),
        None => tr(
            ui,
            "The rows are too many or too long to build every L × L Jacobian; the formula alone is shown.",
            "行太多或太长，无法为每行构造 L × L 雅可比；只显示公式的结果。",
        )
        .to_owned(),
    });
    ui.add_space(6.0);
    egui::Grid::new("softmax-input-rows")
        .striped(true)
        .num_columns(5)
        .show(ui, |ui| {
            for h in [
                tr(ui, "row", "行"),
                tr(ui, "masked", "屏蔽数"),
                "y",
                "∇x",
                "Σ∇x",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for (i, r) in o.rows.iter().take(MAX_ROWS_SHOWN).enumerate() {
                ui.label(i.to_string());
                ui.label(if r.fully_masked {
                    egui::RichText::new(tr(ui, "all", "全部"))
                        .color(widgets::VERMILLION)
                        .strong()
                } else {
                    egui::RichText::new(r.masked.to_string())
                });
                ui.monospace(entries(&r.y));
                ui.monospace(entries(&r.dx));
                ui.monospace(widgets::format_extended(r.sum_dx, 3));
                ui.end_row();
            }
        });
    if n > MAX_ROWS_SHOWN {
        ui.label(trf!(
            ui,
            "… and {} more rows (all are in `warpscope report softmax-formula --input FILE`).",
            "……另有 {} 行（全部见 `warpscope report softmax-formula --input FILE`）。",
            n - MAX_ROWS_SHOWN
        ));
    }
    let full: Vec<_> = o
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.fully_masked)
        .collect();
    if full.is_empty() {
        return;
    }
    ui.add_space(8.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "A fully masked row: no probability mass, no gradient — y = 0 and ∇x = 0 (the convention of jax.nn.softmax(where=…) and Keras, and what NVIDIA Apex issue #1390 asks of ScaledMaskedSoftmax).",
            "完全被屏蔽的行：没有概率质量，也没有梯度——y = 0、∇x = 0（jax.nn.softmax(where=…) 与 Keras 的约定，也是 NVIDIA Apex issue #1390 对 ScaledMaskedSoftmax 的要求）。",
        ))
        .strong(),
    );
    egui::Grid::new("softmax-naive")
        .striped(true)
        .num_columns(4)
        .show(ui, |ui| {
            for h in [
                tr(ui, "row", "行"),
                tr(ui, "computed as", "算法"),
                "y",
                "∇x",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for (i, r) in full.iter().take(MAX_ROWS_SHOWN) {
                ui.label(i.to_string());
                ui.label(tr(ui, "convention: y = 0", "约定：y = 0"));
                ui.monospace(entries(&r.y));
                ui.monospace(entries(&r.dx));
                ui.end_row();
                if let Some(nv) = &r.naive {
                    let bad = |t: String| {
                        egui::RichText::new(t)
                            .monospace()
                            .color(widgets::VERMILLION)
                    };
                    ui.label("");
                    ui.label(tr(
                        ui,
                        "naive: masked scores = −10000 (uniform 1/L)",
                        "朴素：屏蔽分数 = −10000（均匀的 1/L）",
                    ));
                    ui.label(bad(entries(&nv.y_fill)));
                    ui.label(bad(entries(&nv.dx_fill)));
                    ui.end_row();
                    ui.label("");
                    ui.label(tr(
                        ui,
                        "naive: masked scores = −∞ (−∞ − (−∞) = NaN)",
                        "朴素：屏蔽分数 = −∞（−∞ − (−∞) = NaN）",
                    ));
                    ui.label(bad(entries(&nv.y_inf)));
                    ui.label(bad(entries(&nv.dx_inf)));
                    ui.end_row();
                }
            }
        });
}

fn num(v: f64) -> String {
    format_sig(v, 4)
}

/// A difference as the bars write it.
fn diff_text(ui: &egui::Ui, v: f64) -> String {
    if v == 0.0 {
        tr(ui, "exactly 0", "恰好为 0").to_owned()
    } else {
        num(v)
    }
}

/// The two ways, written out.
fn formulas(ui: &mut egui::Ui) {
    let rows = [
        (
            tr(ui, "formula", "公式"),
            tr(
                ui,
                "∇x = y ⊙ (∇y − s),   s = Σ ∇y·y   — one dot product per row, only y is kept",
                "∇x = y ⊙ (∇y − s)，s = Σ ∇y·y   ——每行一次点积，只需保存 y",
            ),
        ),
        (
            tr(ui, "Jacobian", "雅可比"),
            tr(
                ui,
                "J[i][j] = ∂yᵢ/∂xⱼ = yᵢ(δᵢⱼ − yⱼ)  (L × L),   ∇xⱼ = Σᵢ ∇yᵢ·J[i][j]",
                "J[i][j] = ∂yᵢ/∂xⱼ = yᵢ(δᵢⱼ − yⱼ)（L × L），∇xⱼ = Σᵢ ∇yᵢ·J[i][j]",
            ),
        ),
    ];
    widgets::definitions(ui, &rows);
}

/// `softmax-formula`.
fn draw(ui: &mut egui::Ui, o: &FormulaOutput, values: &ParamValues) {
    let len = values
        .int("len")
        .ok()
        .and_then(|l| u64::try_from(l).ok())
        .unwrap_or(o.first_row.y.len() as u64);
    let rows = o.row_sums_f64.len();
    formulas(ui);
    ui.add_space(6.0);
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Largest |difference| over {} rows × L = {} (|∇x| up to {}; log scale)",
            "{} 行 × L = {} 上的最大 |差|（|∇x| 最大 {}；对数坐标）",
            rows,
            len,
            num(o.max_abs_dx)
        ))
        .strong(),
    );
    let series = [
        (
            tr(ui, "formula vs Jacobian", "公式 vs 雅可比"),
            widgets::BLUE,
        ),
        (
            tr(ui, "f32 formula vs f64", "f32 公式 vs f64"),
            widgets::GREEN,
        ),
        (
            tr(ui, "f32 Jacobian vs f64", "f32 雅可比 vs f64"),
            widgets::VERMILLION,
        ),
        (
            tr(ui, "max |Σⱼ∇xⱼ| (0 exactly)", "最大 |Σⱼ∇xⱼ|（精确值为 0）"),
            widgets::ORANGE,
        ),
    ]
    .map(|(name, colour)| Series {
        name: name.to_owned(),
        colour,
    });
    let bar = |series: usize, v: f64| Bar {
        series,
        value: v,
        range: None,
        text: diff_text(ui, v),
    };
    let groups = [
        BarGroup {
            name: "f64".into(),
            bars: vec![
                bar(0, o.max_abs_diff_jacobian),
                bar(3, o.max_abs_row_sum_f64),
            ],
        },
        BarGroup {
            name: "f32".into(),
            bars: vec![
                bar(0, o.max_abs_diff_jacobian_f32),
                bar(1, o.max_abs_error_f32_formula),
                bar(2, o.max_abs_error_f32_jacobian),
                bar(3, o.max_abs_row_sum_f32),
            ],
        },
    ];
    widgets::grouped_bars(
        ui,
        &groups,
        &series,
        Scale::Log,
        tr(
            ui,
            "max |difference| over all elements",
            "所有元素上的最大 |差|",
        ),
    );
    let ratio = |a: f64, b: f64| if b > 0.0 { num(a / b) } else { "—".into() };
    ui.label(trf!(
        ui,
        "The two ways compute the same product, so they differ by rounding only: in f32 the formula's largest error is {}× the Jacobian product's, and every row of ∇x sums to 0 up to that rounding (softmax ignores a constant added to its inputs).",
        "两种做法算的是同一个乘积，差别只来自舍入：在 f32 下，公式的最大误差是雅可比乘积的 {} 倍；∇x 每行之和在舍入范围内为 0（softmax 的输入同时加一个常数不变）。",
        ratio(o.max_abs_error_f32_formula, o.max_abs_error_f32_jacobian)
    ));
    ui.add_space(6.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Cost per row as L grows (f64): the formula grows like L, the Jacobian like L²",
            "每行的代价随 L 增长（f64）：公式按 L 增长，雅可比按 L² 增长",
        ))
        .strong(),
    );
    let pts = |f: &dyn Fn(&warpscope_core::softmax::formula::FormulaCost) -> u64| {
        o.cost_by_len
            .iter()
            .map(|c| [c.len as f64, f(c) as f64])
            .collect::<Vec<_>>()
    };
    let here = o.cost_by_len.iter().find(|c| c.len == len);
    let this_l = trf!(ui, "L = {}", "L = {}", len);
    let names = [
        tr(ui, "formula: 4L FLOPs, y: 8L B", "公式：4L 次运算，y：8L B"),
        tr(
            ui,
            "Jacobian: 2L² FLOPs, J: 8L² B",
            "雅可比：2L² 次运算，J：8L² B",
        ),
    ];
    let colours = [widgets::BLUE, widgets::VERMILLION];
    let mut flops: Vec<(&str, Vec<[f64; 2]>, egui::Color32)> = vec![
        (names[0], pts(&|c| c.flops_formula), colours[0]),
        (names[1], pts(&|c| c.flops_jacobian), colours[1]),
    ];
    let mut bytes: Vec<(&str, Vec<[f64; 2]>, egui::Color32)> = vec![
        (names[0], pts(&|c| c.bytes_formula), colours[0]),
        (names[1], pts(&|c| c.bytes_jacobian), colours[1]),
    ];
    if let Some(c) = here {
        let at = |a: u64, b: u64| vec![[c.len as f64, a as f64], [c.len as f64, b as f64]];
        flops.push((
            &this_l,
            at(c.flops_formula, c.flops_jacobian),
            widgets::GREY,
        ));
        bytes.push((
            &this_l,
            at(c.bytes_formula, c.bytes_jacobian),
            widgets::GREY,
        ));
    }
    let legend: Vec<Series> = flops
        .iter()
        .map(|(name, _, colour)| Series {
            name: (*name).to_owned(),
            colour: *colour,
        })
        .collect();
    widgets::legend(ui, &legend);
    let (x, y_flops, y_bytes) = (
        tr(ui, "row length L", "行长 L"),
        tr(ui, "FLOPs per row", "每行 FLOPs"),
        tr(ui, "bytes per row", "每行字节数"),
    );
    // Side by side where there is room, one above the other in a small window.
    if ui.available_width() >= 700.0 {
        ui.columns(2, |cols| {
            let (a, b) = cols.split_at_mut(1);
            widgets::log_log_plot_coloured(&mut a[0], "sm-flops", &flops, x, y_flops, None);
            widgets::log_log_plot_coloured(&mut b[0], "sm-bytes", &bytes, x, y_bytes, None);
        });
    } else {
        widgets::log_log_plot_coloured(ui, "sm-flops", &flops, x, y_flops, None);
        widgets::log_log_plot_coloured(ui, "sm-bytes", &bytes, x, y_bytes, None);
    }
    if let Some(c) = here {
        ui.label(trf!(
            ui,
            "At L = {}: the formula needs {} FLOPs and {} (y); the Jacobian product {} FLOPs and {} (J) — {}× the FLOPs and {}× the bytes, a factor that grows with L.",
            "L = {} 时：公式需要 {} 次浮点运算和 {}（y）；雅可比乘积需要 {} 次浮点运算和 {}（J）——浮点运算是 {} 倍，字节是 {} 倍，而且倍数随 L 增长。",
            c.len,
            c.flops_formula,
            bytes_text(c.bytes_formula),
            c.flops_jacobian,
            bytes_text(c.bytes_jacobian),
            ratio(c.flops_jacobian as f64, c.flops_formula as f64),
            ratio(c.bytes_jacobian as f64, c.bytes_formula as f64)
        ));
    }
}
