//! Text that survives the window: the hat of x̂ (egui draws no combining marks, so
//! `widgets::marks` paints it) and the butterfly's values once the window is narrow or the
//! parameter panel was pushed wide. Painted shapes are read from the frame's output (no GPU);
//! the hat is also checked on rendered pixels when a wgpu adapter exists (lavapipe in CI).

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use egui::accesskit::Role;
use egui::epaint::{ClippedShape, Shape, TextShape};
use egui::{Pos2, Rect};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope::gui::WarpscopeApp;

fn harness(scene: &str, w: f32, h: f32, wgpu: bool) -> Harness<'static, WarpscopeApp> {
    let mut app = WarpscopeApp::new(Some(scene));
    app.synchronous = true;
    let b = Harness::builder().with_size(egui::vec2(w, h));
    let b = if wgpu { b.wgpu() } else { b };
    let mut h = b.build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app);
    h.run();
    h
}

/// Every shape of the last frame, nested ones flattened.
fn shapes<S>(h: &Harness<'_, S>) -> Vec<Shape> {
    fn flat(s: &Shape, out: &mut Vec<Shape>) {
        match s {
            Shape::Vec(v) => v.iter().for_each(|s| flat(s, out)),
            other => out.push(other.clone()),
        }
    }
    let mut out = Vec::new();
    for ClippedShape { shape, .. } in &h.output().shapes {
        flat(shape, &mut out);
    }
    out
}

