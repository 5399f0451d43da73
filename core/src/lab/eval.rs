//! Expressions, lane-wise over the active warps (see [`super::value`] for the layout). Lanes
//! of an active warp that are themselves inactive compute too (cheaper than testing each lane,
//! and harmless: every operation is total) but never touch memory or raise a warning.

use std::rc::Rc;

use naga::{Expression, Handle, Literal, MathFunction as M, TypeInner};

use super::Machine;
use super::exec::Frame;
use super::memory::{OOB, Space};
use super::ops;
use super::value::{Active, Kind, Val};
use crate::Error;
use crate::simt::EventKind;

/// A scalar literal's register word.
pub fn literal(l: &Literal) -> Option<u32> {
    Some(match *l {
        Literal::F32(x) => x.to_bits(),
        Literal::F16(x) => x.to_f32().to_bits(),
        Literal::U32(x) => x,
        Literal::I32(x) => x as u32,
        Literal::Bool(x) => u32::from(x),
        Literal::AbstractInt(x) => x as i32 as u32,
        Literal::AbstractFloat(x) => (x as f32).to_bits(),
        _ => return None,
    })
}

/// The scalar kind of a scalar, vector, matrix or atomic type.
pub fn kind_of(inner: &TypeInner) -> Option<Kind> {
    match inner {
        TypeInner::Scalar(s)
        | TypeInner::Vector { scalar: s, .. }
        | TypeInner::Matrix { scalar: s, .. }
        | TypeInner::Atomic(s)
        | TypeInner::ValuePointer { scalar: s, .. } => Kind::of(*s),
        _ => None,
    }
}

