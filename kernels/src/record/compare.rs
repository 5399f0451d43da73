//! Recorded vs simulated: each reduced value against its f64 reference with an f32 summation
//! tolerance ([`ValueCheck`]), and the two traces' warp width, subgroups, butterfly levels,
//! shuffles, barriers and events side by side ([`TraceComparison`]).

use serde::Serialize;
use warpscope_core::simt::{EventKind, Trace};

/// One reduced value: simulated, recorded and the f64 reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValueCheck {
    /// What it is (`Σ∇y·y`, `Σg (row 0)`).
    pub name: String,
    /// The simulation's f32 result.
    pub simulated: f64,
    /// What the device computed (read back from the records / output).
    pub recorded: f64,
    /// f64 sum of the same f32 inputs.
    pub reference: f64,
    /// Allowed |value − reference|: max(1e-5, n·2⁻²⁴·Σ|terms|) + 1e-4·|reference| (f32
    /// recursive summation of n terms, either order).
    pub tolerance: f64,
    /// |recorded − reference| ≤ tolerance.
    pub recorded_ok: bool,
    /// |simulated − reference| ≤ tolerance.
    pub simulated_ok: bool,
    /// |recorded − simulated| (0 when the device summed in the simulation's order).
    pub recorded_minus_simulated: f64,
}

impl ValueCheck {
    pub(super) fn new(
        name: &str,
        simulated: f64,
        recorded: f64,
        reference: f64,
        n: usize,
        abs_sum: f64,
    ) -> Self {
        let tolerance = 1e-5f64.max(n as f64 * 2f64.powi(-24) * abs_sum) + 1e-4 * reference.abs();
        ValueCheck {
            name: name.to_owned(),
            simulated,
            recorded,
            reference,
            tolerance,
            recorded_ok: (recorded - reference).abs() <= tolerance,
            simulated_ok: (simulated - reference).abs() <= tolerance,
            recorded_minus_simulated: recorded - simulated,
        }
    }
}

/// Recorded vs simulated, side by side: each figure counted on its trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceComparison {
    /// Lanes per warp in the simulation (32).
    pub simulated_warp_size: u32,
    /// Lanes per subgroup on the device (from the records).
    pub recorded_subgroup_size: u32,
    /// Warps of the simulated block.
    pub simulated_warps: usize,
    /// Subgroups that recorded.
    pub recorded_subgroups: usize,
    /// Butterfly levels per warp reduction in the simulation (largest shuffle level).
    pub simulated_levels: u32,
    /// Butterfly levels per subgroup reduction on the device.
    pub recorded_levels: u32,
    /// Shuffle instructions (warp-wide), simulation.
    pub simulated_shuffles: usize,
    /// Shuffle instructions (subgroup-wide), device.
    pub recorded_shuffles: usize,
    /// Block barriers, simulation.
    pub simulated_barriers: u32,
    /// Workgroup barriers, device.
    pub recorded_barriers: u32,
    /// Events (warp-wide instructions), simulation.
    pub simulated_events: usize,
    /// Events, device.
    pub recorded_events: usize,
    /// The reduced values.
    pub values: Vec<ValueCheck>,
    /// One line: why they differ.
    pub explanation: String,
}

fn max_shuffle_level(t: &Trace) -> u32 {
    t.warps
        .iter()
        .flat_map(|w| &w.events)
        .filter(|e| matches!(e.kind, EventKind::Shuffle { .. }))
        .filter_map(|e| e.level)
        .max()
        .unwrap_or(0)
}

impl TraceComparison {
    pub(super) fn of(
        sim: &Trace,
        rec: &Trace,
        values: Vec<ValueCheck>,
        explanation: String,
    ) -> Self {
        let (ss, rs) = (sim.summary(), rec.summary());
        TraceComparison {
            simulated_warp_size: sim.warp_size,
            recorded_subgroup_size: rec.warp_size,
            simulated_warps: sim.warps.len(),
            recorded_subgroups: rec.warps.len(),
            simulated_levels: max_shuffle_level(sim),
            recorded_levels: max_shuffle_level(rec),
            simulated_shuffles: ss.shuffles,
            recorded_shuffles: rs.shuffles,
            simulated_barriers: ss.barriers,
            recorded_barriers: rs.barriers,
            simulated_events: ss.events,
            recorded_events: rs.events,
            values,
            explanation,
        }
    }

    /// Whether a figure differs (warp width, subgroups, levels, shuffles, barriers) or a value
    /// is out of tolerance.
    pub fn differs(&self) -> bool {
        self.simulated_warp_size != self.recorded_subgroup_size
            || self.simulated_warps != self.recorded_subgroups
            || self.simulated_levels != self.recorded_levels
            || self.simulated_shuffles != self.recorded_shuffles
            || self.simulated_barriers != self.recorded_barriers
            || self.values.iter().any(|v| !v.recorded_ok)
    }
}
