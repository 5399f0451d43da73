//! A user's own data for a scene: `--input FILE.json` on `report`, `export` and `gui`, and the
//! window's *Input* panel. The file is read through [`super::read_regular`] (type and size
//! first, at most [`MAX_INPUT_BYTES`]), parsed as JSON, and each scene's
//! [`crate::scene::InputSpec`] validates it with the readers here — which name the key (and the
//! position, `x[2][5]`) of anything missing, ragged, non-finite or out of range, as
//! [`Error::InvalidInput`].
//!
//! Sizes are bounded twice: the file by [`MAX_INPUT_BYTES`] before it is read, each list by
//! [`MAX_ELEMENTS`] before anything of its size is allocated.

use std::path::Path;

use serde_json::{Map, Value};

use crate::Error;
use crate::text::Text;

/// Largest input file read (bytes): 16 MiB holds about a million numbers.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// Most numbers one input key may hold (all rows of a matrix together).
pub const MAX_ELEMENTS: usize = 1 << 20;

/// Reads and parses the input file at `path`.
///
/// # Errors
/// [`Error::BadInput`] naming the path: not a regular file, over [`MAX_INPUT_BYTES`], not UTF-8
/// JSON (with the line and column), or not a JSON object.
pub fn read(path: &Path) -> Result<Value, Error> {
    let bytes = super::read_regular(path, MAX_INPUT_BYTES, "input")?;
    parse(&bytes).map_err(|e| match e {
        Error::BadInput(m) => Error::BadInput(format!("input `{}`: {m}", path.display())),
        other => other,
    })
}

/// Parses input bytes (the window's editor hands its text here).
///
/// # Errors
/// [`Error::BadInput`]: over [`MAX_INPUT_BYTES`], not JSON, or not an object.
pub fn parse(bytes: &[u8]) -> Result<Value, Error> {
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Error::BadInput(format!(
            "an input is at most {MAX_INPUT_BYTES} bytes; this one has {}",
            bytes.len()
        )));
    }
    let v = super::strict::parse(bytes).map_err(|e| Error::BadInput(not_json(bytes, &e)))?;
    if !v.is_object() {
        return Err(Error::BadInput(format!(
            "an input is a JSON object of keys (`{{\"x\": [[…]], …}}`), not {}",
            kind(&v)
        )));
    }
    Ok(v)
}

/// Why `bytes` did not parse, in words: serde_json's reason, with a UTF-8 byte-order mark (which
/// some editors put first and JSON does not allow) named, as serde_json only says "expected value".
pub(crate) fn not_json(bytes: &[u8], e: &serde_json::Error) -> String {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        format!(
            "not JSON: the file starts with a UTF-8 byte-order mark (EF BB BF); save it without one ({e})"
        )
    } else if e.to_string().starts_with("duplicate key") {
        e.to_string()
    } else {
        format!("not JSON: {e}")
    }
}

/// The JSON type of `v`, in words.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The kind of a JSON value in Chinese, as [`kind`] words it in English: `字符串` for `a string`.
pub fn kind_zh(v: &Value) -> &'static str {
    match v {
        Value::Null => " null",
        Value::Bool(_) => "布尔值",
        Value::Number(_) => "数",
        Value::String(_) => "字符串",
        Value::Array(_) => "列表",
        Value::Object(_) => "对象",
    }
}

/// `input` as an object whose keys are all in `allowed`.
///
/// # Errors
/// [`Error::InvalidInput`] for an input that is not an object, or a key not in `allowed` (the
/// message lists them: a misspelt key is never ignored).
pub fn object<'a>(input: &'a Value, allowed: &[&str]) -> Result<&'a Map<String, Value>, Error> {
    let Value::Object(map) = input else {
        return Err(Error::input(
            "",
            Text::new(
                format!("expected a JSON object of keys, got {}", kind(input)),
                format!("应为由键组成的 JSON 对象，实为{}", kind_zh(input)),
            ),
        ));
    };
    if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(Error::input(
            k.as_str(),
            Text::new(
                format!(
                    "unknown key; this scene's input takes {}",
                    allowed.join(", ")
                ),
                format!("未知的键；此场景的输入接受 {}", allowed.join(", ")),
            ),
        ));
    }
    Ok(map)
}

/// The value of a key that must be there.
///
/// # Errors
/// [`Error::InvalidInput`] when it is missing.
pub fn required<'a>(map: &'a Map<String, Value>, key: &str) -> Result<&'a Value, Error> {
    map.get(key)
        .ok_or_else(|| Error::input_fixed(key, "missing (required)", "缺失（必填）"))
}

