//! The bank grid: which of the 32 shared-memory banks each lane of a request hits, and its
//! wavefronts.

use super::palette::{GREEN, GREY, VERMILLION};
use crate::i18n::tr;
use crate::trf;
use egui::{Color32, FontId, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};
use warpscope_core::simt::shared::SharedCost;

/// The bank × word grid of one shared-memory request: columns are the 32 banks, rows the
/// 128-byte lines the request touches; each touched word shows the lanes that read it, red
/// where its bank must serve more than one distinct word (a conflict), green otherwise.
pub fn bank_grid(ui: &mut egui::Ui, cost: &SharedCost, banks: u32) {
    let banks = banks.max(1) as usize;
    let mut words: Vec<(u64, Vec<usize>)> = Vec::new();
    for (lane, w) in cost.lane_word.iter().enumerate() {
        if let Some(w) = w {
            match words.iter_mut().find(|(x, _)| x == w) {
                Some((_, lanes)) => lanes.push(lane),
                None => words.push((*w, vec![lane])),
            }
        }
    }
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
            FontId::proportional(9.0),
            text,
        );
    }
    let mut per_bank = vec![0usize; banks];
    for (w, _) in &words {
        per_bank[(*w % banks as u64) as usize] += 1;
    }
    for (row, line) in lines.iter().take(shown_lines).enumerate() {
        let y = rect.top() + ch * (row as f32 + 1.0);
        p.text(
            Pos2::new(rect.left(), y + ch * 0.5),
            egui::Align2::LEFT_CENTER,
            trf!(ui, "word {}", "字 {}", line * banks as u64),
            FontId::proportional(9.0),
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
                let col = if per_bank.get(b).is_some_and(|&n| n > 1) {
                    VERMILLION
                } else {
                    GREEN
                };
                p.rect_filled(cell.shrink(1.0), 2.0, col);
                let label = if lanes.len() == 1 {
                    lanes[0].to_string()
                } else {
                    format!("{}×", lanes.len())
                };
                p.text(
                    cell.center(),
                    egui::Align2::CENTER_CENTER,
                    label,
                    FontId::proportional(9.0),
                    Color32::WHITE,
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
        "Columns: banks (4-byte words, bank = word mod 32). A cell: a word the request reads, labelled with its lane (or n× when n lanes share it — a broadcast). Red: that bank serves more than one distinct word, so the request needs more wavefronts.",
        "列：bank（4 字节一个字，bank = 字号 mod 32）。格子：这次请求读的一个字，标着读它的线程（n 个线程共用时标 n×，即广播）。红色：这个 bank 要服务不止一个不同的字，请求就要更多轮。",
    );
    resp.on_hover_text(hover);
}
