//! The dispatch a kernel runs with: how many workgroups, and the initial contents of every
//! buffer the kernel binds — the JSON of `--input FILE.json` and the window's Input panel:
//!
//! ```json
//! {"workgroups": [4, 1, 1],
//!  "buffers": {"0:0": {"type": "f32", "data": [1, 2, 3]},
//!              "0:1": {"type": "vec2<f32>", "len": 256, "fill": "iota"}},
//!  "seed": 7,
//!  "overrides": {"PAD": 1}}
//! ```
//!
//! `overrides` sets the module's pipeline-overridable constants (`override PAD: u32 = 0u;`) by
//! name, as a pipeline's constants do on the GPU; one left out keeps its default. It lets one
//! source file serve as several examples (the ∇γ tile unpadded and padded).
//!
//! `fill` is a number (every component), `"iota"` (element `i` holds `i` in each component) or
//! `"random"` (uniform in [0, 1) for floats, [0, 2³²) / [−2³¹, 2³¹) for integers, from ChaCha8
//! seeded by `seed` and the binding, so runs repeat exactly). The simulator and the GPU run
//! read the very same bytes ([`BufferInit::bytes`]), laid out as WGSL lays out an array of the
//! element type (a `vec3` takes 16 bytes).

use std::collections::BTreeMap;
use std::fmt;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Error;
use crate::input::json;
use crate::text::Text;

/// Most workgroups one dispatch may run (all three dimensions together): the simulator's
/// memory and time grow with it; 65,536 holds a 2²⁰-element reduction at 16 elements per
/// invocation.
pub const MAX_WORKGROUPS: u64 = 1 << 16;

/// Largest buffer (bytes) a dispatch may declare: 64 MiB, so a run's buffers stay far below the
/// memory of a laptop even when the simulator, the GPU run and the comparison hold copies.
pub const MAX_BUFFER_BYTES: u64 = 64 << 20;

/// A resource binding, `@group(G) @binding(B)`, written `"G:B"` in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Binding {
    /// The `@group`.
    pub group: u32,
    /// The `@binding`.
    pub binding: u32,
}

impl fmt::Display for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.group, self.binding)
    }
}

impl std::str::FromStr for Binding {
    type Err = Error;

    /// Parses `"G:B"` (two decimal integers).
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || {
            Error::input_fixed(
                format!("buffers.{s}"),
                "a binding is written \"GROUP:BINDING\", e.g. \"0:1\"",
                "绑定写作 \"GROUP:BINDING\"，例如 \"0:1\"",
            )
        };
        let (g, b) = s.split_once(':').ok_or_else(bad)?;
        Ok(Binding {
            group: g.trim().parse().map_err(|_| bad())?,
            binding: b.trim().parse().map_err(|_| bad())?,
        })
    }
}

impl Serialize for Binding {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Binding {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A scalar type a buffer element is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalarType {
    /// 32-bit float.
    F32,
    /// 32-bit signed integer.
    I32,
    /// 32-bit unsigned integer.
    U32,
    /// 16-bit float (WGSL's `f16`, under `enable f16;`).
    F16,
}

impl ScalarType {
    /// Bytes of one scalar.
    pub fn size(self) -> u32 {
        match self {
            ScalarType::F16 => 2,
            _ => 4,
        }
    }

    /// The WGSL spelling.
    pub fn wgsl(self) -> &'static str {
        match self {
            ScalarType::F32 => "f32",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
            ScalarType::F16 => "f16",
        }
    }
}

/// A buffer's element type: a scalar or a vector of 2–4 scalars (`f32`, `vec2<f32>`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ElementType {
    /// What each component is.
    pub scalar: ScalarType,
    /// 1 for a scalar, 2–4 for a vector.
    pub components: u32,
}

impl ElementType {
    /// Bytes of the element's data (a `vec3<f32>` has 12).
    pub fn size(self) -> u32 {
        self.scalar.size() * self.components
    }

