//! Lane values and active masks: the register file of a simulated workgroup.
//!
//! A value is struct-of-arrays: for an expression whose type flattens to `words` scalars (a
//! `vec3<f32>` has 3, a struct its leaves in member order), [`Val::data`] holds `words × n`
//! 32-bit words, component `c` of lane `l` at `c * n + l`, where `n` is the workgroup's lanes
//! rounded up to whole warps. Every scalar is one word: `f32`, `i32` and `u32` as their bits,
//! `bool` as 0 or 1 (one byte in memory, as naga lays it out), `f16` widened to the `f32` bits of its value (rounded back to `f16`
//! after every operation, so arithmetic matches a half-precision ALU).

use naga::{Scalar, ScalarKind};

/// The scalar kinds the lab computes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// 32-bit float.
    F32,
    /// 16-bit float (held as `f32` bits in a register, 2 bytes in memory).
    F16,
    /// 32-bit signed integer.
    I32,
    /// 32-bit unsigned integer.
    U32,
    /// Boolean (0 or 1 in a register, 1 byte in memory).
    Bool,
}

impl Kind {
    /// The kind of a naga scalar, `None` for 64-bit, 16-bit integer and abstract types (which
    /// the lab refuses).
    pub fn of(s: Scalar) -> Option<Kind> {
        match (s.kind, s.width) {
            (ScalarKind::Float, 4) => Some(Kind::F32),
            (ScalarKind::Float, 2) => Some(Kind::F16),
            (ScalarKind::Sint, 4) => Some(Kind::I32),
            (ScalarKind::Uint, 4) => Some(Kind::U32),
            (ScalarKind::Bool, _) => Some(Kind::Bool),
            _ => None,
        }
    }

    /// Bytes in memory (a `bool` takes naga's layout width, 1 byte; it lives only in
    /// function, private and workgroup memory, never in a host-shareable buffer).
    pub fn bytes(self) -> u32 {
        match self {
            Kind::F16 => 2,
            Kind::Bool => 1,
            _ => 4,
        }
    }

    /// Whether a float.
    pub fn is_float(self) -> bool {
        matches!(self, Kind::F32 | Kind::F16)
    }

    /// The word as a number for traces and buffers.
    pub fn to_f64(self, w: u32) -> f64 {
        match self {
            Kind::F32 | Kind::F16 => f64::from(f32::from_bits(w)),
            Kind::I32 => f64::from(w as i32),
            Kind::U32 | Kind::Bool => f64::from(w),
        }
    }

    /// The register word of `bytes` as read from memory (little-endian).
    pub fn from_mem(self, bytes: &[u8]) -> u32 {
        match (self, bytes) {
            (Kind::Bool, [a, ..]) => u32::from(*a != 0),
            (Kind::F16, [a, b, ..]) => half::f16::from_le_bytes([*a, *b]).to_f32().to_bits(),
            (_, [a, b, c, d, ..]) => u32::from_le_bytes([*a, *b, *c, *d]),
            _ => 0,
        }
    }

    /// Writes the register word `w` into `slot` (its [`Kind::bytes`] long).
    pub fn to_mem(self, w: u32, slot: &mut [u8]) {
        match self {
            Kind::Bool => {
                if let Some(b) = slot.first_mut() {
                    *b = u8::from(w != 0);
                }
            }
            Kind::F16 => {
                let h = half::f16::from_f32(f32::from_bits(w)).to_le_bytes();
                for (d, s) in slot.iter_mut().zip(h) {
                    *d = s;
                }
            }
            _ => {
                for (d, s) in slot.iter_mut().zip(w.to_le_bytes()) {
                    *d = s;
                }
            }
        }
    }
}

/// Rounds `f32` bits to the nearest `f16` and back (the register form of an `f16`).
pub fn round_f16(w: u32) -> u32 {
    half::f16::from_f32(f32::from_bits(w)).to_f32().to_bits()
}

/// A value of every lane of a workgroup (see the module docs for the layout).
#[derive(Debug, Clone, PartialEq)]
pub struct Val {
    /// Scalars per lane.
    pub words: usize,
    /// `words × n` words, component-major.
    pub data: Vec<u32>,
}

impl Val {
    /// `words` zero words for each of `n` lanes.
    pub fn zeros(words: usize, n: usize) -> Val {
        Val {
            words,
            data: vec![0; words * n],
        }
    }

    /// Word `c` of lane `l` (0 where out of range: lanes past the workgroup).
    #[inline]
    pub fn get(&self, n: usize, c: usize, l: usize) -> u32 {
        self.data.get(c * n + l).copied().unwrap_or(0)
    }

    /// Sets word `c` of lane `l` (ignored out of range).
    #[inline]
    pub fn set(&mut self, n: usize, c: usize, l: usize, w: u32) {
        if let Some(x) = self.data.get_mut(c * n + l) {
            *x = w;
        }
    }

    /// A one-lane value (a constant) repeated over `n` lanes.
    pub fn broadcast(&self, n: usize) -> Val {
        let one = self.data.len() / self.words.max(1);
        if one == n {
            return self.clone();
        }
        let mut out = Val::zeros(self.words, n);
        for c in 0..self.words {
            let w = self.data.get(c * one).copied().unwrap_or(0);
            if let Some(dst) = out.data.get_mut(c * n..(c + 1) * n) {
                dst.fill(w);
            }
        }
        out
    }
}

/// An active mask per warp: bit `l` of word `w` set when lane `l` of warp `w` executes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Active(pub Vec<u64>);

impl Active {
    /// No lane active in any of `warps` warps.
    pub fn none(warps: usize) -> Active {
        Active(vec![0; warps])
    }

    /// Whether no lane is active.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&m| m == 0)
    }

    /// Lanes active in both.
    pub fn and(&self, o: &Active) -> Active {
        Active(self.0.iter().zip(&o.0).map(|(a, b)| a & b).collect())
    }

    /// Lanes active in `self` but not in `o`.
    pub fn minus(&self, o: &Active) -> Active {
        Active(self.0.iter().zip(&o.0).map(|(a, b)| a & !b).collect())
    }

    /// Adds the lanes of `o`.
    pub fn or_with(&mut self, o: &Active) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }

    /// Active lanes in all warps.
    pub fn count(&self) -> u64 {
        self.0.iter().map(|m| u64::from(m.count_ones())).sum()
    }

    /// Whether workgroup lane `l` (warp `l / sg`, lane `l % sg`) is active.
    #[inline]
    pub fn has(&self, sg: usize, l: usize) -> bool {
        self.0.get(l / sg).is_some_and(|m| m >> (l % sg) & 1 == 1)
    }

    /// The warps with an active lane, with their masks.
    pub fn warps(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.0.iter().copied().enumerate().filter(|(_, m)| *m != 0)
    }
}

/// The lanes of `mask` (one warp's), as indices within the warp.
pub fn lanes_of(mask: u64) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}
