//! A small WGSL highlighter for the kernel lab's source: keywords, types, builtins and
//! attributes, numbers and comments, one [`egui::text::LayoutJob`] per line. It only colours
//! text; naga (in `core`) is what parses and validates the kernel.

use egui::Color32;
use egui::text::{LayoutJob, TextFormat};

/// What a piece of a line is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// `fn`, `var`, `let`, `if`, `for`, … .
    Keyword,
    /// `f32`, `u32`, `vec3`, `array`, `atomic`, … .
    Type,
    /// Attributes (`@compute`, `@builtin(…)`) and built-in functions (`workgroupBarrier`,
    /// `subgroupShuffleXor`, `atomicAdd`, …).
    Builtin,
    /// A number literal (`128u`, `0.5`, `0x1f`).
    Number,
    /// `// …` and `/* … */`.
    Comment,
    /// Everything else: names, operators, punctuation, spaces.
    Plain,
}

const KEYWORDS: &[&str] = &[
    "alias",
    "break",
    "case",
    "const",
    "const_assert",
    "continue",
    "continuing",
    "default",
    "diagnostic",
    "discard",
    "else",
    "enable",
    "false",
    "fn",
    "for",
    "if",
    "let",
    "loop",
    "override",
    "requires",
    "return",
    "struct",
    "switch",
    "true",
    "var",
    "while",
    "storage",
    "uniform",
    "workgroup",
    "private",
    "function",
    "read",
    "read_write",
    "write",
];

const TYPES: &[&str] = &[
    "bool",
    "f16",
    "f32",
    "i32",
    "u32",
    "vec2",
    "vec3",
    "vec4",
    "vec2f",
    "vec3f",
    "vec4f",
    "vec2u",
    "vec3u",
    "vec4u",
    "vec2i",
    "vec3i",
    "vec4i",
    "vec2h",
    "vec3h",
    "vec4h",
    "mat2x2",
    "mat2x3",
    "mat2x4",
    "mat3x2",
    "mat3x3",
    "mat3x4",
    "mat4x2",
    "mat4x3",
    "mat4x4",
    "array",
    "atomic",
    "ptr",
    "sampler",
    "texture_2d",
];

/// Built-in functions beginning with these are coloured as built-ins.
const BUILTIN_PREFIXES: &[&str] = &["subgroup", "atomic", "workgroup", "storageBarrier"];

const BUILTINS: &[&str] = &[
    "abs",
    "all",
    "any",
    "arrayLength",
    "bitcast",
    "ceil",
    "clamp",
    "cos",
    "countOneBits",
    "dot",
    "exp",
    "exp2",
    "extractBits",
    "firstLeadingBit",
    "firstTrailingBit",
    "floor",
    "fma",
    "fract",
    "insertBits",
    "inverseSqrt",
    "length",
    "log",
    "log2",
    "max",
    "min",
    "mix",
    "pow",
    "reverseBits",
    "round",
    "select",
    "sign",
    "sin",
    "sqrt",
    "tanh",
    "trunc",
];

/// Splits one source line into coloured pieces. `in_block` says whether the line starts inside
/// a `/* … */` comment; the return value whether the next line does.
pub fn tokens(line: &str, mut in_block: bool) -> (Vec<(Token, &str)>, bool) {
    let mut out: Vec<(Token, &str)> = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &line[i..];
        if in_block {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            in_block = !rest[..end].ends_with("*/");
            out.push((Token::Comment, &rest[..end]));
            i += end;
            continue;
        }
        if rest.starts_with("//") {
            out.push((Token::Comment, rest));
            break;
        }
        if rest.starts_with("/*") {
            in_block = true;
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        let len = if c == '@' {
            let n = 1 + ident_len(&rest[1..]);
            out.push((Token::Builtin, &rest[..n]));
            n
        } else if c.is_ascii_digit()
            || (c == '.' && rest[1..].starts_with(|d: char| d.is_ascii_digit()))
        {
            let n = rest
                .char_indices()
                .find(|&(_, d)| !(d.is_ascii_alphanumeric() || d == '.' || d == '_'))
                .map_or(rest.len(), |(k, _)| k);
            out.push((Token::Number, &rest[..n]));
            n
        } else if c.is_alphabetic() || c == '_' {
            let n = ident_len(rest);
            let word = &rest[..n];
            let kind = if KEYWORDS.contains(&word) {
                Token::Keyword
            } else if TYPES.contains(&word) {
                Token::Type
            } else if BUILTINS.contains(&word)
                || BUILTIN_PREFIXES.iter().any(|p| word.starts_with(p))
            {
                Token::Builtin
            } else {
                Token::Plain
            };
            out.push((kind, word));
            n
        } else {
            // Operators, punctuation and spaces up to the next interesting character.
            let n = rest
                .char_indices()
                .skip(1)
                .find(|&(k, d)| {
                    d.is_alphanumeric()
                        || d == '_'
                        || d == '@'
                        || rest[k..].starts_with("//")
                        || rest[k..].starts_with("/*")
                })
                .map_or(rest.len(), |(k, _)| k);
            out.push((Token::Plain, &rest[..n]));
            n
        };
        i += len.max(1);
    }
    (out, in_block)
}

