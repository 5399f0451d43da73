//! Stack frames of a memory snapshot, kept once: every block and trace event of a PyTorch
//! snapshot carries `frames`, the Python (and C++) stack that allocated it — a list of
//! `{name, filename, line}` dicts (`torch/cuda/memory.py`'s `_snapshot`, built by
//! `torch/csrc/cuda/memory_snapshot.cpp`). PyTorch gathers each distinct traceback once and the
//! pickle then refers to the same list again through its memo, so a 250,000-event file holds far
//! fewer distinct lists than events.
//!
//! A [`FrameTable`] keeps each distinct string, each distinct frame and each distinct frame list
//! once; a block or event holds only the list's id (a `u32`, [`NO_FRAMES`] for none). The
//! reader ([`crate::torch::unpickle`]) fills it while decoding, the `serde-pickle` fallback from
//! the decoded value ([`FrameTable::intern_value`]).
//!
//! *Library* frames — the interpreter, PyTorch itself, installed packages, C++ frames without a
//! file — are told apart from the user's by their file name ([`is_library`]), as memory_viz's
//! stack view folds them (`torch/utils/viz/MemoryViz.js`).

#![deny(clippy::indexing_slicing)]

use std::collections::HashMap;

use serde::Serialize;
use serde_pickle::{HashableValue, Value};

/// The id of the empty frame list: a block or event without frames.
pub const NO_FRAMES: u32 = 0;

/// Most distinct strings, frames or lists one table holds (bounds its memory).
const MAX_ITEMS: usize = 16 << 20;

/// One stack frame, as the snapshot spells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Frame {
    /// Function name (`forward`, `torch::unwind::unwind()`, …).
    pub name: String,
    /// Source file (`??` for a C++ frame without one).
    pub filename: String,
    /// Line number (0 or −1 when unknown: PyTorch writes 2⁶⁴ − 1 for some C++ frames, kept
    /// as −1).
    pub line: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FrameIds {
    name: u32,
    filename: u32,
    line: i64,
}

/// Every distinct string, frame and frame list of one snapshot, each kept once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameTable {
    strings: Vec<String>,
    string_ids: HashMap<String, u32>,
    frames: Vec<FrameIds>,
    frame_ids: HashMap<FrameIds, u32>,
    /// Frame ids of every list, one after the other; list `i` is `flat[starts[i]..starts[i+1]]`.
    flat: Vec<u32>,
    starts: Vec<u32>,
    list_ids: HashMap<Vec<u32>, u32>,
}

impl Default for FrameTable {
    fn default() -> Self {
        let mut list_ids = HashMap::new();
        list_ids.insert(Vec::new(), NO_FRAMES);
        FrameTable {
            strings: Vec::new(),
            string_ids: HashMap::new(),
            frames: Vec::new(),
            frame_ids: HashMap::new(),
            flat: Vec::new(),
            starts: vec![0, 0],
            list_ids,
        }
    }
}

impl FrameTable {
    /// The id of string `s`, added if new (`None` once the table is full).
    pub fn string(&mut self, s: &str) -> Option<u32> {
        if let Some(&id) = self.string_ids.get(s) {
            return Some(id);
        }
        if self.strings.len() >= MAX_ITEMS {
            return None;
        }
        let id = u32::try_from(self.strings.len()).ok()?;
        self.strings.push(bounded_text(s));
        self.string_ids.insert(s.to_owned(), id);
        Some(id)
    }

    /// The string of id `id` (`""` for an unknown id).
    pub fn text(&self, id: u32) -> &str {
        self.strings.get(id as usize).map_or("", String::as_str)
    }

    /// The id of the frame of interned `name` and `filename` at `line`, added if new.
    pub fn frame(&mut self, name: u32, filename: u32, line: i64) -> Option<u32> {
        let f = FrameIds {
            name,
            filename,
            line,
        };
        if let Some(&id) = self.frame_ids.get(&f) {
            return Some(id);
        }
        if self.frames.len() >= MAX_ITEMS {
            return None;
        }
        let id = u32::try_from(self.frames.len()).ok()?;
        self.frames.push(f);
        self.frame_ids.insert(f, id);
        Some(id)
    }

    /// The id of the list of frame ids `frames`, added if new.
    pub fn list(&mut self, frames: Vec<u32>) -> Option<u32> {
        if let Some(&id) = self.list_ids.get(&frames) {
            return Some(id);
        }
        if self.starts.len() > MAX_ITEMS || self.flat.len().saturating_add(frames.len()) > MAX_ITEMS
        {
            return None;
        }
        let id = u32::try_from(self.starts.len() - 1).ok()?;
        self.flat.extend_from_slice(&frames);
        self.starts.push(u32::try_from(self.flat.len()).ok()?);
        self.list_ids.insert(frames, id);
        Some(id)
    }

    /// Distinct frame lists, the empty one included.
    pub fn lists(&self) -> usize {
        self.starts.len() - 1
    }

    /// Distinct frames.
    pub fn distinct_frames(&self) -> usize {
        self.frames.len()
    }

