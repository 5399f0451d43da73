//! Tests of `layernorm-formulas` on the user's input: every expected value is derived here by
//! hand or by native f32 / f64 arithmetic, never read from the output first.

use serde_json::json;

use super::*;

fn modes(dtype: Dtype, accumulate: Accumulate) -> Modes {
    Modes { dtype, accumulate }
}

fn preset(name: &str) -> (LnInput, Modes) {
    let p = crate::presets::find(name).unwrap();
    let s = crate::scene::find("layernorm-formulas").unwrap();
    let v = p.session.params.validated(s.params).unwrap();
    (
        LnInput::read(p.session.input.as_ref().unwrap()).unwrap(),
        Modes::from_values(&v).unwrap(),
    )
}

#[test]
fn one_pass_variance_fails_on_a_large_mean_two_pass_does_not() {
    let (input, m) = preset("layernorm-formulas-one-pass-large-mean");
    assert_eq!(m, modes(Dtype::F32, Accumulate::F32));
    let o = run(&input, &m).unwrap();
    let x = &input.x[0];
    // Native f32, left to right: Σx, Σx² (each square rounded), then E[x²] − E[x]².
    let xs: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let s = xs.iter().fold(0f32, |a, &v| a + v);
    let s2 = xs.iter().fold(0f32, |a, &v| a + v * v);
    let mu = s / 8.0;
    let one_pass = s2 / 8.0 - mu * mu;
    // The exact variance: deviations from μ = 10000 + 3/128 are multiples of 1/128, so f64 holds
    // every step exactly.
    let mu_exact = x.iter().sum::<f64>() / 8.0;
    assert_eq!(mu_exact, 10000.0 + 3.0 / 128.0);
    let var_exact = x.iter().map(|v| (v - mu_exact).powi(2)).sum::<f64>() / 8.0;
    assert_eq!(var_exact, 0.068_298_339_843_75);
    let r = &o.rows[0];
    assert_eq!(r.mean, mu_exact);
    assert_eq!(r.var_one_pass, f64::from(one_pass));
    assert!(r.var_one_pass < 0.0, "{}", r.var_one_pass);
    // The two-pass variance is exact here (every square and partial sum fits in f32).
    assert_eq!(r.var, var_exact);
    assert_eq!(r.var_reference, var_exact);
    assert!(r.rstd_one_pass.is_nan());
    // ∇x is O(r) ≈ 3.8; f32 keeps it within a few ulps of that times m.
    assert!(r.max_abs_diff_hw4 < 1e-3, "{}", r.max_abs_diff_hw4);
    assert!(r.dx_hw4.iter().all(|v| v.is_finite()));
}

#[test]
fn a_constant_row_has_zero_variance_and_a_finite_gradient() {
    let (input, m) = preset("layernorm-formulas-constant-row");
    let o = run(&input, &m).unwrap();
    let r = &o.rows[0];
    assert_eq!((r.mean, r.var, r.var_one_pass), (3.0, 0.0, 0.0));
    assert!(r.xhat.iter().all(|&v| v == 0.0));
    // By hand: r = 1/√ε; with γ = 1 and ∇y = (1, 0, 0, 0), Σg = 1 and Σg·x̂ = 0, so
    // ∇x = r·(g − 1/4) = r·(3/4, −1/4, −1/4, −1/4).
    let rstd = 1.0 / 1e-5_f64.sqrt();
    assert!((r.rstd - rstd).abs() < 1e-3, "{}", r.rstd);
    let want = [0.75, -0.25, -0.25, -0.25].map(|v| v * rstd);
    for (i, w) in want.iter().enumerate() {
        for got in [r.dx_hw4[i], r.dx_slides[i], r.dx_reference[i]] {
            assert!((got - w).abs() < 1e-3 * w.abs(), "{i}: {got} vs {w}");
        }
    }
    // y = γ·0 + β = 0.
    assert!(r.y.iter().all(|&v| v == 0.0));
}