    /// Bytes from one array element to the next: WGSL's array stride, the size rounded up to
    /// the alignment (`vec3` aligns as `vec4`; WGSL spec §13.4 "Alignment and Size").
    pub fn stride(self) -> u32 {
        let align_components = if self.components == 3 {
            4
        } else {
            self.components
        };
        self.scalar.size() * align_components
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.components == 1 {
            f.write_str(self.scalar.wgsl())
        } else {
            write!(f, "vec{}<{}>", self.components, self.scalar.wgsl())
        }
    }
}

impl std::str::FromStr for ElementType {
    type Err = Text;

    /// Parses `f32`, `i32`, `u32`, `f16`, `vecN<T>` (N = 2, 3, 4) and WGSL's aliases
    /// `vecNf`, `vecNi`, `vecNu`, `vecNh`.
    fn from_str(s: &str) -> Result<Self, Text> {
        let scalar = |t: &str| match t.trim() {
            "f32" | "f" => Some(ScalarType::F32),
            "i32" | "i" => Some(ScalarType::I32),
            "u32" | "u" => Some(ScalarType::U32),
            "f16" | "h" => Some(ScalarType::F16),
            _ => None,
        };
        let t = s.trim();
        let err = || {
            Text::new(
                format!(
                    "`{s}` is not an element type: f32, i32, u32, f16 or vecN<T> with N = 2, 3, 4"
                ),
                format!("`{s}` 不是元素类型：应为 f32、i32、u32、f16 或 vecN<T>（N = 2、3、4）"),
            )
        };
        if let Some(sc) = scalar(t).filter(|_| t.len() > 1) {
            return Ok(ElementType {
                scalar: sc,
                components: 1,
            });
        }
        let rest = t.strip_prefix("vec").ok_or_else(err)?;
        let mut chars = rest.chars();
        let n = chars.next().and_then(|c| c.to_digit(10)).ok_or_else(err)?;
        if !(2..=4).contains(&n) {
            return Err(err());
        }
        let tail = chars.as_str().trim();
        let inner = tail
            .strip_prefix('<')
            .and_then(|x| x.strip_suffix('>'))
            .unwrap_or(tail);
        let sc = scalar(inner).ok_or_else(err)?;
        Ok(ElementType {
            scalar: sc,
            components: n,
        })
    }
}

impl Serialize for ElementType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// How a `len`-element buffer is filled.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fill {
    /// Every component holds this number.
    Value(f64),
    /// Element `i` holds `i` in every component.
    Iota,
    /// Seeded uniform random numbers (see the module docs for the ranges).
    Random,
}

/// A buffer's initial contents.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferData {
    /// The components, element after element (a `vec2` buffer of 3 elements holds 6 numbers).
    Values(Vec<f64>),
    /// `len` elements made by a [`Fill`].
    Fill {
        /// Elements.
        len: u64,
        /// How.
        fill: Fill,
    },
}

/// One binding's buffer as the input declares it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BufferInit {
    /// The element type.
    #[serde(rename = "type")]
    pub ty: ElementType,
    /// The contents.
    pub data: BufferData,
}

impl BufferInit {
    /// Elements in the buffer.
    pub fn len(&self) -> u64 {
        match &self.data {
            BufferData::Values(v) => v.len() as u64 / u64::from(self.ty.components),
            BufferData::Fill { len, .. } => *len,
        }
    }

    /// Whether the buffer has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the buffer takes: elements × the element's array stride.
    pub fn byte_len(&self) -> u64 {
        self.len() * u64::from(self.ty.stride())
    }

