//! What is wrong with a snapshot that decodes, as typed values: one [`Warning`] variant per kind
//! of problem, carrying the numbers, addresses and names it is about. Both wordings come from
//! [`Warning::text`], one `match` over the variants, so a warning reads the same in English and
//! in Chinese from the same fields; a view picks one with [`Text::get`].
//!
//! In the JSON (`report memory-snapshot --json`, `result.warnings`) a warning is an object with
//! `kind` (the variant, snake_case: `block_outside_segment`, …, `more`), `en` and `zh` (the two
//! wordings), and the variant's fields (addresses and sizes as integers, bytes). The checks that
//! find them are in `check.rs` (the file's segments and trace) and [`super::history`]
//! (trace events that cannot be undone against the file's blocks).

use serde::ser::Error as _;
use serde::{Serialize, Serializer};

use super::Action;
use crate::text::Text;

/// A group of warnings: at most a few of each are listed, the rest only counted
/// ([`Warning::More`]). Several variants may share one kind (every sum past 2⁶⁴ − 1 bytes is a
/// [`Kind::SumOverflows`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A segment's address + size passes 2⁶⁴ − 1.
    SegmentEndOverflows,
    /// An active block whose request exceeds its size.
    RequestedMoreThanBlock,
    /// A block larger than its segment.
    BlockLargerThanSegment,
    /// A block outside its segment's range.
    BlockOutsideSegment,
    /// Two blocks of one segment overlapping.
    OverlappingBlocks,
    /// A sum of sizes past 2⁶⁴ − 1 bytes.
    SumOverflows,
    /// A segment's blocks not summing to its size.
    BlocksDoNotTile,
    /// A segment's `allocated_size` not the sum of its active blocks.
    AllocatedSizeDiffers,
    /// Two segments of one device overlapping.
    OverlappingSegments,
    /// A trace action this reader does not know.
    UnknownAction,
    /// A sized trace event without its size.
    NoByteCount,
    /// A free whose size is not its `alloc`'s.
    FreeDiffersFromAlloc,
    /// The trace and the file's segments disagreeing.
    TraceDisagrees,
    /// A trace event that cannot be undone against the file's blocks.
    CannotUndo,
    /// A recorded allocator setting the what-if replay cannot take as written.
    SettingNotTaken,
}

impl Kind {
    /// The kind's name in both languages (the "… and N more" line names it).
    pub fn text(self) -> Text<&'static str> {
        let (en, zh) = match self {
            Kind::SegmentEndOverflows => ("segment end overflows", "段末地址溢出"),
            Kind::RequestedMoreThanBlock => ("requested more than the block", "请求比块大"),
            Kind::BlockLargerThanSegment => ("block larger than its segment", "块比所在的段大"),
            Kind::BlockOutsideSegment => ("block outside its segment", "块在所在的段之外"),
            Kind::OverlappingBlocks => ("overlapping blocks", "块重叠"),
            Kind::SumOverflows => ("sum overflows", "求和溢出"),
            Kind::BlocksDoNotTile => ("blocks do not tile their segment", "块没有正好铺满所在的段"),
            Kind::AllocatedSizeDiffers => (
                "allocated_size differs from its blocks",
                "allocated_size 与块不符",
            ),
            Kind::OverlappingSegments => ("overlapping segments", "段重叠"),
            Kind::UnknownAction => ("unknown action", "未知的 action"),
            Kind::NoByteCount => ("no byte count", "没有字节数"),
            Kind::FreeDiffersFromAlloc => {
                ("free differs from its alloc", "释放与它的 alloc 大小不同")
            }
            Kind::TraceDisagrees => ("trace disagrees with the segments", "轨迹与段不一致"),
            Kind::CannotUndo => ("trace event that cannot be undone", "无法撤销的轨迹事件"),
            Kind::SettingNotTaken => (
                "allocator setting not taken as recorded",
                "未按记录采用的分配器设置",
            ),
        };
        Text::new(en, zh)
    }
}