    /// Frame ids of list `list` (empty for an unknown id).
    fn ids(&self, list: u32) -> &[u32] {
        let i = list as usize;
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => self.flat.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Number of frames in list `list`.
    pub fn len_of(&self, list: u32) -> usize {
        self.ids(list).len()
    }

    /// The frames of list `list`, innermost first as the snapshot stores them (empty for
    /// [`NO_FRAMES`] or an unknown id).
    pub fn frames(&self, list: u32) -> Vec<Frame> {
        self.ids(list)
            .iter()
            .filter_map(|&f| self.frames.get(f as usize))
            .map(|f| Frame {
                name: self.text(f.name).to_owned(),
                filename: self.text(f.filename).to_owned(),
                line: f.line,
            })
            .collect()
    }

    /// The innermost frame of list `list` that is not a library frame ([`is_library`]).
    pub fn top_user_frame(&self, list: u32) -> Option<Frame> {
        self.frames(list)
            .into_iter()
            .find(|f| !is_library(&f.filename))
    }

    /// Whether any frame of list `list` has `needle` (already lower-case) in its name or file
    /// name, compared in lower case.
    pub fn matches(&self, list: u32, needle: &str) -> bool {
        !needle.is_empty()
            && self.ids(list).iter().any(|&f| {
                self.frames.get(f as usize).is_some_and(|f| {
                    self.text(f.name).to_lowercase().contains(needle)
                        || self.text(f.filename).to_lowercase().contains(needle)
                })
            })
    }

    /// The list id of a decoded `frames` value: a list of `{name, filename, line}` dicts
    /// (missing fields read as `""` and 0). Anything else — `None`, a list holding something
    /// other than dicts — has no frames ([`NO_FRAMES`]): `serde-pickle` turns some shared lists
    /// into `None` (see [`crate::torch::snapshot::parse`]), and those frames are lost on that
    /// path.
    pub fn intern_value(&mut self, v: &Value) -> u32 {
        let items = match v {
            Value::List(l) | Value::Tuple(l) => l,
            _ => return NO_FRAMES,
        };
        let mut ids = Vec::with_capacity(items.len());
        for item in items {
            let Value::Dict(d) = item else {
                return NO_FRAMES;
            };
            let text = |k: &str| match d.get(&HashableValue::String(k.to_owned())) {
                Some(Value::String(s)) => s.as_str(),
                _ => "",
            };
            let line = match d.get(&HashableValue::String("line".to_owned())) {
                Some(Value::I64(i)) => *i,
                Some(Value::Int(_)) => -1,
                _ => 0,
            };
            let (name, filename) = (text("name"), text("filename"));
            let Some(f) = self
                .string(name)
                .zip(self.string(filename))
                .and_then(|(n, f)| self.frame(n, f, line))
            else {
                return NO_FRAMES;
            };
            ids.push(f);
        }
        self.list(ids).unwrap_or(NO_FRAMES)
    }
}

/// Longest frame name or file name kept whole, characters: real ones stay under it (the longest
/// C++ template signature in the bundled snapshots has 3,289), and every view, table and figure
/// lays the text out, so a 1 MiB name from a file must not reach them (it overran the GPU's
/// buffer limit and took minutes to lay out).
pub const MAX_TEXT_CHARS: usize = 8192;

/// `s` as the table keeps it: whole up to [`MAX_TEXT_CHARS`]; longer, its first 8,000
/// characters, `…` and its length.
fn bounded_text(s: &str) -> String {
    match s.char_indices().nth(MAX_TEXT_CHARS) {
        None => s.to_owned(),
        Some(_) => {
            let cut = s.char_indices().nth(8000).map_or(s.len(), |(i, _)| i);
            let n = s.chars().count();
            format!("{}… ({n} characters)", s.get(..cut).unwrap_or(""))
        }
    }
}

/// Whether a frame of file `filename` belongs to the interpreter, PyTorch or an installed package
/// rather than to the user's program: C++ frames without a file (`??`, empty), `<frozen …>` and
/// other `<…>` pseudo-files, anything under `site-packages`/`dist-packages`, the standard
/// library (`/lib/python3.x/`), PyTorch's own sources (`torch/`), the code TorchInductor
/// generates (`torchinductor_…/`), C sources (`.c`: the interpreter's own frames,
/// `Python/ceval.c`, `Objects/call.c`) and C++ sources (`.cpp`, `.h`, `.cu` …: PyTorch's C++
/// frames, `memory_snapshot.cpp`). `<module>`-level user code keeps its real file name and stays
/// a user frame.
pub fn is_library(filename: &str) -> bool {
    let f = filename.replace('\\', "/").to_lowercase();
    f.is_empty()
        || f == "??"
        || f.starts_with('<')
        || f.contains("site-packages/")
        || f.contains("dist-packages/")
        || f.contains("/lib/python")
        || f.starts_with("torch/")
        || f.contains("/torch/")
        || f.contains("torchinductor_")
        || [".c", ".cpp", ".cc", ".cu", ".cuh", ".h", ".hpp"]
            .iter()
            .any(|ext| f.ends_with(ext))
}

/// A frame as one line: `name (file:line)`, the file shortened to its last two components, the
/// name and the file each to [`LINE_PART_CHARS`] characters (a line is laid out whole in a
/// figure: a name of thousands of characters would make it hundreds of thousands of pixels wide).
pub fn frame_line(f: &Frame) -> String {
    let parts: Vec<&str> = f.filename.split(['/', '\\']).collect();
    let short = parts
        .len()
        .checked_sub(2)
        .and_then(|i| parts.get(i..))
        .map_or_else(|| f.filename.clone(), |p| p.join("/"));
    format!("{} ({}:{})", clip(&f.name), clip(&short), f.line)
}

/// Longest name or file name [`frame_line`] shows, characters.
pub const LINE_PART_CHARS: usize = 240;

/// `s` cut to [`LINE_PART_CHARS`] characters, `…` marking a cut.
fn clip(s: &str) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(LINE_PART_CHARS) {
        None => s.into(),
        Some((i, _)) => format!("{}…", s.get(..i).unwrap_or("")).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// A name of any length: kept whole up to 8,192 characters; longer, its first 8,000 and
        /// its length, so what a view lays out stays bounded.
        #[test]
        fn a_name_of_any_length_is_kept_bounded(c in proptest::char::any(), n in 0usize..20000) {
            let name: String = std::iter::repeat_n(c, n).collect();
            let mut t = FrameTable::default();
            let id = t.string(&name).unwrap();
            let kept = t.text(id);
            if n <= 8192 {
                proptest::prop_assert_eq!(kept, name.as_str());
            } else {
                let head: String = std::iter::repeat_n(c, 8000).collect();
                proptest::prop_assert_eq!(kept, format!("{head}… ({n} characters)"));
            }
        }
    }