/// A finite number.
///
/// # Errors
/// [`Error::InvalidInput`] naming `key`: not a number, or not finite.
pub fn number(v: &Value, key: &str) -> Result<f64, Error> {
    match v.as_f64() {
        Some(x) if x.is_finite() => Ok(x),
        Some(_) => Err(Error::input_fixed(
            key,
            "expected a finite number",
            "应为有限的数",
        )),
        None => Err(not_a(key, v, "a number", "数")),
    }
}

/// A number that may also be infinite or NaN, spelt as the strings `"inf"`, `"-inf"` or `"nan"`
/// (JSON has no literal for them): masked scores are `"-inf"`.
///
/// # Errors
/// [`Error::InvalidInput`] naming `key`: neither a number nor one of those strings.
pub fn extended_number(v: &Value, key: &str) -> Result<f64, Error> {
    match v {
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "inf" | "+inf" | "infinity" => Ok(f64::INFINITY),
            "-inf" | "-infinity" => Ok(f64::NEG_INFINITY),
            "nan" => Ok(f64::NAN),
            _ => Err(Error::input(
                key,
                Text::new(
                    format!(
                        "expected a number or \"inf\", \"-inf\", \"nan\"; got the string {s:?}"
                    ),
                    format!("应为数或 \"inf\"、\"-inf\"、\"nan\"，实为字符串 {s:?}"),
                ),
            )),
        },
        _ => v.as_f64().ok_or_else(|| not_a(key, v, "a number", "数")),
    }
}

/// A number `min ≤ x ≤ max` (finite).
///
/// # Errors
/// [`Error::InvalidInput`] naming `key`: not a finite number, or outside the range.
pub fn number_in(v: &Value, key: &str, min: f64, max: f64) -> Result<f64, Error> {
    let x = number(v, key)?;
    if x < min || x > max {
        // Exponent form past 24 digits: 1e300 is not written as 301 digits.
        let r = crate::error::fmt_real;
        return Err(Error::input(
            key,
            Text::new(
                format!("{} is outside {} ..= {}", r(x), r(min), r(max)),
                format!("{} 不在 {} ..= {} 之内", r(x), r(min), r(max)),
            ),
        ));
    }
    Ok(x)
}

/// A whole number `min ≤ n ≤ max` (`3.0` counts as 3).
///
/// # Errors
/// [`Error::InvalidInput`] naming `key`: not a whole number, or outside the range.
pub fn integer(v: &Value, key: &str, min: u64, max: u64) -> Result<u64, Error> {
    let n = match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x <= 9.0e15)
                // Exact: a whole number below 2^53.
                .map(|x| x as u64)
        }),
        _ => None,
    };
    match n {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        Some(n) => Err(Error::input(
            key,
            Text::new(
                format!("{n} is outside {min} ..= {max}"),
                format!("{n} 不在 {min} ..= {max} 之内"),
            ),
        )),
        None => Err(Error::input(
            key,
            Text::new(
                format!("expected a whole number {min} ..= {max}, got {}", shown(v)),
                format!("应为 {min} ..= {max} 的整数，实为 {}", shown(v)),
            ),
        )),
    }
}

/// A boolean.
///
/// # Errors
/// [`Error::InvalidInput`] naming `key`: not `true` or `false`.
pub fn boolean(v: &Value, key: &str) -> Result<bool, Error> {
    v.as_bool().ok_or_else(|| {
        Error::input(
            key,
            Text::new(
                format!("expected true or false, got {}", shown(v)),
                format!("应为 true 或 false，实为 {}", shown(v)),
            ),
        )
    })
}

/// A string.
///
/// # Errors
/// [`Error::InvalidInput`] naming `key`: not a string.
pub fn string<'a>(v: &'a Value, key: &str) -> Result<&'a str, Error> {
    v.as_str()
        .ok_or_else(|| not_a(key, v, "a string", "字符串"))
}

/// A list of at most `max` items (its length checked before anything of its size is made).
///
/// # Errors
/// [`Error::InvalidInput`] naming `key`: not a list, empty, or longer than `max`.
pub fn list<'a>(v: &'a Value, key: &str, max: usize) -> Result<&'a [Value], Error> {
    let Value::Array(items) = v else {
        return Err(not_a(key, v, "a list", "列表"));
    };
    if items.is_empty() {
        return Err(Error::input_fixed(key, "the list is empty", "列表为空"));
    }
    if items.len() > max {
        return Err(Error::input(
            key,
            Text::new(
                format!("{} items; at most {max}", items.len()),
                format!("{} 项；至多 {max} 项", items.len()),
            ),
        ));
    }
    Ok(items)
}