#[test]
fn f16_sums_overflow_past_65504_and_f32_sums_do_not() {
    let (input, m) = preset("layernorm-formulas-f16-sum-overflow");
    assert_eq!(m, modes(Dtype::F16, Accumulate::F16));
    // Σx = 8 · 9028 = 72,224 > 65,504 (f16's largest finite): the sum rounds to ∞.
    assert!(input.x[0].iter().sum::<f64>() > 65504.0);
    let o = run(&input, &m).unwrap();
    let r = &o.rows[0];
    assert!(r.mean.is_infinite(), "{}", r.mean);
    assert!(r.dx_hw4.iter().all(|v| !v.is_finite()));
    assert!(o.max_abs_diff_hw4.is_nan());
    // The reference does not care: it runs in f64.
    assert!(r.dx_reference.iter().all(|v| v.is_finite()));
    let o = run(&input, &modes(Dtype::F16, Accumulate::F32)).unwrap();
    let r = &o.rows[0];
    assert_eq!(r.mean, 9028.0);
    // Deviations ±4, ±12, ±20, ±28: var = 2·(16 + 144 + 400 + 784)/8 = 336.
    assert_eq!(r.var, 336.0);
    assert!(r.dx_hw4.iter().all(|v| v.is_finite()));
    // The JSON says which non-finite value it is.
    let s = crate::scene::find("layernorm-formulas").unwrap();
    let p = crate::presets::find("layernorm-formulas-f16-sum-overflow").unwrap();
    let rep = s
        .report_with(p.session.params.clone(), p.session.input.as_ref())
        .unwrap();
    assert_eq!(rep.result["rows"][0]["mean"], json!("inf"));
    assert_eq!(rep.result["max_abs_diff_hw4"], json!("nan"));
}

#[test]
fn hand_computed_rows_and_column_gradients_in_f64() {
    // Row 0, x = (0, 0, 3), ε = 0: μ = 1, var = 2, x̂ = (−1, −1, 2)/√2; ∇y = (1, 0, 0), γ = 1
    // → ∇x₀ = 1/(2√2) (worked in `super::super::tests`). Row 1 = (1, 3, 5): μ = 3, var = 8/3,
    // x̂ = (−2, 0, 2)/√(8/3) = (−1, 0, 1)·√(3/2).
    let input = LnInput::read(&json!({
        "x": [[0, 0, 3], [1, 3, 5]],
        "dy": [[1, 0, 0], [2, 1, -1]],
        "beta": [0.5, 0, 0],
        "eps": 0
    }))
    .unwrap();
    let o = run(&input, &modes(Dtype::F64, Accumulate::F64)).unwrap();
    let r0 = &o.rows[0];
    assert_eq!((r0.mean, r0.var, r0.var_one_pass), (1.0, 2.0, 2.0));
    let h = 1.0 / 2f64.sqrt();
    assert!((r0.dx_hw4[0] - h / 2.0).abs() < 1e-15);
    assert!((r0.dx_slides[0] - h / 2.0).abs() < 1e-15);
    assert!((r0.y[0] - (0.5 - h)).abs() < 1e-15);
    let k = 1.5f64.sqrt();
    // ∇γ = Σ_rows ∇y·x̂: column 0: 1·(−1/√2) + 2·(−k); column 2: 0 + (−1)·k.
    assert!((o.dgamma[0] - (-h - 2.0 * k)).abs() < 1e-14);
    assert!((o.dgamma[2] + k).abs() < 1e-14);
    assert_eq!(o.dbeta, vec![3.0, 1.0, -1.0]);
    assert!(o.max_abs_diff_hw4 < 1e-15 && o.max_abs_diff_slides < 1e-15);
}

#[test]
fn bf16_storage_rounds_the_inputs_to_eight_bits() {
    // 257 is not a bf16 (8 significand bits): stored as 256, so the row (256, 258) has μ = 257.
    let input = LnInput::read(&json!({"x": [[257, 258]], "dy": [[1, 0]]})).unwrap();
    let o = run(&input, &modes(Dtype::Bf16, Accumulate::F32)).unwrap();
    assert_eq!(o.rows[0].mean, 257.0);
    assert_eq!(o.rows[0].var, 1.0);
}

fn problem(v: serde_json::Value) -> (String, String) {
    match LnInput::read(&v).unwrap_err() {
        Error::InvalidInput { key, problem } => (key, problem.en),
        e => panic!("{e:?}"),
    }
}

