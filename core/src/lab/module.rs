//! Parsing and validating a kernel with naga, choosing its compute entry point, and mapping
//! naga's spans (byte ranges of the source) to 1-based lines.

use naga::valid::{Capabilities, ModuleInfo, ShaderStages, SubgroupOperationSet, ValidationFlags};
use naga::{Module, ShaderStage, Span};

use crate::Error;
use crate::error::Expected;
use crate::text::Text;

/// A parse or validation error at a place in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    /// 1-based line (0 when naga gave no place).
    pub line: u32,
    /// 1-based column in bytes (0 when naga gave no place).
    pub column: u32,
    /// The text of that line.
    pub source_line: String,
    /// naga's message.
    pub message: String,
    /// Whether the parser (`true`) or the validator refused the source.
    pub parse: bool,
}

impl SourceError {
    /// The error in both languages: where, naga's message, and the line itself.
    pub fn text(&self) -> Text {
        let (what_en, what_zh) = if self.parse {
            ("WGSL parse error", "WGSL 解析错误")
        } else {
            ("WGSL validation error", "WGSL 校验错误")
        };
        let quote = if self.line > 0 {
            format!("\n  {} | {}", self.line, self.source_line)
        } else {
            String::new()
        };
        Text::new(
            format!(
                "{what_en} at line {}, column {}: {}{quote}",
                self.line, self.column, self.message
            ),
            format!(
                "{what_zh}（第 {} 行第 {} 列）：{}{quote}",
                self.line, self.column, self.message
            ),
        )
    }
}

impl From<SourceError> for Error {
    fn from(e: SourceError) -> Error {
        let t = e.text();
        Error::BadInput(format!("{}\n{}", t.en, t.zh))
    }
}

/// Byte offsets of line starts: spans → lines.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// The index of `source`.
    pub fn new(source: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// Lines in the source.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether the source is empty of lines (never: an empty text has one line).
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The 1-based line of byte `offset`.
    pub fn line_of(&self, offset: usize) -> u32 {
        self.starts.partition_point(|&s| s <= offset) as u32
    }

    /// The 1-based line where `span` starts (0 for a span naga left undefined).
    pub fn line(&self, span: Span) -> u32 {
        span.to_range().map_or(0, |r| self.line_of(r.start))
    }
}

/// A parsed, validated module and the entry point chosen.
#[derive(Debug)]
pub struct Program {
    /// naga's IR.
    pub module: Module,
    /// The validator's analysis (the type of every expression).
    pub info: ModuleInfo,
    /// Index of the entry point in `module.entry_points`.
    pub entry: usize,
    /// Spans → lines.
    pub lines: LineIndex,
}

fn source_line(source: &str, line: u32) -> String {
    source
        .lines()
        .nth(line.saturating_sub(1) as usize)
        .unwrap_or("")
        .trim_end()
        .to_owned()
}

/// Parses and validates `source` (WGSL with the subgroup operations and, under
/// `enable f16;`, `f16`).
///
/// # Errors
/// [`SourceError`] with the place of naga's first complaint.
pub fn parse(source: &str) -> Result<(Module, ModuleInfo), SourceError> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| {
        let loc = e.location(source);
        let (line, column) = loc.map_or((0, 0), |l| (l.line_number, l.line_position));
        SourceError {
            line,
            column,
            source_line: source_line(source, line),
            message: e.message().to_owned(),
            parse: true,
        }
    })?;
    let caps =
        Capabilities::SUBGROUP | Capabilities::SUBGROUP_BARRIER | Capabilities::SHADER_FLOAT16;
    let info = naga::valid::Validator::new(ValidationFlags::all(), caps)
        .subgroup_stages(ShaderStages::COMPUTE)
        .subgroup_operations(SubgroupOperationSet::all())
        .validate(&module)
        .map_err(|e| {
            let loc = e.location(source);
            let (line, column) = loc.map_or((0, 0), |l| (l.line_number, l.line_position));
            let mut message = e.as_inner().to_string();
            let mut src: &dyn std::error::Error = e.as_inner();
            while let Some(s) = src.source() {
                message.push_str(": ");
                message.push_str(&s.to_string());
                src = s;
            }
            SourceError {
                line,
                column,
                source_line: source_line(source, line),
                message,
                parse: false,
            }
        })?;
    Ok((module, info))
}

/// Parses, validates and picks the compute entry point `entry` (or the only one).
///
/// # Errors
/// [`Error::BadInput`] for a parse or validation error (both languages, with the line);
/// [`Error::InvalidParam`] `entry` naming the compute entry points when `entry` is none of them,
/// or when it is empty and there is not exactly one.
pub fn load(source: &str, entry: Option<&str>) -> Result<Program, Error> {
    let (module, info) = parse(source)?;
    let computes: Vec<(usize, &str)> = module
        .entry_points
        .iter()
        .enumerate()
        .filter(|(_, e)| e.stage == ShaderStage::Compute)
        .map(|(i, e)| (i, e.name.as_str()))
        .collect();
    let names: Vec<String> = computes.iter().map(|(_, n)| (*n).to_owned()).collect();
    let chosen = match entry.filter(|e| !e.is_empty()) {
        Some(name) => computes.iter().find(|(_, n)| *n == name).map(|(i, _)| *i),
        None if computes.len() == 1 => computes.first().map(|(i, _)| *i),
        None => None,
    };
    let Some(entry_index) = chosen else {
        let expected = if names.is_empty() {
            Expected::custom(
                "the source has no @compute entry point",
                "源代码里没有 @compute 入口点",
            )
        } else {
            Expected::custom(
                format!("one of the compute entry points: {}", names.join(", ")),
                format!("计算入口点之一：{}", names.join(", ")),
            )
        };
        return Err(Error::invalid("entry", entry.unwrap_or(""), expected));
    };
    Ok(Program {
        module,
        info,
        entry: entry_index,
        lines: LineIndex::new(source),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_errors_have_places() {
        let idx = LineIndex::new("a\nbc\n\nd");
        // Offsets 0 → line 1, 2 ('b') → 2, 5 (empty line) → 3, 6 ('d') → 4.
        assert_eq!([0, 2, 5, 6].map(|o| idx.line_of(o)), [1, 2, 3, 4]);
        let e = parse("fn f() {\n  let x = ;\n}").unwrap_err();
        assert_eq!((e.line, e.parse), (2, true));
        assert_eq!(e.source_line, "  let x = ;");
        assert!(e.text().zh.contains("第 2 行"));
        let two = "@compute @workgroup_size(1) fn a() {}\n@compute @workgroup_size(1) fn b() {}";
        match load(two, None) {
            Err(Error::InvalidParam { name, expected, .. }) => {
                assert_eq!(name, "entry");
                assert!(expected.to_string().contains("a, b"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(load(two, Some("b")).unwrap().entry, 1);
    }
}
