//! The peak of one device's trace and what holds it (`result.peak`): the event after which the
//! live requested bytes are highest and the one after which reserved is highest, the blocks in
//! use at the first grouped by the innermost user frame of their stack and by category, and the
//! fragmentation at evenly spaced events of the trace.
//!
//! **Categories**, by the frames of a block's stack (all of them, innermost first as recorded;
//! file names compared with `/` separators, in lower case), the first rule that matches:
//! 1. `optimizer_state`: a frame in `torch/optim/` (the optimizer's `step` creating its state).
//! 2. `gradients`: a frame whose name contains `backward`, or a frame in `torch/autograd/`
//!    (what the autograd engine allocates: gradients and the backward pass's buffers).
//! 3. `parameters`: a frame named `_apply`, `to`, `cuda`, `reset_parameters`, `load_state_dict`
//!    or `_load_from_state_dict`, a frame in `torch/nn/parameter.py`, or an `__init__` frame in
//!    `torch/nn/modules/` (a module's weights made or moved to the device).
//! 4. `activations`: a frame named `forward`, `_call_impl` or `_wrapped_call_impl` (made during
//!    a module's forward and still live).
//! 5. `temporaries`: any other block with a stack.
//! 6. `unknown`: a block without a stack (allocated before the trace, in a file without one).
//!
//! Fragmentation at an event ([`FragmentationSample`]): *internal* = Σ (block size − requested
//! size) over the `active_allocated` blocks whose request is known, *external* = reserved −
//! allocated (Σ segment sizes − Σ `active_allocated` block sizes), and the largest free
//! (`inactive`) block. All in bytes.

use serde::Serialize;

use super::BlockState;
use super::history::{History, StateAt};
use crate::torch::frames::{Frame, FrameTable, frame_line};
use crate::torch::timeline::Timeline;

/// Most groups listed by frame (the rest summed into one `(other frames)` group).
pub const MAX_FRAME_GROUPS: usize = 20;
/// Events sampled for the fragmentation over the trace (besides the two peaks).
pub const FRAGMENTATION_SAMPLES: usize = 32;

/// Blocks in use at the peak that share a frame or a category.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeakGroup {
    /// The innermost user frame as `name (file:line)`, or the category.
    pub name: String,
    /// Blocks.
    pub blocks: usize,
    /// Σ block sizes (bytes).
    pub bytes: u64,
    /// Σ requested sizes (bytes; 0 where unknown).
    pub requested_bytes: u64,
}

/// The fragmentation right after one event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FragmentationSample {
    /// The event.
    pub event: usize,
    /// Σ segment sizes (bytes).
    pub reserved_bytes: u64,
    /// Σ `active_allocated` block sizes (bytes).
    pub allocated_bytes: u64,
    /// Σ (block size − requested size) over `active_allocated` blocks with a known request.
    pub internal_bytes: u64,
    /// Reserved − allocated (bytes).
    pub external_bytes: u64,
    /// The largest `inactive` block (bytes).
    pub largest_free_block_bytes: u64,
}

/// `result.peak` (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Peak {
    /// The device.
    pub device: u32,
    /// The first event after which live requested bytes are highest (`null`: a file without
    /// trace events, whose own state is reported).
    pub allocated_event: Option<usize>,
    /// Live requested bytes there (alloc − free_completed, as the timeline counts them).
    pub requested_bytes: u64,
    /// Σ `active_allocated` block sizes there (bytes).
    pub allocated_bytes: u64,
    /// The first event after which reserved is highest (`null` as above).
    pub reserved_event: Option<usize>,
    /// Reserved there (bytes).
    pub reserved_bytes: u64,
    /// Blocks in use at `allocated_event` by innermost user frame, most bytes first.
    pub by_frame: Vec<PeakGroup>,
    /// The same blocks by category (module docs), most bytes first.
    pub by_category: Vec<PeakGroup>,
    /// At [`FRAGMENTATION_SAMPLES`] evenly spaced events and the two peaks, in event order.
    pub fragmentation: Vec<FragmentationSample>,
}

/// The category of a stack (module docs).
pub fn category(frames: &[Frame]) -> &'static str {
    if frames.is_empty() {
        return "unknown";
    }
    let files: Vec<String> = frames
        .iter()
        .map(|f| f.filename.replace('\\', "/").to_lowercase())
        .collect();
    let any = |p: &dyn Fn(&Frame, &str) -> bool| frames.iter().zip(&files).any(|(f, n)| p(f, n));
    if any(&|_, n| n.contains("torch/optim/")) {
        "optimizer_state"
    } else if any(&|f, n| f.name.contains("backward") || n.contains("torch/autograd/")) {
        "gradients"
    } else if any(&|f, n| {
        matches!(
            f.name.as_str(),
            "_apply"
                | "to"
                | "cuda"
                | "reset_parameters"
                | "load_state_dict"
                | "_load_from_state_dict"
        ) || n.ends_with("torch/nn/parameter.py")
            || (f.name == "__init__" && n.contains("torch/nn/modules/"))
    }) {
        "parameters"
    } else if any(&|f, _| {
        matches!(
            f.name.as_str(),
            "forward" | "_call_impl" | "_wrapped_call_impl"
        )
    }) {
        "activations"
    } else {
        "temporaries"
    }
}