    /// The buffer's bytes, little-endian, laid out as a WGSL `array<T>` (padding bytes 0). A
    /// number is converted as WGSL converts it (`f32` rounds to nearest, `f16` likewise; an
    /// integer type takes the number truncated toward zero and wrapped to 32 bits, `-1` as `u32`
    /// is `0xFFFF_FFFF`). `binding` seeds `"random"` together with `seed`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming `buffers.G:B` when the buffer is past [`MAX_BUFFER_BYTES`].
    pub fn bytes(&self, binding: Binding, seed: u64) -> Result<Vec<u8>, Error> {
        let total = self.byte_len();
        if total > MAX_BUFFER_BYTES {
            return Err(Error::input(
                format!("buffers.{binding}"),
                too_big(self.len(), self.ty, total),
            ));
        }
        let mut out = vec![0u8; usize::try_from(total).unwrap_or(0)];
        let comps = self.ty.components as usize;
        let size = self.ty.scalar.size() as usize;
        let stride = self.ty.stride() as usize;
        let mut rng = ChaCha8Rng::seed_from_u64(
            seed ^ (u64::from(binding.group) << 32 | u64::from(binding.binding)),
        );
        for (i, elem) in out.chunks_exact_mut(stride).enumerate() {
            for (c, slot) in elem.chunks_exact_mut(size).take(comps).enumerate() {
                let v = match &self.data {
                    BufferData::Values(v) => v.get(i * comps + c).copied().unwrap_or(0.0),
                    BufferData::Fill { fill, .. } => match fill {
                        Fill::Value(x) => *x,
                        Fill::Iota => i as f64,
                        Fill::Random => match self.ty.scalar {
                            ScalarType::F32 | ScalarType::F16 => rng.random::<f64>(),
                            ScalarType::U32 => f64::from(rng.random::<u32>()),
                            ScalarType::I32 => f64::from(rng.random::<i32>()),
                        },
                    },
                };
                encode_scalar(self.ty.scalar, v, slot);
            }
        }
        Ok(out)
    }
}

/// Writes `v` into `slot` (exactly the scalar's size) as `scalar`, little-endian.
fn encode_scalar(scalar: ScalarType, v: f64, slot: &mut [u8]) {
    match scalar {
        ScalarType::F32 => slot.copy_from_slice(&(v as f32).to_le_bytes()),
        ScalarType::F16 => slot.copy_from_slice(&half::f16::from_f64(v).to_le_bytes()),
        // `as i64` saturates and truncates toward zero; the cast to 32 bits then wraps, as a
        // two's-complement store would.
        ScalarType::U32 => slot.copy_from_slice(&((v as i64) as u32).to_le_bytes()),
        ScalarType::I32 => slot.copy_from_slice(&((v as i64) as i32).to_le_bytes()),
    }
}

/// Reads one scalar of `scalar` from the start of `bytes` (0 where `bytes` is too short).
pub fn decode_scalar(scalar: ScalarType, bytes: &[u8]) -> f64 {
    let mut b4 = [0u8; 4];
    let n = scalar.size() as usize;
    for (d, s) in b4.iter_mut().zip(bytes.iter().take(n)) {
        *d = *s;
    }
    match scalar {
        ScalarType::F32 => f64::from(f32::from_le_bytes(b4)),
        ScalarType::F16 => half::f16::from_le_bytes([b4[0], b4[1]]).to_f64(),
        ScalarType::U32 => f64::from(u32::from_le_bytes(b4)),
        ScalarType::I32 => f64::from(i32::from_le_bytes(b4)),
    }
}

/// A buffer's bytes read back as elements of `ty`: one `Vec` of components per element (a
/// scalar buffer gives one-component elements). Trailing bytes short of a whole element are
/// ignored.
pub fn decode(bytes: &[u8], ty: ElementType) -> Vec<Vec<f64>> {
    let size = ty.scalar.size() as usize;
    bytes
        .chunks_exact(ty.stride() as usize)
        .map(|e| {
            e.chunks_exact(size)
                .take(ty.components as usize)
                .map(|c| decode_scalar(ty.scalar, c))
                .collect()
        })
        .collect()
}

