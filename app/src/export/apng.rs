//! Animated PNG (APNG) frames, encoded by the `png` crate: full colour (8-bit RGBA, no palette),
//! the first frame whole and each later frame only the rectangle of pixels that changed since
//! the one before, in which the pixels that did not change are transparent (drawn over the
//! frame before: dispose "none", blend "over"). A stepper moves a few lanes or blocks per event,
//! so most of a frame is a run of transparent pixels that compresses to almost nothing.

use super::ExportError;
use super::animation::{Frame, in_order, rasterise};
use super::svg::raster_options;

/// Encodes `frames` as a looping APNG of `size` pixels at `fps` frames per second: rasterised
/// on every core ([`rasterise`]), compared with the frame before and compressed in order.
/// `on_frame(done, total)` is called as frames are written.
///
/// # Errors
/// [`ExportError::Render`] for a frame that does not render or an encoder failure.
pub(super) fn encode(
    frames: &[Frame],
    size: (u32, u32),
    scale: f32,
    fps: u16,
    on_frame: &mut dyn FnMut(usize, usize),
) -> Result<Vec<u8>, ExportError> {
    let png_err = |e: png::EncodingError| ExportError::Render(e.to_string());
    let total = frames.len();
    let count = u32::try_from(total)
        .map_err(|_| ExportError::Render(format!("{total} frames are too many")))?;
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, size.0, size.1);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Balanced);
    enc.set_animated(count, 0).map_err(png_err)?;
    enc.set_frame_delay(1, fps.max(1)).map_err(png_err)?;
    let mut writer = enc.write_header().map_err(png_err)?;
    writer.set_blend_op(png::BlendOp::Over).map_err(png_err)?;
    let opt = raster_options();
    // The frame waiting to be written (its dispose operation depends on the next one) and the
    // canvas it is drawn over.
    let mut pending: Option<Vec<u8>> = None;
    let mut base: Option<Vec<u8>> = None;
    let mut written = 0;
    in_order(
        total,
        |i, pixmap| {
            let frame = frames
                .get(i)
                .ok_or_else(|| ExportError::Render(format!("frame {i} of {total} is missing")))?;
            rasterise(frame, size, scale, &opt, pixmap).map(|pm| pm.data().to_vec())
        },
        |f| {
            let Some(p) = pending.take() else {
                pending = Some(f);
                return Ok(());
            };
            // Keep the pending frame on the canvas, unless the next frame differs from the
            // canvas it was drawn over by less than half as much: put that back (a stepper
            // whose layout alternates then draws each frame over the last one of the same
            // layout; the newest canvas is preferred, as later frames tend to be like it).
            let keep = base
                .as_deref()
                .is_none_or(|b| 2 * difference(&f, b) >= difference(&f, &p));
            write_frame(&mut writer, base.as_deref(), &p, size, keep).map_err(png_err)?;
            if keep {
                base = Some(p);
            }
            pending = Some(f);
            written += 1;
            on_frame(written, total);
            Ok(())
        },
    )?;
    if let Some(p) = pending.take() {
        write_frame(&mut writer, base.as_deref(), &p, size, true).map_err(png_err)?;
        written += 1;
        on_frame(written, total);
    }
    writer.finish().map_err(png_err)?;
    Ok(out)
}

/// How many pixels of the RGBA images `a` and `b` differ.
fn difference(a: &[u8], b: &[u8]) -> usize {
    a.chunks_exact(4)
        .zip(b.chunks_exact(4))
        .filter(|(p, q)| p != q)
        .count()
}

/// Writes `frame` (opaque RGBA, `size`): whole when it is the first, else only the rectangle
/// that differs from `previous`, the canvas it is drawn over (one pixel when nothing does: APNG
/// frames are never empty), with the pixels that equal `previous` transparent. `keep`: the
/// frame stays on the canvas after it is shown (dispose "none"), else the canvas goes back to
/// `previous` (dispose "previous").
fn write_frame<W: std::io::Write>(
    writer: &mut png::Writer<W>,
    previous: Option<&[u8]>,
    frame: &[u8],
    size: (u32, u32),
    keep: bool,
) -> Result<(), png::EncodingError> {
    writer.set_dispose_op(if keep {
        png::DisposeOp::None
    } else {
        png::DisposeOp::Previous
    })?;
    let Some(previous) = previous else {
        return writer.write_image_data(frame);
    };
    let (x, y, w, h) = changed(previous, frame, size).unwrap_or((0, 0, 1, 1));
    writer.reset_frame_position()?;
    writer.set_frame_dimension(w, h)?;
    writer.set_frame_position(x, y)?;
    let row = size.0 as usize * 4;
    let mut crop = Vec::with_capacity(w as usize * h as usize * 4);
    for r in y..y + h {
        let start = r as usize * row + x as usize * 4;
        let end = start + w as usize * 4;
        for (p, q) in frame[start..end]
            .chunks_exact(4)
            .zip(previous[start..end].chunks_exact(4))
        {
            crop.extend_from_slice(if p == q { &[0; 4] } else { p });
        }
    }
    writer.write_image_data(&crop)
}

/// The smallest rectangle `(x, y, width, height)` holding every pixel where the RGBA images `a`
/// and `b` (`size`) differ; `None` when they are the same.
fn changed(a: &[u8], b: &[u8], (w, h): (u32, u32)) -> Option<(u32, u32, u32, u32)> {
    let row = w as usize * 4;
    let rows: Vec<usize> = (0..h as usize)
        .filter(|&r| a.get(r * row..(r + 1) * row) != b.get(r * row..(r + 1) * row))
        .collect();
    let (&top, &bottom) = (rows.first()?, rows.last()?);
    let (mut left, mut right) = (w as usize, 0usize);
    for r in top..=bottom {
        let (ra, rb) = (&a[r * row..(r + 1) * row], &b[r * row..(r + 1) * row]);
        if let Some(first) = (0..w as usize).find(|&c| ra[c * 4..c * 4 + 4] != rb[c * 4..c * 4 + 4])
        {
            left = left.min(first);
            let last = (first..w as usize)
                .rev()
                .find(|&c| ra[c * 4..c * 4 + 4] != rb[c * 4..c * 4 + 4])
                .unwrap_or(first);
            right = right.max(last);
        }
    }
    Some((
        left as u32,
        top as u32,
        (right - left + 1) as u32,
        (bottom - top + 1) as u32,
    ))
}

#[cfg(test)]
mod tests {
    use super::changed;

    #[test]
    fn the_changed_rectangle_is_the_smallest_around_every_difference() {
        let (w, h) = (5u32, 4u32);
        let a = vec![0u8; (w * h * 4) as usize];
        assert_eq!(changed(&a, &a, (w, h)), None);
        let mut b = a.clone();
        let px = |x: usize, y: usize| (y * w as usize + x) * 4;
        b[px(1, 1)] = 9;
        b[px(3, 2) + 2] = 9;
        assert_eq!(changed(&a, &b, (w, h)), Some((1, 1, 3, 2)));
    }
}
