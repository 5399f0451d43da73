//! The bank grid: which of the 32 shared-memory banks each lane of a request hits, and its
//! wavefronts.

use super::palette::{GREEN, GREY, VERMILLION};
use crate::i18n::tr;
use crate::trf;
use egui::{Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};
use warpscope_core::simt::shared::SharedCost;

/// The bank × word grid of one shared-memory request: columns are the 32 banks, rows the
/// 128-byte lines the request touches; each touched word shows the lanes that read it, red
/// where its bank must serve more than one distinct word (a conflict), green otherwise.
pub fn bank_grid(ui: &mut egui::Ui, cost: &SharedCost, banks: u32) {
    let banks = banks.max(1) as usize;
    let cells = cells(cost, banks);
    let words: Vec<(u64, Vec<usize>)> = cells.iter().map(|c| (c.0, c.1.clone())).collect();
    let mut lines: Vec<u64> = words.iter().map(|(w, _)| w / banks as u64).collect();
    lines.sort_unstable();
    lines.dedup();
    let shown_lines = lines.len().min(32);
    let width = ui.available_width().max(200.0);
    let cw = width / (banks as f32 + 2.5);
    let ch = 18.0;
    let (rect, resp) = ui.allocate_exact_size(
        Vec2::new(width, ch * (shown_lines as f32 + 1.0) + 4.0),
        Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let left = rect.left() + 2.5 * cw;
    for b in 0..banks {
        p.text(
            Pos2::new(left + (b as f32 + 0.5) * cw, rect.top() + ch * 0.5),
            egui::Align2::CENTER_CENTER,
            b.to_string(),
            crate::theme::label_font(ui.ctx(), 9.0),
            text,
        );
    }
    for (row, line) in lines.iter().take(shown_lines).enumerate() {
        let y = rect.top() + ch * (row as f32 + 1.0);
        p.text(
            Pos2::new(rect.left(), y + ch * 0.5),
            egui::Align2::LEFT_CENTER,
            trf!(ui, "word {}", "字 {}", line * banks as u64),
            crate::theme::label_font(ui.ctx(), 9.0),
            text,
        );
        for b in 0..banks {
            let cell = Rect::from_min_size(Pos2::new(left + b as f32 * cw, y), Vec2::new(cw, ch));
            p.rect_stroke(
                cell,
                0.0,
                Stroke::new(0.5, GREY.gamma_multiply(0.5)),
                StrokeKind::Inside,
            );
            let word = line * banks as u64 + b as u64;
            if let Some((_, lanes)) = words.iter().find(|(w, _)| *w == word) {
                let col = if cells.iter().any(|c| c.0 == word && c.2) {
                    VERMILLION
                } else {
                    GREEN
                };
                p.rect_filled(cell.shrink(1.0), 2.0, col);
                let label = if let [only] = lanes.as_slice() {
                    only.to_string()
                } else {
                    format!("{}×", lanes.len())
                };
                p.text(
                    cell.center(),
                    egui::Align2::CENTER_CENTER,
                    label,
                    crate::theme::label_font(ui.ctx(), 9.0),
                    super::palette::text_on(col),
                );
            }
        }
    }
    if lines.len() > shown_lines {
        ui.label(trf!(
            ui,
            "… {} more 128-byte lines not drawn",
            "… 另有 {} 行（每行 128 字节）没有画出",
            lines.len() - shown_lines
        ));
    }
    let hover = tr(
        ui,
        "Columns: banks (4-byte words, bank = word mod 32). A cell: a word the request reads, labelled with its lane (or n× when n lanes share it — a broadcast). Red: in a group of lanes served together (the warp; a half-warp for 8-byte and a quarter-warp for 16-byte elements) that bank serves more than one distinct word, so the request needs more wavefronts.",
        "列：bank（4 字节一个字，bank = 字号 mod 32）。格子：这次请求读的一个字，标着读它的线程（n 个线程共用时标 n×，即广播）。红色：在一起服务的一组线程里（整个线程束；8 字节的元素按半个线程束，16 字节的按四分之一个线程束），这个 bank 要服务不止一个不同的字，请求就要更多轮。",
    );
    resp.on_hover_text(hover);
}

/// Every word a request reads (an 8- or 16-byte element spans 2 or 4 banks) with the lanes that
/// read it, and whether it is in conflict: in a group of lanes served together (the warp; a
/// half-warp for 8-byte and a quarter-warp for 16-byte elements) its bank also serves another
/// distinct word. `banks` is the number of banks (32).
pub fn cells(cost: &SharedCost, banks: usize) -> Vec<(u64, Vec<usize>, bool)> {
    let banks = banks.max(1) as u64;
    let group = cost.group_lanes.max(1) as usize;
    let span = u64::from(cost.lane_words.max(1));
    let mut words: Vec<(u64, Vec<usize>)> = Vec::new();
    for (lane, w) in cost.lane_word.iter().enumerate() {
        let Some(first) = w else { continue };
        for w in *first..*first + span {
            match words.iter_mut().find(|(x, _)| *x == w) {
                Some((_, lanes)) => lanes.push(lane),
                None => words.push((w, vec![lane])),
            }
        }
    }
    words
        .iter()
        .map(|(word, lanes)| {
            let conflict = lanes.iter().any(|&l| {
                words.iter().any(|(other, ls)| {
                    other != word
                        && other % banks == word % banks
                        && ls.iter().any(|&m| m / group == l / group)
                })
            });
            (*word, lanes.clone(), conflict)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpscope_core::simt::shared::BankConfig;

    fn request(addr: impl Fn(u64) -> u64, width: u32) -> SharedCost {
        let a: Vec<_> = (0..32).map(|l| Some(addr(l))).collect();
        BankConfig::default().request(&a, width).expect("aligned")
    }

    #[test]
    fn an_8_byte_row_read_marks_both_banks_of_each_element_and_no_conflict() {
        // Lane l reads bytes 8l..8l+8: words 2l and 2l+1. Half-warp 0 covers words 0..32 (each
        // bank once), half-warp 1 words 32..64: no bank serves two words within a half-warp.
        let c = cells(&request(|l| 8 * l, 8), 32);
        assert_eq!(c.len(), 64);
        assert!(
            c.iter()
                .all(|(_, lanes, conflict)| lanes.len() == 1 && !conflict)
        );
        assert!(c.iter().any(|(w, lanes, _)| *w == 1 && lanes == &[0]));
    }

    #[test]
    fn a_column_read_of_a_32_wide_float_array_conflicts_in_bank_0() {
        // a[32][32] floats, column 0: lane l reads word 32l, all in bank 0 — 32 distinct words.
        let c = cells(&request(|l| 128 * l, 4), 32);
        assert_eq!(c.len(), 32);
        assert!(c.iter().all(|(w, _, conflict)| w % 32 == 0 && *conflict));
        // Padding the row to 33 floats spreads them over all 32 banks.
        let c = cells(&request(|l| 132 * l, 4), 32);
        assert!(c.iter().all(|(_, _, conflict)| !conflict));
    }
}
