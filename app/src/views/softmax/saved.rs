//! `softmax-saved`: what the forward keeps for softmax and dropout backward — each scheme's
//! bytes at the chosen L as stacked bars (y, byte mask, bit mask, seed, log-sum-exp), and each
//! scheme's total over L (log-log: L² against L against a constant).

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::{self, Series, StackedBar, byte_unit, bytes_text, format_sig};
use warpscope_core::params::ParamValues;
use warpscope_core::softmax::saved::{SavedOutput, SavedSizes, Scheme};

/// The `softmax-saved` view.
#[derive(Debug, Clone, Default)]
pub struct SavedView;

impl View for SavedView {
    type Scene = warpscope_core::softmax::saved::SavedScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, cx: &mut ViewContext<'_>) {
        draw(ui, out, cx.values);
    }
}

/// The parts a scheme keeps (series of the stacked chart).
const Y: usize = 0;
const MASK: usize = 1;
const BITS: usize = 2;
const SEED: usize = 3;
const LSE: usize = 4;

/// A scheme's name and what its backward redoes, in the language of `ui` (core names them in
/// English; the four are a fixed vocabulary).
fn scheme_text<'a>(ui: &egui::Ui, s: &'a Scheme) -> (&'a str, &'a str) {
    let name = match s.name {
        "y + byte mask" => tr(ui, s.name, "y + 字节掩码"),
        "y + bit mask" => tr(ui, s.name, "y + 位掩码"),
        "y + RNG seed" => tr(ui, s.name, "y + 随机种子"),
        "log-sum-exp + RNG seed (FlashAttention)" => {
            tr(ui, s.name, "log-sum-exp + 随机种子（FlashAttention）")
        }
        other => other,
    };
    let redo = match s.recompute {
        "nothing" => tr(ui, s.recompute, "无"),
        "unpack mask bits" => tr(ui, s.recompute, "解包掩码位"),
        "regenerate the dropout mask from the seed" => {
            tr(ui, s.recompute, "用种子重新生成 dropout 掩码")
        }
        "recompute y = exp(QKᵀ/√d − lse) tile by tile, and the mask" => {
            tr(ui, s.recompute, "逐块重算 y = exp(QKᵀ/√d − lse)，以及掩码")
        }
        other => other,
    };
    (name, redo)
}

/// A scheme's name short enough for a chart's name column.
fn short_name<'a>(ui: &egui::Ui, s: &'a Scheme) -> &'a str {
    match s.name {
        "log-sum-exp + RNG seed (FlashAttention)" => tr(
            ui,
            "FlashAttention: lse + seed",
            "FlashAttention：lse + 种子",
        ),
        _ => scheme_text(ui, s).0,
    }
}

/// The parts of scheme `i` (in core's order) at sizes `z`: (series, bytes).
fn parts(i: usize, z: &SavedSizes) -> Vec<(usize, u64)> {
    match i {
        0 => vec![(Y, z.y_bytes), (MASK, z.mask_bytes)],
        1 => vec![(Y, z.y_bytes), (BITS, z.bitmask_bytes)],
        2 => vec![(Y, z.y_bytes), (SEED, z.seed_bytes)],
        _ => vec![(LSE, z.lse_bytes), (SEED, z.seed_bytes)],
    }
}

