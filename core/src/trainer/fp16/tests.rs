//! Tests of the FP16 scene: rounding by bit pattern, spacing and binades, the branch-free
//! conversions against `half`, exercise 9, and the γ experiment's trainers and trends.

use half::f16;

use super::*;

#[test]
fn rounding_is_to_nearest_ties_to_even_by_bit_pattern() {
    // 1.0 = 0x3C00 (sign 0, exponent 15 = 0b01111, fraction 0); spacing 2⁻¹⁰.
    assert_eq!(to_f16(1.0).to_bits(), 0x3C00);
    // 1 + 2⁻¹¹ is exactly halfway between 0x3C00 (even) and 0x3C01 (odd) → 0x3C00.
    assert_eq!(to_f16(1.0 + 2f32.powi(-11)).to_bits(), 0x3C00);
    // 1 + 3·2⁻¹¹ is halfway between 0x3C01 (odd) and 0x3C02 (even) → 0x3C02.
    assert_eq!(to_f16(1.0 + 3.0 * 2f32.powi(-11)).to_bits(), 0x3C02);
    // Just above half rounds up: 1 + 2⁻¹¹ + 2⁻²⁰ → 0x3C01.
    assert_eq!(
        to_f16(1.0 + 2f32.powi(-11) + 2f32.powi(-20)).to_bits(),
        0x3C01
    );
    // Just below half rounds down: 1 + 2⁻¹¹ − 2⁻²⁰ → 0x3C00.
    assert_eq!(
        to_f16(1.0 + 2f32.powi(-11) - 2f32.powi(-20)).to_bits(),
        0x3C00
    );
    // Below 1 the spacing is 2⁻¹¹: 1 − 2⁻¹² is halfway between 0x3BFF (odd) and 0x3C00
    // (even) → 0x3C00; 1 − 3·2⁻¹² halfway between 0x3BFE (even) and 0x3BFF → 0x3BFE.
    assert_eq!(to_f16(1.0 - 2f32.powi(-12)).to_bits(), 0x3C00);
    assert_eq!(to_f16(1.0 - 3.0 * 2f32.powi(-12)).to_bits(), 0x3BFE);
    // Largest finite 65504 = 0x7BFF; 65520 is halfway to 2¹⁶ (which would be 0x7C00's
    // exponent) → ties to even → +∞ = 0x7C00; 65519 → 0x7BFF.
    assert_eq!(to_f16(65504.0).to_bits(), 0x7BFF);
    assert_eq!(to_f16(65520.0).to_bits(), 0x7C00);
    assert_eq!(to_f16(65519.0).to_bits(), 0x7BFF);
    // Subnormals: 2⁻²⁴ = 0x0001; 2⁻²⁵ is halfway between 0 (even) and 0x0001 → 0;
    // 3·2⁻²⁵ halfway between 0x0001 and 0x0002 (even) → 0x0002.
    assert_eq!(to_f16(2f32.powi(-24)).to_bits(), 0x0001);
    assert_eq!(to_f16(2f32.powi(-25)).to_bits(), 0x0000);
    assert_eq!(to_f16(3.0 * 2f32.powi(-25)).to_bits(), 0x0002);
    // Sign is kept: −1.5 = 0xBE00 (1.5 = 1 + 2⁻¹ → fraction 0b10_0000_0000 = 0x200).
    assert_eq!(to_f16(-1.5).to_bits(), 0xBE00);
}

