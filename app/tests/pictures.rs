//! The pictures of layernorm-formulas, softmax-formula, softmax-saved and trainer-timing, read
//! back from the window: what they say (accessibility tree) and what they paint (the frame's
//! text shapes), checked against numbers worked out by hand from the rules.

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use egui::accesskit::Role;
use egui::epaint::{ClippedShape, Shape};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope::gui::WarpscopeApp;

fn harness(scene: &str, zh: bool) -> Harness<'static, WarpscopeApp> {
    let mut app = WarpscopeApp::new(Some(scene));
    app.synchronous = true;
    app.zh = zh;
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app);
    h.run();
    h
}

/// The text of every text shape painted in the last frame.
fn painted(h: &Harness<'_, WarpscopeApp>) -> Vec<String> {
    fn walk(s: &Shape, out: &mut Vec<String>) {
        match s {
            Shape::Vec(v) => v.iter().for_each(|s| walk(s, out)),
            Shape::Text(t) => out.push(t.galley.text().to_owned()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for ClippedShape { shape, .. } in &h.output().shapes {
        walk(shape, &mut out);
    }
    out
}

fn assert_painted(h: &Harness<'_, WarpscopeApp>, text: &str) {
    let all = painted(h);
    assert!(
        all.iter().any(|t| t.contains(text)),
        "`{text}` is not painted; painted: {all:?}"
    );
}

#[test]
fn every_scene_has_a_picture_of_its_own() {
    for s in warpscope_core::scene::scenes() {
        assert_eq!(
            warpscope::views::entry(s.id).scene,
            s.id,
            "{} has no view of its own",
            s.id
        );
    }
}

#[test]
fn softmax_saved_sizes_by_hand() {
    // Lecture shape B = 8, h = 16, L = 512, y in f16: 8·16·512² = 2²⁵ = 33554432 scores;
    // y 2 B each = 64 MiB, the byte mask 32 MiB, the bit mask 4 MiB, the seed 8 B, the
    // log-sum-exp 8·16·512 rows × 4 B = 256 KiB.
    let h = harness("softmax-saved", false);
    h.get_by_label_contains("= 33554432 score elements");
    h.get_by_label_contains("y (64 MiB in f16)");
    h.get_by_label_contains("the mask M (32 MiB at a byte per element)");
    // Bars: 64 + 32 = 96 MiB (100%); 64 + 4 = 68 MiB (68/96 = 70.8%); 64 MiB + 8 B, 66.7%;
    // 256 KiB + 8 B of 96 MiB = 0.26%.
    assert_painted(&h, "96 MiB · 100%");
    assert_painted(&h, "68 MiB · 70.8%");
    assert_painted(&h, "64 MiB · 66.7%");
    assert_painted(&h, "256 KiB · 0.26%");
    // The parts: y and the byte mask labelled inside; the bit mask after its bar.
    assert_painted(&h, "64 MiB");
    assert_painted(&h, "32 MiB");
    assert_painted(&h, "+ bit mask 4 MiB");
    // Doubling L: scores (and y, masks) ×4, rows (the log-sum-exp) ×2; the seed stays 8 B.
    h.get_by_label_contains(
        "Doubling L to 1024 multiplies y and the masks by 4 but FlashAttention's log-sum-exp by 2",
    );
    h.get_by_label_contains("the seed stays 8 B");
    // In Chinese the scheme names and what the backward redoes are translated.
    let h = harness("softmax-saved", true);
    h.get_by_label_contains("反向要重做：用种子重新生成 dropout 掩码");
    assert_painted(&h, "y + 位掩码");
}

#[test]
fn softmax_formula_costs_by_hand_and_follow_the_length() {
    // L = 64: the formula 2L + 2L = 256 FLOPs and y = 8·64 = 512 B; the Jacobian product
    // 2·64² = 8192 FLOPs and J = 8·64² = 32768 B = 32 KiB: 32× and 64× (L/2 and L).
    let mut h = harness("softmax-formula", false);
    h.get_by_label_contains(
        "At L = 64: the formula needs 256 FLOPs and 512 B (y); the Jacobian product 8192 FLOPs and 32 KiB (J) — 32× the FLOPs and 64× the bytes",
    );
    // L = 128: 512 FLOPs, 1 KiB; 32768 FLOPs, 128 KiB; 64× and 128×.
    h.get_by_role_and_label(Role::Slider, "row length L")
        .set_value_accesskit(128.0);
    h.run();
    h.get_by_label_contains(
        "At L = 128: the formula needs 512 FLOPs and 1 KiB (y); the Jacobian product 32768 FLOPs and 128 KiB (J) — 64× the FLOPs and 128× the bytes",
    );
    // Both precisions are drawn, and every bar says its value.
    assert_painted(&h, "f64");
    assert_painted(&h, "f32");
    assert_painted(&h, "formula vs Jacobian");
}

#[test]
fn layernorm_formulas_bars_per_precision() {
    let h = harness("layernorm-formulas", false);
    // Each precision's unit roundoff, by hand: 2⁻⁵³ = 1.110e-16, 2⁻²⁴ = 5.960e-8,
    // 2⁻¹¹ = 4.883e-4, 2⁻⁸ = 0.00390625.
    assert_painted(&h, "f64 (u = 1.110e-16)");
    assert_painted(&h, "f32 (u = 5.960e-8)");
    assert_painted(&h, "f16 (u = 4.883e-4)");
    assert_painted(&h, "bf16 (u = 0.003906)");
    // ∇β = Σ_rows ∇y sums the same f64 numbers in the same order as the reference: exactly 0.
    assert_painted(&h, "exactly 0");
    // The formulas are written out, x̂ with its mark (the accessibility text keeps it).
    h.get_by_label_contains("∇xᵢ = r·[gᵢ − (Σg + x\u{302}ᵢ·Σg·x\u{302})/m]");
    h.get_by_label_contains("αᵢ = ((xᵢ−μ)μ − σ²)/(mσ³)");
    // What the numbers mean: each precision's error in units of its own roundoff. Rounding of
    // a few dozen operations on O(1) numbers: more than 0, well under a thousand u.
    let node = h.get_by_label_contains("its own unit roundoff u");
    let text = node.value().unwrap_or_default();
    let multiples: Vec<f64> = text
        .split('×')
        .filter_map(|s| s.rsplit(' ').next().and_then(|n| n.parse().ok()))
        .collect();
    assert_eq!(multiples.len(), 4, "{text}");
    for m in multiples {
        assert!(m > 0.0 && m < 1000.0, "{m} u in {text}");
    }
}

#[test]
fn trainer_timing_explains_itself_in_words() {
    let h = harness("trainer-timing", false);
    // Transformer-big's census: 257 tensors; Adam in f32 reads p, g, m, v and writes p, m, v:
    // 7 × 4 = 28 bytes per parameter.
    h.get_by_label_contains("transformer-big: 257 tensors");
    h.get_by_label_contains("(28 B per parameter in f32");
    // The per-call cost is either resolved or said to be below the resolution — in words.
    let resolved = h.query_all_by_label_contains("µs per call").count() == 1;
    let unresolved = h
        .query_all_by_label_contains("costs less than this measurement can resolve")
        .count()
        == 1;
    assert!(
        resolved != unresolved,
        "exactly one of the two explanations"
    );
    // Three bars, each with its median and range in ms and its bandwidth.
    let bars = painted(&h)
        .into_iter()
        .filter(|t| t.contains(" ms (") && t.ends_with(" GB/s"))
        .count();
    assert_eq!(bars, 3);
    // Never a raw boolean on screen.
    for t in painted(&h) {
        assert!(
            !t.contains("true") && !t.contains("false"),
            "a boolean is painted: {t}"
        );
    }
}
