//! The view every scene has until it gets its own: the result as a table of keys and values
//! (numbers, short lists), with the full JSON below.

/// Draws a JSON result as a two-column table.
pub fn show(ui: &mut egui::Ui, result: &serde_json::Value) {
    ui.label(
        egui::RichText::new(crate::i18n::tr(
            ui,
            "This scene has no picture yet; its computed result:",
            "这个场景还没有图，下面是它的计算结果：",
        ))
        .italics(),
    );
    if let serde_json::Value::Object(map) = result {
        egui::Grid::new("result-table")
            .striped(true)
            .num_columns(2)
            .show(ui, |ui| {
                for (k, v) in map {
                    ui.monospace(k);
                    ui.label(short(v));
                    ui.end_row();
                }
            });
    }
    ui.collapsing("JSON", |ui| {
        let text = serde_json::to_string_pretty(result).unwrap_or_default();
        ui.monospace(text);
    });
}

/// A value in at most ~120 characters.
fn short(v: &serde_json::Value) -> String {
    let s = match v {
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format_number(f),
            _ => n.to_string(),
        },
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s
    }
}

/// Four significant digits, scientific outside 1e-3..1e6.
pub fn format_number(f: f64) -> String {
    let a = f.abs();
    if f == 0.0 || (1e-3..1e6).contains(&a) {
        let s = format!("{f:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        format!("{f:.3e}")
    }
}