#[test]
fn inline_conversions_are_bitwise_half() {
    // Widening: every one of the 65,536 FP16 bit patterns (NaNs: NaN).
    for h in 0..=u16::MAX {
        let want = f16::from_bits(h).to_f32();
        let got = f16_bits_to_f32(h);
        if want.is_nan() {
            assert!(got.is_nan(), "{h:#06x}");
        } else {
            assert_eq!(got.to_bits(), want.to_bits(), "{h:#06x}");
        }
    }
    // Narrowing: each FP16 value, the f32s next to it and the midpoints to its neighbour
    // (ties, just below, just above) — every rounding boundary, both signs — plus every
    // 4099th f32 bit pattern.
    let check = |x: f32| {
        assert_eq!(
            f32_to_f16_bits(x),
            f16::from_f32(x).to_bits(),
            "{x:e} ({:#010x})",
            x.to_bits()
        );
    };
    for h in 0..0x7c00u16 {
        let lo = f16::from_bits(h).to_f32();
        let hi = f16::from_bits(h + 1).to_f32();
        let mid = ((f64::from(lo) + f64::from(hi)) / 2.0) as f32; // exact in f32
        for x in [lo, mid, hi] {
            for y in [
                f32::from_bits(x.to_bits().saturating_sub(1)),
                x,
                f32::from_bits(x.to_bits() + 1),
            ] {
                check(y);
                check(-y);
            }
        }
    }
    for b in (0..=u32::MAX).step_by(4099) {
        check(f32::from_bits(b));
    }
    for x in [
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        65520.0,
        1e-9,
        0.0,
        -0.0,
    ] {
        check(x);
    }
}

#[test]
fn spacing_is_2_to_the_minus_10_near_1_and_halves_below() {
    assert_eq!(fp16_spacing(1.0), 2f32.powi(-10));
    assert_eq!(fp16_spacing(1.5), 2f32.powi(-10));
    assert_eq!(fp16_spacing(0.6), 2f32.powi(-11));
    assert_eq!(fp16_spacing(0.3), 2f32.powi(-12));
    assert_eq!(fp16_spacing(1e-6), 2f32.powi(-24));
    assert_eq!(fp16_spacing(65504.0), 32.0);
    let b = fp16_binades();
    assert_eq!(b.len(), 31);
    let one = b.iter().find(|b| b.from == 1.0).unwrap();
    assert_eq!((one.to, one.spacing), (2.0, 2f32.powi(-10)));
    // Lecture: 2⁻¹⁰ ≈ 9.8e-4.
    assert!((one.spacing - 9.8e-4).abs() < 1e-5);
}

#[test]
fn exercise_9() {
    // γ = 1.5 ∈ [1, 2): spacing 2⁻¹⁰, half 2⁻¹¹ ≈ 4.88e-4 > 3e-4 → swallowed.
    let a = fp16_stored_update(1.5, 3e-4);
    assert!(a.swallowed);
    assert_eq!(a.added, 0.0);
    assert_eq!(a.gap, 2f32.powi(-10));
    assert_eq!(a.stored_after, 1.5);
    // γ = 0.6 ∈ [0.5, 1): stored as round(0.6·2¹¹)/2¹¹ = 1229/2048; + 3e-4 → 1229.61·2⁻¹¹
    // → 1230/2048: a whole spacing 2⁻¹¹ = 4.8828125e-4 is added (lecture: 4.88e-4).
    let b = fp16_stored_update(0.6, 3e-4);
    assert_eq!(b.stored, 1229.0 / 2048.0);
    assert_eq!(b.stored_after, 1230.0 / 2048.0);
    assert_eq!(b.added, 2f32.powi(-11));
    assert!(!b.swallowed);
    assert_eq!(b.half_gap, 2f32.powi(-12));
    assert!((b.added - 4.88e-4).abs() < 1e-6);
    // Going down from 1 the gap is the smaller one, 2⁻¹¹.
    assert_eq!(fp16_stored_update(1.0, -3e-4).gap, 2f32.powi(-11));
}

fn params(lr: f64) -> Fp16Params {
    Fp16Params {
        count: 2000,
        steps: 1000,
        lr,
        trajectory_steps: 20,
        seed: 1,
        loss: Loss::L1,
    }
}

