//! Scalar operations on register words, with WGSL's rules (WGSL spec §8.7 "Arithmetic
//! Expressions", §17 "Built-in Functions"): integer arithmetic wraps, an integer divided by
//! zero gives the dividend and its remainder 0, `i32::MIN / -1` gives `i32::MIN`, shift counts
//! are taken modulo 32, float-to-integer conversion saturates (NaN to 0).

use naga::{BinaryOperator as B, MathFunction as M, UnaryOperator as U};

use super::value::{Kind, round_f16};

/// A binary scalar operation on words.
pub type BinFn = fn(u32, u32) -> u32;

fn f(w: u32) -> f32 {
    f32::from_bits(w)
}
fn fb(x: f32) -> u32 {
    x.to_bits()
}
fn b(x: bool) -> u32 {
    u32::from(x)
}

/// The word function of `op` on operands of kind `k` (the result of a comparison is a bool
/// word), or `None` where WGSL has no such operation.
pub fn binary(op: B, k: Kind) -> Option<BinFn> {
    let g: BinFn = match (k, op) {
        (Kind::F32, B::Add) => |a, c| fb(f(a) + f(c)),
        (Kind::F32, B::Subtract) => |a, c| fb(f(a) - f(c)),
        (Kind::F32, B::Multiply) => |a, c| fb(f(a) * f(c)),
        (Kind::F32, B::Divide) => |a, c| fb(f(a) / f(c)),
        (Kind::F32, B::Modulo) => |a, c| fb(f(a) % f(c)),
        (Kind::F16, B::Add) => |a, c| round_f16(fb(f(a) + f(c))),
        (Kind::F16, B::Subtract) => |a, c| round_f16(fb(f(a) - f(c))),
        (Kind::F16, B::Multiply) => |a, c| round_f16(fb(f(a) * f(c))),
        (Kind::F16, B::Divide) => |a, c| round_f16(fb(f(a) / f(c))),
        (Kind::F16, B::Modulo) => |a, c| round_f16(fb(f(a) % f(c))),
        (Kind::F32 | Kind::F16, B::Equal) => |a, c| b(f(a) == f(c)),
        (Kind::F32 | Kind::F16, B::NotEqual) => |a, c| b(f(a) != f(c)),
        (Kind::F32 | Kind::F16, B::Less) => |a, c| b(f(a) < f(c)),
        (Kind::F32 | Kind::F16, B::LessEqual) => |a, c| b(f(a) <= f(c)),
        (Kind::F32 | Kind::F16, B::Greater) => |a, c| b(f(a) > f(c)),
        (Kind::F32 | Kind::F16, B::GreaterEqual) => |a, c| b(f(a) >= f(c)),
        (Kind::I32 | Kind::U32, B::Add) => u32::wrapping_add,
        (Kind::I32 | Kind::U32, B::Subtract) => u32::wrapping_sub,
        (Kind::I32 | Kind::U32, B::Multiply) => u32::wrapping_mul,
        (Kind::U32, B::Divide) => |a, c| a.checked_div(c).unwrap_or(a),
        (Kind::U32, B::Modulo) => |a, c| if c == 0 { 0 } else { a % c },
        (Kind::I32, B::Divide) => |a, c| {
            let (x, y) = (a as i32, c as i32);
            if y == 0 || (x == i32::MIN && y == -1) {
                a
            } else {
                (x / y) as u32
            }
        },
        (Kind::I32, B::Modulo) => |a, c| {
            let (x, y) = (a as i32, c as i32);
            if y == 0 || (x == i32::MIN && y == -1) {
                0
            } else {
                (x % y) as u32
            }
        },
        (Kind::I32 | Kind::U32 | Kind::Bool, B::Equal) => |a, c| b(a == c),
        (Kind::I32 | Kind::U32 | Kind::Bool, B::NotEqual) => |a, c| b(a != c),
        (Kind::U32, B::Less) => |a, c| b(a < c),
        (Kind::U32, B::LessEqual) => |a, c| b(a <= c),
        (Kind::U32, B::Greater) => |a, c| b(a > c),
        (Kind::U32, B::GreaterEqual) => |a, c| b(a >= c),
        (Kind::I32, B::Less) => |a, c| b((a as i32) < (c as i32)),
        (Kind::I32, B::LessEqual) => |a, c| b((a as i32) <= (c as i32)),
        (Kind::I32, B::Greater) => |a, c| b((a as i32) > (c as i32)),
        (Kind::I32, B::GreaterEqual) => |a, c| b((a as i32) >= (c as i32)),
        (Kind::I32 | Kind::U32 | Kind::Bool, B::And | B::LogicalAnd) => |a, c| a & c,
        (Kind::I32 | Kind::U32 | Kind::Bool, B::InclusiveOr | B::LogicalOr) => |a, c| a | c,
        (Kind::I32 | Kind::U32 | Kind::Bool, B::ExclusiveOr) => |a, c| a ^ c,
        (Kind::I32 | Kind::U32, B::ShiftLeft) => |a, c| a << (c & 31),
        (Kind::U32, B::ShiftRight) => |a, c| a >> (c & 31),
        (Kind::I32, B::ShiftRight) => |a, c| ((a as i32) >> (c & 31)) as u32,
        _ => return None,
    };
    Some(g)
}

