//! Scene parameters: a declared spec per parameter (kind, range, default, labels) and a set of
//! validated values. The GUI builds its sliders from the specs, the CLI's `--set key=value`
//! parses against them, presets and sessions store the values.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Error;

/// What kind of value a parameter takes, with its valid range and lecture default.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamKind {
    /// An integer in `min..=max`; `log` asks the GUI for a logarithmic slider.
    Int {
        /// Smallest valid value.
        min: i64,
        /// Largest valid value.
        max: i64,
        /// The lecture's value.
        default: i64,
        /// Logarithmic slider.
        log: bool,
    },
    /// A finite real number in `min..=max`.
    Float {
        /// Smallest valid value.
        min: f64,
        /// Largest valid value.
        max: f64,
        /// The lecture's value.
        default: f64,
        /// Logarithmic slider.
        log: bool,
    },
    /// One of a fixed list of names.
    Choice {
        /// The valid names, in display order.
        options: &'static [&'static str],
        /// The lecture's choice.
        default: &'static str,
    },
    /// Free text (a path, a comma-separated list); the scene validates it.
    Text {
        /// The default text.
        default: &'static str,
    },
}

/// One parameter of a scene.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    /// The name `--set` uses, e.g. `threads`.
    pub name: &'static str,
    /// A short English label with units, e.g. `threads per block`.
    pub label: &'static str,
    /// The same label in Chinese.
    pub label_zh: &'static str,
    /// Kind, range and default.
    pub kind: ParamKind,
}

impl ParamSpec {
    /// An integer parameter.
    pub const fn int(
        name: &'static str,
        label: &'static str,
        label_zh: &'static str,
        min: i64,
        max: i64,
        default: i64,
    ) -> Self {
        ParamSpec {
            name,
            label,
            label_zh,
            kind: ParamKind::Int {
                min,
                max,
                default,
                log: false,
            },
        }
    }

    /// A real-valued parameter.
    pub const fn float(
        name: &'static str,
        label: &'static str,
        label_zh: &'static str,
        min: f64,
        max: f64,
        default: f64,
    ) -> Self {
        ParamSpec {
            name,
            label,
            label_zh,
            kind: ParamKind::Float {
                min,
                max,
                default,
                log: false,
            },
        }
    }

    /// A choice among names.
    pub const fn choice(
        name: &'static str,
        label: &'static str,
        label_zh: &'static str,
        options: &'static [&'static str],
        default: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            label,
            label_zh,
            kind: ParamKind::Choice { options, default },
        }
    }

    /// A free-text parameter.
    pub const fn text(
        name: &'static str,
        label: &'static str,
        label_zh: &'static str,
        default: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            label,
            label_zh,
            kind: ParamKind::Text { default },
        }
    }

    /// The same spec with a logarithmic slider.
    pub const fn log(mut self) -> Self {
        match &mut self.kind {
            ParamKind::Int { log, .. } | ParamKind::Float { log, .. } => *log = true,
            _ => {}
        }
        self
    }

    /// The lecture default as a value.
    pub fn default_value(&self) -> ParamValue {
        match &self.kind {
            ParamKind::Int { default, .. } => ParamValue::Int(*default),
            ParamKind::Float { default, .. } => ParamValue::Float(*default),
            ParamKind::Choice { default, .. } => ParamValue::Text((*default).to_owned()),
            ParamKind::Text { default } => ParamValue::Text((*default).to_owned()),
        }
    }

    /// The valid range in words, for error messages (`an integer in 32..=1024`).
    pub fn expected(&self) -> String {
        match &self.kind {
            ParamKind::Int { min, max, .. } => format!("expected an integer in {min}..={max}"),
            ParamKind::Float { min, max, .. } => format!("expected a number in {min}..={max}"),
            ParamKind::Choice { options, .. } => format!("expected one of {}", options.join(", ")),
            ParamKind::Text { .. } => "expected text".to_owned(),
        }
    }

    /// Parses and range-checks `text` for this parameter.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn parse(&self, text: &str) -> Result<ParamValue, Error> {
        let t = text.trim();
        let bad = || Error::invalid(self.name, t, self.expected());
        let value = match &self.kind {
            ParamKind::Int { .. } => {
                // Accept `1e3`-style and `1_000` spellings, but only for exact integers.
                let cleaned = t.replace('_', "");
                match cleaned.parse::<i64>() {
                    Ok(v) => ParamValue::Int(v),
                    Err(_) => {
                        let f: f64 = cleaned.parse().map_err(|_| bad())?;
                        if f.fract() != 0.0 || !f.is_finite() || f.abs() > 9.0e15 {
                            return Err(bad());
                        }
                        ParamValue::Int(f as i64)
                    }
                }
            }
            ParamKind::Float { .. } => ParamValue::Float(t.parse().map_err(|_| bad())?),
            ParamKind::Choice { .. } | ParamKind::Text { .. } => ParamValue::Text(t.to_owned()),
        };
        self.check(&value)?;
        Ok(value)
    }

    /// Checks a value against this spec's kind and range.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn check(&self, value: &ParamValue) -> Result<(), Error> {
        let ok = match (&self.kind, value) {
            (ParamKind::Int { min, max, .. }, ParamValue::Int(v)) => (*min..=*max).contains(v),
            (ParamKind::Float { min, max, .. }, ParamValue::Float(v)) => {
                v.is_finite() && *v >= *min && *v <= *max
            }
            (ParamKind::Float { min, max, .. }, ParamValue::Int(v)) => {
                (*v as f64) >= *min && (*v as f64) <= *max
            }
            (ParamKind::Choice { options, .. }, ParamValue::Text(v)) => {
                options.contains(&v.as_str())
            }
            (ParamKind::Text { .. }, ParamValue::Text(v)) => v.len() <= 4096,
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(Error::invalid(self.name, value, self.expected()))
        }
    }
}