/// Why a trace event could not be undone against the allocator's later state (the history is
/// rebuilt backwards from the file's segments, [`super::history`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// The event has no address.
    NoAddress,
    /// An `alloc` with no active block at its address afterwards.
    NoActiveBlock,
    /// A `free_requested` with no block waiting to be freed at its address afterwards.
    NotPending,
    /// A `free_completed` with no free space at its address afterwards.
    NoFreeSpace,
    /// A `free_completed` whose free space is smaller than the block.
    TooLittleFreeSpace,
    /// No segment holds the address.
    NoSegment,
    /// The segment at the address has another size.
    SegmentSize,
    /// The segment still holds active blocks.
    SegmentInUse,
    /// The range overlaps a segment.
    Overlap,
}

impl Why {
    /// The reason in both languages.
    pub fn text(self) -> Text<&'static str> {
        let (en, zh) = match self {
            Why::NoAddress => ("the event has no address", "事件没有地址"),
            Why::NoActiveBlock => (
                "the later state has no active block at this address",
                "之后的状态里这个地址没有活动块",
            ),
            Why::NotPending => (
                "the later state has no block waiting to be freed at this address",
                "之后的状态里这个地址没有等待释放的块",
            ),
            Why::NoFreeSpace => (
                "the later state has no free space at this address to put the block back",
                "之后的状态里这个地址没有空闲空间可以放回这个块",
            ),
            Why::TooLittleFreeSpace => (
                "the free space at this address is smaller than the block's rounded size",
                "这个地址的空闲空间比块取整后的大小还小",
            ),
            Why::NoSegment => (
                "no segment of the later state holds this address",
                "之后的状态里没有段包含这个地址",
            ),
            Why::SegmentSize => (
                "the segment at this address has another size",
                "这个地址的段大小不同",
            ),
            Why::SegmentInUse => (
                "the segment still holds active blocks",
                "这个段里还有活动块",
            ),
            Why::Overlap => (
                "the range overlaps a segment of the later state",
                "这个范围与之后状态里的段重叠",
            ),
        };
        Text::new(en, zh)
    }
}

