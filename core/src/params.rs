//! Scene parameters: a declared spec per parameter (kind, range, default, labels) and a set of
//! validated values. The GUI builds its sliders from the specs, the CLI's `--set key=value`
//! parses against them, presets and sessions store the values.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::error::{Expected, ValueKind, fmt_real};
use crate::text::Text;

/// Longest text value (bytes) a free-text parameter takes.
pub const MAX_TEXT_BYTES: usize = 4096;

/// Integral reals up to this magnitude are read as integers (`1e3`, a preset's `3.0`): beyond
/// it an `f64` no longer holds every integer exactly.
const MAX_EXACT_INTEGRAL: f64 = 9.0e15;

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
    /// A finite real number between `min` and `max`, each end included unless it is open.
    Float {
        /// Smallest valid value (or, when `min_open`, the bound just below the valid values).
        min: f64,
        /// Largest valid value (or, when `max_open`, the bound just above them).
        max: f64,
        /// The lecture's value.
        default: f64,
        /// Logarithmic slider.
        log: bool,
        /// `min` itself is refused (`(0, 1]`).
        min_open: bool,
        /// `max` itself is refused (`[0, 1)`).
        max_open: bool,
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
#[derive(Debug, Clone)]
pub struct ParamSpec {
    /// The name `--set` uses, e.g. `threads`.
    pub name: &'static str,
    /// A short label with units, in English and Chinese, e.g. `threads per block` / `每块线程数`.
    pub label: Text<&'static str>,
    /// Kind, range and default.
    pub kind: ParamKind,
    /// For an integer whose valid range depends on the other parameters (trainer-timing's
    /// `shrink` on the model): the values valid given `values`, inside `kind`'s range, so a
    /// slider offers only those. `None`: `kind`'s range is the whole story.
    pub bounds: Option<Bounds>,
}

/// The integers valid given the other parameters' values, `(min, max)`; `None` when none is.
pub type Bounds = fn(&ParamValues) -> Option<(i64, i64)>;

/// Specs are equal when their names, labels and kinds are (a bounds function has no meaningful
/// identity to compare).
impl PartialEq for ParamSpec {
    fn eq(&self, other: &Self) -> bool {
        (self.name, &self.label, &self.kind) == (other.name, &other.label, &other.kind)
    }
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
            label: Text::new(label, label_zh),
            kind: ParamKind::Int {
                min,
                max,
                default,
                log: false,
            },
            bounds: None,
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
            label: Text::new(label, label_zh),
            kind: ParamKind::Float {
                min,
                max,
                default,
                log: false,
                min_open: false,
                max_open: false,
            },
            bounds: None,
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
            label: Text::new(label, label_zh),
            kind: ParamKind::Choice { options, default },
            bounds: None,
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
            label: Text::new(label, label_zh),
            kind: ParamKind::Text { default },
            bounds: None,
        }
    }

    /// The same integer spec with a range that depends on the other parameters (see
    /// [`ParamSpec::bounds`]).
    pub const fn bounded_by(mut self, f: Bounds) -> Self {
        self.bounds = Some(f);
        self
    }

    /// The integers valid for this spec given the other `values`: its range, narrowed by
    /// [`ParamSpec::bounds`]; `None` for a spec that is not an integer or when nothing is valid.
    pub fn int_range(&self, values: &ParamValues) -> Option<(i64, i64)> {
        let ParamKind::Int { min, max, .. } = self.kind else {
            return None;
        };
        let (lo, hi) = match self.bounds {
            Some(f) => f(values)?,
            None => (min, max),
        };
        let (lo, hi) = (lo.max(min), hi.min(max));
        (lo <= hi).then_some((lo, hi))
    }

    /// The same spec with a logarithmic slider.
    pub const fn log(mut self) -> Self {
        match &mut self.kind {
            ParamKind::Int { log, .. } | ParamKind::Float { log, .. } => *log = true,
            _ => {}
        }
        self
    }

    /// The same real-valued spec with `min` itself refused: `(min, max]`.
    pub const fn open_min(mut self) -> Self {
        if let ParamKind::Float { min_open, .. } = &mut self.kind {
            *min_open = true;
        }
        self
    }

    /// The same real-valued spec with `max` itself refused: `[min, max)`.
    pub const fn open_max(mut self) -> Self {
        if let ParamKind::Float { max_open, .. } = &mut self.kind {
            *max_open = true;
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

    /// The valid range, for error messages (its `Display`: `expected an integer in 32..=1024`).
    pub fn expected(&self) -> Expected {
        match &self.kind {
            ParamKind::Int { min, max, .. } => Expected::IntRange {
                min: *min,
                max: *max,
            },
            ParamKind::Float {
                min,
                max,
                min_open,
                max_open,
                ..
            } => Expected::RealRange {
                min: *min,
                max: *max,
                min_open: *min_open,
                max_open: *max_open,
            },
            ParamKind::Choice { options, .. } => {
                Expected::OneOf(options.iter().map(|o| (*o).to_owned()).collect())
            }
            ParamKind::Text { .. } => Expected::TextUpTo(MAX_TEXT_BYTES),
        }
    }

    /// Parses and range-checks `text` for this parameter. Integers may be spelled `1e3` or
    /// `1_000` (exact integers only); a refusal shows `text` as given.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn parse(&self, text: &str) -> Result<ParamValue, Error> {
        let t = text.trim();
        let bad = || Error::invalid(self.name, t, self.expected());
        let value = match &self.kind {
            ParamKind::Int { .. } => {
                let cleaned = t.replace('_', "");
                match cleaned.parse::<i64>() {
                    Ok(v) => ParamValue::Int(v),
                    Err(_) => {
                        let f: f64 = cleaned.parse().map_err(|_| bad())?;
                        ParamValue::Int(exact_integer(f).ok_or_else(bad)?)
                    }
                }
            }
            ParamKind::Float { .. } => ParamValue::Float(t.parse().map_err(|_| bad())?),
            ParamKind::Choice { .. } | ParamKind::Text { .. } => ParamValue::Text(t.to_owned()),
        };
        self.check_shown(&value, t)?;
        Ok(value)
    }

    /// Reads a preset's JSON value for this parameter: a whole number for an integer parameter
    /// (`3` or `3.0`, as the command line takes `3` or `1e3`), a number for a real one, a string
    /// for a choice or text. A refusal shows the value as the file spells it (a `u64` exactly)
    /// and says when its type is wrong.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter: the wrong JSON type, or out of range.
    pub fn from_json(&self, json: &serde_json::Value) -> Result<ParamValue, Error> {
        let shown = json.to_string();
        let wrong_type = |found| {
            Error::invalid(
                self.name,
                &shown,
                Expected::Type {
                    found,
                    expected: Box::new(self.expected()),
                },
            )
        };
        let value = match json {
            // A choice among numbers (`elem_bytes`: "4") takes the number, as `--set` does.
            serde_json::Value::Number(_) if matches!(&self.kind, ParamKind::Choice { options, .. } if options.contains(&shown.as_str())) => {
                ParamValue::Text(shown.clone())
            }
            serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => ParamValue::Int(i),
                // Above i64::MAX: out of every integer parameter's range, said exactly.
                (None, Some(_), _) if matches!(self.kind, ParamKind::Int { .. }) => {
                    return Err(Error::invalid(self.name, &shown, self.expected()));
                }
                (None, Some(u), _) => ParamValue::Float(u as f64),
                (None, None, Some(f)) => ParamValue::Float(f),
                (None, None, None) => return Err(wrong_type(ValueKind::Float)),
            },
            serde_json::Value::String(s) => ParamValue::Text(s.clone()),
            other => return Err(wrong_type(ValueKind::of_json(other))),
        };
        self.check_shown(&value, &shown)?;
        Ok(self.normalised(value))
    }

    /// An integral real for an integer parameter as the integer (what `3.0` means).
    fn normalised(&self, value: ParamValue) -> ParamValue {
        match (&self.kind, value) {
            (ParamKind::Int { .. }, ParamValue::Float(f)) => match exact_integer(f) {
                Some(i) => ParamValue::Int(i),
                None => ParamValue::Float(f),
            },
            (_, v) => v,
        }
    }

    /// Checks a value against this spec's kind and range. An integral real (`3.0`) counts as
    /// the integer for an integer parameter, an integer as the real for a real-valued one.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range, or saying the value's
    /// type is wrong (a string for a number, a fraction for an integer).
    pub fn check(&self, value: &ParamValue) -> Result<(), Error> {
        self.check_shown(value, &value.to_string())
    }

    /// [`ParamSpec::check`], showing the value as `shown` (the user's spelling) in a refusal.
    fn check_shown(&self, value: &ParamValue, shown: &str) -> Result<(), Error> {
        let out_of_range = || Error::invalid(self.name, shown, self.expected());
        let wrong_type = |found| {
            Error::invalid(
                self.name,
                shown,
                Expected::Type {
                    found,
                    expected: Box::new(self.expected()),
                },
            )
        };
        let in_real_range = |v: f64| match &self.kind {
            ParamKind::Float {
                min,
                max,
                min_open,
                max_open,
                ..
            } => {
                v.is_finite()
                    && if *min_open { v > *min } else { v >= *min }
                    && if *max_open { v < *max } else { v <= *max }
            }
            _ => false,
        };
        let ok = match (&self.kind, value) {
            (ParamKind::Int { min, max, .. }, ParamValue::Int(v)) => (*min..=*max).contains(v),
            (ParamKind::Int { min, max, .. }, ParamValue::Float(f)) => {
                if f.is_finite() && f.fract() == 0.0 {
                    exact_integer(*f).is_some_and(|v| (*min..=*max).contains(&v))
                } else if f.is_finite() {
                    return Err(wrong_type(ValueKind::Float));
                } else {
                    false
                }
            }
            (ParamKind::Float { .. }, ParamValue::Float(v)) => in_real_range(*v),
            (ParamKind::Float { .. }, ParamValue::Int(v)) => in_real_range(*v as f64),
            (ParamKind::Choice { options, .. }, ParamValue::Text(v)) => {
                options.contains(&v.as_str())
            }
            (ParamKind::Text { .. }, ParamValue::Text(v)) => v.len() <= MAX_TEXT_BYTES,
            (_, ParamValue::Text(_)) => return Err(wrong_type(ValueKind::String)),
            (_, ParamValue::Int(_)) => return Err(wrong_type(ValueKind::Integer)),
            (_, ParamValue::Float(_)) => return Err(wrong_type(ValueKind::Float)),
        };
        if ok { Ok(()) } else { Err(out_of_range()) }
    }
}

