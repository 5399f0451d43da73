//! JSON parsed with duplicate keys refused. serde_json keeps the last of two equal keys in an
//! object silently (`{"values": [1, 2], "values": [3, 4]}` reads as `[3, 4]`), so a file that
//! says two things would be computed on one of them; [`parse`] builds the same
//! [`serde_json::Value`] in one pass and refuses a repeated key, naming it and where it sits
//! (`params.values`, `tensors[2].name`), with serde_json's line and column.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Parses `bytes` as JSON into a [`Value`], refusing an object that holds a key twice.
///
/// # Errors
/// serde_json's error: not JSON (with the line and column), or `duplicate key `K` …`.
pub fn parse(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = Strict { at: "" }.deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// A value at path `at` (empty at the top).
struct Strict<'p> {
    at: &'p str,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// `at` joined with an object key.
fn child(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

/// A key shown in a message: at most 40 characters, controls escaped.
fn shown(key: &str) -> String {
    let mut s: String = key.chars().take(40).flat_map(char::escape_debug).collect();
    if key.chars().count() > 40 {
        s.push('…');
    }
    s
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let at = format!("{}[{}]", self.at, items.len());
            match seq.next_element_seed(Strict { at: &at })? {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let at = child(self.at, &key);
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format_args!(
                    "duplicate key `{}`: the file gives it twice; keep one",
                    shown(&at)
                )));
            }
            let v = map.next_value_seed(Strict { at: &at })?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_repeated_key_is_refused_by_its_path() {
        let e = parse(br#"{"values": [1, 2, 3, 4], "values": [5, 6, 7, 8]}"#).unwrap_err();
        assert!(e.to_string().starts_with("duplicate key `values`"), "{e}");
        let e = parse(br#"{"scene": "banks", "params": {"pad": 1, "pad": 2}}"#).unwrap_err();
        assert!(
            e.to_string().starts_with("duplicate key `params.pad`"),
            "{e}"
        );
        assert_eq!(e.line(), 1);
        let e = parse(br#"{"t": [{"a": 1}, {"a": 1, "a": 1}]}"#).unwrap_err();
        assert!(e.to_string().starts_with("duplicate key `t[1].a`"), "{e}");
        // The same key in two objects is no repetition.
        assert!(parse(br#"[{"a": 1}, {"a": 2}]"#).is_ok());
        assert!(parse(b"{} x").is_err());
    }

    proptest! {
        /// Any object: the strict reader gives serde_json's value when its keys are distinct,
        /// and refuses it naming the first repeated key otherwise.
        #[test]
        fn distinct_keys_read_as_serde_json_does_and_a_repeat_is_named(
            keys in proptest::collection::vec("[a-c\\u{1}\\u{7f}é\"\\\\]{0,3}", 0..8),
            values in proptest::collection::vec(-1e6f64..1e6, 8),
        ) {
            let body: Vec<String> = keys
                .iter()
                .zip(&values)
                .map(|(k, v)| format!("{}: {v}", Value::String(k.clone())))
                .collect();
            let text = format!("{{{}}}", body.join(", "));
            let mut seen = HashSet::new();
            let first_repeat = keys.iter().find(|k| !seen.insert(k.as_str()));
            match (parse(text.as_bytes()), first_repeat) {
                (Ok(v), None) => {
                    let want: Value = serde_json::from_str(&text).unwrap();
                    prop_assert_eq!(v, want);
                }
                (Err(e), Some(k)) => {
                    let want = format!("duplicate key `{}`", shown(k));
                    prop_assert!(e.to_string().starts_with(&want), "{} / {}", e, want);
                }
                (r, k) => prop_assert!(false, "{:?} for repeat {:?} in {}", r, k, text),
            }
        }
    }
}
