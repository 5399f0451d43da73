//! Warp shuffles with CUDA's lane mapping (CUDA C++ Programming Guide, "Warp Shuffle
//! Functions"; `width` is the segment width, a power of two ≤ the warp size, default the
//! warp size):
//!
//! | mode | source lane of lane `l` | when the source is out of range |
//! |---|---|---|
//! | `idx(src)` | `(l & !(width-1)) + src % width` | never (wraps within the segment) |
//! | `up(d)` | `l - d` | `l % width < d`: the lane keeps its own value |
//! | `down(d)` | `l + d` | `l % width + d ≥ width`: the lane keeps its own value |
//! | `xor(m)` | `l ^ m` | source in a later segment or past the warp: own value |
//!
//! A source lane that exists but is *inactive* (not in the mask) gives an undefined value
//! (the guide: "the retrieved value is undefined"); the simulator returns
//! [`Register::undefined`] (NaN for floats), so any use of it shows in the result, and the
//! trace marks the lane. Inactive calling lanes keep their value.

use serde::{Deserialize, Serialize};

use super::Mask;

/// Which shuffle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShuffleMode {
    /// `__shfl_sync(mask, v, src)`: read lane `src` of the segment.
    Idx,
    /// `__shfl_up_sync(mask, v, d)`: read lane `l - d`.
    Up,
    /// `__shfl_down_sync(mask, v, d)`: read lane `l + d`.
    Down,
    /// `__shfl_xor_sync(mask, v, m)`: read lane `l ^ m` (the butterfly).
    Xor,
}

impl ShuffleMode {
    /// CUDA's intrinsic name.
    pub fn intrinsic(self) -> &'static str {
        match self {
            ShuffleMode::Idx => "__shfl_sync",
            ShuffleMode::Up => "__shfl_up_sync",
            ShuffleMode::Down => "__shfl_down_sync",
            ShuffleMode::Xor => "__shfl_xor_sync",
        }
    }
}

/// Where one lane's result came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The value of this active lane.
    Lane(u32),
    /// Source out of range: the lane kept its own value.
    Own,
    /// The source lane is inactive: the value is undefined.
    Undefined(u32),
    /// The calling lane is inactive and takes no part.
    Inactive,
}

/// A value a lane register can hold in the simulator.
pub trait Register: Copy {
    /// What a lane reads from an inactive source lane.
    fn undefined() -> Self;
    /// The value for traces.
    fn to_f64(self) -> f64;
}

