//! A log-log plot of error series.

use super::palette::{BLUE, GREEN, ORANGE, VERMILLION};

/// A line plot of `series` (name, points) with both axes logarithmic: points are plotted at
/// their log10 and the axes label decades as 10ⁿ. Non-positive values are left out.
pub fn log_log_plot(
    ui: &mut egui::Ui,
    id: &str,
    series: &[(&str, Vec<[f64; 2]>)],
    x_label: &str,
    y_label: &str,
) {
    log_log_plot_at(
        ui,
        id,
        series,
        x_label,
        y_label,
        egui_plot::Corner::RightTop,
    );
}

/// [`log_log_plot`] with its legend in `legend` (the corner the data leave empty: upper left
/// for curves that rise to the right).
pub fn log_log_plot_at(
    ui: &mut egui::Ui,
    id: &str,
    series: &[(&str, Vec<[f64; 2]>)],
    x_label: &str,
    y_label: &str,
    legend: egui_plot::Corner,
) {
    let decade = |m: egui_plot::GridMark, _r: &std::ops::RangeInclusive<f64>| {
        if (m.value - m.value.round()).abs() < 1e-9 {
            format!("1e{}", m.value.round() as i64)
        } else {
            String::new()
        }
    };
    egui_plot::Plot::new(id)
        .height(260.0)
        .legend(egui_plot::Legend::default().position(legend))
        .x_axis_label(x_label)
        .y_axis_label(y_label)
        .x_axis_formatter(decade)
        .y_axis_formatter(decade)
        .allow_scroll(false)
        .show(ui, |plot| {
            let palette = [BLUE, VERMILLION, GREEN, ORANGE];
            for (k, (name, pts)) in series.iter().enumerate() {
                let colour = palette[k % palette.len()];
                // A legend entry cannot carry a painted accent: the hat follows the letter.
                let name = super::marks::plain(name);
                let logged: Vec<[f64; 2]> = pts
                    .iter()
                    .filter(|p| p[0] > 0.0 && p[1] > 0.0)
                    .map(|p| [p[0].log10(), p[1].log10()])
                    .collect();
                plot.line(
                    egui_plot::Line::new(&*name, logged)
                        .width(2.0)
                        .color(colour),
                );
                plot.points(
                    egui_plot::Points::new(
                        &*name,
                        pts.iter()
                            .filter(|p| p[0] > 0.0 && p[1] > 0.0)
                            .map(|p| [p[0].log10(), p[1].log10()])
                            .collect::<Vec<_>>(),
                    )
                    .radius(3.0)
                    .color(colour),
                );
            }
        });
}
