//! Stack frames in the `memory-snapshot` view: the frames of a block or event (the user's own
//! frames first, library frames — the interpreter, PyTorch, installed packages, C++ frames
//! without a file — folded behind a count, as memory_viz folds them), and the search box: a hex
//! address finds the block holding it at the cursor's event and the trace events at it; any
//! other text highlights the blocks whose frames mention it.

use warpscope_core::torch::frames::{FrameTable, NO_FRAMES, frame_line, is_library};

use crate::i18n::tr;
use crate::trf;
use crate::views::ViewContext;
use warpscope_core::torch::snapshot::SnapshotRun;

/// Trace events at a searched address listed (the first ones).
const ADDRESS_EVENTS: usize = 8;

/// The search box's query and what it found, computed once per query and run.
#[derive(Debug, Clone, Default)]
pub struct FrameSearch {
    /// The text typed.
    pub query: String,
    /// (run id, query) the results belong to.
    key: Option<(u64, String)>,
    /// Per frame-list id: whether its frames mention the query (frame text searches).
    pub matches: Vec<bool>,
    /// The address searched for (hex address searches).
    pub address: Option<u64>,
    /// Trace events (of the shown device) whose `addr` is the address: the first few, and how
    /// many in all.
    events: (Vec<usize>, usize),
    /// Frame lists matching a text search.
    matched_lists: usize,
}

impl FrameSearch {
    /// Whether list `list` matches a frame-text search.
    pub fn matches(&self, list: u32) -> bool {
        self.matches.get(list as usize).copied().unwrap_or(false)
    }
}

/// `q` as an address: `0x…` hex, or at least 8 bare hex digits (shorter text — a line number,
/// `add` — is searched as frame text).
pub fn parse_address(q: &str) -> Option<u64> {
    let q = q.trim();
    let digits = q
        .strip_prefix("0x")
        .or_else(|| q.strip_prefix("0X"))
        .map(|d| (d, true))
        .unwrap_or((q, false));
    let (d, prefixed) = digits;
    let hexy =
        !d.is_empty() && d.chars().all(|c| c.is_ascii_hexdigit()) && (prefixed || d.len() >= 8);
    if hexy {
        u64::from_str_radix(d, 16).ok()
    } else {
        None
    }
}

/// The search box and its results; updates [`FrameSearch`] when the query or run changed.
pub fn search_ui(
    ui: &mut egui::Ui,
    run: &SnapshotRun,
    search: &mut FrameSearch,
    device: usize,
    cx: &mut ViewContext<'_>,
) {
    ui.horizontal(|ui| {
        ui.label(tr(ui, "Search:", "搜索："));
        ui.add(
            egui::TextEdit::singleline(&mut search.query)
                .desired_width(320.0)
                .hint_text(tr(
                    ui,
                    "a hex address (0x7f…) or text of a frame (model.py, forward)",
                    "十六进制地址（0x7f…）或栈帧里的文字（model.py、forward）",
                )),
        );
        if !search.query.is_empty() && ui.small_button(tr(ui, "Clear", "清除")).clicked() {
            search.query.clear();
        }
    });
    let key = (run.id, search.query.trim().to_owned());
    if search.key.as_ref() != Some(&key) {
        update(run, search, device, &key.1);
        search.key = Some(key);
    }
    if search.query.trim().is_empty() {
        return;
    }
    if let Some(a) = search.address {
        let (first, total) = &search.events;
        ui.horizontal_wrapped(|ui| {
            ui.label(trf!(
                ui,
                "{:#x}: {} trace events at this address",
                "{:#x}：这个地址上有 {} 个轨迹事件",
                a,
                total
            ));
            for &i in first {
                if ui
                    .small_button(trf!(ui, "event {}", "事件 {}", i))
                    .on_hover_text(tr(ui, "Move the cursor there", "把光标移到那里"))
                    .clicked()
                {
                    cx.stepper.pos = i;
                    cx.stepper.playing = false;
                }
            }
            if *total > first.len() {
                ui.label("…");
            }
        });
    } else {
        ui.label(
            egui::RichText::new(trf!(
                ui,
                "{} of {} distinct stacks mention it; their blocks are outlined in the map.",
                "{} 个不同的调用栈（共 {} 个）提到它；它们的块在下面的图里描了边。",
                search.matched_lists,
                run.frames.lists().saturating_sub(1)
            ))
            .small(),
        );
    }
}

