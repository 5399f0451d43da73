//! `layernorm-formulas`: the two closed forms of ∇x and reverse mode, written out, and each
//! form's error against the f64 reference in f64, f32, f16 and bf16 as bars on a log axis; on
//! the user's input, a table of each row's statistics (two-pass vs one-pass variance) and
//! errors, and the first row element by element.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::{self, Bar, BarGroup, Scale, Series, format_sig, marks};
use warpscope_core::layernorm::formulas::{DtypeDiffs, FormulasOutput, FormulasResult};
use warpscope_core::layernorm::input::LnInputOutput;
use warpscope_core::params::ParamValues;

/// The `layernorm-formulas` view.
#[derive(Debug, Clone, Default)]
pub struct FormulasView;

impl View for FormulasView {
    type Scene = warpscope_core::layernorm::formulas::FormulasScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, cx: &mut ViewContext<'_>) {
        match out {
            FormulasResult::Generated(o) => draw(ui, o, cx.values),
            FormulasResult::Input(o) => draw_input(ui, o),
        }
    }
}

/// Rows of the user's input shown in the table (the report has them all).
const MAX_TABLE_ROWS: usize = 12;

/// Elements of the first row shown one by one.
const MAX_TABLE_COLS: usize = 16;

/// A number of the user's result: five significant digits, NaN and ±∞ spelt out.
fn num(v: f64) -> String {
    widgets::format_extended(v, 5)
}

/// `v` as a table cell, in vermillion when it is broken (not finite, or a negative variance).
fn cell(ui: &mut egui::Ui, v: f64, broken: bool) {
    cell_digits(ui, v, 5, broken);
}

/// [`cell`] with `digits` significant digits (μ of a large-mean row needs more than five).
fn cell_digits(ui: &mut egui::Ui, v: f64, digits: usize, broken: bool) {
    let t = egui::RichText::new(widgets::format_extended(v, digits)).monospace();
    ui.label(if broken || !v.is_finite() {
        t.color(widgets::VERMILLION).strong()
    } else {
        t
    });
}