/// One problem of a decodable snapshot. Segments and blocks are numbered from 0 in file order
/// (`segment`, `block`: the index; `address`: the segment's address), trace events from 0 in
/// their device's trace; sizes are bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(remote = "Self", tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// The segment's address + `total_size` passes 2⁶⁴ − 1.
    SegmentEndOverflows {
        /// Segment index.
        segment: usize,
        /// Its address.
        address: u64,
        /// Its `total_size` (bytes).
        total_size: u64,
    },
    /// An active block's `requested_size` exceeds its size.
    RequestedMoreThanBlock {
        /// Segment index.
        segment: usize,
        /// Its address.
        address: u64,
        /// Block index within the segment.
        block: usize,
        /// The block's `requested_size` (bytes).
        requested_size: u64,
        /// The block's size (bytes).
        size: u64,
    },
    /// A block larger than its segment.
    BlockLargerThanSegment {
        /// Segment index.
        segment: usize,
        /// Its address.
        address: u64,
        /// Block index.
        block: usize,
        /// The block's size (bytes).
        size: u64,
        /// The segment's `total_size` (bytes).
        total_size: u64,
    },
    /// A block not within its segment's `address..end`.
    BlockOutsideSegment {
        /// Segment index.
        segment: usize,
        /// Its address.
        address: u64,
        /// Block index.
        block: usize,
        /// The block's address.
        block_address: u64,
        /// The block's size (bytes).
        size: u64,
        /// The segment's end (address + `total_size`).
        end: u64,
    },
    /// A block starting before the block before it ends.
    OverlappingBlocks {
        /// Segment index.
        segment: usize,
        /// Its address.
        address: u64,
        /// Block index.
        block: usize,
        /// The block's address.
        block_address: u64,
        /// Where the block before it ends.
        previous_end: u64,
    },
    /// A segment's block sizes sum past 2⁶⁴ − 1 bytes.
    BlockSumOverflows {
        /// Segment index.
        segment: usize,
        /// Its address.
        address: u64,
    },
    /// A segment's block sizes do not sum to its `total_size`.
    BlocksDoNotTile {
        /// Segment index.
        segment: usize,
        /// Its address.
        address: u64,
        /// Σ block sizes (bytes).
        blocks_total: u64,
        /// The segment's `total_size` (bytes).
        total_size: u64,
    },
    /// A segment's `allocated_size` is not the sum of its `active_allocated` blocks.
    AllocatedSizeDiffers {
        /// Segment index.
        segment: usize,
        /// Its address.
        address: u64,
        /// The segment's `allocated_size` (bytes).
        allocated_size: u64,
        /// Σ its `active_allocated` block sizes (bytes).
        active_allocated: u64,
    },
    /// The segments' `total_size` sum past 2⁶⁴ − 1 bytes (reserved is shown saturated).
    ReservedOverflows,
    /// The segments' `allocated_size` sum past 2⁶⁴ − 1 bytes (allocated is shown saturated).
    AllocatedOverflows,
    /// Two segments of one device overlap.
    OverlappingSegments {
        /// The device.
        device: i64,
        /// The segment starting first (index).
        first: usize,
        /// The segment starting inside it (index).
        second: usize,
        /// Where the second starts.
        second_address: u64,
        /// Where the first ends.
        first_end: u64,
    },
    /// A trace action this reader does not know (not replayed).
    UnknownAction {
        /// The trace (device).
        trace: usize,
        /// Event index.
        event: usize,
        /// The action as read.
        action: Action,
    },
    /// An `alloc` or free with size 0 or none (counted as 0 B).
    NoByteCount {
        /// The trace (device).
        trace: usize,
        /// Event index.
        event: usize,
        /// The action.
        action: Action,
    },
    /// A free whose size differs from the `alloc` at its address.
    FreeDiffersFromAlloc {
        /// The trace (device).
        trace: usize,
        /// Event index.
        event: usize,
        /// The free's action.
        action: Action,
        /// The address.
        addr: u64,
        /// The free's size (bytes).
        size: u64,
        /// The `alloc` event's index.
        alloc_event: usize,
        /// The `alloc`'s size (bytes).
        alloc_size: u64,
    },
    /// Segment events that would take reserved below zero walking back from the file's
    /// segments (reserved is clamped at 0 there).
    ReservedBelowZero {
        /// The device.
        device: u32,
        /// How many segment events.
        events: usize,
    },
    /// The trace's live requested bytes at its end differ from the file's active blocks'.
    LiveBytesDiffer {
        /// The device.
        device: u32,
        /// Live requested bytes at the trace's end.
        trace_live: u64,
        /// Bytes the file's active blocks request.
        file_requested: u64,
    },
    /// Trace events that cannot be undone against the file's blocks (the block map before
    /// them is partly wrong).
    EventsNotUndone {
        /// The device.
        device: u32,
        /// How many events.
        events: usize,
    },
    /// One trace event that cannot be undone, and why.
    CannotUndo {
        /// The device.
        device: u32,
        /// Event index.
        event: usize,
        /// The action as PyTorch spells it.
        action: &'static str,
        /// The event's address, if it has one.
        addr: Option<u64>,
        /// The event's size (bytes).
        size: u64,
        /// Why.
        why: Why,
    },
    /// `allocator_settings.max_split_size` of 20 MiB or less, which PyTorch refuses
    /// (`CUDAAllocatorConfig`: the limit must exceed the large-block size); the replay uses it as
    /// recorded.
    SplitLimitRefused {
        /// The setting as the file writes it (bytes).
        recorded: String,
    },
    /// `allocator_settings.max_split_size` that is not a 64-bit byte count (−1: unlimited); the
    /// replay uses PyTorch's default, unlimited.
    SplitLimitNotBytes {
        /// The setting as the file writes it.
        recorded: String,
    },
    /// `allocator_settings.garbage_collection_threshold` outside (0, 1), which PyTorch refuses;
    /// the replay runs without garbage collection.
    GcThresholdRefused {
        /// The setting as the file writes it.
        recorded: String,
    },
    /// `allocator_settings.roundup_power2_divisions` entries that are not a power-of-two MiB
    /// start with 0 or a power-of-two count of divisions; the replay leaves those intervals off.
    RoundupEntriesRefused {
        /// The refused entries as the file writes them (`start:divisions`, comma-separated).
        entries: String,
    },
    /// The warnings of a kind past the first few, counted.
    More {
        /// The kind.
        of: Kind,
        /// How many more.
        count: usize,
    },
}