impl Register for f32 {
    fn undefined() -> Self {
        f32::NAN
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Register for f64 {
    fn undefined() -> Self {
        f64::NAN
    }
    fn to_f64(self) -> f64 {
        self
    }
}

impl Register for i32 {
    fn undefined() -> Self {
        i32::MIN
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

/// The source of lane `lane` for one shuffle in a warp of `warp_size` lanes.
///
/// `width` is the segment width (a power of two ≤ `warp_size`).
pub fn source_lane(
    mode: ShuffleMode,
    lane: u32,
    arg: u32,
    width: u32,
    warp_size: u32,
) -> Option<u32> {
    let width = width.clamp(1, warp_size.max(1));
    let base = lane & !(width - 1);
    let off = lane - base;
    let src = match mode {
        ShuffleMode::Idx => Some(base + arg % width),
        ShuffleMode::Up => off.checked_sub(arg).map(|o| base + o),
        ShuffleMode::Down => (off + arg < width).then_some(lane + arg),
        ShuffleMode::Xor => {
            let s = lane ^ arg;
            (s < base + width).then_some(s)
        }
    };
    src.filter(|s| *s < warp_size)
}

/// Executes one shuffle over a warp: `values[l]` is lane `l`'s register, `active` the
/// participating lanes. Returns each lane's new value and where it came from.
pub fn shuffle<T: Register>(
    mode: ShuffleMode,
    arg: u32,
    width: u32,
    values: &[T],
    active: Mask,
) -> (Vec<T>, Vec<Source>) {
    let n = values.len() as u32;
    let mut out = values.to_vec();
    let mut src = vec![Source::Inactive; values.len()];
    for lane in 0..n {
        if !active.has(lane) {
            continue;
        }
        let (v, s) = match source_lane(mode, lane, arg, width, n) {
            Some(s) if active.has(s) => (values[s as usize], Source::Lane(s)),
            Some(s) => (T::undefined(), Source::Undefined(s)),
            None => (values[lane as usize], Source::Own),
        };
        out[lane as usize] = v;
        src[lane as usize] = s;
    }
    (out, src)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes() -> Vec<f32> {
        (0..32).map(|l| l as f32).collect()
    }

    #[test]
    fn xor_is_a_butterfly() {
        let (v, s) = shuffle(ShuffleMode::Xor, 1, 32, &lanes(), Mask::first(32));
        assert_eq!(&v[..4], &[1.0, 0.0, 3.0, 2.0]);
        assert_eq!(s[0], Source::Lane(1));
        let (v, _) = shuffle(ShuffleMode::Xor, 16, 32, &lanes(), Mask::first(32));
        assert_eq!((v[0], v[16], v[31]), (16.0, 0.0, 15.0));
        // Mask 16 with 16-wide segments: the partner lies in the other segment, lane 0 would
        // read a later segment (own value), lane 16 an earlier one (allowed).
        let (v, s) = shuffle(ShuffleMode::Xor, 16, 16, &lanes(), Mask::first(32));
        assert_eq!((v[0], s[0]), (0.0, Source::Own));
        assert_eq!((v[16], s[16]), (0.0, Source::Lane(0)));
    }

    #[test]
    fn down_and_up_keep_own_value_past_the_edge() {
        let (v, s) = shuffle(ShuffleMode::Down, 4, 32, &lanes(), Mask::first(32));
        assert_eq!((v[0], v[27], v[28], v[31]), (4.0, 31.0, 28.0, 31.0));
        assert_eq!(s[28], Source::Own);
        let (v, s) = shuffle(ShuffleMode::Up, 4, 32, &lanes(), Mask::first(32));
        assert_eq!((v[0], v[3], v[4], v[31]), (0.0, 3.0, 0.0, 27.0));
        assert_eq!(s[3], Source::Own);
        // 8-wide segments: lane 6 + 4 is past its segment.
        let (v, _) = shuffle(ShuffleMode::Down, 4, 8, &lanes(), Mask::first(32));
        assert_eq!((v[3], v[6], v[11]), (7.0, 6.0, 15.0));
    }

    #[test]
    fn idx_wraps_within_the_segment() {
        let (v, _) = shuffle(ShuffleMode::Idx, 3, 32, &lanes(), Mask::first(32));
        assert!(v.iter().all(|x| *x == 3.0));
        let (v, _) = shuffle(ShuffleMode::Idx, 35, 32, &lanes(), Mask::first(32));
        assert!(v.iter().all(|x| *x == 3.0), "35 mod 32 = 3");
        let (v, _) = shuffle(ShuffleMode::Idx, 1, 8, &lanes(), Mask::first(32));
        assert_eq!((v[0], v[9], v[31]), (1.0, 9.0, 25.0));
    }

    #[test]
    fn inactive_source_is_undefined_and_inactive_caller_unchanged() {
        let active = Mask::first(16); // lanes 16..32 inactive
        let (v, s) = shuffle(ShuffleMode::Xor, 16, 32, &lanes(), active);
        assert!(v[0].is_nan());
        assert_eq!(s[0], Source::Undefined(16));
        assert_eq!((v[20], s[20]), (20.0, Source::Inactive));
        let (v, _) = shuffle(ShuffleMode::Down, 1, 32, &lanes(), active);
        assert_eq!(v[14], 15.0);
        assert!(v[15].is_nan(), "lane 16 is inactive");
    }

    #[test]
    fn butterfly_sum_leaves_the_total_in_every_lane() {
        let mut v = lanes();
        for m in [16, 8, 4, 2, 1] {
            let (s, _) = shuffle(ShuffleMode::Xor, m, 32, &v, Mask::first(32));
            v = v.iter().zip(&s).map(|(a, b)| a + b).collect();
        }
        assert!(v.iter().all(|x| *x == 496.0), "0 + 1 + … + 31 = 496");
    }
}
