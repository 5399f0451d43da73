//! Expected values are derived by hand from the formats' spacings (IEEE 754 binary16: 2⁻¹⁰ in
//! [1, 2), 2⁻¹¹ in [0.5, 1), smallest subnormal 2⁻²⁴; bfloat16: 2⁻⁷ in [1, 2)) and from Adam's
//! first step (m̂ = g, v̂ = g², so the update is lr·g/(|g| + ε)).

use serde_json::json;

use super::*;

fn prec(storage: Format, master: bool, state: Format) -> Precision {
    Precision {
        storage,
        master,
        state,
    }
}

fn input(v: serde_json::Value) -> AdamRunInput {
    parse_input(&v).unwrap()
}

fn key_of(e: Error) -> String {
    match e {
        Error::InvalidInput { key, .. } => key,
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

#[test]
fn lecture_case_fp16_storage_without_master_never_moves() {
    let o = run(&lecture_input(), prec(Format::F16, false, Format::F32));
    // lr·g/(g + ε) = 1e-4 · 1e-3/(1e-3 + 1e-8).
    let expected = -1e-4 * 1e-3 / (1e-3 + 1e-8);
    assert!(
        (f64::from(o.first_update) - expected).abs() < 1e-10,
        "{}",
        o.first_update
    );
    assert_eq!(o.spacing_at_param, 2f32.powi(-10));
    // Going down from 1.0 the gap is 2⁻¹¹ ≈ 4.88e-4; half of it 2.44e-4 > 1e-4.
    assert_eq!(o.gap_in_update_direction, 2f32.powi(-11));
    assert!(o.swallowed);
    assert_eq!(o.swallowed_steps, 20);
    assert!(o.trajectory.iter().all(|&p| p == 1.0), "{:?}", o.trajectory);
    assert_eq!(o.first_applied, 0.0);
}

#[test]
fn master_weights_keep_the_update_and_the_fp16_copy_follows() {
    let o = run(&lecture_input(), prec(Format::F16, true, Format::F32));
    assert!(!o.swallowed);
    // A constant gradient gives m̂ = g, v̂ = g² every step: 20 steps of 1e-4·(1 − 1e-5).
    let end = 1.0 - 20.0 * 1e-4 * 1e-3 / (1e-3 + 1e-8);
    let last = *o.trajectory.last().unwrap();
    assert!((f64::from(last) - end).abs() < 2e-6, "{last}");
    // 0.998 in FP16: 1 − 4·2⁻¹¹ = 0.998046875 is nearest (the next, 1 − 5·2⁻¹¹, is 4.4e-4 away).
    assert_eq!(
        *o.model_trajectory.last().unwrap(),
        1.0 - 4.0 * 2f32.powi(-11)
    );
}

#[test]
fn an_update_just_over_half_a_gap_lands_a_whole_gap() {
    let i = input(json!({"lr": 3e-4, "steps": 2}));
    let o = run(&i, prec(Format::F16, false, Format::F32));
    // 3e-4 > 2⁻¹² ≈ 2.44e-4: each step lands one gap 2⁻¹¹ lower (exercise 9's amplification).
    assert_eq!(
        o.trajectory,
        vec![1.0 - 2f32.powi(-11), 1.0 - 2.0 * 2f32.powi(-11)]
    );
    assert!(!o.swallowed);
}

#[test]
fn bfloat16_swallows_what_fp16_keeps() {
    // bfloat16 at 1.0 going down: gap 2⁻⁸ ≈ 3.9e-3, half 1.95e-3 > 1e-3.
    let i = input(json!({"lr": 1e-3, "steps": 3}));
    let b = run(&i, prec(Format::Bf16, false, Format::F32));
    assert!(b.swallowed);
    assert_eq!(b.spacing_at_param, 2f32.powi(-7));
    let f = run(&i, prec(Format::F16, false, Format::F32));
    assert!(!f.swallowed);
    // 3e-3 > 1.95e-3: one bfloat16 gap down.
    let i = input(json!({"lr": 3e-3, "steps": 1}));
    let b = run(&i, prec(Format::Bf16, false, Format::F32));
    assert_eq!(b.trajectory, vec![1.0 - 2f32.powi(-8)]);
}

#[test]
fn eps_flushes_to_zero_in_fp16_state_and_adam_divides_by_zero() {
    let o = run(&lecture_input(), prec(Format::F16, true, Format::F32));
    assert!(o.non_finite_at.is_none());
    let o = run(&lecture_input(), prec(Format::F16, true, Format::F16));
    // 1e-8 < 2⁻²⁵ (half the smallest FP16 subnormal): stored as 0.
    assert_eq!(o.eps_in_state, 0.0);
    // v = (1 − β₂)·g² = 1e-9 < 2⁻²⁵ underflows to 0; m = 0.1·g = 1e-4 does not; m/(0 + 0) = ∞.
    let s = o.steps[0];
    assert_eq!(s.v, 0.0);
    assert!(s.m > 0.0);
    assert_eq!(s.param, f32::NEG_INFINITY);
    assert_eq!(o.non_finite_at, Some(1));
    // A zero gradient: m = v = 0 and 0/0 = NaN.
    let o = run(
        &input(json!({"grad": 0.0, "steps": 1})),
        prec(Format::F16, false, Format::F16),
    );
    assert!(o.steps[0].param.is_nan());
    // The same in f32 state: 0/(0 + 1e-8) = 0, the parameter stays.
    let o = run(
        &input(json!({"grad": 0.0, "steps": 1})),
        prec(Format::F16, false, Format::F32),
    );
    assert_eq!(o.trajectory, vec![1.0]);
    // bfloat16 state would keep ε: it has f32's exponent (only f32 and f16 are offered).
    assert!(Format::Bf16.round64(1e-8) > 0.0);
}

#[test]
fn a_loss_scale_rescues_gradients_below_fp16s_subnormals() {
    // g = 1e-8 is stored in FP16 as 0 (below 2⁻²⁵): Adam sees nothing.
    let small = input(json!({"grad": 1e-8, "steps": 1}));
    let o = run(&small, prec(Format::F16, true, Format::F32));
    assert_eq!(o.first_update, 0.0);
    // Scaled by 2¹⁶: 6.55e-4 is a normal FP16 (relative error ≤ 2⁻¹¹); unscaled in f32 it is
    // 1e-8·(1 ± 5e-4), and Adam's first update lr·g/(g + ε) with g ≈ ε is ≈ lr/2.
    let scaled = input(json!({"grad": 1e-8, "steps": 1, "loss_scale": 65536}));
    let o = run(&scaled, prec(Format::F16, true, Format::F32));
    assert!(
        (f64::from(o.first_update) + 0.5e-4).abs() < 0.5e-4 * 1e-3,
        "{}",
        o.first_update
    );
    // A scale that overflows FP16 (1e5 > 65504): every step skipped, the parameter kept.
    let over = input(json!({"grad": 1.0, "steps": 3, "loss_scale": 1e5}));
    let o = run(&over, prec(Format::F16, true, Format::F32));
    assert_eq!(o.skipped_steps, 3);
    assert_eq!(o.trajectory, vec![1.0; 3]);
}

#[test]
fn decoupled_weight_decay_shrinks_the_parameter_first() {
    // p·(1 − lr·wd) = 1 − 0.01·0.1 = 0.999; a zero gradient adds 0/(0 + ε) = 0.
    let i = input(json!({"grad": 0.0, "steps": 1, "lr": 0.01, "weight_decay": 0.1}));
    let o = run(&i, prec(Format::F32, false, Format::F32));
    assert_eq!(o.trajectory, vec![0.999f32]);
}

#[test]
fn the_comparison_has_every_storage_with_and_without_master() {
    let o = run(&lecture_input(), prec(Format::F16, false, Format::F32));
    let swallowed: Vec<(&str, bool)> = o
        .comparison
        .iter()
        .map(|r| (r.precision.storage.name(), r.swallowed))
        .collect();
    assert_eq!(
        swallowed,
        vec![
            ("f32", false),
            ("f16", false),
            ("f16", true),
            ("bf16", false),
            ("bf16", true)
        ]
    );
    assert!(o.comparison.iter().all(|r| r.trajectory.len() == 20));
}

#[test]
fn per_step_gradients_and_their_checks() {
    let i = input(json!({"grad": [1e-3, -1e-3, 0.0]}));
    assert_eq!(i.steps, 3);
    assert_eq!(i.grad_at(2), -1e-3);
    assert_eq!(
        key_of(parse_input(&json!({"grad": [1, 2], "steps": 3})).unwrap_err()),
        "grad"
    );
    assert_eq!(
        key_of(parse_input(&json!({"grad": "x"})).unwrap_err()),
        "grad"
    );
    assert_eq!(
        key_of(parse_input(&json!({"grad": [1, "x"]})).unwrap_err()),
        "grad[1]"
    );
    assert_eq!(
        key_of(parse_input(&json!({"betas": [0.9, 1.0]})).unwrap_err()),
        "betas[1]"
    );
    assert_eq!(
        key_of(parse_input(&json!({"betas": [0.9]})).unwrap_err()),
        "betas"
    );
    assert_eq!(
        key_of(parse_input(&json!({"steps": 0})).unwrap_err()),
        "steps"
    );
    assert_eq!(
        key_of(parse_input(&json!({"loss_scale": 0})).unwrap_err()),
        "loss_scale"
    );
    assert_eq!(key_of(parse_input(&json!({"lrr": 1})).unwrap_err()), "lrr");
    let long = serde_json::Value::Array(vec![json!(0.0); MAX_STEPS as usize + 1]);
    assert_eq!(
        key_of(parse_input(&json!({ "grad": long })).unwrap_err()),
        "grad"
    );
}

#[test]
fn the_scene_runs_with_and_without_an_input() {
    let s = crate::scene::find("trainer-adam").unwrap();
    let r = s.report(s.defaults()).unwrap();
    assert_eq!(r.result["swallowed"], json!(true));
    let mut v = s.defaults();
    v.set(s.params, "master", "true").unwrap();
    let r = s.report_with(v, Some(&json!({"lr": 1e-4}))).unwrap();
    assert_eq!(r.result["swallowed"], json!(false));
    assert!(
        s.report_with(s.defaults(), Some(&json!({"eps": -1})))
            .is_err()
    );
}

/// A bundled preset's precision and input.
fn preset(name: &str) -> (Precision, AdamRunInput) {
    let p = crate::presets::find(name).unwrap();
    let s = crate::scene::find(&p.session.scene).unwrap();
    let values = p.session.params.clone().validated(s.params).unwrap();
    (
        precision(&values).unwrap(),
        parse_input(p.session.input.as_ref().unwrap()).unwrap(),
    )
}

#[test]
fn preset_fp16_storage_swallows_adams_update() {
    let (p, i) = preset("trainer-adam-fp16-swallows-update");
    let o = run(&i, p);
    // No master weights: 1e-4 < 2⁻¹² (half the gap 2⁻¹¹ below 1.0), so every step is lost.
    assert!(o.swallowed);
    assert!(o.trajectory.iter().all(|&x| x == 1.0));
    // With master weights: twenty steps of 1e-4·g/(g + ε) accumulate in f32.
    let m = run(&i, Precision { master: true, ..p });
    let end = 1.0 - 20.0 * 1e-4 * 1e-3 / (1e-3 + 1e-8);
    assert!((f64::from(*m.trajectory.last().unwrap()) - end).abs() < 2e-6);
    assert_eq!(
        *m.model_trajectory.last().unwrap(),
        1.0 - 4.0 * 2f32.powi(-11)
    );
}

#[test]
fn preset_eps_flushes_to_zero_in_fp16_state() {
    let (p, i) = preset("trainer-adam-fp16-eps-flushes-to-zero");
    let o = run(&i, p);
    assert_eq!(o.eps_in_state, 0.0);
    assert_eq!(o.steps[0].v, 0.0);
    assert_eq!(o.trajectory[0], f32::NEG_INFINITY);
    assert_eq!(o.non_finite_at, Some(1));
    // The same numbers with Adam's state in f32 stay finite and move by ≈ lr.
    let f = run(
        &i,
        Precision {
            state: Format::F32,
            ..p
        },
    );
    assert!(f.non_finite_at.is_none());
    assert!((f64::from(f.first_update) + 1e-4).abs() < 1e-8);
}

#[test]
fn fp16_state_rounds_a_small_v_into_the_subnormals() {
    // g = 0.01: v = (1 − β₂)·g² = 1e-7 is subnormal in FP16 (spacing 2⁻²⁴ ≈ 5.96e-8), stored as
    // 2·2⁻²⁴ = 2⁻²³ ≈ 1.19e-7. The first update is then lr·(m/0.1)/√(v/0.001) with m ≈ 1e-3:
    // 1e-4 · 0.01 / √(2⁻²³/0.001) ≈ 9.16e-5 instead of lr — each op's FP16 rounding (≤ 2⁻¹¹
    // relative) aside.
    let i = input(json!({"grad": 0.01, "steps": 1}));
    let o = run(&i, prec(Format::F32, false, Format::F16));
    assert_eq!(o.steps[0].v, 2f32.powi(-23));
    let expected = -1e-4 * 0.01 / (2f64.powi(-23) / 0.001).sqrt();
    let got = f64::from(o.first_update);
    assert!(
        ((got - expected) / expected).abs() < 3e-3,
        "{got} vs {expected}"
    );
    // In f32 state the same step is lr·g/(g + ε) ≈ lr.
    let f = run(&i, prec(Format::F32, false, Format::F32));
    assert!((f64::from(f.first_update) + 1e-4).abs() < 1e-9);
}