impl Warning {
    /// The kind it is counted under.
    pub fn kind(&self) -> Kind {
        match self {
            Warning::SegmentEndOverflows { .. } => Kind::SegmentEndOverflows,
            Warning::RequestedMoreThanBlock { .. } => Kind::RequestedMoreThanBlock,
            Warning::BlockLargerThanSegment { .. } => Kind::BlockLargerThanSegment,
            Warning::BlockOutsideSegment { .. } => Kind::BlockOutsideSegment,
            Warning::OverlappingBlocks { .. } => Kind::OverlappingBlocks,
            Warning::BlockSumOverflows { .. }
            | Warning::ReservedOverflows
            | Warning::AllocatedOverflows => Kind::SumOverflows,
            Warning::BlocksDoNotTile { .. } => Kind::BlocksDoNotTile,
            Warning::AllocatedSizeDiffers { .. } => Kind::AllocatedSizeDiffers,
            Warning::OverlappingSegments { .. } => Kind::OverlappingSegments,
            Warning::UnknownAction { .. } => Kind::UnknownAction,
            Warning::NoByteCount { .. } => Kind::NoByteCount,
            Warning::FreeDiffersFromAlloc { .. } => Kind::FreeDiffersFromAlloc,
            Warning::ReservedBelowZero { .. }
            | Warning::LiveBytesDiffer { .. }
            | Warning::EventsNotUndone { .. } => Kind::TraceDisagrees,
            Warning::CannotUndo { .. } => Kind::CannotUndo,
            Warning::SplitLimitRefused { .. }
            | Warning::SplitLimitNotBytes { .. }
            | Warning::GcThresholdRefused { .. }
            | Warning::RoundupEntriesRefused { .. } => Kind::SettingNotTaken,
            Warning::More { of, .. } => *of,
        }
    }