/// Bytes of the identifier `s` starts with.
fn ident_len(s: &str) -> usize {
    s.char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_'))
        .map_or(s.len(), |(k, _)| k)
}

/// The colour of `token` on a dark or light background.
pub fn colour(token: Token, dark: bool, plain: Color32) -> Color32 {
    match (token, dark) {
        (Token::Keyword, true) => Color32::from_rgb(86, 180, 233),
        (Token::Keyword, false) => Color32::from_rgb(0, 90, 160),
        (Token::Type, true) => Color32::from_rgb(0, 200, 150),
        (Token::Type, false) => Color32::from_rgb(0, 120, 90),
        (Token::Builtin, true) => Color32::from_rgb(230, 159, 0),
        (Token::Builtin, false) => Color32::from_rgb(170, 90, 0),
        (Token::Number, true) => Color32::from_rgb(204, 160, 220),
        (Token::Number, false) => Color32::from_rgb(150, 60, 130),
        (Token::Comment, _) => Color32::from_gray(128),
        (Token::Plain, _) => plain,
    }
}

/// One line of WGSL laid out in `font`, coloured; `underline` marks it as where the source
/// fails to parse. Returns the job and whether the next line starts inside a block comment.
pub fn line_job(
    line: &str,
    in_block: bool,
    font: egui::FontId,
    dark: bool,
    plain: Color32,
    underline: Option<Color32>,
) -> (LayoutJob, bool) {
    let mut job = LayoutJob::default();
    let next = append_line(&mut job, line, in_block, &font, dark, plain, underline);
    (job, next)
}

/// Appends one line of WGSL to `job` (see [`line_job`]); returns whether the next line starts
/// inside a block comment.
pub fn append_line(
    job: &mut LayoutJob,
    line: &str,
    in_block: bool,
    font: &egui::FontId,
    dark: bool,
    plain: Color32,
    underline: Option<Color32>,
) -> bool {
    let (parts, next) = tokens(line, in_block);
    for (t, s) in parts {
        let mut format = TextFormat::simple(font.clone(), colour(t, dark, plain));
        if t == Token::Comment {
            format.italics = true;
        }
        if let Some(c) = underline {
            format.underline = egui::Stroke::new(1.5, c);
        }
        job.append(s, 0.0, format);
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(line: &str) -> Vec<(Token, &str)> {
        tokens(line, false)
            .0
            .into_iter()
            .filter(|(_, s)| !s.trim().is_empty())
            .collect()
    }

    #[test]
    fn colours_keywords_types_builtins_numbers_and_comments() {
        let k = kinds("    for (var s = 128u; s > 0u; s = s >> 1u) { // halve");
        assert!(k.contains(&(Token::Keyword, "for")));
        assert!(k.contains(&(Token::Keyword, "var")));
        assert!(k.contains(&(Token::Number, "128u")));
        assert!(k.contains(&(Token::Number, "1u")));
        assert_eq!(k.last(), Some(&(Token::Comment, "// halve")));
        let k = kinds("@group(0) @binding(1) var<storage, read_write> sums: array<f32>;");
        assert_eq!(k.first(), Some(&(Token::Builtin, "@group")));
        assert!(k.contains(&(Token::Keyword, "storage")));
        assert!(k.contains(&(Token::Type, "array")));
        assert!(k.contains(&(Token::Type, "f32")));
        let k = kinds("let v = subgroupShuffleXor(x, 16u); workgroupBarrier();");
        assert!(k.contains(&(Token::Builtin, "subgroupShuffleXor")));
        assert!(k.contains(&(Token::Builtin, "workgroupBarrier")));
        assert!(k.contains(&(Token::Plain, "x")));
    }

    #[test]
    fn every_byte_is_kept_and_block_comments_span_lines() {
        let line = "a /* b */ c /* d";
        let (parts, open) = tokens(line, false);
        assert_eq!(parts.iter().map(|(_, s)| *s).collect::<String>(), line);
        assert!(open);
        let (parts, open) = tokens("e */ f", true);
        assert_eq!(parts[0], (Token::Comment, "e */"));
        assert!(!open);
        // Non-ASCII text in a comment or a name is kept whole.
        let line = "let λ = 1.5e-3; // 线程束";
        let (parts, _) = tokens(line, false);
        assert_eq!(parts.iter().map(|(_, s)| *s).collect::<String>(), line);
    }
}
