//! Lab D (lecture §5) views, one file per scene. Memory is shown in MiB (2²⁰ bytes) everywhere;
//! the helpers here are shared by the lab's views.

pub mod allocator;
pub mod allocator_trace;
pub mod diff;
pub mod lifetimes;
pub mod plan;
pub mod snapshot;
pub mod snapshot_active;
pub mod snapshot_frames;
pub mod snapshot_map;
pub mod snapshot_timeline;
pub mod snapshot_whatif;

use crate::widgets::format_number;
use crate::widgets::{self, BlockUse, MapBlock, MapSegment};
use egui_plot::Plot;
use warpscope_core::memory::allocator::{Pool, SegmentView};
use warpscope_core::memory::lifetimes as lifetime_model;

/// The lecture's text as the embedded fonts can draw it: egui draws no combining marks and no
/// font has Ṽ (U+1E7C) or ᵀ (U+1D40), so the fused gradient ∇Q̃∇K̃∇Ṽ (also written ∇Q̃K̃Ṽ) reads
/// "∇QKV", other tildes are dropped and ᵀ becomes ^T.
fn g(s: &str) -> String {
    s.replace(
        "\u{2207}Q\u{303}\u{2207}K\u{303}\u{2207}\u{1E7C}",
        "\u{2207}QKV",
    )
    .replace("Q\u{303}K\u{303}\u{1E7C}", "QKV")
    .replace('\u{303}', "")
    .replace('\u{1E7C}', "V")
    .replace('\u{1D40}', "^T")
}

fn mib(bytes: u64) -> f64 {
    warpscope_core::memory::mib(bytes)
}

/// "1 BLH" etc. with at most two decimals.
fn blh(x: f64) -> String {
    format!("{} BLH", format_number((x * 100.0).round() / 100.0))
}

/// The colour of lifetimes tensor `name` (the same in the bar chart and the Gantt chart).
fn tensor_colour(name: &str) -> egui::Color32 {
    widgets::series_colour(
        lifetime_model::TENSORS
            .iter()
            .position(|t| t.name == name)
            .unwrap_or(0),
    )
}

fn shape_line(s: &lifetime_model::AttentionShape) -> String {
    format!(
        "B = {}, L = {}, H = {}, N = {} (d_head = {}), {}",
        s.batch,
        s.len,
        s.hidden,
        s.heads,
        s.d_head(),
        serde_json::to_value(s.dtype)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    )
}

fn plot_base<'a>(id: &str, height: f32) -> Plot<'a> {
    Plot::new(id.to_owned())
        .height(height)
        .allow_zoom(false)
        .allow_drag(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .allow_double_click_reset(false)
}

/// Most rows a segment map draws before it aggregates consecutive segments.
const MAP_ROWS: usize = 96;

/// Segment views of the simulator as the map widget draws them.
fn sim_segments(segs: &[SegmentView]) -> Vec<MapSegment> {
    segs.iter()
        .map(|s| MapSegment {
            address: s.address,
            size: s.size,
            pool: match s.pool {
                Pool::Small => "small".to_owned(),
                Pool::Large => "large".to_owned(),
            },
            blocks: s
                .blocks
                .iter()
                .map(|b| MapBlock {
                    offset: b.offset,
                    size: b.size,
                    requested: b.requested,
                    state: if b.allocated {
                        BlockUse::Allocated
                    } else {
                        BlockUse::Free
                    },
                })
                .collect(),
        })
        .collect()
}
