//! The real, scaled-down instance: a model's tensors shrunk, parameters, gradients, m and v in
//! flat buffers with every tensor an ndarray view into them, Adam run per tensor (on the views)
//! and once over the whole buffer, and the check that every view aliases its buffer.

use half::f16;
use ndarray::{ArrayViewD, ArrayViewMutD, IxDyn, Zip};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use serde::Serialize;

use crate::Error;
use crate::trainer::adam::{AdamStep, adam_f16};
use crate::trainer::census::{ParamTensor, TensorKind, total_parameters};

/// Each dimension divided by `shrink`, rounded up (a model with the same tensors, smaller).
pub fn shrink_tensors(tensors: &[ParamTensor], shrink: usize) -> Vec<ParamTensor> {
    let s = shrink.max(1);
    tensors
        .iter()
        .map(|t| ParamTensor {
            name: t.name.clone(),
            shape: t.shape.iter().map(|d| d.div_ceil(s)).collect(),
            kind: t.kind,
        })
        .collect()
}

/// Where one tensor sits in the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// Tensor name.
    pub name: String,
    /// Kind.
    pub kind: TensorKind,
    /// First element in the flat buffer.
    pub offset: u64,
    /// Elements.
    pub elements: u64,
}

/// The tensors laid out back to back, in order.
pub fn layout(tensors: &[ParamTensor]) -> Vec<Segment> {
    let mut off = 0;
    tensors
        .iter()
        .map(|t| {
            let s = Segment {
                name: t.name.clone(),
                kind: t.kind,
                offset: off,
                elements: t.numel(),
            };
            off += s.elements;
            s
        })
        .collect()
}

/// Trainer state in flat buffers: one allocation each for p (FP16), g (FP16), m, v (FP32).
#[derive(Debug, Clone, PartialEq)]
pub struct Workspace {
    /// The tensors (shapes) in layout order.
    pub tensors: Vec<ParamTensor>,
    /// Offsets.
    pub segments: Vec<Segment>,
    /// Parameters, FP16.
    pub p: Vec<f16>,
    /// Gradients, FP16.
    pub g: Vec<f16>,
    /// First moments, FP32.
    pub m: Vec<f32>,
    /// Second moments, FP32.
    pub v: Vec<f32>,
}

/// Elements between two progress ticks of the instance (about 1 % of the default instance).
const TICK: usize = 1 << 15;

/// Fills `out` with `normal`'s samples in order, rounded to FP16 (to nearest, ties to even):
/// the same values as `f16::from_f32(normal.sample(rng))` one by one, drawn into an f32 chunk
/// and rounded with `half`'s slice conversion (vectorised). Calls `tick(base + filled)` before
/// each chunk.
fn fill_normal(
    out: &mut [f16],
    normal: &Normal<f32>,
    rng: &mut ChaCha8Rng,
    base: u64,
    tick: &mut dyn FnMut(u64) -> Result<(), Error>,
) -> Result<(), Error> {
    use half::slice::HalfFloatSliceExt;
    let mut buf = vec![0.0f32; TICK.min(out.len())];
    for (i, chunk) in out.chunks_mut(TICK).enumerate() {
        tick(base + (i * TICK) as u64)?;
        let b = &mut buf[..chunk.len()];
        for x in b.iter_mut() {
            *x = normal.sample(rng);
        }
        chunk.convert_from_f32_slice(b);
    }
    Ok(())
}

fn shape_err(e: ndarray::ShapeError) -> Error {
    Error::BadInput(format!("workspace view: {e}"))
}

impl Workspace {
    /// A seeded instance: weights and embeddings N(0, 0.02²), biases and β 0, γ 1; zero
    /// moments and gradients.
    pub fn new(tensors: Vec<ParamTensor>, seed: u64) -> Result<Self, Error> {
        Self::new_ticking(tensors, seed, &mut |_| Ok(()))
    }

    /// [`Self::new`], calling `tick(elements filled so far)` every [`TICK`] elements (the
    /// scene reports progress and stops on cancel through it).
    pub(super) fn new_ticking(
        tensors: Vec<ParamTensor>,
        seed: u64,
        tick: &mut dyn FnMut(u64) -> Result<(), Error>,
    ) -> Result<Self, Error> {
        let segments = layout(&tensors);
        let n = total_parameters(&tensors) as usize;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let normal = Normal::new(0.0f32, 0.02).map_err(|e| Error::BadInput(e.to_string()))?;
        let mut p = vec![f16::ZERO; n];
        let mut off = 0;
        for t in &tensors {
            let k = (t.numel() as usize).min(n - off);
            let dst = &mut p[off..off + k];
            match t.kind {
                TensorKind::Weight | TensorKind::Embedding => {
                    fill_normal(dst, &normal, &mut rng, off as u64, tick)?;
                }
                TensorKind::Bias | TensorKind::LayerNormBeta => dst.fill(f16::ZERO),
                TensorKind::LayerNormGamma => dst.fill(f16::ONE),
            }
            off += k;
        }
        Ok(Workspace {
            tensors,
            segments,
            p,
            g: vec![f16::ZERO; n],
            m: vec![0.0; n],
            v: vec![0.0; n],
        })
    }

    /// Fills the gradients with seeded N(0, 0.01²) values rounded to FP16.
    pub fn fill_gradients(&mut self, rng: &mut ChaCha8Rng) -> Result<(), Error> {
        self.fill_gradients_ticking(rng, &mut |_| Ok(()))
    }