/// A parameter value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// An integer.
    Int(i64),
    /// A real number.
    Float(f64),
    /// A choice or free text.
    Text(String),
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Int(v) => write!(f, "{v}"),
            ParamValue::Float(v) => write!(f, "{v}"),
            ParamValue::Text(v) => write!(f, "{v}"),
        }
    }
}

/// A complete, validated set of values for one scene's parameters (every spec has a value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(transparent)]
pub struct ParamValues(pub BTreeMap<String, ParamValue>);

impl ParamValues {
    /// Every parameter at its lecture default.
    pub fn defaults(specs: &[ParamSpec]) -> Self {
        ParamValues(
            specs
                .iter()
                .map(|s| (s.name.to_owned(), s.default_value()))
                .collect(),
        )
    }

    /// Parses `key=value` (as `--set` gives it) against `specs` and stores it.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an unknown key (listing the known ones), a missing `=`, or a
    /// value out of range.
    pub fn set_assignment(&mut self, specs: &[ParamSpec], assignment: &str) -> Result<(), Error> {
        let (key, value) = assignment.split_once('=').ok_or_else(|| {
            Error::invalid(assignment, "", "expected key=value, e.g. --set threads=256")
        })?;
        self.set(specs, key.trim(), value)
    }

    /// Parses `value` for parameter `key` against `specs` and stores it.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an unknown key or a value out of range.
    pub fn set(&mut self, specs: &[ParamSpec], key: &str, value: &str) -> Result<(), Error> {
        let spec = specs.iter().find(|s| s.name == key).ok_or_else(|| {
            let known: Vec<_> = specs.iter().map(|s| s.name).collect();
            Error::invalid(
                key,
                value,
                if known.is_empty() {
                    "this scene takes no parameters".to_owned()
                } else {
                    format!("unknown parameter; this scene takes {}", known.join(", "))
                },
            )
        })?;
        let v = spec.parse(value)?;
        self.0.insert(key.to_owned(), v);
        Ok(())
    }

    /// Checks every value against its spec and fills missing ones with defaults.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for the first value out of range or an unknown key.
    pub fn validated(mut self, specs: &[ParamSpec]) -> Result<Self, Error> {
        for key in self.0.keys() {
            if !specs.iter().any(|s| s.name == key) {
                return Err(Error::invalid(key, &self.0[key], "unknown parameter"));
            }
        }
        for s in specs {
            match self.0.get(s.name) {
                Some(v) => s.check(v)?,
                None => {
                    self.0.insert(s.name.to_owned(), s.default_value());
                }
            }
        }
        Ok(self)
    }

    /// The integer value of `name`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when it is missing or not an integer.
    pub fn int(&self, name: &str) -> Result<i64, Error> {
        match self.0.get(name) {
            Some(ParamValue::Int(v)) => Ok(*v),
            Some(v) => Err(Error::invalid(name, v, "expected an integer")),
            None => Err(Error::invalid(name, "", "missing")),
        }
    }

    /// The integer value of `name` as a `usize` (specs keep these non-negative).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when it is missing, not an integer, or negative.
    pub fn usize(&self, name: &str) -> Result<usize, Error> {
        let v = self.int(name)?;
        usize::try_from(v).map_err(|_| Error::invalid(name, v, "expected a non-negative integer"))
    }

    /// The real value of `name` (integers are accepted).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when it is missing or not a number.
    pub fn float(&self, name: &str) -> Result<f64, Error> {
        match self.0.get(name) {
            Some(ParamValue::Float(v)) => Ok(*v),
            Some(ParamValue::Int(v)) => Ok(*v as f64),
            Some(v) => Err(Error::invalid(name, v, "expected a number")),
            None => Err(Error::invalid(name, "", "missing")),
        }
    }

    /// The text value of `name` (a choice or free text).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when it is missing or not text.
    pub fn text(&self, name: &str) -> Result<&str, Error> {
        match self.0.get(name) {
            Some(ParamValue::Text(v)) => Ok(v),
            Some(v) => Err(Error::invalid(name, v, "expected text")),
            None => Err(Error::invalid(name, "", "missing")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec::int("threads", "threads", "线程", 32, 1024, 256),
        ParamSpec::choice("pattern", "pattern", "模式", &["row", "column"], "column"),
    ];

    #[test]
    fn defaults_then_set_and_reject() {
        let mut v = ParamValues::defaults(SPECS);
        assert_eq!(v.int("threads").unwrap(), 256);
        v.set_assignment(SPECS, "threads=512").unwrap();
        assert_eq!(v.int("threads").unwrap(), 512);
        let e = v.set_assignment(SPECS, "threads=2048").unwrap_err();
        assert!(e.to_string().contains("32..=1024"), "{e}");
        let e = v.set_assignment(SPECS, "pattern=zigzag").unwrap_err();
        assert!(e.to_string().contains("row, column"), "{e}");
        let e = v.set_assignment(SPECS, "warp=32").unwrap_err();
        assert!(e.to_string().contains("threads, pattern"), "{e}");
        assert!(v.set_assignment(SPECS, "threads").is_err());
        assert!(v.set_assignment(SPECS, "threads=1.5").is_err());
        v.set_assignment(SPECS, "threads=1e2").unwrap();
        assert_eq!(v.int("threads").unwrap(), 100);
    }
}