#[test]
fn bad_inputs_name_their_key() {
    assert_eq!(problem(json!({"dy": [[1]]})).0, "x");
    assert_eq!(
        problem(json!({"x": [[1, 2], [3]], "dy": [[1, 2], [3, 4]]})).0,
        "x[1]"
    );
    let (k, p) = problem(json!({"x": [[1, 2]], "dy": [[1, 2, 3]]}));
    assert_eq!(k, "dy");
    assert!(p.contains("1 × 3") && p.contains("1 × 2"), "{p}");
    assert_eq!(
        problem(json!({"x": [[1, "nan"]], "dy": [[1, 2]]})).0,
        "x[0][1]"
    );
    let (k, p) = problem(json!({"x": [[1, 2]], "dy": [[1, 2]], "gamma": [1]}));
    assert_eq!(k, "gamma");
    assert!(p.contains("2 columns"), "{p}");
    assert_eq!(
        problem(json!({"x": [[1, 2]], "dy": [[1, 2]], "eps": -1})).0,
        "eps"
    );
    assert_eq!(
        problem(json!({"x": [[1, 2]], "dy": [[1, 2]], "epsilon": 1})).0,
        "epsilon"
    );
}

#[test]
fn the_example_runs() {
    let v: serde_json::Value = serde_json::from_str(INPUT.example).unwrap();
    let s = crate::scene::find("layernorm-formulas").unwrap();
    let r = s.report_with(s.defaults(), Some(&v)).unwrap();
    assert_eq!(r.result["rows"].as_array().map(Vec::len), Some(2));
}

#[test]
fn the_default_accumulation_is_pytorchs_for_the_storage_type() {
    let s = crate::scene::find("layernorm-formulas").unwrap();
    for (dtype, want) in [
        ("f64", Accumulate::F64),
        ("f32", Accumulate::F32),
        ("f16", Accumulate::F32),
        ("bf16", Accumulate::F32),
    ] {
        let mut v = s.defaults();
        v.set(s.params, "dtype", dtype).unwrap();
        assert_eq!(Modes::from_values(&v).unwrap().accumulate, want, "{dtype}");
    }
    // Named, it is what was named.
    let mut v = s.defaults();
    v.set(s.params, "accumulate", "f16").unwrap();
    assert_eq!(Modes::from_values(&v).unwrap().accumulate, Accumulate::F16);
}

/// Issue 30, item 4: the result keeps the first rows in detail and every row in its summaries.
#[test]
fn many_rows_keep_the_first_in_detail_and_all_in_the_summaries() {
    // 1,100 rows [1, 2] with ∇y [0.5, 0], then one row [60000, 60000] with ∇y [1, 1] in f16
    // storage and f16 sums: 60000 + 60000 is past f16's 65,504, so μ is ∞ and that row's ∇x
    // error NaN — the summary must show it although the row is past the kept ones.
    let mut x = vec![vec![1.0, 2.0]; 1100];
    let mut dy = vec![vec![0.5, 0.0]; 1100];
    x.push(vec![60000.0, 60000.0]);
    dy.push(vec![1.0, 1.0]);
    let input = LnInput {
        x,
        dy,
        gamma: vec![1.0, 1.0],
        beta: vec![0.0, 0.0],
        eps: 1e-5,
    };
    let o = run(&input, &modes(Dtype::F16, Accumulate::F16)).unwrap();
    assert_eq!(o.rows_total, 1101);
    assert_eq!(o.rows.len(), MAX_ROWS_KEPT);
    assert!(o.max_abs_diff_hw4.is_nan() && o.max_abs_diff_slides.is_nan());
    // ∇β = Σ ∇y over all 1,101 rows: 1100 · 0.5 + 1 = 551 and 1 (every partial sum a multiple
    // of 0.5 under 1024, exact in f16).
    assert_eq!(o.dbeta, vec![551.0, 1.0]);
    // Wide rows: 2¹⁶ values per vector at most, so rows of 40,000 keep one.
    let wide = LnInput {
        x: vec![vec![1.0; 40_000]; 3],
        dy: vec![vec![0.0; 40_000]; 3],
        gamma: vec![1.0; 40_000],
        beta: vec![0.0; 40_000],
        eps: 1e-5,
    };
    let o = run(&wide, &modes(Dtype::F32, Accumulate::F32)).unwrap();
    assert_eq!((o.rows_total, o.rows.len()), (3, 1));
}