#[test]
fn at_lr_1e4_no_fp16_gamma_moves() {
    // Adam's update is at most ≈ lr = 1e-4 < 2⁻¹² (half the spacing below 1) < 2⁻¹¹.
    let t = targets(2000, 1);
    for loss in [Loss::L1, Loss::L2] {
        let (r, _, _) = gamma_experiment(loss, &t, 1e-4, 1000, 0, 0).unwrap();
        assert_eq!(r.moved_fp16, 0, "{loss:?}");
    }
    let (r, _, _) = gamma_experiment(Loss::L2, &t, 1e-4, 1000, 0, 0).unwrap();
    assert_eq!(r.fp16.all, r.initial.all);
    // E|U(−0.05, 0.05)| = 0.025.
    assert!((r.initial.all - 0.025).abs() < 0.002, "{}", r.initial.all);
    // The FP32 master reaches the targets.
    assert!(
        r.fp32_master.all < 0.05 * r.initial.all,
        "{:?}",
        r.fp32_master
    );
    assert_eq!(r.moved_fp32_master, 2000);
}

#[test]
fn at_lr_3e4_with_l1_targets_below_1_are_reached() {
    // With the L1 loss Adam's step stays ≈ lr = 3e-4 > 2⁻¹² (half the spacing below 1), so
    // an FP16 γ walks down to its target and then hovers within one spacing (2⁻¹¹) of it;
    // above 1 the step is under half of 2⁻¹⁰ and rounds away.
    let o = run(&params(3e-4)).unwrap();
    let r = &o.run;
    assert!(r.fp16.below < 2f64.powi(-11), "{:?}", r.fp16);
    assert_eq!(r.fp16.above, r.initial.above);
    assert_eq!(r.moved_fp16, o.targets_below);
}

#[test]
fn at_lr_3e4_below_reached_above_stuck() {
    let o = run(&Fp16Params {
        loss: Loss::L2,
        ..params(3e-4)
    })
    .unwrap();
    let r = &o.run;
    // Above 1: 3e-4 < 2⁻¹¹ (half of 2⁻¹⁰) → never moves.
    assert_eq!(r.fp16.above, r.initial.above);
    // Below 1: 3e-4 > 2⁻¹² → every γ with a target below 1 moves, and more than half
    // the way (Adam's step shrinks as the gradient does, so they approach the targets).
    assert_eq!(r.moved_fp16, o.targets_below);
    assert!(r.fp16.below < 0.5 * r.initial.below, "{:?}", r.fp16);
    // The FP32 master is far better than FP16 storage overall.
    assert!(r.fp32_master.all < 0.1 * r.fp16.all, "{:?}", r);
    assert!(o.mean_error_fp32_master < 0.05 * o.initial_mean_error);
    // Step 1 identical, differing afterwards.
    assert!(o.identical_at_step_1);
    assert!(o.trajectory.iter().skip(1).any(|s| s.differing > 0));
    assert!(o.trajectory_max_diff > 0.0);
    assert_eq!(o.exercise9.len(), 2);
    assert!(o.exercise9[0].swallowed && !o.exercise9[1].swallowed);
}

#[test]
fn too_much_work_is_refused_with_the_number() {
    let mut v = SCENE.defaults();
    v.set(SCENE.params, "count", "1000000").unwrap();
    v.set(SCENE.params, "steps", "100000").unwrap();
    let e = SCENE.report(v).unwrap_err().to_string();
    assert!(e.contains("`count`") && e.contains("100000000000"), "{e}");
    // Only `steps` moved from the lecture's value: the message names `steps`, not `count`.
    let mut v = SCENE.defaults();
    v.set(SCENE.params, "steps", "100000").unwrap();
    let e = SCENE.report(v).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidParam { name, .. } if name == "steps"),
        "{e}"
    );
}

#[test]
fn deterministic_with_seed() {
    let a = run(&params(3e-4)).unwrap();
    let b = run(&params(3e-4)).unwrap();
    assert_eq!(a, b);
}