/// `softmax-saved`.
fn draw(ui: &mut egui::Ui, o: &SavedOutput, values: &ParamValues) {
    let (batch, heads, len) = (
        values.int("batch").unwrap_or(0),
        values.int("heads").unwrap_or(0),
        values.int("len").unwrap_or(0),
    );
    let dtype = values.text("dtype").unwrap_or("f16").to_owned();
    let len = u64::try_from(len).unwrap_or(0);
    ui.label(trf!(
        ui,
        "B·h·L·L = {}·{}·{}·{} = {} score elements per attention layer. Softmax backward needs y ({} in {}), dropout backward the mask M ({} at a byte per element): both grow with L².",
        "B·h·L·L = {}·{}·{}·{} = {} 个分数元素（每个注意力层）。softmax 反向需要 y（{}，{}），dropout 反向需要掩码 M（每元素一个字节，{}）：两者都随 L² 增长。",
        batch,
        heads,
        len,
        len,
        o.elements,
        bytes_text(o.y_bytes),
        dtype,
        bytes_text(o.mask_bytes)
    ));
    let series = [
        (
            tr(ui, "y (softmax output)", "y（softmax 输出）"),
            widgets::BLUE,
        ),
        (
            tr(ui, "byte mask (1 B / element)", "字节掩码（每元素 1 B）"),
            widgets::ORANGE,
        ),
        (
            tr(ui, "bit mask (1 bit / element)", "位掩码（每元素 1 位）"),
            widgets::GREEN,
        ),
        (tr(ui, "RNG seed", "随机种子"), widgets::VERMILLION),
        (
            tr(ui, "row log-sum-exp (f32 / row)", "每行 log-sum-exp（f32）"),
            widgets::SKY,
        ),
    ]
    .map(|(name, colour)| Series {
        name: name.to_owned(),
        colour,
    });
    let baseline = o.schemes.first().map_or(0, |s| s.bytes);
    let (unit_name, unit) = byte_unit(baseline as f64);
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "What each scheme keeps at L = {} ({})",
            "每种方案在 L = {} 时保存的字节（{}）",
            len,
            unit_name
        ))
        .strong(),
    );
    let here = o.sweep.iter().find(|z| z.len == len);
    let stacked: Vec<StackedBar> = o
        .schemes
        .iter()
        .enumerate()
        .map(|(i, s)| StackedBar {
            name: short_name(ui, s).to_owned(),
            parts: here
                .map(|z| parts(i, z))
                .unwrap_or_default()
                .into_iter()
                .map(|(k, b)| (k, b as f64 / unit))
                .collect(),
            text: trf!(
                ui,
                "{} · {}%",
                "{} · {}%",
                bytes_text(s.bytes),
                format_sig(100.0 * s.fraction_of_baseline, 3)
            ),
        })
        .collect();
    let amount = |v: f64| bytes_text((v * unit).round() as u64);
    widgets::stacked_bars(
        ui,
        &stacked,
        &series,
        &amount,
        &trf!(ui, "bytes kept, {}", "保存的字节数，{}", unit_name),
    );
    // What each scheme costs the backward.
    let redo: Vec<(String, String)> = o
        .schemes
        .iter()
        .map(|s| {
            let (name, redo) = scheme_text(ui, s);
            (
                name.to_owned(),
                trf!(ui, "the backward redoes: {}", "反向要重做：{}", redo),
            )
        })
        .collect();
    let rows: Vec<(&str, &str)> = redo.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    widgets::definitions(ui, &rows);
    ui.add_space(6.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Each scheme's total as L grows (log-log)",
            "每种方案的总字节数随 L 增长（双对数坐标）",
        ))
        .strong(),
    );
    let colours = [
        widgets::BLUE,
        widgets::GREEN,
        widgets::VERMILLION,
        widgets::SKY,
    ];
    let mut lines: Vec<(String, Vec<[f64; 2]>, egui::Color32)> = o
        .schemes
        .iter()
        .zip(colours)
        .enumerate()
        .map(|(i, (s, colour))| {
            let pts = o
                .sweep
                .iter()
                .map(|z| {
                    [
                        z.len as f64,
                        parts(i, z).iter().map(|p| p.1).sum::<u64>() as f64,
                    ]
                })
                .collect();
            (short_name(ui, s).to_owned(), pts, colour)
        })
        .collect();
    if let Some(z) = here {
        let at = (0..o.schemes.len())
            .map(|i| {
                [
                    z.len as f64,
                    parts(i, z).iter().map(|p| p.1).sum::<u64>() as f64,
                ]
            })
            .collect();
        lines.push((format!("L = {len}"), at, widgets::GREY));
    }
    let legend: Vec<Series> = lines
        .iter()
        .map(|(name, _, colour)| Series {
            name: name.clone(),
            colour: *colour,
        })
        .collect();
    widgets::legend(ui, &legend);
    let refs: Vec<(&str, Vec<[f64; 2]>, egui::Color32)> = lines
        .iter()
        .map(|(n, p, c)| (n.as_str(), p.clone(), *c))
        .collect();
    widgets::log_log_plot_coloured(
        ui,
        "saved-by-len",
        &refs,
        tr(ui, "sequence length L", "序列长度 L"),
        tr(ui, "bytes kept", "保存的字节数"),
        None,
    );
    // The growth, read off the sweep: y at 2L against y at L.
    let double = o.sweep.iter().find(|z| z.len == 2 * len);
    if let (Some(a), Some(b)) = (here, double)
        && a.y_bytes > 0
        && a.lse_bytes > 0
    {
        ui.label(trf!(
            ui,
            "Doubling L to {} multiplies y and the masks by {} but FlashAttention's log-sum-exp by {}: it keeps one number per row, not per score; the seed stays {}.",
            "L 翻倍到 {} 时，y 和掩码乘以 {}，FlashAttention 的 log-sum-exp 只乘以 {}：它每行只存一个数，而不是每个分数一个；种子始终是 {}。",
            b.len,
            format_sig(b.y_bytes as f64 / a.y_bytes as f64, 3),
            format_sig(b.lse_bytes as f64 / a.lse_bytes as f64, 3),
            bytes_text(a.seed_bytes)
        ));
    }
}