    /// The warning in English and in Chinese, from the same fields.
    pub fn text(&self) -> Text {
        let (en, zh) = match self {
            Warning::SegmentEndOverflows {
                segment: i,
                address: a,
                total_size: t,
            } => (
                format!("segment {i} at {a:#x}: address + total_size ({t} B) exceeds 2⁶⁴ − 1"),
                format!("段 {i}（{a:#x}）：地址 + total_size（{t} B）超过 2⁶⁴ − 1"),
            ),
            Warning::RequestedMoreThanBlock {
                segment: i,
                address: a,
                block: j,
                requested_size: r,
                size: s,
            } => (
                format!(
                    "segment {i} at {a:#x} block {j}: requested_size {r} B is more than the block's {s} B"
                ),
                format!("段 {i}（{a:#x}）的块 {j}：requested_size {r} B 比块的 {s} B 还大"),
            ),
            Warning::BlockLargerThanSegment {
                segment: i,
                address: a,
                block: j,
                size: s,
                total_size: t,
            } => (
                format!("segment {i} at {a:#x} block {j}: {s} B, larger than the segment's {t} B"),
                format!("段 {i}（{a:#x}）的块 {j}：{s} B，比段的 {t} B 还大"),
            ),
            Warning::BlockOutsideSegment {
                segment: i,
                address: a,
                block: j,
                block_address: b,
                size: s,
                end: e,
            } => (
                format!(
                    "segment {i} at {a:#x} block {j} at {b:#x} ({s} B) lies outside the segment's {a:#x}..{e:#x}"
                ),
                format!("段 {i}（{a:#x}）的块 {j}（{b:#x}，{s} B）不在段的范围 {a:#x}..{e:#x} 内"),
            ),
            Warning::OverlappingBlocks {
                segment: i,
                address: a,
                block: j,
                block_address: b,
                previous_end: p,
            } => (
                format!(
                    "segment {i} at {a:#x}: block {j} at {b:#x} overlaps the block before it (which ends at {p:#x})"
                ),
                format!("段 {i}（{a:#x}）：块 {j}（{b:#x}）与前一个块重叠（前一个块止于 {p:#x}）"),
            ),
            Warning::BlockSumOverflows {
                segment: i,
                address: a,
            } => (
                format!("segment {i} at {a:#x}: its block sizes add up to more than 2⁶⁴ − 1 bytes"),
                format!("段 {i}（{a:#x}）：块大小之和超过 2⁶⁴ − 1 字节"),
            ),
            Warning::BlocksDoNotTile {
                segment: i,
                address: a,
                blocks_total: c,
                total_size: t,
            } => (
                format!(
                    "segment {i} at {a:#x}: its blocks add up to {c} B, the segment's total_size is {t} B"
                ),
                format!("段 {i}（{a:#x}）：块合计 {c} B，而段的 total_size 是 {t} B"),
            ),
            Warning::AllocatedSizeDiffers {
                segment: i,
                address: a,
                allocated_size: s,
                active_allocated: b,
            } => (
                format!(
                    "segment {i} at {a:#x}: allocated_size is {s} B, its active_allocated blocks hold {b} B"
                ),
                format!("段 {i}（{a:#x}）：allocated_size 是 {s} B，而它的 active_allocated 块合计 {b} B"),
            ),
            Warning::ReservedOverflows => (
                "the segments' total_size add up to more than 2⁶⁴ − 1 bytes: reserved is shown saturated".into(),
                "各段 total_size 之和超过 2⁶⁴ − 1 字节：显示的 reserved 是截断后的值".into(),
            ),
            Warning::AllocatedOverflows => (
                "the segments' allocated_size add up to more than 2⁶⁴ − 1 bytes: allocated is shown saturated".into(),
                "各段 allocated_size 之和超过 2⁶⁴ − 1 字节：显示的 allocated 是截断后的值".into(),
            ),
            Warning::OverlappingSegments {
                device: d,
                first: i1,
                second: i2,
                second_address: a2,
                first_end: e1,
            } => (
                format!(
                    "segments {i1} and {i2} of device {d} overlap (segment {i2} starts at {a2:#x}, before segment {i1} ends at {e1:#x})"
                ),
                format!(
                    "设备 {d} 的段 {i1} 和段 {i2} 重叠（段 {i2} 起于 {a2:#x}，在段 {i1} 的结尾 {e1:#x} 之前）"
                ),
            ),
            Warning::UnknownAction {
                trace: d,
                event: k,
                action,
            } => {
                let name = action.as_str();
                (
                    format!("trace {d} event {k}: unknown action \"{name}\"; it is not replayed"),
                    format!("轨迹 {d} 的事件 {k}：未知的 action \"{name}\"，不参与重放"),
                )
            }
            Warning::NoByteCount {
                trace: d,
                event: k,
                action,
            } => {
                let name = action.as_str();
                (
                    format!("trace {d} event {k} ({name}): size is 0 or missing, counted as 0 B"),
                    format!("轨迹 {d} 的事件 {k}（{name}）：size 为 0 或缺失，按 0 B 计"),
                )
            }
            Warning::FreeDiffersFromAlloc {
                trace: d,
                event: k,
                action,
                addr,
                size,
                alloc_event: j,
                alloc_size,
            } => {
                let name = action.as_str();
                (
                    format!(
                        "trace {d} event {k} ({name}) at {addr:#x}: {size} B, but the alloc at event {j} was {alloc_size} B"
                    ),
                    format!(
                        "轨迹 {d} 的事件 {k}（{name}，{addr:#x}）：{size} B，而事件 {j} 的 alloc 是 {alloc_size} B"
                    ),
                )
            }
            Warning::ReservedBelowZero { device: d, events } => (
                format!(
                    "device {d}: {events} segment events would take reserved below zero walking back from the file's segments (reserved is clamped at 0 there)"
                ),
                format!(
                    "设备 {d}：从文件里的段往回走，有 {events} 个段事件会让 reserved 小于 0（那里按 0 截断）"
                ),
            ),
            Warning::LiveBytesDiffer {
                device: d,
                trace_live,
                file_requested,
            } => (
                format!(
                    "device {d}: the trace leaves {trace_live} B of requested bytes live at its end, the file's active blocks request {file_requested} B (a trimmed or edited file?)"
                ),
                format!(
                    "设备 {d}：轨迹结束时仍存活的请求字节是 {trace_live} B，而文件里活动块申请的是 {file_requested} B（文件被截短或改过？）"
                ),
            ),
            Warning::EventsNotUndone { device: d, events } => (
                format!(
                    "device {d}: {events} trace events cannot be undone against the file's blocks, so the block map before them is partly wrong"
                ),
                format!(
                    "设备 {d}：有 {events} 个轨迹事件无法在文件的块上撤销，所以它们之前的块图有一部分不对"
                ),
            ),
            Warning::CannotUndo {
                device: d,
                event: i,
                action,
                addr,
                size,
                why,
            } => {
                // The action and its address read as the trace spells them in both languages.
                let at = addr.map_or(String::new(), |a| format!(" at {a:#x}"));
                let why = why.text();
                (
                    format!("device {d} event {i} ({action}{at}, {size} B): {}", why.en),
                    format!("设备 {d} 第 {i} 个事件（{action}{at}，{size} B）：{}", why.zh),
                )
            }
            Warning::SplitLimitRefused { recorded: t } => (
                format!(
                    "allocator_settings: max_split_size {t} B is 20 MiB or less, which PyTorch refuses; the replay uses {t} B as recorded"
                ),
                format!(
                    "allocator_settings：max_split_size {t} B 不超过 20 MiB，PyTorch 不接受；重放按记录的 {t} B 计算"
                ),
            ),
            Warning::SplitLimitNotBytes { recorded: t } => (
                format!(
                    "allocator_settings: max_split_size {t} is not a byte count of 64 bits (−1: unlimited); the replay uses PyTorch's default, unlimited"
                ),
                format!(
                    "allocator_settings：max_split_size {t} 不是 64 位以内的字节数（−1 表示不限）；重放用 PyTorch 的默认值：不限"
                ),
            ),
            Warning::GcThresholdRefused { recorded: t } => (
                format!(
                    "allocator_settings: garbage_collection_threshold {t} is not a fraction above 0 and below 1, which PyTorch requires; the replay runs without garbage collection (0)"
                ),
                format!(
                    "allocator_settings：garbage_collection_threshold {t} 不在 PyTorch 要求的 0 与 1 之间（不含两端）；重放不做垃圾回收（0）"
                ),
            ),
            Warning::RoundupEntriesRefused { entries: list } => (
                format!(
                    "allocator_settings: roundup_power2_divisions entries {list} are not a power-of-two MiB start with 0 or a power of two divisions; the replay leaves those intervals off"
                ),
                format!(
                    "allocator_settings：roundup_power2_divisions 的条目 {list} 不是「2 的幂 MiB 起点：0 或 2 的幂个分段」；重放中这些区间不分段"
                ),
            ),
            Warning::More { of, count } => {
                let kind = of.text();
                (
                    format!("… and {count} more of the kind \"{}\"", kind.en),
                    format!("……另有 {count} 个同类问题（{}）", kind.zh),
                )
            }
        };
        Text::new(en, zh)
    }
}

/// `{"kind": "<variant>", "en": "…", "zh": "…", <the variant's fields>}`: the fields as the
/// derived (remote) serialisation writes them, the two wordings added.
impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut value =
            Warning::serialize(self, serde_json::value::Serializer).map_err(S::Error::custom)?;
        if let serde_json::Value::Object(map) = &mut value {
            let Text { en, zh } = self.text();
            map.insert("en".into(), en.into());
            map.insert("zh".into(), zh.into());
        }
        value.serialize(s)
    }
}