    /// [`Self::fill_gradients`], calling `tick(elements filled so far)` every [`TICK`]
    /// elements.
    pub(super) fn fill_gradients_ticking(
        &mut self,
        rng: &mut ChaCha8Rng,
        tick: &mut dyn FnMut(u64) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let normal = Normal::new(0.0f32, 0.01).map_err(|e| Error::BadInput(e.to_string()))?;
        fill_normal(&mut self.g, &normal, rng, 0, tick)
    }

    /// Every parameter as an n-d view (its own shape) into the one flat `p` buffer.
    ///
    /// # Errors
    /// [`Error::BadInput`] if a segment does not fit its shape (cannot happen for [`layout`]).
    pub fn param_views(&self) -> Result<Vec<ArrayViewD<'_, f16>>, Error> {
        self.tensors
            .iter()
            .zip(&self.segments)
            .map(|(t, s)| {
                let (a, b) = (s.offset as usize, (s.offset + s.elements) as usize);
                let slice = self
                    .p
                    .get(a..b)
                    .ok_or_else(|| Error::BadInput(format!("segment {} out of range", s.name)))?;
                ArrayViewD::from_shape(IxDyn(&t.shape), slice).map_err(shape_err)
            })
            .collect()
    }

    /// Adam once per tensor, each call on that tensor's n-d views of p, g, m, v.
    ///
    /// # Errors
    /// [`Error::BadInput`] if a view cannot be formed (cannot happen for [`layout`]).
    pub fn adam_per_tensor(&mut self, s: &AdamStep) -> Result<(), Error> {
        self.adam_per_tensor_ticking(s, &mut |_| Ok(()))
    }

    /// [`Self::adam_per_tensor`], calling `tick(elements updated so far)` before each tensor.
    pub(super) fn adam_per_tensor_ticking(
        &mut self,
        s: &AdamStep,
        tick: &mut dyn FnMut(u64) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let (mut p, mut m, mut v) = (&mut self.p[..], &mut self.m[..], &mut self.v[..]);
        let mut g = &self.g[..];
        let mut done = 0u64;
        for t in &self.tensors {
            tick(done)?;
            done += t.numel();
            let n = t.numel() as usize;
            if n > p.len() {
                return Err(Error::BadInput(format!("tensor {} overruns", t.name)));
            }
            let (p0, p1) = std::mem::take(&mut p).split_at_mut(n);
            let (m0, m1) = std::mem::take(&mut m).split_at_mut(n);
            let (v0, v1) = std::mem::take(&mut v).split_at_mut(n);
            let (g0, g1) = g.split_at(n);
            (p, m, v, g) = (p1, m1, v1, g1);
            let shape = IxDyn(&t.shape);
            let mut pv = ArrayViewMutD::from_shape(shape.clone(), p0).map_err(shape_err)?;
            let gv = ArrayViewD::from_shape(shape.clone(), g0).map_err(shape_err)?;
            let mut mv = ArrayViewMutD::from_shape(shape.clone(), m0).map_err(shape_err)?;
            let mut vv = ArrayViewMutD::from_shape(shape, v0).map_err(shape_err)?;
            // The views are contiguous (standard layout), so the chunked kernel runs on their
            // memory; element by element through `Zip` otherwise (same bits either way).
            match (
                pv.as_slice_mut(),
                gv.as_slice(),
                mv.as_slice_mut(),
                vv.as_slice_mut(),
            ) {
                (Some(p), Some(g), Some(m), Some(v)) => adam_f16(p, g, m, v, s),
                _ => Zip::from(pv)
                    .and(gv)
                    .and(mv)
                    .and(vv)
                    .for_each(|p, &g, m, v| s.update_f16(p, g, m, v)),
            }
        }
        Ok(())
    }

    /// Adam once over the whole flat buffers ([`adam_f16`]: FP16 widened a chunk at a time).
    pub fn adam_whole(&mut self, s: &AdamStep) {
        adam_f16(&mut self.p, &self.g, &mut self.m, &mut self.v, s);
    }
}

/// The aliasing check of one view, from pointers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ViewCheck {
    /// Tensor name.
    pub name: String,
    /// `(view pointer − buffer pointer) / 2 bytes`: the view's first element in the buffer.
    pub offset_from_pointer: u64,
    /// Elements in the view.
    pub elements: u64,
    /// The view's byte range lies inside the buffer's and starts at the segment's offset.
    pub aliases: bool,
}

/// Checks every parameter view against the flat buffer's pointer range.
pub fn check_views(ws: &Workspace) -> Result<Vec<ViewCheck>, Error> {
    let base = ws.p.as_ptr() as usize;
    let elem = std::mem::size_of::<f16>();
    let end = base + ws.p.len() * elem;
    let views = ws.param_views()?;
    Ok(views
        .iter()
        .zip(&ws.segments)
        .map(|(view, seg)| {
            let start = view.as_ptr() as usize;
            let stop = start + view.len() * elem;
            let inside = base <= start && stop <= end;
            let offset = start.wrapping_sub(base) / elem;
            ViewCheck {
                name: seg.name.clone(),
                offset_from_pointer: offset as u64,
                elements: view.len() as u64,
                aliases: inside && offset as u64 == seg.offset && view.len() as u64 == seg.elements,
            }
        })
        .collect())
}