/// The user's rows: the arithmetic in words, a table of per-row statistics and errors, the
/// first row element by element, and ∇γ, ∇β against their reference.
fn draw_input(ui: &mut egui::Ui, o: &LnInputOutput) {
    // Every row is in the summaries; `rows` holds the first ones in detail.
    let n = o.rows_total;
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Your input: {} rows × {} columns, ε = {}. Storage {}, sums in {} (left to right), other operations in {}.",
            "你的输入：{} 行 × {} 列，ε = {}。存储 {}，求和用 {}（从左到右），其余运算用 {}。",
            n,
            o.cols,
            num(o.eps),
            o.dtype.name(),
            o.accumulate.name(),
            o.compute
        ))
        .strong(),
    );
    marks::label(
        ui,
        trf!(
            ui,
            "Largest |∇x − reference| over all rows: HW4 form {}, slides form {} (reference: f64 reverse mode on the stored inputs).",
            "所有行上最大的 |∇x − 参考|：HW4 写法 {}，slides 写法 {}（参考：在存储后的输入上用 f64 反向模式）。",
            num(o.max_abs_diff_hw4),
            num(o.max_abs_diff_slides)
        ),
    );
    ui.add_space(6.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Per row: the forward's statistics and each form's error (red: not finite, or a negative variance)",
            "逐行：前向统计量和每种写法的误差（红色：非有限值，或方差为负）",
        ))
        .strong(),
    );
    let heads = [
        tr(ui, "row", "行").to_owned(),
        "μ".to_owned(),
        tr(ui, "var, two-pass Σ(x−μ)²/m", "var，两遍 Σ(x−μ)²/m").to_owned(),
        tr(ui, "var, one-pass E[x²]−E[x]²", "var，一遍 E[x²]−E[x]²").to_owned(),
        tr(ui, "var, f64", "var，f64").to_owned(),
        "r = 1/√(var+ε)".to_owned(),
        tr(ui, "r from one-pass", "由一遍 var 得到的 r").to_owned(),
        tr(ui, "max |HW4 − ref|", "max |HW4 − 参考|").to_owned(),
        tr(ui, "max |slides − ref|", "max |slides − 参考|").to_owned(),
    ];
    egui::Grid::new("ln-input-rows")
        .striped(true)
        .num_columns(heads.len())
        .show(ui, |ui| {
            for h in &heads {
                ui.label(egui::RichText::new(h).strong());
            }
            ui.end_row();
            for (i, r) in o.rows.iter().take(MAX_TABLE_ROWS).enumerate() {
                ui.label(i.to_string());
                cell_digits(ui, r.mean, 8, false);
                cell(ui, r.var, r.var < 0.0);
                let off = (r.var_one_pass - r.var_reference).abs() > 0.5 * r.var_reference.abs();
                cell(ui, r.var_one_pass, r.var_one_pass < 0.0 || off);
                cell(ui, r.var_reference, false);
                cell(ui, r.rstd, false);
                cell(ui, r.rstd_one_pass, false);
                cell(ui, r.max_abs_diff_hw4, false);
                cell(ui, r.max_abs_diff_slides, false);
                ui.end_row();
            }
        });
    let shown = o.rows.len().min(MAX_TABLE_ROWS);
    if n > shown && o.rows.len() > shown {
        ui.label(trf!(
            ui,
            "… and {} more rows (the first {} are in `warpscope report layernorm-formulas --input FILE`).",
            "……另有 {} 行（前 {} 行见 `warpscope report layernorm-formulas --input FILE`）。",
            n - shown,
            o.rows.len()
        ));
    } else if n > shown {
        ui.label(trf!(
            ui,
            "… and {} more rows, counted in the largest errors above and in ∇γ, ∇β below.",
            "……另有 {} 行，已计入上面的最大误差以及 ∇γ、∇β。",
            n - shown
        ));
    }
    if let Some(r) = o.rows.first() {
        ui.add_space(8.0);
        marks::label(
            ui,
            egui::RichText::new(tr(
                ui,
                "Row 0 element by element: x\u{302}, y and ∇x by each form beside the f64 reference",
                "第 0 行逐个元素：x\u{302}、y 以及每种写法的 ∇x 与 f64 参考值",
            ))
            .strong(),
        );
        let heads = [
            "j",
            "x\u{302}",
            "y",
            tr(ui, "∇x HW4", "∇x HW4"),
            tr(ui, "∇x slides", "∇x slides"),
            tr(ui, "∇x reference", "∇x 参考"),
        ];
        egui::Grid::new("ln-input-row0")
            .striped(true)
            .num_columns(heads.len())
            .show(ui, |ui| {
                for h in heads {
                    marks::label(ui, egui::RichText::new(h).strong());
                }
                ui.end_row();
                for j in 0..o.cols.min(MAX_TABLE_COLS) {
                    ui.label(j.to_string());
                    for v in [&r.xhat, &r.y, &r.dx_hw4, &r.dx_slides, &r.dx_reference] {
                        cell(ui, v.get(j).copied().unwrap_or(f64::NAN), false);
                    }
                    ui.end_row();
                }
            });
        if o.cols > MAX_TABLE_COLS {
            ui.label(trf!(
                ui,
                "… and {} more columns.",
                "……另有 {} 列。",
                o.cols - MAX_TABLE_COLS
            ));
        }
    }
    let worst = |a: &[f64], b: &[f64]| {
        a.iter().zip(b).fold(0.0_f64, |m, (x, y)| {
            let d = (x - y).abs();
            if d.is_nan() || m.is_nan() {
                f64::NAN
            } else {
                m.max(d)
            }
        })
    };
    ui.add_space(6.0);
    marks::label(
        ui,
        trf!(
            ui,
            "∇γ = Σ_rows ∇y·x̂ and ∇β = Σ_rows ∇y against f64: largest differences {} and {}.",
            "∇γ = Σ_rows ∇y·x̂、∇β = Σ_rows ∇y 与 f64 相比：最大差分别为 {} 和 {}。",
            num(worst(&o.dgamma, &o.dgamma_reference)),
            num(worst(&o.dbeta, &o.dbeta_reference))
        ),
    );
    marks::label(
        ui,
        egui::RichText::new(tr(
            ui,
            "Storage rounds x, ∇y, γ, β when read and x̂, y, ∇x, ∇γ, ∇β when written. Every sum runs left to right in the accumulate type (an f16 sum becomes ∞ past 65,504); every other operation in f64 when the sums are f64, else in f32. The one-pass variance E[x²]−E[x]² cancels catastrophically when the mean is large against the spread.",
            "存储类型在读入时舍入 x、∇y、γ、β，在写出时舍入 x̂、y、∇x、∇γ、∇β。每个求和都按累加类型从左到右进行（f16 的和超过 65504 就变成 ∞）；求和为 f64 时其余运算用 f64，否则用 f32。均值相对离散程度很大时，一遍方差 E[x²]−E[x]² 会发生灾难性抵消。",
        ))
        .small(),
    );
}