fn sample(at: &StateAt) -> FragmentationSample {
    let active = at
        .segments
        .iter()
        .flat_map(|g| &g.blocks)
        .filter(|b| b.state == BlockState::ActiveAllocated);
    let internal = active.filter(|b| b.requested_size > 0).fold(0u64, |a, b| {
        a.saturating_add(b.size.saturating_sub(b.requested_size))
    });
    let largest = at
        .segments
        .iter()
        .flat_map(|g| &g.blocks)
        .filter(|b| b.state == BlockState::Inactive)
        .map(|b| b.size)
        .max()
        .unwrap_or(0);
    FragmentationSample {
        event: at.index,
        reserved_bytes: at.reserved_bytes,
        allocated_bytes: at.allocated_bytes,
        internal_bytes: internal,
        external_bytes: at.reserved_bytes.saturating_sub(at.allocated_bytes),
        largest_free_block_bytes: largest,
    }
}

/// Adds a block to the group `name` of `groups`.
fn add(groups: &mut Vec<PeakGroup>, name: String, size: u64, requested: u64) {
    if !groups.iter().any(|g| g.name == name) {
        groups.push(PeakGroup {
            name: name.clone(),
            blocks: 0,
            bytes: 0,
            requested_bytes: 0,
        });
    }
    if let Some(g) = groups.iter_mut().find(|g| g.name == name) {
        g.blocks += 1;
        g.bytes = g.bytes.saturating_add(size);
        g.requested_bytes = g.requested_bytes.saturating_add(requested);
    }
}

/// The peak of `history`'s device (`timeline`: its timeline, `None` for a device without trace
/// events) with its blocks' stacks from `table` (see the module docs).
pub fn peak(timeline: Option<&Timeline>, history: &History, table: &FrameTable) -> Peak {
    let events = timeline.map_or(&[][..], |t| t.events.as_slice());
    // The first event of the highest value: `max_by_key` keeps the last, so compare reversed.
    let first_max = |key: &dyn Fn(usize) -> u64| (0..events.len()).rev().max_by_key(|&i| key(i));
    let alloc_event = first_max(&|i| events.get(i).map_or(0, |e| e.allocated));
    let reserved_event = first_max(&|i| events.get(i).map_or(0, |e| e.reserved));
    let at = history.at(alloc_event.unwrap_or(0));
    let (mut by_frame, mut by_category) = (Vec::new(), Vec::new());
    for b in at.segments.iter().flat_map(|g| &g.blocks) {
        if b.state == BlockState::Inactive {
            continue;
        }
        let frames = table.frames(b.frames);
        let user = table
            .top_user_frame(b.frames)
            .map_or_else(|| "(no user frame)".to_owned(), |f| frame_line(&f));
        add(&mut by_frame, user, b.size, b.requested_size);
        add(
            &mut by_category,
            category(&frames).to_owned(),
            b.size,
            b.requested_size,
        );
    }
    let order = |g: &mut Vec<PeakGroup>| {
        g.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
    };
    order(&mut by_frame);
    order(&mut by_category);
    if by_frame.len() > MAX_FRAME_GROUPS {
        let rest = by_frame.split_off(MAX_FRAME_GROUPS - 1);
        by_frame.push(PeakGroup {
            name: "(other frames)".into(),
            blocks: rest.iter().map(|g| g.blocks).sum(),
            bytes: rest.iter().fold(0, |a, g| a.saturating_add(g.bytes)),
            requested_bytes: rest
                .iter()
                .fold(0, |a, g| a.saturating_add(g.requested_bytes)),
        });
    }
    let n = events.len();
    let mut at_events: Vec<usize> = (0..FRAGMENTATION_SAMPLES.min(n))
        .map(|k| k * n / FRAGMENTATION_SAMPLES.min(n))
        .chain(n.checked_sub(1))
        .chain(alloc_event)
        .chain(reserved_event)
        .collect();
    at_events.sort_unstable();
    at_events.dedup();
    let fragmentation = if n == 0 {
        vec![sample(&at)]
    } else {
        at_events.iter().map(|&i| sample(&history.at(i))).collect()
    };
    Peak {
        device: history.device,
        allocated_event: alloc_event,
        requested_bytes: alloc_event
            .and_then(|i| events.get(i))
            .map_or(at.requested_bytes, |e| e.allocated),
        allocated_bytes: at.allocated_bytes,
        reserved_event,
        reserved_bytes: reserved_event
            .and_then(|i| events.get(i))
            .map_or(at.reserved_bytes, |e| e.reserved),
        by_frame,
        by_category,
        fragmentation,
    }
}