/// The whole dispatch: workgroups and every bound buffer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dispatch {
    /// Workgroups in x, y, z (each ≥ 1).
    pub workgroups: [u32; 3],
    /// The buffers, by binding.
    pub buffers: BTreeMap<Binding, BufferInit>,
    /// Seeds `"random"` fills.
    pub seed: u64,
    /// Values of the module's `override` constants, by name (missing ones keep their default).
    pub overrides: BTreeMap<String, f64>,
}

impl Dispatch {
    /// Workgroups in all three dimensions together.
    pub fn workgroup_count(&self) -> u64 {
        self.workgroups.iter().map(|&w| u64::from(w)).product()
    }

    /// Reads the input JSON (see the module docs).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the key: an unknown key, `workgroups` not three integers
    /// ≥ 1 or past [`MAX_WORKGROUPS`] together, a binding not `"G:B"`, an unknown element type,
    /// `data` whose length is not a multiple of the components, a non-finite number, both or
    /// neither of `data` and `len`, a buffer past [`MAX_BUFFER_BYTES`], an override that is not
    /// a finite number.
    pub fn from_json(input: &Value) -> Result<Dispatch, Error> {
        let map = json::object(input, &["workgroups", "buffers", "seed", "overrides"])?;
        let wg = json::list(json::required(map, "workgroups")?, "workgroups", 3)?;
        if wg.len() != 3 {
            return Err(Error::input(
                "workgroups",
                Text::new(
                    format!(
                        "workgroups are three numbers [x, y, z]; this has {}",
                        wg.len()
                    ),
                    format!("workgroups 是三个数 [x, y, z]；此处有 {} 个", wg.len()),
                ),
            ));
        }
        let mut workgroups = [1u32; 3];
        for (i, (w, v)) in workgroups.iter_mut().zip(wg).enumerate() {
            *w = json::integer(v, &format!("workgroups[{i}]"), 1, u64::from(u32::MAX))? as u32;
        }
        let seed = match map.get("seed") {
            Some(v) => json::integer(v, "seed", 0, u64::MAX)?,
            None => 0,
        };
        let mut buffers = BTreeMap::new();
        if let Some(b) = map.get("buffers") {
            let bmap = b.as_object().ok_or_else(|| {
                Error::input(
                    "buffers",
                    Text::new(
                        format!(
                            "buffers is an object {{\"G:B\": {{\"type\", \"data\" | \"len\"}}}}, \
                             not {}",
                            json::kind(b)
                        ),
                        format!(
                            "buffers 是对象 {{\"G:B\": {{\"type\", \"data\" | \"len\"}}}}，\
                             不是{}",
                            json::kind_zh(b)
                        ),
                    ),
                )
            })?;
            for (key, v) in bmap {
                let binding: Binding = key.parse()?;
                buffers.insert(binding, read_buffer(&format!("buffers.{key}"), v)?);
            }
        }
        let mut overrides = BTreeMap::new();
        if let Some(o) = map.get("overrides") {
            let omap = o.as_object().ok_or_else(|| {
                Error::input(
                    "overrides",
                    Text::new(
                        format!(
                            "overrides is an object {{\"NAME\": NUMBER}}, not {}",
                            json::kind(o)
                        ),
                        format!(
                            "overrides 是对象 {{\"NAME\": NUMBER}}，不是{}",
                            json::kind_zh(o)
                        ),
                    ),
                )
            })?;
            for (name, v) in omap {
                overrides.insert(name.clone(), json::number(v, &format!("overrides.{name}"))?);
            }
        }
        let d = Dispatch {
            workgroups,
            buffers,
            seed,
            overrides,
        };
        if d.workgroup_count() > MAX_WORKGROUPS {
            return Err(Error::input(
                "workgroups",
                Text::new(
                    format!(
                        "{} × {} × {} = {} workgroups; a dispatch runs at most {MAX_WORKGROUPS}",
                        workgroups[0],
                        workgroups[1],
                        workgroups[2],
                        d.workgroup_count()
                    ),
                    format!(
                        "{} × {} × {} = {} 个工作组；一次调度至多运行 {MAX_WORKGROUPS} 个",
                        workgroups[0],
                        workgroups[1],
                        workgroups[2],
                        d.workgroup_count()
                    ),
                ),
            ));
        }
        for (b, init) in &d.buffers {
            if init.byte_len() > MAX_BUFFER_BYTES {
                return Err(Error::input(
                    format!("buffers.{b}"),
                    too_big(init.len(), init.ty, init.byte_len()),
                ));
            }
        }
        Ok(d)
    }
}