/// A unary operation on a word of kind `k`.
pub fn unary(op: U, k: Kind, w: u32) -> u32 {
    match (op, k) {
        (U::Negate, Kind::F32 | Kind::F16) => w ^ 0x8000_0000,
        (U::Negate, _) => w.wrapping_neg(),
        (U::LogicalNot, _) => u32::from(w == 0),
        (U::BitwiseNot, _) => !w,
    }
}

/// Converts a word of kind `from` to kind `to` as WGSL's value conversion does (§15.7.7).
pub fn convert(from: Kind, to: Kind, w: u32) -> u32 {
    let x = match from {
        Kind::F32 | Kind::F16 => f64::from(f(w)),
        Kind::I32 => f64::from(w as i32),
        Kind::U32 => f64::from(w),
        Kind::Bool => f64::from(u32::from(w != 0)),
    };
    match to {
        Kind::F32 => fb(x as f32),
        Kind::F16 => round_f16(fb(x as f32)),
        // `as` saturates and maps NaN to 0: WGSL's float-to-integer rule.
        Kind::I32 => (x as i32) as u32,
        Kind::U32 => x as u32,
        Kind::Bool => u32::from(x != 0.0),
    }
}

/// Whether `fun` works component by component (as opposed to [`math_reduce`]'s functions).
pub fn is_componentwise(fun: M) -> bool {
    !matches!(
        fun,
        M::Dot | M::Length | M::Distance | M::Normalize | M::Cross
    )
}

