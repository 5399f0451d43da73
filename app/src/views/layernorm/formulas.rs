//! `layernorm-formulas`: the two closed forms of ∇x and reverse mode, written out, and each
//! form's error against the f64 reference in f64, f32 and f16 as bars on a log axis.

use crate::i18n::tr;
use crate::trf;
use crate::views::{View, ViewContext};
use crate::widgets::{self, Bar, BarGroup, Scale, Series, format_sig, marks};
use warpscope_core::Error;
use warpscope_core::layernorm::formulas::{DtypeDiffs, FormulasOutput, FormulasParams};
use warpscope_core::params::ParamValues;
use warpscope_core::scene::Scene;

/// The `layernorm-formulas` view.
#[derive(Debug, Clone, Default)]
pub struct FormulasView;

impl View for FormulasView {
    const SCENE: &'static str = "layernorm-formulas";
    type Output = FormulasOutput;

    fn compute(_scene: &'static Scene, values: &ParamValues) -> Result<Self::Output, Error> {
        warpscope_core::layernorm::formulas::run(&FormulasParams::from_values(values)?)
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Self::Output, cx: &mut ViewContext<'_>) {
        draw(ui, out, cx.values);
    }
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
    let [f64d, f32d, f16d] = [0, 1, 2].map(|i| o.by_dtype.get(i));
    if let (Some(a), Some(b), Some(c)) = (f64d, f32d, f16d) {
        marks::label(
            ui,
            trf!(
                ui,
                "Both forms are the same function, so a bar measures rounding alone: each precision's largest ∇x difference is {}× (f64), {}× (f32) and {}× (f16) its own unit roundoff u — set by the precision the numbers are stored in, not by which form computes them.",
                "两种写法是同一个函数，所以柱子只反映舍入：各精度的 ∇x 最大差分别是各自单位舍入 u 的 {} 倍（f64）、{} 倍（f32）和 {} 倍（f16）——取决于数存成什么精度，而不是用哪种写法计算。",
                in_u(a),
                in_u(b),
                in_u(c)
            ),
        );
    }
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Each precision rounds the inputs to its storage type first and the reference is computed in f64 on those rounded inputs, so the differences are the arithmetic's, not the data's. f16: f16 storage, f32 arithmetic.",
            "每种精度先把输入舍入到它的存储类型，参考值在这些舍入后的输入上用 f64 计算，所以差值来自运算，而不是数据本身。f16：f16 存储、f32 计算。",
        ))
        .small(),
    );
}

/// Four significant digits.
fn format_sig4(v: f64) -> String {
    format_sig(v, 4)
}