    #[test]
    fn interns_strings_frames_and_lists_once() {
        let mut t = FrameTable::default();
        let a = t.string("forward").unwrap();
        let b = t.string("model.py").unwrap();
        assert_eq!(t.string("forward"), Some(a));
        let f1 = t.frame(a, b, 3).unwrap();
        let f2 = t.frame(a, b, 4).unwrap();
        assert_eq!(t.frame(a, b, 3), Some(f1));
        let l1 = t.list(vec![f1, f2]).unwrap();
        assert_eq!(t.list(vec![f1, f2]), Some(l1));
        assert_ne!(l1, NO_FRAMES);
        assert_eq!(t.list(Vec::new()), Some(NO_FRAMES));
        assert_eq!(t.lists(), 2);
        assert_eq!(t.distinct_frames(), 2);
        let fr = t.frames(l1);
        assert_eq!(fr.len(), 2);
        assert_eq!((fr[1].name.as_str(), fr[1].line), ("forward", 4));
        assert!(t.frames(NO_FRAMES).is_empty());
        assert!(t.frames(99).is_empty());
        assert!(t.matches(l1, "model"));
        assert!(!t.matches(l1, "train"));
    }

    #[test]
    fn library_frames_by_file_name() {
        for lib in [
            "??",
            "",
            "<frozen runpy>",
            "/usr/lib/python3.12/site-packages/torch/nn/modules/module.py",
            "D:\\Dev\\a\\.venv\\Lib\\site-packages\\torch\\nn\\modules\\module.py",
            "/usr/lib/python3.11/threading.py",
            "/opt/pytorch/torch/_tensor.py",
            "memory_snapshot.cpp",
            "Python/ceval.c",
            "Objects/typeobject.c",
            "/tmp/torchinductor_user/nq/cnqtho2nij4af6swya42kmd2tvb2py3brmcdj3mike6uxkmojqam.py",
        ] {
            assert!(is_library(lib), "{lib}");
        }
        for user in [
            "/home/user/project/model.py",
            "D:\\Dev\\assignment2-systems\\cs336-basics\\cs336_basics\\model.py",
            "train.py",
            "misc/attention.py",
            "/home/user/c/src/model.py",
        ] {
            assert!(!is_library(user), "{user}");
        }
    }

    #[test]
    fn top_user_frame_skips_library_frames() {
        let mut t = FrameTable::default();
        let v = Value::List(
            [("unwind", "??", 0), ("forward", "/p/model.py", 54)]
                .iter()
                .map(|&(n, f, l)| {
                    Value::Dict(
                        [
                            ("name", Value::String(n.into())),
                            ("filename", Value::String(f.into())),
                            ("line", Value::I64(l)),
                        ]
                        .into_iter()
                        .map(|(k, v)| (HashableValue::String(k.into()), v))
                        .collect(),
                    )
                })
                .collect(),
        );
        let id = t.intern_value(&v);
        let top = t.top_user_frame(id).unwrap();
        assert_eq!((top.name.as_str(), top.line), ("forward", 54));
        assert_eq!(frame_line(&top), "forward (p/model.py:54)");
        let long = Frame {
            name: "n".repeat(5000),
            filename: format!("/a/{}", "f".repeat(300)),
            line: 7,
        };
        assert_eq!(
            frame_line(&long),
            format!("{}… (a/{}…:7)", "n".repeat(240), "f".repeat(238))
        );
        assert_eq!(t.intern_value(&Value::None), NO_FRAMES);
    }
}
