//! Widgets the views are built from, one file each, fed plain data (no scene, no window):
//! the lane strip, the butterfly, the bank grid, stacked ledger bars, plots, the dependency
//! graph, bar charts (grouped, log or linear; stacked), definition lists (formulas), the Gantt chart, the segment map, the
//! stepper, the shared trace view, the GPU panel and its recorded-vs-simulated replay. Colours are in [`palette`]; text with combining marks
//! (x̂) goes through [`marks`].

pub mod bank_grid;
pub mod bars;
pub mod butterfly;
pub mod dag;
pub mod definitions;
pub mod format;
pub mod gantt;
pub mod gpu;
pub mod lanes;
pub mod ledger_bars;
pub mod log_log_plot;
pub mod marks;
pub mod palette;
pub mod recorded;
pub mod run_choice;
pub mod segment_map;
pub mod stepper;
pub mod trace;

pub use bank_grid::bank_grid;
pub use bars::{Bar, BarGroup, Scale, Series, StackedBar, grouped_bars, legend, stacked_bars};
pub use butterfly::butterfly;
pub use dag::dag;
pub use definitions::definitions;
pub use format::{byte_unit, bytes_text, format_extended, format_number, format_sig};
pub use gantt::{GanttBar, GanttRow, fitted_text, gantt};
pub use lanes::{LaneCell, lane_strip};
pub use ledger_bars::{LedgerBar, ledger_bars};
pub use log_log_plot::{log_log_plot, log_log_plot_coloured};
pub use palette::*;
pub use run_choice::run_choice;
pub use segment_map::{
    BlockUse, MAP_ALLOCATED, MAP_PENDING, MAP_ROUNDING, MapBlock, MapSegment, mib_text,
    segment_map, segment_map_legend,
};