/// `f` as an `i64` when it is a whole number small enough to be exact.
fn exact_integer(f: f64) -> Option<i64> {
    (f.is_finite() && f.fract() == 0.0 && f.abs() <= MAX_EXACT_INTEGRAL).then_some(f as i64)
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
            ParamValue::Float(v) => f.write_str(&fmt_real(*v)),
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
        let (key, value) = assignment
            .split_once('=')
            .ok_or_else(|| Error::invalid(assignment, "", Expected::Assignment))?;
        self.set(specs, key.trim(), value)
    }

    /// Parses `value` for parameter `key` against `specs` and stores it.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an unknown key or a value out of range.
    pub fn set(&mut self, specs: &[ParamSpec], key: &str, value: &str) -> Result<(), Error> {
        let spec = specs
            .iter()
            .find(|s| s.name == key)
            .ok_or_else(|| Error::invalid(key, value.trim(), unknown(specs)))?;
        let v = spec.parse(value)?;
        self.0.insert(key.to_owned(), v);
        Ok(())
    }

    /// Checks every value against its spec and fills missing ones with defaults; an integral
    /// real for an integer parameter becomes the integer (`3.0` → `3`).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for the first value out of range or an unknown key.
    pub fn validated(mut self, specs: &[ParamSpec]) -> Result<Self, Error> {
        for key in self.0.keys() {
            if !specs.iter().any(|s| s.name == key) {
                return Err(Error::invalid(key, &self.0[key], unknown(specs)));
            }
        }
        for s in specs {
            match self.0.remove(s.name) {
                Some(v) => {
                    s.check(&v)?;
                    self.0.insert(s.name.to_owned(), s.normalised(v));
                }
                None => {
                    self.0.insert(s.name.to_owned(), s.default_value());
                }
            }
        }
        Ok(self)
    }

    /// Reads a preset's `params` object against `specs` ([`ParamSpec::from_json`] for each) and
    /// fills missing ones with defaults.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an unknown key, a value of the wrong JSON type, or one out of
    /// range.
    pub fn from_json(
        specs: &[ParamSpec],
        json: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Self, Error> {
        let mut out = BTreeMap::new();
        for (key, v) in json {
            let spec = specs
                .iter()
                .find(|s| s.name == key)
                .ok_or_else(|| Error::invalid(key, v, unknown(specs)))?;
            out.insert(key.clone(), spec.from_json(v)?);
        }
        ParamValues(out).validated(specs)
    }

    /// The integer value of `name`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when it is missing or not an integer.
    pub fn int(&self, name: &str) -> Result<i64, Error> {
        match self.0.get(name) {
            Some(ParamValue::Int(v)) => Ok(*v),
            Some(ParamValue::Float(f)) if exact_integer(*f).is_some() => Ok(*f as i64),
            Some(v) => Err(Error::invalid(name, v, Expected::Integer)),
            None => Err(Error::invalid(name, "", Expected::Missing)),
        }
    }

    /// The integer value of `name` as a `usize` (specs keep these non-negative).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when it is missing, not an integer, or negative.
    pub fn usize(&self, name: &str) -> Result<usize, Error> {
        let v = self.int(name)?;
        usize::try_from(v).map_err(|_| Error::invalid(name, v, Expected::NonNegativeInteger))
    }

    /// The real value of `name` (integers are accepted).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when it is missing or not a number.
    pub fn float(&self, name: &str) -> Result<f64, Error> {
        match self.0.get(name) {
            Some(ParamValue::Float(v)) => Ok(*v),
            Some(ParamValue::Int(v)) => Ok(*v as f64),
            Some(v) => Err(Error::invalid(name, v, Expected::Number)),
            None => Err(Error::invalid(name, "", Expected::Missing)),
        }
    }

    /// The text value of `name` (a choice or free text).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when it is missing or not text.
    pub fn text(&self, name: &str) -> Result<&str, Error> {
        match self.0.get(name) {
            Some(ParamValue::Text(v)) => Ok(v),
            Some(v) => Err(Error::invalid(name, v, Expected::Text)),
            None => Err(Error::invalid(name, "", Expected::Missing)),
        }
    }
}