/// A difference as the bars write it: four significant digits, or "exactly 0".
fn diff_text(ui: &egui::Ui, v: f64) -> String {
    if v == 0.0 {
        tr(ui, "exactly 0", "恰好为 0").to_owned()
    } else {
        format_sig4(v)
    }
}

/// The formulas, one row each: name, formula, where it comes from.
fn formulas(ui: &mut egui::Ui) {
    let rows: [(&str, &str, &str, &str); 5] = [
        (
            "forward (saves μ, r)",
            "前向（保存 μ、r）",
            "μ = Σx/m,  σ = √(Σ(x−μ)²/m + ε),  r = 1/σ,  x\u{302} = (x−μ)·r,  y = γ⊙x\u{302} + β",
            "μ = Σx/m，σ = √(Σ(x−μ)²/m + ε)，r = 1/σ，x\u{302} = (x−μ)·r，y = γ⊙x\u{302} + β",
        ),
        (
            "HW4 form",
            "HW4 写法",
            "∇xᵢ = r·[gᵢ − (Σg + x\u{302}ᵢ·Σg·x\u{302})/m],   g = γ⊙∇y",
            "∇xᵢ = r·[gᵢ − (Σg + x\u{302}ᵢ·Σg·x\u{302})/m]，g = γ⊙∇y",
        ),
        (
            "slides / paper form",
            "slides / 论文写法",
            "∇xᵢ = gᵢ/σ + αᵢ·Σg + βᵢ·Σg·x,   αᵢ = ((xᵢ−μ)μ − σ²)/(mσ³),   βᵢ = (μ − xᵢ)/(mσ³)",
            "∇xᵢ = gᵢ/σ + αᵢ·Σg + βᵢ·Σg·x，αᵢ = ((xᵢ−μ)μ − σ²)/(mσ³)，βᵢ = (μ − xᵢ)/(mσ³)",
        ),
        (
            "reverse mode (reference)",
            "反向模式（参考）",
            "the forward as 7 ops, each differentiated in turn, in f64",
            "把前向拆成 7 步，逐步求导，用 f64",
        ),
        (
            "∇γ, ∇β",
            "∇γ、∇β",
            "∇γⱼ = Σ_rows ∇y·x\u{302},   ∇βⱼ = Σ_rows ∇y",
            "∇γⱼ = Σ_rows ∇y·x\u{302}，∇βⱼ = Σ_rows ∇y",
        ),
    ];
    let rows: Vec<(&str, &str)> = rows
        .iter()
        .map(|(en, zh, f_en, f_zh)| (tr(ui, en, zh), tr(ui, f_en, f_zh)))
        .collect();
    widgets::definitions(ui, &rows);
}

/// The bars of one precision: ∇x by each form, then ∇γ and ∇β.
fn group(ui: &egui::Ui, d: &DtypeDiffs) -> BarGroup {
    BarGroup {
        name: trf!(
            ui,
            "{} (u = {})",
            "{}（u = {}）",
            d.dtype.name(),
            format_sig4(d.dtype.unit_roundoff())
        ),
        bars: [
            d.max_abs_diff_hw4,
            d.max_abs_diff_slides,
            d.max_abs_diff_dgamma,
            d.max_abs_diff_dbeta,
        ]
        .into_iter()
        .enumerate()
        .map(|(series, v)| Bar {
            series,
            value: v,
            range: None,
            text: diff_text(ui, v),
        })
        .collect(),
    }
}