/// A non-empty list of numbers, each read by `each` (e.g. [`number`], [`extended_number`]).
///
/// # Errors
/// [`Error::InvalidInput`] naming `key[i]` for the first bad item, or `key` for a list that is
/// empty or has more than [`MAX_ELEMENTS`] items.
pub fn vector(
    v: &Value,
    key: &str,
    each: fn(&Value, &str) -> Result<f64, Error>,
) -> Result<Vec<f64>, Error> {
    let items = list(v, key, MAX_ELEMENTS)?;
    items
        .iter()
        .enumerate()
        .map(|(i, x)| each(x, &format!("{key}[{i}]")))
        .collect()
}

/// A rectangular, non-empty matrix of numbers (rows × columns), each read by `each`.
///
/// # Errors
/// [`Error::InvalidInput`] naming `key[r]` for a row that is not a list or whose length differs
/// from row 0's (ragged), `key[r][c]` for a bad number, or `key` when the matrix is empty or
/// holds more than [`MAX_ELEMENTS`] numbers.
pub fn matrix(
    v: &Value,
    key: &str,
    each: fn(&Value, &str) -> Result<f64, Error>,
) -> Result<Vec<Vec<f64>>, Error> {
    let rows = list(v, key, MAX_ELEMENTS)?;
    let mut width = None;
    let mut total = 0_usize;
    for (r, row) in rows.iter().enumerate() {
        let n = list(row, &format!("{key}[{r}]"), MAX_ELEMENTS)?.len();
        let w = *width.get_or_insert(n);
        if n != w {
            return Err(Error::input(
                format!("{key}[{r}]"),
                Text::new(
                    format!("row {r} has {n} values but row 0 has {w}: rows must be equally long"),
                    format!("第 {r} 行有 {n} 个值，而第 0 行有 {w} 个：各行须一样长"),
                ),
            ));
        }
        total = total.saturating_add(n);
        if total > MAX_ELEMENTS {
            return Err(Error::input(
                key,
                Text::new(
                    format!("more than {MAX_ELEMENTS} numbers in all"),
                    format!("总共超过 {MAX_ELEMENTS} 个数"),
                ),
            ));
        }
    }
    rows.iter()
        .enumerate()
        .map(|(r, row)| vector(row, &format!("{key}[{r}]"), each))
        .collect()
}

/// Checks that `m` has `rows × cols` (another key's shape), naming both keys if not.
///
/// # Errors
/// [`Error::InvalidInput`] naming `key`.
pub fn same_shape(
    m: &[Vec<f64>],
    key: &str,
    rows: usize,
    cols: usize,
    like: &str,
) -> Result<(), Error> {
    let (r, c) = (m.len(), m.first().map_or(0, Vec::len));
    if (r, c) != (rows, cols) {
        return Err(Error::input(
            key,
            Text::new(
                format!(
                    "is {r} × {c} but `{like}` is {rows} × {cols}: they must have the same shape"
                ),
                format!("为 {r} × {c}，而 `{like}` 为 {rows} × {cols}：二者形状须相同"),
            ),
        ));
    }
    Ok(())
}

/// Serialises a number as JSON can hold it: finite as a number, otherwise as the string
/// `"inf"`, `"-inf"` or `"nan"` that [`extended_number`] reads back (serde_json would write
/// `null`, which says nothing about which). For `#[serde(serialize_with = "…")]`.
///
/// # Errors
/// The serializer's.
pub fn ser_extended<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(*v)
    } else if v.is_nan() {
        s.serialize_str("nan")
    } else if *v > 0.0 {
        s.serialize_str("inf")
    } else {
        s.serialize_str("-inf")
    }
}

/// [`ser_extended`] for an f32.
///
/// # Errors
/// The serializer's.
pub fn ser_extended_f32<S: serde::Serializer>(v: &f32, s: S) -> Result<S::Ok, S::Error> {
    ser_extended(&f64::from(*v), s)
}

/// [`ser_extended`] for each number of a list.
///
/// # Errors
/// The serializer's.
pub fn ser_extended_vec<S: serde::Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    struct One(f64);
    impl serde::Serialize for One {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            ser_extended(&self.0, s)
        }
    }
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for &x in v {
        seq.serialize_element(&One(x))?;
    }
    seq.end()
}

/// `v` shown in a message, bounded.
/// "expected a number, got a string" for `key` in both languages: `what` is the kind wanted,
/// in English (`a number`) and in Chinese (`数`).
fn not_a(key: &str, v: &Value, what: &str, what_zh: &str) -> Error {
    Error::input(
        key,
        Text::new(
            format!("expected {what}, got {}", kind(v)),
            format!("应为{what_zh}，实为{}", kind_zh(v)),
        ),
    )
}

fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problem(e: Error) -> (String, String) {
        match e {
            Error::InvalidInput { key, problem } => (key, problem.en),
            other => panic!("expected InvalidInput, got {other:?}"),
        }
    }

    #[test]
    fn ragged_rows_and_bad_numbers_name_their_position() {
        let (k, p) = problem(matrix(&json!([[1, 2], [3]]), "x", number).unwrap_err());
        assert_eq!(k, "x[1]");
        assert!(
            p.contains("row 1 has 1") && p.contains("row 0 has 2"),
            "{p}"
        );
        let (k, _) = problem(matrix(&json!([[1, 2], [3, "a"]]), "x", number).unwrap_err());
        assert_eq!(k, "x[1][1]");
        let (k, _) = problem(matrix(&json!([]), "x", number).unwrap_err());
        assert_eq!(k, "x");
        assert_eq!(
            matrix(&json!([[1, 2.5], [3, 4]]), "x", number).unwrap(),
            vec![vec![1.0, 2.5], vec![3.0, 4.0]]
        );
    }

    #[test]
    fn infinities_only_where_spelt_and_allowed() {
        assert_eq!(
            extended_number(&json!("-inf"), "s").unwrap(),
            f64::NEG_INFINITY
        );
        assert!(extended_number(&json!("nan"), "s").unwrap().is_nan());
        assert!(number(&json!("-inf"), "s").is_err());
        let (k, p) = problem(extended_number(&json!("lots"), "s[0]").unwrap_err());
        assert_eq!(k, "s[0]");
        assert!(p.contains("\"lots\""), "{p}");
    }

    #[test]
    fn unknown_keys_and_non_objects_are_refused() {
        let v = json!({"x": 1, "gama": 2});
        let (k, p) = problem(object(&v, &["x", "gamma"]).unwrap_err());
        assert_eq!(k, "gama");
        assert!(p.contains("x, gamma"), "{p}");
        assert!(parse(b"[1, 2]").is_err());
        assert!(parse(b"{\"x\": ").is_err());
        assert!(parse(b"{\"x\": 1}").is_ok());
    }

    #[test]
    fn a_huge_number_out_of_range_is_shown_short() {
        let (k, p) = problem(number_in(&json!(1e300), "param", -1e30, 1e30).unwrap_err());
        assert_eq!(k, "param");
        assert_eq!(p, "1e300 is outside -1e30 ..= 1e30");
    }

    #[test]
    fn a_byte_order_mark_is_named() {
        let Err(Error::BadInput(m)) = parse(b"\xEF\xBB\xBF{\"x\": 1}") else {
            panic!("a BOM is not JSON");
        };
        assert!(m.contains("UTF-8 byte-order mark (EF BB BF)"), "{m}");
    }

    #[test]
    fn a_repeated_key_in_an_input_is_refused_naming_it() {
        let Err(Error::BadInput(m)) = parse(br#"{"values":[1,2,3,4],"values":[5,6,7,8]}"#) else {
            panic!("a repeated key is refused");
        };
        assert!(m.starts_with("duplicate key `values`"), "{m}");
    }

    #[test]
    fn integers_accept_whole_reals_and_bound_their_range() {
        assert_eq!(integer(&json!(3.0), "n", 1, 5).unwrap(), 3);
        assert!(integer(&json!(3.5), "n", 1, 5).is_err());
        assert!(integer(&json!(-1), "n", 0, 5).is_err());
        let (_, p) = problem(integer(&json!(1_000_000_000_u64), "n", 1, 1000).unwrap_err());
        assert!(p.contains("1000000000"), "{p}");
    }

    #[test]
    fn non_finite_numbers_serialise_as_the_strings_the_reader_takes() {
        #[derive(serde::Serialize)]
        struct T {
            #[serde(serialize_with = "ser_extended")]
            a: f64,
            #[serde(serialize_with = "ser_extended_vec")]
            b: Vec<f64>,
        }
        let v = serde_json::to_value(T {
            a: f64::NAN,
            b: vec![1.5, f64::INFINITY, f64::NEG_INFINITY],
        })
        .unwrap();
        assert_eq!(v, json!({"a": "nan", "b": [1.5, "inf", "-inf"]}));
        assert_eq!(extended_number(&v["b"][2], "b").unwrap(), f64::NEG_INFINITY);
    }

    #[test]
    fn a_list_longer_than_allowed_is_refused_by_its_length() {
        let v = Value::Array(vec![json!(0); 11]);
        let (k, p) = problem(list(&v, "grad", 10).unwrap_err());
        assert_eq!(k, "grad");
        assert!(p.contains("11 items"), "{p}");
    }
}
