//! A log-log plot of error series.

use egui::Color32;

use super::palette::{BLUE, GREEN, ORANGE, VERMILLION};

/// A line plot of `series` (name, points) with both axes logarithmic: points are plotted at
/// their log10 and the axes label decades as 10ⁿ. Non-positive values are left out. The legend
/// is drawn below the plot.
pub fn log_log_plot(
    ui: &mut egui::Ui,
    id: &str,
    series: &[(&str, Vec<[f64; 2]>)],
    x_label: &str,
    y_label: &str,
) {
    let palette = [BLUE, VERMILLION, GREEN, ORANGE];
    let coloured: Vec<(&str, Vec<[f64; 2]>, Color32)> = series
        .iter()
        .enumerate()
        .map(|(k, (name, pts))| (*name, pts.clone(), palette[k % palette.len()]))
        .collect();
    log_log_plot_coloured(ui, id, &coloured, x_label, y_label, None);
    // The legend below the plot, never over the data.
    let series: Vec<super::Series> = coloured
        .iter()
        .map(|(name, _, colour)| super::Series {
            name: (*name).to_owned(),
            colour: *colour,
        })
        .collect();
    super::legend(ui, &series);
}

/// [`log_log_plot`] with a colour per series and the legend in corner `legend`, or none
/// (`None`: the caller draws one outside the data, e.g. [`super::legend`]).
pub fn log_log_plot_coloured(
    ui: &mut egui::Ui,
    id: &str,
    series: &[(&str, Vec<[f64; 2]>, Color32)],
    x_label: &str,
    y_label: &str,
    legend: Option<egui_plot::Corner>,
) {
    let decade = |m: egui_plot::GridMark, _r: &std::ops::RangeInclusive<f64>| {
        if (m.value - m.value.round()).abs() < 1e-9 {
            format!("1e{}", m.value.round() as i64)
        } else {
            String::new()
        }
    };
    let mut plot = egui_plot::Plot::new(id)
        .height(260.0)
        .x_axis_label(x_label)
        .y_axis_label(y_label)
        .x_axis_formatter(decade)
        .y_axis_formatter(decade)
        .allow_scroll(false);
    if let Some(corner) = legend {
        plot = plot.legend(egui_plot::Legend::default().position(corner));
    }
    plot.show(ui, |plot| {
        for (name, pts, colour) in series {
            // A legend entry cannot carry a painted accent: the hat follows the letter.
            let name = super::marks::plain(name);
            let logged: Vec<[f64; 2]> = pts
                .iter()
                .filter(|p| p[0] > 0.0 && p[1] > 0.0)
                .map(|p| [p[0].log10(), p[1].log10()])
                .collect();
            plot.line(
                egui_plot::Line::new(&*name, logged.clone())
                    .width(2.0)
                    .color(*colour),
            );
            plot.points(
                egui_plot::Points::new(&*name, logged)
                    .radius(3.0)
                    .color(*colour),
            );
        }
    });
}