fn texts(shapes: &[Shape]) -> Vec<&TextShape> {
    shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Text(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// Each glyph `c` painted: (centre x, baseline y, font size).
fn glyphs_of(texts: &[&TextShape], c: char) -> Vec<(f32, f32, f32)> {
    let mut out = Vec::new();
    for t in texts {
        let size = t
            .galley
            .job
            .sections
            .first()
            .map_or(12.0, |s| s.format.font_id.size);
        for row in &t.galley.rows {
            for g in &row.row.glyphs {
                if g.chr == c {
                    out.push((
                        t.pos.x + row.pos.x + g.pos.x + g.advance_width / 2.0,
                        t.pos.y + row.pos.y + g.pos.y,
                        size,
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn every_x_hat_of_the_syncs_graphs_gets_a_hat_over_an_x() {
    let mut h = harness("layernorm-syncs", 1400.0, 900.0, false);
    h.run();
    let all = shapes(&h);
    let texts = texts(&all);
    // The hat is painted as the spacing circumflex U+02C6, a text of its own.
    let hats: Vec<(f32, f32)> = texts
        .iter()
        .filter(|t| t.galley.text() == "\u{2C6}")
        .map(|t| {
            let r = t.visual_bounding_rect();
            (r.center().x, r.bottom())
        })
        .collect();
    let xs = glyphs_of(&texts, 'x');
    // Counted from the strings core gives the graphs: one hat per x̂.
    let o = warpscope_core::layernorm::syncs::run(
        &warpscope_core::layernorm::syncs::SyncsParams::from_values(
            &warpscope_core::scene::find("layernorm-syncs")
                .unwrap()
                .defaults(),
        )
        .unwrap(),
    )
    .unwrap();
    let in_graphs: usize = [&o.autograd_graph, &o.fused_graph]
        .iter()
        .flat_map(|g| &g.nodes)
        .map(|n| n.label.en.matches("x\u{302}").count())
        .sum();
    assert!(in_graphs >= 6, "the graphs name x̂ ({in_graphs})");
    assert!(
        hats.len() >= in_graphs,
        "{} hats for {in_graphs} x̂",
        hats.len()
    );
    // Each sits over an x: centred on it within a point and a half, its ink ending above the
    // x-height (half the font size over the baseline; Ubuntu's x-height is 0.52 em).
    for (hx, hb) in &hats {
        assert!(
            xs.iter()
                .any(|(x, base, size)| (x - hx).abs() < 1.5 && *hb < base - 0.45 * size),
            "a hat at ({hx}, {hb}) over no x"
        );
    }
    // No combining mark reaches egui, which would drop it.
    for t in &texts {
        assert!(
            !t.galley
                .text()
                .chars()
                .any(|c| ('\u{300}'..='\u{36F}').contains(&c)),
            "{:?}",
            t.galley.text()
        );
    }
    // The accessibility tree keeps the mark: the explanation reads Σg·x̂.
    h.get_by_label_contains("Σg and Σg·x\u{302} in one tree");
}

/// Whether a wgpu adapter exists; in CI its absence is a failure, elsewhere a skip.
fn adapter_or_skip() -> bool {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let found = !pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all())).is_empty();
    if !found {
        assert!(
            !warpscope_kernels::adapter_required(),
            "CI must provide a GPU adapter (lavapipe)"
        );
        eprintln!("skipped: no adapter (no Vulkan/GL driver), nothing rendered");
    }
    found
}

#[test]
fn the_hat_of_x_hat_is_rendered_above_the_x() {
    if !adapter_or_skip() {
        return;
    }
    let mut h = harness("layernorm-syncs", 1400.0, 900.0, true);
    let with = h.render().expect("rendered");
    warpscope::widgets::marks::set_accents_drawn(&h.ctx, false);
    h.run();
    let without = h.render().expect("rendered");
    warpscope::widgets::marks::set_accents_drawn(&h.ctx, true);
    assert_eq!(with.dimensions(), without.dimensions());
    let ppp = with.width() as f32 / 1400.0;
    // The explanation: "… Rewrite: Σg and Σg·x̂ in one tree → …", one row of body text.
    let node = h.get_by_label_contains("Σg and Σg·x\u{302} in one tree");
    let label: Rect = node.rect();
    // A label's text is its accessibility value.
    let text = node.value().unwrap_or_default();
    let font = egui::TextStyle::Body.resolve(&h.ctx.global_style());
    assert!(
        label.height() < 2.0 * font.size,
        "one row: {label:?} at {} pt",
        font.size
    );
    // Where the x stands: the width of the text before it, laid out in the same font.
    let prefix: String = text.split("Σg·x\u{302}").next().unwrap_or("").to_owned() + "Σg·";
    let width = |s: &str| {
        h.ctx.fonts_mut(|f| {
            f.layout_no_wrap(s.to_owned(), font.clone(), egui::Color32::WHITE)
                .size()
                .x
        })
    };
    let x0 = label.left() + width(&prefix);
    let x1 = x0 + width("x");
    let px = |p: f32| (p * ppp).round() as u32;
    // Pixels of the label that differ with the hat and without it.
    let mut diff: Vec<(u32, u32)> = Vec::new();
    for y in px(label.top())..px(label.bottom()) {
        for x in px(label.left())..px(label.right()) {
            if with.get_pixel(x, y) != without.get_pixel(x, y) {
                diff.push((x, y));
            }
        }
    }
    assert!(diff.len() >= 4, "the hat is drawn: {} pixels", diff.len());
    // The x's own ink (without the hat): its top row.
    let bg = *without.get_pixel(px(label.right()) - 1, px(label.top()));
    let x_top = (px(label.top())..px(label.bottom()))
        .find(|&y| (px(x0)..=px(x1)).any(|x| *without.get_pixel(x, y) != bg))
        .expect("the x is drawn");
    for &(x, y) in &diff {
        assert!(
            x + 1 >= px(x0) && x <= px(x1) + 1,
            "a changed pixel at x = {x}, outside the letter's columns {}..{}",
            px(x0),
            px(x1)
        );
        assert!(
            y < x_top,
            "a changed pixel at y = {y}, not above the x (top {x_top})"
        );
    }
}

/// A painted value and how far it may be from the true value: half a unit of its last digit.
fn parse_value(s: &str) -> Option<(f64, f64)> {
    let v: f64 = s.replace('\u{2212}', "-").parse().ok()?;
    let (mantissa, exp) = match s.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (s, 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    Some((v, 0.5 * 10f64.powi(exp - decimals)))
}

/// Steps the window (computations run off the UI thread here, as in the real window) until
/// `scene` has a result and nothing is running; true when it did show the progress row.
fn wait_for(h: &mut Harness<'_, WarpscopeApp>, scene: &'static str) -> bool {
    let mut saw_progress = false;
    let start = std::time::Instant::now();
    // A value set by the test is applied in the next frame and its computation starts in the
    // one after (the window polls before it draws the parameter panel): step past both before
    // asking whether the scene is done, or the old result would answer.
    for _ in 0..3 {
        h.step();
        saw_progress |= h.query_by_label_contains("computing…").is_some();
    }
    loop {
        h.step();
        saw_progress |= h.query_by_label_contains("computing…").is_some();
        let s = h.state_mut().state(scene).expect("open");
        if s.computed.is_some() && s.running().is_none() {
            h.step();
            return saw_progress;
        }
        assert!(start.elapsed().as_secs() < 120, "{scene} never finished");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn butterfly_values_stay_after_the_parameter_panel_was_pushed_wide() {
    // The small window, where the butterfly's 32 lanes are narrowest; computations run off the
    // UI thread as in the real window, so the progress row (bar, time, Cancel) is drawn.
    let mut app = WarpscopeApp::new(Some("reduction"));
    app.synchronous = false;
    let mut h = Harness::builder()
        .with_size(egui::vec2(1024.0, 700.0))
        .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app);
    wait_for(&mut h, "reduction");
    let central_left = |h: &Harness<'_, WarpscopeApp>| {
        h.get_by_label_contains("§2.2 Reductions: warp butterfly")
            .rect()
            .left()
    };
    let params_left = |h: &Harness<'_, WarpscopeApp>| h.get_by_label("Parameters").rect().left();
    let before = central_left(&h);
    // What used to widen the panel for good: the progress row of a long computation, a long
    // value in a text field.
    h.get_by_label("§2.1 LayerNorm backward: HW4 form vs slides form vs autograd")
        .click();
    wait_for(&mut h, "layernorm-formulas");
    h.get_by_role_and_label(Role::Slider, "rows (tokens)")
        .set_value_accesskit(256.0);
    wait_for(&mut h, "layernorm-formulas");
    h.get_by_role_and_label(Role::Slider, "columns m (hidden size)")
        .set_value_accesskit(4096.0);
    assert!(
        wait_for(&mut h, "layernorm-formulas"),
        "the progress row was drawn"
    );
    h.get_by_label("§2.3 The numerical cost of the rewrite")
        .click();
    wait_for(&mut h, "layernorm-error");
    let field = "row means, comma-separated (0 ≤ mean ≤ 1e6)";
    h.get_by_role_and_label(Role::TextInput, field).focus();
    h.step();
    let long = (0..60).map(|i| (i * 1000).to_string()).collect::<Vec<_>>();
    h.get_by_role_and_label(Role::TextInput, field)
        .type_text(&long.join(","));
    h.step();
    h.key_press(egui::Key::Enter);
    wait_for(&mut h, "layernorm-error");
    h.get_by_label("§2.2 Reductions").click();
    wait_for(&mut h, "reduction");
    // The panel kept its width.
    assert_eq!(central_left(&h), before);
    assert!(
        central_left(&h) - params_left(&h) <= warpscope::gui::params::PANEL_WIDTH,
        "panel {} pt wide",
        central_left(&h) - params_left(&h)
    );
    // Mid-butterfly: the inputs and the first levels are filled.
    h.state_mut().state("reduction").expect("open").stepper.pos = 6;
    h.step();
    h.step();
    let heading = h.get_by_label_contains("Butterfly of v0").rect();
    let all = shapes(&h);
    // The butterfly's filled circles, row by row (rows share a y), lanes by x.
    let mut circles: Vec<Pos2> = all
        .iter()
        .filter_map(|s| match s {
            Shape::Circle(c) if c.fill.a() > 0 && c.center.y > heading.bottom() => Some(c.center),
            _ => None,
        })
        .collect();
    circles.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.x.total_cmp(&b.x)));
    let mut rows: Vec<Vec<Pos2>> = Vec::new();
    for c in circles {
        match rows.last_mut() {
            Some(r) if (r[0].y - c.y).abs() < 0.5 => r.push(c),
            _ => rows.push(vec![c]),
        }
    }
    assert!(
        rows.len() >= 3,
        "inputs and two levels filled: {}",
        rows.len()
    );
    for r in &rows {
        assert_eq!(r.len(), 32, "a warp of 32 lanes");
    }
    let lane_w = rows[0][1].x - rows[0][0].x;
    assert!(
        lane_w < 26.0,
        "narrow lanes ({lane_w} pt): the case that lost its values"
    );
    let row_gap = rows[1][0].y - rows[0][0].y;
    // Every number painted near a circle is that circle's value.
    let mut values: Vec<Vec<Option<(f64, f64)>>> = vec![vec![None; 32]; rows.len()];
    for t in texts(&all) {
        let Some(v) = parse_value(t.galley.text()) else {
            continue;
        };
        let c = t.visual_bounding_rect().center();
        let nearest = rows
            .iter()
            .enumerate()
            .flat_map(|(r, row)| row.iter().enumerate().map(move |(l, p)| (r, l, *p)))
            .min_by(|a, b| a.2.distance(c).total_cmp(&b.2.distance(c)));
        if let Some((r, l, p)) = nearest
            && p.distance(c) < row_gap / 2.0
        {
            assert!(values[r][l].is_none(), "two values on row {r} lane {l}");
            values[r][l] = Some(v);
        }
    }
    for (r, row) in values.iter().enumerate() {
        for (l, v) in row.iter().enumerate() {
            assert!(v.is_some(), "row {r} lane {l} has no value");
        }
    }
    // The butterfly's rule: after the k-th shfl_xor (masks 16, 8, 4, 2, 1) and add, lane i
    // holds its value plus that of lane i ^ mask, each within its shown rounding.
    for (k, mask) in [16usize, 8, 4, 2, 1]
        .into_iter()
        .enumerate()
        .take(rows.len() - 1)
    {
        for i in 0..32 {
            let (a, ea) = values[k][i].unwrap();
            let (b, eb) = values[k][i ^ mask].unwrap();
            let (s, es) = values[k + 1][i].unwrap();
            assert!(
                (s - (a + b)).abs() <= ea + eb + es + 1e-9,
                "level {} lane {i}: {s} ≠ {a} + {b}",
                k + 1
            );
        }
    }
}

#[test]
fn the_figure_puts_each_hat_over_its_own_x() {
    // The exported SVG writes one text element per painted text: each accented letter is a
    // text of its own, so the rasteriser's glyph widths (∇, Σ, · differ from egui's) cannot
    // carry the letter away from its hat.
    let scene = warpscope_core::scene::find("layernorm-syncs").unwrap();
    let svg = warpscope::export::scene_svg(
        scene,
        scene.defaults(),
        &warpscope::export::FigureOptions::default(),
    )
    .unwrap();
    assert!(
        !svg.chars().any(|c| ('\u{300}'..='\u{36F}').contains(&c)),
        "no combining mark reaches the SVG (its rasteriser may box it)"
    );
    let doc = roxmltree::Document::parse(&svg).unwrap();
    // (centre x, baseline y) of each text element with exactly `content`.
    let at = |content: &str| -> Vec<(f64, f64)> {
        doc.descendants()
            .filter(|n| n.has_tag_name("text") && n.text() == Some(content))
            .filter_map(|n| {
                let num = |a: &str| n.attribute(a).and_then(|v| v.parse::<f64>().ok());
                Some((num("x")? + num("textLength")? / 2.0, num("y")?))
            })
            .collect()
    };
    let hats = at("\u{2C6}");
    let xs = at("x");
    assert!(hats.len() >= 6, "{} hats", hats.len());
    for (hx, hy) in &hats {
        assert!(
            xs.iter()
                .any(|(x, y)| (x - hx).abs() < 1.0 && (y - hy).abs() < 0.5),
            "the hat at ({hx}, {hy}) is over no x of its own"
        );
    }
}

#[test]
fn a_radio_button_with_x_hat_in_its_caption_selects_and_keeps_the_mark() {
    let mut h = Harness::builder()
        .with_size(egui::vec2(400.0, 100.0))
        .build_ui_state(
            |ui, v: &mut u8| {
                warpscope::fonts::install(ui.ctx());
                warpscope::widgets::marks::radio_value(ui, v, 1, "Σg·x\u{302} together");
                warpscope::widgets::marks::radio_value(ui, v, 2, "one after the other");
            },
            0u8,
        );
    h.run();
    // The caption's accessibility label keeps the mark; clicking it selects.
    h.get_by_role_and_label(Role::RadioButton, "Σg·x\u{302} together")
        .click();
    h.run();
    assert_eq!(*h.state(), 1);
    h.get_by_role_and_label(Role::RadioButton, "one after the other")
        .click();
    h.run();
    assert_eq!(*h.state(), 2);
    // Its hat is painted over its x.
    let all = shapes(&h);
    let texts = texts(&all);
    let hat = texts
        .iter()
        .find(|t| t.galley.text() == "\u{2C6}")
        .map(|t| t.visual_bounding_rect().center().x)
        .expect("a hat");
    assert!(
        glyphs_of(&texts, 'x')
            .iter()
            .any(|(x, _, _)| (x - hat).abs() < 1.5)
    );
}
