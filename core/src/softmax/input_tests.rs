//! Tests of `softmax-formula` on the user's input; expected values by hand.

use serde_json::json;

use super::*;

fn read(v: Value) -> SoftmaxInput {
    SoftmaxInput::read(&v).unwrap()
}

#[test]
fn the_fully_masked_preset_gives_zero_and_the_naive_forms_do_not() {
    let p = crate::presets::find("softmax-formula-fully-masked-row").unwrap();
    let o = run(&SoftmaxInput::read(p.session.input.as_ref().unwrap()).unwrap()).unwrap();
    assert_eq!(o.fully_masked_rows, vec![1]);
    // Row 0: softmax of (2, 1, 0) with the 4th masked: e = (1, e⁻¹, e⁻²)/z.
    let z = 1.0 + (-1f64).exp() + (-2f64).exp();
    let y0 = [1.0 / z, (-1f64).exp() / z, (-2f64).exp() / z, 0.0];
    let r0 = &o.rows[0];
    for (got, want) in r0.y.iter().zip(y0) {
        assert!((got - want).abs() < 1e-15, "{got} vs {want}");
    }
    // ∇y = e₀: s = y₀, ∇x₀ = y₀(1 − y₀), ∇xⱼ = −yⱼy₀.
    assert!((r0.dx[0] - y0[0] * (1.0 - y0[0])).abs() < 1e-15);
    assert!((r0.dx[1] + y0[1] * y0[0]).abs() < 1e-15);
    assert_eq!(r0.dx[3], 0.0);
    assert_eq!(r0.masked, 1);
    // Row 1: y = 0, ∇x = 0.
    let r1 = &o.rows[1];
    assert!(r1.fully_masked);
    assert_eq!(r1.y, vec![0.0; 4]);
    assert_eq!(r1.dx, vec![0.0; 4]);
    let naive = r1.naive.as_ref().unwrap();
    // Fill −10000: four equal scores → y = 1/4; s = 1/4, ∇x = (1/4·3/4, −1/16, −1/16, −1/16).
    assert_eq!(naive.y_fill, vec![0.25; 4]);
    assert_eq!(naive.dx_fill, vec![0.1875, -0.0625, -0.0625, -0.0625]);
    assert!(naive.y_inf.iter().chain(&naive.dx_inf).all(|v| v.is_nan()));
    assert!(o.max_abs_diff_jacobian.unwrap() < 1e-16);
    let json = serde_json::to_value(&o).unwrap();
    assert_eq!(json["rows"][1]["naive"]["y_inf"][0], "nan");
    assert!(json["rows"][0].get("naive").is_none());
}

#[test]
fn dropout_scales_the_kept_gradient_exercise_1() {
    // y = (0.5, 0.3, 0.2), ∇y = (2, 0, 1), keep = (1, 1, 0), p = 0.5: g = (4, 0, 0),
    // s = 2, ∇x = (0.5·2, 0.3·(−2), 0.2·(−2)) = (1, −0.6, −0.4).
    let o = run(&read(json!({
        "y": [[0.5, 0.3, 0.2]], "dy": [[2, 0, 1]], "keep": [[1, 1, 0]], "dropout_p": 0.5
    })))
    .unwrap();
    let r = &o.rows[0];
    assert_eq!(r.g, vec![4.0, 0.0, 0.0]);
    assert_eq!(r.s, 2.0);
    for (got, want) in r.dx.iter().zip([1.0, -0.6, -0.4]) {
        assert!((got - want).abs() < 1e-15, "{got}");
    }
    assert!(r.sum_dx.abs() < 1e-15);
    assert_eq!(o.dropout_p, Some(0.5));
    assert!(!o.from_scores);
}

#[test]
fn a_minus_infinity_score_is_masked_without_a_mask() {
    let o = run(&read(json!({"scores": [["-inf", "-inf"]], "dy": [[1, 2]]}))).unwrap();
    assert!(o.rows[0].fully_masked);
    assert_eq!(o.rows[0].dx, vec![0.0, 0.0]);
    let o = run(&read(json!({"scores": [[0, "-inf"]], "dy": [[1, 2]]}))).unwrap();
    assert_eq!(o.rows[0].y, vec![1.0, 0.0]);
    // y = e₀: s = ∇y₀ = 1, ∇x = (1·(1 − 1), 0) = 0.
    assert_eq!(o.rows[0].dx, vec![0.0, 0.0]);
}

fn key(v: Value) -> String {
    match SoftmaxInput::read(&v) {
        Err(Error::InvalidInput { key, .. }) => key,
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_inputs_name_their_key() {
    assert_eq!(key(json!({"dy": [[1]]})), "scores");
    assert_eq!(key(json!({"scores": [[1]], "y": [[1]], "dy": [[1]]})), "y");
    assert_eq!(
        key(json!({"scores": [[1, "nan"]], "dy": [[1, 2]]})),
        "scores[0][1]"
    );
    assert_eq!(
        key(json!({"scores": [[1, "inf"]], "dy": [[1, 2]]})),
        "scores[0][1]"
    );
    assert_eq!(
        key(json!({"scores": [[1, 2], [3]], "dy": [[1, 2], [3, 4]]})),
        "scores[1]"
    );
    assert_eq!(key(json!({"scores": [[1, 2]], "dy": [[1]]})), "dy");
    assert_eq!(
        key(json!({"scores": [[1, 2]], "dy": [[1, 2]], "mask": [[true]]})),
        "mask"
    );
    assert_eq!(
        key(json!({"scores": [[1, 2]], "dy": [[1, 2]], "mask": [[1, 0]]})),
        "mask[0][0]"
    );
    assert_eq!(
        key(json!({"y": [[0.5, 0.5]], "dy": [[1, 2]], "mask": [[true, false]]})),
        "mask"
    );
    assert_eq!(key(json!({"y": [[0.5, 0.6]], "dy": [[1, 2]]})), "y[0]");
    assert_eq!(key(json!({"y": [[1.5, -0.5]], "dy": [[1, 2]]})), "y[0][0]");
    assert_eq!(
        key(json!({"y": [[0.5, 0.5]], "dy": [[1, 2]], "keep": [[1, 2]]})),
        "keep[0][1]"
    );
    assert_eq!(
        key(json!({"y": [[0.5, 0.5]], "dy": [[1, 2]], "dropout_p": 0.1})),
        "dropout_p"
    );
    assert_eq!(
        key(json!({"y": [[0.5, 0.5]], "dy": [[1, 2]], "keep": [[1, 1]], "dropout_p": 1})),
        "dropout_p"
    );
}

#[test]
fn the_example_runs() {
    let v: Value = serde_json::from_str(INPUT.example).unwrap();
    let o = run(&SoftmaxInput::read(&v).unwrap()).unwrap();
    assert_eq!(o.fully_masked_rows, vec![1]);
}