impl<'m> Machine<'m> {
    /// The type of expression `h` of `f`.
    pub fn ty(&self, f: &Frame<'m>, h: Handle<Expression>) -> &'m TypeInner {
        let module: &'m naga::Module = self.module;
        let fi: &'m naga::valid::FunctionInfo = f.finfo;
        fi[h].ty.inner_with(&module.types)
    }

    fn kind(&self, f: &Frame<'m>, h: Handle<Expression>, line: u32) -> Result<Kind, Error> {
        kind_of(self.ty(f, h)).ok_or_else(|| self.refuse(line, "this operand type"))
    }

    /// Scalars per lane of a value of `inner`.
    pub fn words(&mut self, inner: &TypeInner) -> Result<usize, Error> {
        let mut out = Vec::new();
        match inner {
            TypeInner::Scalar(_) | TypeInner::Atomic(_) => Ok(1),
            TypeInner::Vector { size, .. } => Ok(*size as usize),
            TypeInner::Matrix { columns, rows, .. } => Ok(*columns as usize * *rows as usize),
            _ => {
                self.flatten(inner, 0, &mut out)?;
                Ok(out.len())
            }
        }
    }

    /// The value of `h` (evaluated now if not yet: constants, variables, arguments).
    pub fn operand(
        &mut self,
        f: &mut Frame<'m>,
        h: Handle<Expression>,
        mask: &Active,
    ) -> Result<Rc<Val>, Error> {
        if let Some(Some(v)) = f.cache.get(h.index()) {
            return Ok(v.clone());
        }
        let v = Rc::new(self.compute(f, h, mask)?);
        if let Some(slot) = f.cache.get_mut(h.index()) {
            *slot = Some(v.clone());
        }
        Ok(v)
    }

    /// An expression of an `Emit` range: evaluated (again) now, one warp instruction per
    /// active warp on its line.
    pub fn eval_emitted(
        &mut self,
        f: &mut Frame<'m>,
        h: Handle<Expression>,
        mask: &Active,
    ) -> Result<(), Error> {
        let line = self.lines.line(f.fun.expressions.get_span(h));
        self.count(line, mask, EventKind::Compute)?;
        let v = self.compute(f, h, mask)?;
        if let Some(slot) = f.cache.get_mut(h.index()) {
            *slot = Some(Rc::new(v));
        }
        Ok(())
    }

    fn compute(
        &mut self,
        f: &mut Frame<'m>,
        h: Handle<Expression>,
        mask: &Active,
    ) -> Result<Val, Error> {
        let fun: &'m naga::Function = f.fun;
        let line = self.lines.line(fun.expressions.get_span(h));
        let n = self.n;
        Ok(match &fun.expressions[h] {
            Expression::Literal(l) => {
                let w = literal(l)
                    .ok_or_else(|| self.refuse(line, "64-bit and 16-bit integer literals"))?;
                Val {
                    words: 1,
                    data: vec![w; n],
                }
            }
            Expression::Constant(c) => self
                .consts
                .get(c.index())
                .map(|v| v.broadcast(n))
                .ok_or_else(|| self.refuse(line, "this constant"))?,
            Expression::Override(o) => self
                .overrides
                .get(o.index())
                .map(|v| v.broadcast(n))
                .ok_or_else(|| self.refuse(line, "this override"))?,
            Expression::ZeroValue(ty) => {
                let words = self.leaves_of(*ty)?.len();
                Val::zeros(words, n)
            }
            Expression::Compose { components, .. } => {
                let mut parts = Vec::with_capacity(components.len());
                for c in components {
                    parts.push(self.operand(f, *c, mask)?);
                }
                let words = parts.iter().map(|p| p.words).sum();
                let mut data = Vec::with_capacity(words * n);
                for p in &parts {
                    data.extend_from_slice(&p.data);
                }
                Val { words, data }
            }
            Expression::Splat { size, value } => {
                let v = self.operand(f, *value, mask)?;
                let mut data = Vec::with_capacity(*size as usize * n);
                for _ in 0..*size as usize {
                    data.extend_from_slice(&v.data);
                }
                Val {
                    words: *size as usize,
                    data,
                }
            }
            Expression::Swizzle {
                size,
                vector,
                pattern,
            } => {
                let v = self.operand(f, *vector, mask)?;
                let mut data = Vec::with_capacity(*size as usize * n);
                for p in pattern.iter().take(*size as usize) {
                    let c = *p as usize;
                    data.extend_from_slice(v.data.get(c * n..(c + 1) * n).unwrap_or(&[]));
                }
                Val {
                    words: *size as usize,
                    data,
                }
            }
            Expression::FunctionArgument(i) => f
                .args
                .get(*i as usize)
                .map(|v| (**v).clone())
                .ok_or_else(|| self.refuse(line, "a missing argument"))?,
            Expression::GlobalVariable(g) => {
                let (region, size) = self
                    .global_region
                    .get(g.index())
                    .copied()
                    .flatten()
                    .ok_or_else(|| self.refuse(line, "textures, samplers and immediates"))?;
                self.lane_ptr(region, size)
            }
            Expression::LocalVariable(l) => self.local_ptr(f, *l),
            Expression::Load { pointer } => {
                let leaves = self.pointee_leaves(f, *pointer)?;
                let ptr = self.operand(f, *pointer, mask)?;
                self.access(&ptr, &leaves, mask, line, None)?
            }
            Expression::AccessIndex { base, index } => {
                self.index(f, *base, Err(*index), mask, line)?
            }
            Expression::Access { base, index } => {
                let idx = self.operand(f, *index, mask)?;
                self.index(f, *base, Ok(&idx), mask, line)?
            }
            Expression::Unary { op, expr } => {
                let k = self.kind(f, *expr, line)?;
                let a = self.operand(f, *expr, mask)?;
                let mut out = Val::zeros(a.words, n);
                for r in self.ranges(mask) {
                    for c in 0..a.words {
                        for l in r.clone() {
                            out.set(n, c, l, ops::unary(*op, k, a.get(n, c, l)));
                        }
                    }
                }
                out
            }
            Expression::Binary { op, left, right } => {
                if matches!(self.ty(f, *left), TypeInner::Matrix { .. })
                    && matches!(
                        self.ty(f, *right),
                        TypeInner::Matrix { .. } | TypeInner::Vector { .. }
                    )
                    && *op == naga::BinaryOperator::Multiply
                    || matches!(self.ty(f, *right), TypeInner::Matrix { .. })
                        && matches!(self.ty(f, *left), TypeInner::Vector { .. })
                {
                    return Err(self.refuse(line, "matrix products"));
                }
                let k = self.kind(f, *left, line)?;
                let g = ops::binary(*op, k).ok_or_else(|| self.refuse(line, "this operator"))?;
                let a = self.operand(f, *left, mask)?;
                let b = self.operand(f, *right, mask)?;
                let words = a.words.max(b.words);
                let mut out = Val::zeros(words, n);
                for r in self.ranges(mask) {
                    for c in 0..words {
                        let (ca, cb) = (
                            if a.words == 1 { 0 } else { c },
                            if b.words == 1 { 0 } else { c },
                        );
                        if let (Some(x), Some(y), Some(o)) = (
                            a.data.get(ca * n + r.start..ca * n + r.end),
                            b.data.get(cb * n + r.start..cb * n + r.end),
                            out.data.get_mut(c * n + r.start..c * n + r.end),
                        ) {
                            for ((o, x), y) in o.iter_mut().zip(x).zip(y) {
                                *o = g(*x, *y);
                            }
                        }
                    }
                }
                out
            }
            Expression::Select {
                condition,
                accept,
                reject,
            } => {
                let cnd = self.operand(f, *condition, mask)?;
                let a = self.operand(f, *accept, mask)?;
                let b = self.operand(f, *reject, mask)?;
                let mut out = Val::zeros(a.words, n);
                for r in self.ranges(mask) {
                    for c in 0..a.words {
                        let cc = if cnd.words == 1 { 0 } else { c };
                        for l in r.clone() {
                            let w = if cnd.get(n, cc, l) != 0 {
                                a.get(n, c, l)
                            } else {
                                b.get(n, c, l)
                            };
                            out.set(n, c, l, w);
                        }
                    }
                }
                out
            }
            Expression::Relational { fun: rf, argument } => {
                let a = self.operand(f, *argument, mask)?;
                let words = match rf {
                    naga::RelationalFunction::All | naga::RelationalFunction::Any => 1,
                    _ => a.words,
                };
                let mut out = Val::zeros(words, n);
                for r in self.ranges(mask) {
                    for l in r {
                        match rf {
                            naga::RelationalFunction::All => {
                                out.set(
                                    n,
                                    0,
                                    l,
                                    u32::from((0..a.words).all(|c| a.get(n, c, l) != 0)),
                                );
                            }
                            naga::RelationalFunction::Any => {
                                out.set(
                                    n,
                                    0,
                                    l,
                                    u32::from((0..a.words).any(|c| a.get(n, c, l) != 0)),
                                );
                            }
                            naga::RelationalFunction::IsNan => {
                                for c in 0..a.words {
                                    out.set(
                                        n,
                                        c,
                                        l,
                                        u32::from(f32::from_bits(a.get(n, c, l)).is_nan()),
                                    );
                                }
                            }
                            naga::RelationalFunction::IsInf => {
                                for c in 0..a.words {
                                    out.set(
                                        n,
                                        c,
                                        l,
                                        u32::from(f32::from_bits(a.get(n, c, l)).is_infinite()),
                                    );
                                }
                            }
                        }
                    }
                }
                out
            }
            Expression::Math {
                fun: mf,
                arg,
                arg1,
                arg2,
                arg3,
            } => self.math(f, *mf, [Some(*arg), *arg1, *arg2, *arg3], mask, line)?,
            Expression::As {
                expr,
                kind,
                convert,
            } => {
                let from = self.kind(f, *expr, line)?;
                let a = self.operand(f, *expr, mask)?;
                let to = match convert {
                    Some(width) => Kind::of(naga::Scalar {
                        kind: *kind,
                        width: *width,
                    }),
                    None => Kind::of(naga::Scalar {
                        kind: *kind,
                        width: 4,
                    }),
                }
                .ok_or_else(|| self.refuse(line, "this conversion"))?;
                if convert.is_none() && (from == Kind::F16 || to == Kind::F16) && from != to {
                    return Err(self.refuse(line, "bitcasts of f16 values"));
                }
                let mut out = Val::zeros(a.words, n);
                for r in self.ranges(mask) {
                    for c in 0..a.words {
                        for l in r.clone() {
                            let w = a.get(n, c, l);
                            let w = if convert.is_some() {
                                ops::convert(from, to, w)
                            } else {
                                w
                            };
                            out.set(n, c, l, w);
                        }
                    }
                }
                out
            }
            Expression::ArrayLength(p) => {
                let stride = match self.ty(f, *p) {
                    TypeInner::Pointer { base, .. } => match &self.module.types[*base].inner {
                        TypeInner::Array { stride, .. } => *stride,
                        _ => 0,
                    },
                    _ => 0,
                };
                let ptr = self.operand(f, *p, mask)?;
                let mut out = Val::zeros(1, n);
                for r in self.ranges(mask) {
                    for l in r {
                        let region = (ptr.get(n, 0, l) & !OOB) as usize;
                        let len = self.mem.regions.get(region).map_or(0, |g| g.bytes.len());
                        let off = ptr.get(n, 1, l) as usize;
                        out.set(
                            n,
                            0,
                            l,
                            (len.saturating_sub(off) / stride.max(1) as usize) as u32,
                        );
                    }
                }
                out
            }
            Expression::CallResult(_)
            | Expression::AtomicResult { .. }
            | Expression::WorkGroupUniformLoadResult { .. }
            | Expression::SubgroupBallotResult
            | Expression::SubgroupOperationResult { .. } => {
                // Set by its statement; a call whose lanes all returned nothing leaves zeros.
                let words = self.words(self.ty(f, h))?;
                Val::zeros(words, n)
            }
            _ => {
                return Err(self.refuse(
                    line,
                    "images, derivatives, ray queries and cooperative matrices",
                ));
            }
        })
    }

    /// `base[index]`: `index` is a constant (`Err`) or per-lane (`Ok`). On a pointer, the
    /// element's pointer (an out-of-bounds index is clamped and flagged, WGSL §14.5.3); on a
    /// value, the element's value.
    fn index(
        &mut self,
        f: &mut Frame<'m>,
        base: Handle<Expression>,
        index: Result<&Val, u32>,
        mask: &Active,
        line: u32,
    ) -> Result<Val, Error> {
        let n = self.n;
        let module: &'m naga::Module = self.module;
        let bt = self.ty(f, base);
        let b = self.operand(f, base, mask)?;
        let idx_of = |l: usize| match index {
            Ok(v) => v.get(n, 0, l),
            Err(c) => c,
        };
        let pointee = match bt {
            TypeInner::Pointer { base: t, .. } => Some(module.types[*t].inner.clone()),
            TypeInner::ValuePointer {
                size: Some(size),
                scalar,
                ..
            } => Some(TypeInner::Vector {
                size: *size,
                scalar: *scalar,
            }),
            _ => None,
        };
        if let Some(inner) = pointee {
            // (stride, length: None = runtime-sized, measured from the buffer).
            let (stride, len): (u32, Option<u32>) = match &inner {
                TypeInner::Struct { members, .. } => {
                    let Err(i) = index else {
                        return Err(self.refuse(line, "a struct indexed by a runtime value"));
                    };
                    let off = members.get(i as usize).map_or(0, |m| m.offset);
                    let mut out = (*b).clone();
                    for r in self.ranges(mask) {
                        for l in r {
                            out.set(n, 1, l, b.get(n, 1, l).wrapping_add(off));
                        }
                    }
                    return Ok(out);
                }
                TypeInner::Array { stride, size, .. } => match size {
                    naga::ArraySize::Constant(c) => (*stride, Some(c.get())),
                    naga::ArraySize::Dynamic => (*stride, None),
                    naga::ArraySize::Pending(_) => {
                        return Err(self.refuse(line, "arrays sized by an override"));
                    }
                },
                TypeInner::Vector { size, scalar } => (u32::from(scalar.width), Some(*size as u32)),
                TypeInner::Matrix {
                    columns,
                    rows,
                    scalar,
                } => {
                    let w = u32::from(scalar.width);
                    (
                        if *rows as u32 == 2 { 2 * w } else { 4 * w },
                        Some(*columns as u32),
                    )
                }
                _ => return Err(self.refuse(line, "indexing this type")),
            };
            let mut out = (*b).clone();
            let mut bad: Option<(i64, u64)> = None;
            for r in self.ranges(mask) {
                for l in r {
                    let region = b.get(n, 0, l);
                    let off = b.get(n, 1, l);
                    let len = len.unwrap_or_else(|| {
                        let bytes = self
                            .mem
                            .regions
                            .get((region & !OOB) as usize)
                            .map_or(0, |g| g.bytes.len() as u64);
                        (bytes.saturating_sub(u64::from(off)) / u64::from(stride.max(1))) as u32
                    });
                    let i = idx_of(l);
                    let (i, flag) = if i < len {
                        (i, 0)
                    } else {
                        if mask.has(self.sg, l) && bad.is_none() {
                            // An index past 2³¹ is a negative i32 in all likelihood.
                            let shown = if (i as i32) < 0 {
                                i64::from(i as i32)
                            } else {
                                i64::from(i)
                            };
                            bad = Some((shown, u64::from(len)));
                        }
                        (len.saturating_sub(1), OOB)
                    };
                    out.set(n, 0, l, region | flag);
                    out.set(n, 1, l, off.wrapping_add(i.wrapping_mul(stride)));
                }
            }
            if let Some((i, len)) = bad {
                self.out_of_bounds(line, i, len);
            }
            return Ok(out);
        }
        // A value: pick words.
        let (elem_words, len, prefix): (usize, usize, Vec<usize>) = match bt {
            TypeInner::Vector { size, .. } => (1, *size as usize, Vec::new()),
            TypeInner::Matrix { columns, rows, .. } => {
                (*rows as usize, *columns as usize, Vec::new())
            }
            TypeInner::Array {
                base: e,
                size: naga::ArraySize::Constant(c),
                ..
            } => (self.leaves_of(*e)?.len(), c.get() as usize, Vec::new()),
            TypeInner::Struct { members, .. } => {
                let mut pre = Vec::with_capacity(members.len() + 1);
                let mut acc = 0;
                for m in members {
                    pre.push(acc);
                    acc += self.leaves_of(m.ty)?.len();
                }
                pre.push(acc);
                (0, members.len(), pre)
            }
            _ => return Err(self.refuse(line, "indexing this type")),
        };
        if !prefix.is_empty() {
            let i = match index {
                Err(i) => i as usize,
                Ok(_) => return Err(self.refuse(line, "a struct indexed by a runtime value")),
            };
            let (lo, hi) = (
                prefix.get(i).copied().unwrap_or(0),
                prefix.get(i + 1).copied().unwrap_or(0),
            );
            return Ok(Val {
                words: hi - lo,
                data: b.data.get(lo * n..hi * n).unwrap_or(&[]).to_vec(),
            });
        }
        let mut out = Val::zeros(elem_words, n);
        let mut bad = None;
        for r in self.ranges(mask) {
            for l in r {
                let mut i = idx_of(l) as usize;
                if i >= len {
                    if mask.has(self.sg, l) && bad.is_none() {
                        bad = Some(i as i64);
                    }
                    i = len.saturating_sub(1);
                }
                for c in 0..elem_words {
                    out.set(n, c, l, b.get(n, i * elem_words + c, l));
                }
            }
        }
        if let Some(i) = bad {
            self.out_of_bounds(line, i, len as u64);
        }
        Ok(out)
    }

    fn math(
        &mut self,
        f: &mut Frame<'m>,
        fun: M,
        args: [Option<Handle<Expression>>; 4],
        mask: &Active,
        line: u32,
    ) -> Result<Val, Error> {
        let n = self.n;
        let [Some(a0), a1, a2, a3] = args else {
            return Err(self.refuse(line, "a math call without arguments"));
        };
        let k = self.kind(f, a0, line)?;
        let mut vals = Vec::with_capacity(4);
        for a in [Some(a0), a1, a2, a3].into_iter().flatten() {
            vals.push(self.operand(f, a, mask)?);
        }
        let words = vals.first().map_or(1, |v| v.words);
        let arg = |i: usize, c: usize, l: usize| {
            vals.get(i)
                .map_or(0, |v| v.get(n, if v.words == 1 { 0 } else { c }, l))
        };
        if fun == M::InsertBits {
            let mut out = Val::zeros(words, n);
            for r in self.ranges(mask) {
                for c in 0..words {
                    for l in r.clone() {
                        out.set(
                            n,
                            c,
                            l,
                            ops::insert_bits(
                                arg(0, c, l),
                                arg(1, c, l),
                                arg(2, c, l),
                                arg(3, c, l),
                            ),
                        );
                    }
                }
            }
            return Ok(out);
        }
        if ops::is_componentwise(fun) {
            if ops::math(fun, k, 0, 0, 0).is_none() {
                return Err(self.refuse(line, &format!("the builtin {fun:?}")));
            }
            let mut out = Val::zeros(words, n);
            for r in self.ranges(mask) {
                for c in 0..words {
                    for l in r.clone() {
                        let w = ops::math(fun, k, arg(0, c, l), arg(1, c, l), arg(2, c, l))
                            .unwrap_or(0);
                        out.set(n, c, l, w);
                    }
                }
            }
            return Ok(out);
        }
        let out_words = match fun {
            M::Normalize | M::Cross => words,
            _ => 1,
        };
        let mut out = Val::zeros(out_words, n);
        let mut a = vec![0u32; words];
        let mut b = vec![0u32; words];
        for r in self.ranges(mask) {
            for l in r {
                for c in 0..words {
                    a[c] = arg(0, c, l);
                    b[c] = arg(1, c, l);
                }
                let res = ops::math_reduce(fun, k, &a, &b)
                    .ok_or_else(|| self.refuse(line, &format!("the builtin {fun:?}")))?;
                for (c, w) in res.into_iter().enumerate() {
                    out.set(n, c, l, w);
                }
            }
        }
        Ok(out)
    }

    /// Whether pointer lane `l` points into workgroup memory (for labels).
    pub fn is_shared(&self, ptr: &Val, l: usize) -> bool {
        self.mem
            .regions
            .get((ptr.get(self.n, 0, l) & !OOB) as usize)
            .is_some_and(|r| r.space == Space::Shared)
    }
}