fn update(run: &SnapshotRun, search: &mut FrameSearch, device: usize, q: &str) {
    search.matches.clear();
    search.address = None;
    search.events = (Vec::new(), 0);
    search.matched_lists = 0;
    if q.is_empty() {
        return;
    }
    if let Some(a) = parse_address(q) {
        search.address = Some(a);
        if let Some(t) = super::snapshot_timeline::shown(run, device) {
            let hits = t.events.iter().enumerate().filter(|(_, e)| e.addr == a);
            let total = hits.clone().count();
            search.events = (hits.take(ADDRESS_EVENTS).map(|(i, _)| i).collect(), total);
        }
        return;
    }
    let needle = q.to_lowercase();
    search.matches = (0..run.frames.lists())
        .map(|l| u32::try_from(l).is_ok_and(|l| run.frames.matches(l, &needle)))
        .collect();
    search.matched_lists = search.matches.iter().filter(|&&m| m).count();
}

/// One line for a hover text: the innermost user frame of `list` and how many frames it has.
pub fn hover_line(ui: &egui::Ui, table: &FrameTable, list: u32) -> String {
    let n = table.len_of(list);
    if list == NO_FRAMES || n == 0 {
        return String::new();
    }
    match table.top_user_frame(list) {
        Some(f) => trf!(
            ui,
            "\nfrom {} — {} frames, click for all",
            "\n来自 {} —— 共 {} 个栈帧，点击查看全部",
            frame_line(&f),
            n
        ),
        None => trf!(
            ui,
            "\n{} library frames, click for all",
            "\n{} 个库栈帧，点击查看全部",
            n
        ),
    }
}

/// The frames of `list`, innermost first: the user's own, then the library frames folded
/// behind a count (`salt` keeps the fold's state apart per place it is drawn).
pub fn stack_ui(ui: &mut egui::Ui, table: &FrameTable, list: u32, salt: &str) {
    let frames = table.frames(list);
    if frames.is_empty() {
        ui.label(
            egui::RichText::new(tr(
                ui,
                "No stack frames recorded (the file was written without `_record_memory_history(stacks=…)`, or the block is free).",
                "没有记录栈帧（写文件时没有用 `_record_memory_history(stacks=…)`，或者这个块是空闲的）。",
            ))
            .small()
            .italics(),
        );
        return;
    }
    let (user, library): (Vec<_>, Vec<_>) = frames.iter().partition(|f| !is_library(&f.filename));
    for f in &user {
        ui.add(
            egui::Label::new(egui::RichText::new(frame_line(f)).monospace().small())
                .truncate()
                .sense(egui::Sense::hover()),
        )
        .on_hover_text(format!("{}\n{}:{}", f.name, f.filename, f.line));
    }
    if user.is_empty() {
        ui.label(
            egui::RichText::new(tr(
                ui,
                "No frame of the user's own code: every frame is in the interpreter, PyTorch or a package.",
                "没有用户自己代码的栈帧：全部在解释器、PyTorch 或某个包里。",
            ))
            .small()
            .italics(),
        );
    }
    if !library.is_empty() {
        egui::CollapsingHeader::new(
            egui::RichText::new(trf!(
                ui,
                "{} library frames (PyTorch, packages, interpreter, C++)",
                "{} 个库栈帧（PyTorch、第三方包、解释器、C++）",
                library.len()
            ))
            .small(),
        )
        .id_salt(("snapshot-library-frames", salt, list))
        .default_open(false)
        .show(ui, |ui| {
            for f in &library {
                ui.add(
                    egui::Label::new(egui::RichText::new(frame_line(f)).monospace().small())
                        .truncate(),
                )
                .on_hover_text(format!("{}\n{}:{}", f.name, f.filename, f.line));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::parse_address;

    #[test]
    fn addresses_and_frame_text_are_told_apart() {
        assert_eq!(parse_address("0x7f00"), Some(0x7f00));
        assert_eq!(parse_address(" 0XCDB9AEC00 "), Some(0xcdb9aec00));
        assert_eq!(parse_address("cdb9aec00"), Some(0xcdb9aec00));
        assert_eq!(parse_address("12345678"), Some(0x1234_5678));
        // Line numbers and words are frame text.
        assert_eq!(parse_address("101"), None);
        assert_eq!(parse_address("forward"), None);
        assert_eq!(parse_address("add"), None);
        assert_eq!(parse_address("model.py"), None);
        assert_eq!(parse_address("0x"), None);
    }
}