/// Checks the integer `value` of parameter `name` against its spec in `specs`: typed
/// parameters built in code (not read from [`ParamValues`]) are held to the range the spec
/// declares, so each range is written once, in its spec.
///
/// # Errors
/// [`Error::InvalidParam`] naming the parameter and the spec's range (also for a value past
/// `i64`); for a name `specs` lacks, naming the ones it has.
pub fn check_int<T: TryInto<i64> + std::fmt::Display + Copy>(
    specs: &[ParamSpec],
    name: &str,
    value: T,
) -> Result<(), Error> {
    let spec = specs
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| Error::invalid(name, value, unknown(specs)))?;
    match value.try_into() {
        Ok(v) => spec.check(&ParamValue::Int(v)),
        Err(_) => Err(Error::invalid(name, value, spec.expected())),
    }
}

/// The refusal of a key `specs` has no parameter for.
fn unknown(specs: &[ParamSpec]) -> Expected {
    Expected::Unknown {
        known: specs.iter().map(|s| s.name.to_owned()).collect(),
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

    #[test]
    fn refusals_show_the_value_as_written_and_the_rule_as_data() {
        let real = ParamSpec::float("lr", "lr", "学习率", 0.0, 1.0, 0.5);
        let e = real.parse("1e308").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid parameter `lr` = 1e308: expected a number in 0..=1"
        );
        let e = real
            .check(&ParamValue::Float(1e308))
            .unwrap_err()
            .to_string();
        assert!(e.contains("= 1e308:"), "{e}");
        let e = SPECS[0].parse(&"9".repeat(500)).unwrap_err().to_string();
        assert!(e.len() < 200 && e.contains("500 characters"), "{e}");
        // Open ends are refused and said so.
        let open = real.clone().open_min();
        assert!(open.parse("0").is_err());
        assert!(open.parse("1").is_ok());
        assert!(real.parse("0").is_ok());
        assert_eq!(
            open.expected(),
            Expected::RealRange {
                min: 0.0,
                max: 1.0,
                min_open: true,
                max_open: false
            }
        );
        assert_eq!(open.expected().to_string(), "expected a number in (0, 1]");
        // Wrong types say so.
        match SPECS[0].check(&ParamValue::Text("3".into())).unwrap_err() {
            Error::InvalidParam {
                expected: Expected::Type { found, .. },
                ..
            } => assert_eq!(found, ValueKind::String),
            e => panic!("{e}"),
        }
        // An integral real is the integer, as on the command line.
        let v = ParamValues(BTreeMap::from([(
            "threads".to_owned(),
            ParamValue::Float(64.0),
        )]))
        .validated(SPECS)
        .unwrap();
        assert_eq!(v.0["threads"], ParamValue::Int(64));
    }
}
