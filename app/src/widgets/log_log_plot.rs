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
    let label = |m: egui_plot::GridMark, r: &std::ops::RangeInclusive<f64>| {
        log_label(m.value, plain_axis(r))
    };
    let mut plot = egui_plot::Plot::new(id)
        .height(260.0)
        .x_axis_label(x_label)
        .y_axis_label(y_label)
        .x_grid_spacer(log_marks)
        .y_grid_spacer(log_marks)
        .x_axis_formatter(label)
        .y_axis_formatter(label)
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

/// Grid marks of a log10 axis: every decade, and 2 and 5 times it where the axis spans at most
/// three decades (an axis of one or two decades otherwise shows one or two numbers).
fn log_marks(input: egui_plot::GridInput) -> Vec<egui_plot::GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo || hi - lo > 300.0 {
        return Vec::new();
    }
    let fine = hi - lo <= 3.0;
    let mut marks = Vec::new();
    for n in (lo.floor() as i64)..=(hi.ceil() as i64) {
        let decade = n as f64;
        let steps: &[(f64, f64)] = if fine {
            &[(1.0, 1.0), (2.0, 0.3), (5.0, 0.3)]
        } else {
            &[(1.0, 1.0)]
        };
        for &(k, step_size) in steps {
            let value = decade + k.log10();
            if (lo..=hi).contains(&value) {
                marks.push(egui_plot::GridMark { value, step_size });
            }
        }
    }
    marks
}

/// Whether an axis showing log10 range `r` labels its marks as plain numbers: when it stays
/// between 0.01 and 100,000 (one style per axis, never "0.1" beside "10⁻³").
pub(super) fn plain_axis(r: &std::ops::RangeInclusive<f64>) -> bool {
    *r.start() >= -2.0 - 1e-9 && *r.end() <= 5.0 + 1e-9
}

/// The number at log10 position `v` when it is 1, 2 or 5 × 10ⁿ: `plain` ("0.05", "200",
/// "1,000") or as a power of ten ("10⁻⁸", "2·10⁶"); other positions are not labelled.
pub(super) fn log_label(v: f64, plain: bool) -> String {
    let n = v.floor();
    let k = 10f64.powf(v - n);
    let Some(k) = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|c| (k - c).abs() < 1e-6 * c)
    else {
        return String::new();
    };
    // 10 × 10ⁿ is the next decade, reached through rounding.
    let (k, n) = if k == 10.0 { (1.0, n + 1.0) } else { (k, n) };
    if plain {
        return super::format_number(k * 10f64.powf(n));
    }
    let power = format!("10{}", superscript(n as i64));
    if k == 1.0 {
        power
    } else {
        format!("{k}·{power}")
    }
}

fn superscript(n: i64) -> String {
    n.to_string()
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            _ => '⁹',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{log_label, log_marks, plain_axis};

    #[test]
    fn labels_read_as_numbers_and_powers_of_ten() {
        assert_eq!(log_label(2.0, true), "100");
        assert_eq!(log_label(3.0, true), "1,000");
        assert_eq!(log_label(2.0 + 2f64.log10(), true), "200");
        assert_eq!(log_label(-2.0 + 5f64.log10(), true), "0.05");
        assert_eq!(log_label(-8.0, false), "10⁻⁸");
        assert_eq!(log_label(-1.0, false), "10⁻¹");
        assert_eq!(log_label(6.0 + 2f64.log10(), false), "2·10⁶");
        assert_eq!(log_label(12.0, false), "10¹²");
        // 64 is not a labelled mark.
        assert_eq!(log_label(64f64.log10(), true), "");
        // One style per axis: 1 … 10,000 plain, 10⁻⁷ … 10 as powers.
        assert!(plain_axis(&(0.0..=4.0)));
        assert!(!plain_axis(&(-7.0..=1.0)));
    }

    #[test]
    fn marks_add_2_and_5_only_on_short_axes() {
        let marks = |lo: f64, hi: f64| {
            log_marks(egui_plot::GridInput {
                bounds: (lo, hi),
                base_step_size: 0.01,
            })
            .iter()
            .map(|m| (10f64.powf(m.value) * 1e6).round() / 1e6)
            .collect::<Vec<f64>>()
        };
        // L from 64 to 1024: 100, 200, 500, 1000.
        assert_eq!(
            marks(64f64.log10(), 1024f64.log10()),
            [100.0, 200.0, 500.0, 1000.0]
        );
        // Eight decades: the decades alone.
        assert_eq!(marks(-8.0, 0.0).len(), 9);
    }
}