/// `layernorm-formulas`.
fn draw(ui: &mut egui::Ui, o: &FormulasOutput, values: &ParamValues) {
    let (rows, cols) = (
        values.usize("rows").unwrap_or(o.mu.len()),
        values.usize("cols").unwrap_or(o.dgamma.len()),
    );
    marks::label(
        ui,
        trf!(
            ui,
            "{} rows × {} columns, {}: the HW4 form is within {} of reverse mode, the slides form within {}.",
            "{} 行 × {} 列，{}：HW4 写法与反向模式相差不超过 {}，slides 写法不超过 {}。",
            rows,
            cols,
            o.dtype.name(),
            diff_text(ui, o.max_abs_diff_hw4),
            diff_text(ui, o.max_abs_diff_slides)
        ),
    );
    ui.add_space(4.0);
    formulas(ui);
    ui.add_space(8.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Largest |difference| from the f64 reverse-mode reference, per precision (log scale)",
            "与 f64 反向模式参考值的最大 |差|，按精度（对数坐标）",
        ))
        .strong(),
    );
    let series = [
        (tr(ui, "∇x, HW4 form", "∇x，HW4 写法"), widgets::BLUE),
        (
            tr(ui, "∇x, slides / paper form", "∇x，slides / 论文写法"),
            widgets::VERMILLION,
        ),
        ("∇γ", widgets::GREEN),
        ("∇β", widgets::ORANGE),
    ]
    .map(|(name, colour)| Series {
        name: name.to_owned(),
        colour,
    });
    let groups: Vec<BarGroup> = o.by_dtype.iter().map(|d| group(ui, d)).collect();
    widgets::grouped_bars(
        ui,
        &groups,
        &series,
        Scale::Log,
        tr(
            ui,
            "max |form − reference| over all elements (∇x, ∇γ, ∇β are O(1) here)",
            "所有元素上的最大 |写法 − 参考|（这里 ∇x、∇γ、∇β 的量级为 1）",
        ),
    );
    // What the numbers mean, from the numbers: the largest ∇x difference of each precision in
    // units of its roundoff.
    let in_u = |d: &DtypeDiffs| {
        format_sig4(d.max_abs_diff_hw4.max(d.max_abs_diff_slides) / d.dtype.unit_roundoff())
    };
    let [f64d, f32d, f16d, bf16d] = [0, 1, 2, 3].map(|i| o.by_dtype.get(i));
    if let (Some(a), Some(b), Some(c), Some(d)) = (f64d, f32d, f16d, bf16d) {
        marks::label(
            ui,
            trf!(
                ui,
                "Both forms are the same function, so a bar measures rounding alone: each precision's largest ∇x difference is {}× (f64), {}× (f32), {}× (f16) and {}× (bf16) its own unit roundoff u — set by the precision the numbers are stored in, not by which form computes them.",
                "两种写法是同一个函数，所以柱子只反映舍入：各精度的 ∇x 最大差分别是各自单位舍入 u 的 {} 倍（f64）、{} 倍（f32）、{} 倍（f16）和 {} 倍（bf16）——取决于数存成什么精度，而不是用哪种写法计算。",
                in_u(a),
                in_u(b),
                in_u(c),
                in_u(d)
            ),
        );
    }
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Each precision rounds the inputs to its storage type first and the reference is computed in f64 on those rounded inputs, so the differences are the arithmetic's, not the data's. f16, bf16: that storage, f32 arithmetic.",
            "每种精度先把输入舍入到它的存储类型，参考值在这些舍入后的输入上用 f64 计算，所以差值来自运算，而不是数据本身。f16、bf16：该类型存储、f32 计算。",
        ))
        .small(),
    );
}

/// Four significant digits.
fn format_sig4(v: f64) -> String {
    format_sig(v, 4)
}