/// A component-wise math builtin on words `a`, `b`, `c` of kind `k`; `None` where the lab
/// does not model it.
pub fn math(fun: M, k: Kind, a: u32, b1: u32, c: u32) -> Option<u32> {
    if k.is_float() {
        let (x, y, z) = (f(a), f(b1), f(c));
        let r = match fun {
            M::Abs => x.abs(),
            M::Min => x.min(y),
            M::Max => x.max(y),
            M::Clamp => x.max(y).min(z),
            M::Saturate => x.clamp(0.0, 1.0),
            M::Cos => x.cos(),
            M::Cosh => x.cosh(),
            M::Sin => x.sin(),
            M::Sinh => x.sinh(),
            M::Tan => x.tan(),
            M::Tanh => x.tanh(),
            M::Acos => x.acos(),
            M::Asin => x.asin(),
            M::Atan => x.atan(),
            M::Atan2 => x.atan2(y),
            M::Asinh => x.asinh(),
            M::Acosh => x.acosh(),
            M::Atanh => x.atanh(),
            M::Radians => x.to_radians(),
            M::Degrees => x.to_degrees(),
            M::Ceil => x.ceil(),
            M::Floor => x.floor(),
            M::Round => x.round_ties_even(),
            M::Fract => x - x.floor(),
            M::Trunc => x.trunc(),
            M::Exp => x.exp(),
            M::Exp2 => x.exp2(),
            M::Log => x.ln(),
            M::Log2 => x.log2(),
            M::Pow => x.powf(y),
            M::Sign => {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
            M::Fma => x.mul_add(y, z),
            M::Mix => x * (1.0 - z) + y * z,
            M::Step => {
                if y >= x {
                    1.0
                } else {
                    0.0
                }
            }
            M::SmoothStep => {
                let t = ((z - x) / (y - x)).clamp(0.0, 1.0);
                t * t * (3.0 - 2.0 * t)
            }
            M::Sqrt => x.sqrt(),
            M::InverseSqrt => 1.0 / x.sqrt(),
            M::QuantizeToF16 => half::f16::from_f32(x).to_f32(),
            _ => return None,
        };
        return Some(if k == Kind::F16 {
            round_f16(fb(r))
        } else {
            fb(r)
        });
    }
    let signed = k == Kind::I32;
    Some(match fun {
        M::Abs if signed => (a as i32).wrapping_abs() as u32,
        M::Abs => a,
        M::Min if signed => (a as i32).min(b1 as i32) as u32,
        M::Min => a.min(b1),
        M::Max if signed => (a as i32).max(b1 as i32) as u32,
        M::Max => a.max(b1),
        M::Clamp if signed => (a as i32).max(b1 as i32).min(c as i32) as u32,
        M::Clamp => a.max(b1).min(c),
        M::Sign if signed => (a as i32).signum() as u32,
        M::CountOneBits => a.count_ones(),
        M::CountLeadingZeros => a.leading_zeros(),
        M::CountTrailingZeros => a.trailing_zeros(),
        M::ReverseBits => a.reverse_bits(),
        M::FirstTrailingBit => {
            if a == 0 {
                u32::MAX
            } else {
                a.trailing_zeros()
            }
        }
        // WGSL: for i32, the highest bit differing from the sign bit; -1 when none.
        M::FirstLeadingBit => {
            let v = if signed && (a as i32) < 0 { !a } else { a };
            if v == 0 {
                u32::MAX
            } else {
                31 - v.leading_zeros()
            }
        }
        M::ExtractBits => {
            let o = b1.min(32);
            let n = c.min(32 - o);
            if n == 0 {
                0
            } else if signed {
                (((a << (32 - o - n)) as i32) >> (32 - n)) as u32
            } else {
                (a >> o) & (u32::MAX >> (32 - n))
            }
        }
        _ => return None,
    })
}

/// `insertBits(e, newbits, offset, count)` (WGSL §17.6).
pub fn insert_bits(e: u32, new: u32, offset: u32, count: u32) -> u32 {
    let o = offset.min(32);
    let n = count.min(32 - o);
    if n == 0 {
        return e;
    }
    let mask = (u32::MAX >> (32 - n)) << o;
    (e & !mask) | ((new << o) & mask)
}

/// The functions that combine the components of vectors: `dot`, `length`, `distance`,
/// `normalize`, `cross`. `a`, `b` are the components; the result's components.
pub fn math_reduce(fun: M, k: Kind, a: &[u32], b1: &[u32]) -> Option<Vec<u32>> {
    let fl = |x: f32| {
        if k == Kind::F16 {
            round_f16(fb(x))
        } else {
            fb(x)
        }
    };
    let dotf = |p: &[u32], q: &[u32]| p.iter().zip(q).map(|(x, y)| f(*x) * f(*y)).sum::<f32>();
    Some(match (fun, k.is_float()) {
        (M::Dot, true) => vec![fl(dotf(a, b1))],
        (M::Dot, false) => vec![
            a.iter()
                .zip(b1)
                .fold(0u32, |s, (x, y)| s.wrapping_add(x.wrapping_mul(*y))),
        ],
        (M::Length, true) => vec![fl(dotf(a, a).sqrt())],
        (M::Distance, true) => {
            let d: Vec<u32> = a.iter().zip(b1).map(|(x, y)| fb(f(*x) - f(*y))).collect();
            vec![fl(dotf(&d, &d).sqrt())]
        }
        (M::Normalize, true) => {
            let len = dotf(a, a).sqrt();
            a.iter().map(|x| fl(f(*x) / len)).collect()
        }
        (M::Cross, true) if a.len() == 3 && b1.len() == 3 => {
            let (x, y) = ([f(a[0]), f(a[1]), f(a[2])], [f(b1[0]), f(b1[1]), f(b1[2])]);
            vec![
                fl(x[1] * y[2] - x[2] * y[1]),
                fl(x[2] * y[0] - x[0] * y[2]),
                fl(x[0] * y[1] - x[1] * y[0]),
            ]
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wgsl_integer_rules() {
        // WGSL §8.7: e / 0 = e, e % 0 = 0, i32::MIN / -1 = i32::MIN; shifts mod 32.
        let div = binary(B::Divide, Kind::I32).unwrap();
        assert_eq!(div(7, 0), 7);
        assert_eq!(div(i32::MIN as u32, -1i32 as u32), i32::MIN as u32);
        assert_eq!(binary(B::Modulo, Kind::U32).unwrap()(7, 0), 0);
        assert_eq!(binary(B::ShiftLeft, Kind::U32).unwrap()(1, 33), 2);
        assert_eq!(
            binary(B::ShiftRight, Kind::I32).unwrap()(-8i32 as u32, 1),
            -4i32 as u32
        );
        // firstLeadingBit(-1i) = -1; of 0x10u = 4.
        assert_eq!(
            math(M::FirstLeadingBit, Kind::I32, u32::MAX, 0, 0),
            Some(u32::MAX)
        );
        assert_eq!(math(M::FirstLeadingBit, Kind::U32, 0x10, 0, 0), Some(4));
        assert_eq!(math(M::ExtractBits, Kind::U32, 0xABCD, 4, 8), Some(0xBC));
        assert_eq!(insert_bits(0, 0xF, 4, 4), 0xF0);
        // Float to int saturates: 3e9 → i32::MAX; -1.5 → u32 0.
        assert_eq!(
            convert(Kind::F32, Kind::I32, 3e9f32.to_bits()),
            i32::MAX as u32
        );
        assert_eq!(convert(Kind::F32, Kind::U32, (-1.5f32).to_bits()), 0);
    }
}