/// "`n` elements of `ty` take `bytes` bytes; a buffer holds at most …" in both languages.
fn too_big(n: impl std::fmt::Display, ty: ElementType, bytes: u64) -> Text {
    Text::new(
        format!(
            "{n} elements of {ty} take {bytes} bytes; a buffer holds at most {MAX_BUFFER_BYTES} \
             bytes"
        ),
        format!("{n} 个 {ty} 元素占 {bytes} 字节；一个缓冲区至多 {MAX_BUFFER_BYTES} 字节"),
    )
}

fn read_buffer(key: &str, v: &Value) -> Result<BufferInit, Error> {
    let map = json::object(v, &["type", "data", "len", "fill"])?;
    let ty_text = json::string(json::required(map, "type")?, &format!("{key}.type"))?;
    let ty: ElementType = ty_text
        .parse()
        .map_err(|e: Text| Error::input(format!("{key}.type"), e))?;
    let data = match (map.get("data"), map.get("len")) {
        (Some(d), None) => {
            let k = format!("{key}.data");
            let items = json::list(d, &k, json::MAX_ELEMENTS)?;
            let mut values = Vec::with_capacity(items.len() * ty.components as usize);
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::Array(parts) if ty.components > 1 => {
                        if parts.len() != ty.components as usize {
                            return Err(Error::input(
                                format!("{k}[{i}]"),
                                Text::new(
                                    format!(
                                        "a {ty} element has {} components; this has {}",
                                        ty.components,
                                        parts.len()
                                    ),
                                    format!(
                                        "{ty} 元素有 {} 个分量；此处有 {} 个",
                                        ty.components,
                                        parts.len()
                                    ),
                                ),
                            ));
                        }
                        for (c, p) in parts.iter().enumerate() {
                            values.push(json::number(p, &format!("{k}[{i}][{c}]"))?);
                        }
                    }
                    _ => values.push(json::number(item, &format!("{k}[{i}]"))?),
                }
            }
            if values.len() % ty.components as usize != 0 {
                return Err(Error::input(
                    k,
                    Text::new(
                        format!(
                            "{} numbers do not make whole {ty} elements of {} components",
                            values.len(),
                            ty.components
                        ),
                        format!(
                            "{} 个数凑不成整数个 {ty} 元素（每个 {} 个分量）",
                            values.len(),
                            ty.components
                        ),
                    ),
                ));
            }
            if map.contains_key("fill") {
                return Err(Error::input_fixed(
                    format!("{key}.fill"),
                    "`fill` goes with `len`, not with `data`",
                    "`fill` 与 `len` 搭配，不与 `data` 搭配",
                ));
            }
            BufferData::Values(values)
        }
        (None, Some(len)) => {
            let len = json::integer(len, &format!("{key}.len"), 1, u64::from(u32::MAX))?;
            let fill = match map.get("fill") {
                None => Fill::Value(0.0),
                Some(Value::String(s)) if s == "iota" => Fill::Iota,
                Some(Value::String(s)) if s == "random" => Fill::Random,
                Some(f @ Value::Number(_)) => Fill::Value(json::number(f, &format!("{key}.fill"))?),
                Some(other) => {
                    return Err(Error::input(
                        format!("{key}.fill"),
                        Text::new(
                            format!(
                                "fill is a number, \"iota\" or \"random\", not {}",
                                json::kind(other)
                            ),
                            format!(
                                "fill 是数、\"iota\" 或 \"random\"，不是{}",
                                json::kind_zh(other)
                            ),
                        ),
                    ));
                }
            };
            BufferData::Fill { len, fill }
        }
        (Some(_), Some(_)) => {
            return Err(Error::input_fixed(
                key,
                "a buffer has either `data` (its values) or `len` (with an optional `fill`), not both",
                "缓冲区有 `data`（其值）或 `len`（可另给 `fill`），二者只取其一",
            ));
        }
        (None, None) => {
            return Err(Error::input_fixed(
                key,
                "a buffer needs `data` (its values) or `len` (with an optional `fill`)",
                "缓冲区需要 `data`（其值）或 `len`（可另给 `fill`）",
            ));
        }
    };
    Ok(BufferInit { ty, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_follows_wgsl_alignment() {
        // WGSL: vec3<f32> has size 12, align 16, so an array of them strides 16 bytes.
        let t: ElementType = "vec3<f32>".parse().unwrap();
        assert_eq!((t.size(), t.stride()), (12, 16));
        let h: ElementType = "vec3h".parse().unwrap();
        assert_eq!((h.size(), h.stride()), (6, 8));
        assert!("vec5<f32>".parse::<ElementType>().is_err());
        assert!("f64".parse::<ElementType>().is_err());
    }

    #[test]
    fn reads_fills_and_encodes() {
        let v: Value = serde_json::json!({
            "workgroups": [2, 1, 1],
            "buffers": {
                "0:0": {"type": "u32", "data": [1, -1, 3.9]},
                "0:1": {"type": "vec2<f32>", "len": 3, "fill": "iota"}
            }
        });
        let d = Dispatch::from_json(&v).unwrap();
        let b0 = Binding {
            group: 0,
            binding: 0,
        };
        let bytes = d.buffers[&b0].bytes(b0, 0).unwrap();
        // -1 wraps to 0xFFFF_FFFF; 3.9 truncates to 3.
        assert_eq!(bytes, [1, 0, 0, 0, 255, 255, 255, 255, 3, 0, 0, 0]);
        let b1 = Binding {
            group: 0,
            binding: 1,
        };
        let init = &d.buffers[&b1];
        let back = decode(&init.bytes(b1, 0).unwrap(), init.ty);
        assert_eq!(back, vec![vec![0.0, 0.0], vec![1.0, 1.0], vec![2.0, 2.0]]);
    }

    #[test]
    fn refusals_name_the_key() {
        let cases = [
            (
                serde_json::json!({"workgroups": [0, 1, 1]}),
                "workgroups[0]",
            ),
            (serde_json::json!({"workgroups": [1, 1]}), "workgroups"),
            (
                serde_json::json!({"workgroups": [1,1,1], "buffers": {"x": {"type": "f32", "len": 1}}}),
                "buffers.x",
            ),
            (
                serde_json::json!({"workgroups": [1,1,1], "buffers": {"0:0": {"type": "f64", "len": 1}}}),
                "buffers.0:0.type",
            ),
            (
                serde_json::json!({"workgroups": [1,1,1], "buffers": {"0:0": {"type": "vec2f", "data": [[1, 2, 3]]}}}),
                "buffers.0:0.data[0]",
            ),
            (
                serde_json::json!({"workgroups": [65536, 2, 1]}),
                "workgroups",
            ),
            (
                serde_json::json!({"workgroups": [1,1,1], "buffers": {"0:0": {"type": "f32", "len": 20000000}}}),
                "buffers.0:0",
            ),
        ];
        for (v, key) in cases {
            match Dispatch::from_json(&v) {
                Err(Error::InvalidInput { key: k, .. }) => assert_eq!(k, key, "{v}"),
                other => panic!("{v}: {other:?}"),
            }
        }
    }
}
