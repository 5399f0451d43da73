//! Tests of the step ledger: the lecture's figures, hand arithmetic, the reuse of the Lab A,
//! B and C ledgers, the sweeps' trends and parameter validation.

use super::stages::{LAB_A_AUTOGRAD, LAB_A_FUSED, LAB_B_FUSED, LAB_B_UNFUSED};
use super::*;
use crate::trainer::workspace::trainer_comparison;

fn params() -> StepParams {
    StepParams {
        model: "gpt2-large".into(),
        tokens: 8192,
        device: "a100".into(),
        gemm_efficiency: 1.0,
        seq_len: 1024,
    }
}

fn ledger(tokens: u64, dev: &str, eff: f64) -> StepLedger {
    let spec = gpt2_model("gpt2-large").unwrap();
    step_ledger(spec, tokens, 1024, device(dev).unwrap(), eff).unwrap()
}

fn stage(l: &StepLedger, id: StageId) -> &Stage {
    l.stages.iter().find(|s| s.id == id).unwrap()
}

#[test]
fn speedup_at_defaults_is_between_1_2_and_1_7() {
    let o = run(&params()).unwrap();
    assert!(o.speedup > 1.2 && o.speedup < 1.7, "speedup {}", o.speedup);
    assert!((o.baseline_ms / o.lightseq2_ms - o.speedup).abs() < 1e-12);
    // Stages add up to the step.
    let sum: f64 = o.stages.iter().map(|s| s.baseline.ms).sum();
    assert!((sum - o.baseline_ms).abs() < 1e-9);
}

#[test]
fn trainer_stage_is_lab_c() {
    let l = ledger(8192, "a100", 1.0);
    let c = trainer_comparison("gpt2-large", "a100").unwrap();
    let t = stage(&l, StageId::Trainer);
    assert!((t.baseline.ms - c.baseline.total_ms).abs() < 1e-12);
    assert!((t.lightseq2.ms - c.workspace.total_ms).abs() < 1e-12);
    assert_eq!(t.baseline.launches, c.baseline.launches);
    assert_eq!(t.lightseq2.launches, c.workspace.launches);
    assert_eq!(t.baseline.bytes, c.baseline.bytes);
    // Lecture §1.2 / exercise 8: 1,308 launches, 5.2 ms + 19.9 ms = 25.1 ms.
    assert_eq!(t.baseline.launches, 1308);
    assert!((t.baseline.ms - 25.1).abs() < 0.1, "{}", t.baseline.ms);
}

#[test]
fn forward_gemm_flops_match_hand_arithmetic() {
    let l = ledger(8192, "a100", 1.0);
    // Per layer: 24·T·d² (QKV 6, out 2, FFN 16) + 4·T·L·d (QKᵀ and PV):
    // 24 × 8192 × 1280² = 322,122,547,200; 4 × 8192 × 1024 × 1280 = 42,949,672,960.
    let per_layer = 322_122_547_200.0 + 42_949_672_960.0;
    let f = stage(&l, StageId::ForwardGemm).baseline.flops;
    assert!((f - 36.0 * per_layer).abs() < 1.0, "{f}");
    // Backward GEMMs are twice the forward.
    assert!((stage(&l, StageId::BackwardGemm).baseline.flops - 2.0 * f).abs() < 1.0);
    // LM head: 3 × 2 × 8192 × 1280 × 50257 FLOPs.
    let lm: f64 = stage(&l, StageId::CrossEntropy).baseline.flops;
    assert!((lm - 3.0 * 2.0 * 8192.0 * 1280.0 * 50257.0).abs() < 1.0);
    // The score GEMM writes B·h·L² fp16 = 8·20·1024²·2 bytes, memory-bound on A100.
    let k = &stage(&l, StageId::ForwardGemm).baseline.kernels[1];
    assert_eq!(k.writes[0].bytes, 8.0 * 20.0 * 1024.0 * 1024.0 * 2.0);
    assert!(k.per_instance.bytes() / 1.555e12 > k.per_instance.flops / 312e12);
}

#[test]
fn cross_entropy_near_the_lecture() {
    let o = run(&params()).unwrap();
    let ce = o.cross_entropy.unwrap();
    // Hand: baseline 6 + 8 + 4 + 12 + 6 = 36 bytes per logit, fused 2 + 2 = 4.
    assert!((ce.baseline_bytes_per_logit - 36.0).abs() < 0.01);
    assert!((ce.fused_bytes_per_logit - 4.0).abs() < 0.01);
    // Lecture 37.9 and 4.2: within 6 %.
    assert!((ce.baseline_bytes_per_logit / 37.9 - 1.0).abs() < 0.06);
    assert!((ce.fused_bytes_per_logit / 4.2 - 1.0).abs() < 0.06);
    // Segment 1.79× in the lecture.
    assert!(
        (ce.segment_speedup - 1.79).abs() < 0.05,
        "{}",
        ce.segment_speedup
    );
}

#[test]
fn more_tokens_lower_the_trainer_share_and_the_speedup() {
    let o = run(&params()).unwrap();
    let t = &o.sweeps.tokens;
    assert_eq!(
        t.iter().map(|p| p.tokens).collect::<Vec<_>>(),
        [1024, 2048, 4096, 8192, 16384]
    );
    for w in t.windows(2) {
        assert!(w[1].trainer_share_baseline < w[0].trainer_share_baseline);
        assert!(w[1].speedup <= w[0].speedup + 1e-12);
    }
    let (first, last) = (&t[0], &t[4]);
    assert!(
        first.trainer_share_baseline > 0.2,
        "{}",
        first.trainer_share_baseline
    );
    assert!(
        last.trainer_share_baseline < 0.05,
        "{}",
        last.trainer_share_baseline
    );
}

#[test]
fn lower_gemm_efficiency_lowers_the_speedup() {
    let o = run(&params()).unwrap();
    for w in o.sweeps.gemm_efficiency.windows(2) {
        assert!(w[1].gemm_efficiency < w[0].gemm_efficiency);
        assert!(w[1].speedup < w[0].speedup);
    }
    let a = ledger(8192, "a100", 1.0).speedup;
    let b = ledger(8192, "a100", 0.6).speedup;
    assert!(b < a);
}

#[test]
fn every_stage_is_auditable() {
    let l = ledger(8192, "a100", 1.0);
    for st in &l.stages {
        for sd in [&st.baseline, &st.lightseq2] {
            let bytes: f64 = sd.kernels.iter().map(|k| k.bytes).sum();
            assert!((bytes - sd.bytes).abs() <= 1e-6 * sd.bytes.max(1.0));
            let launches: u64 = sd.kernels.iter().map(|k| k.launches).sum();
            assert_eq!(launches, sd.launches);
            let us: f64 = sd.kernels.iter().map(|k| k.us).sum();
            assert!((us / 1e3 - sd.ms).abs() < 1e-9);
            for k in &sd.kernels {
                let ops: f64 = k.reads.iter().chain(&k.writes).map(|o| o.bytes).sum();
                assert!((ops * k.instances as f64 - k.bytes).abs() <= 1e-6 * k.bytes.max(1.0));
            }
        }
    }
    // GEMMs are the same in both versions.
    let g = stage(&l, StageId::BackwardGemm);
    assert_eq!(g.baseline.ms, g.lightseq2.ms);
}

#[test]
fn softmax_backward_is_lab_b_and_layernorm_is_lab_a() {
    let l = ledger(8192, "a100", 1.0);
    let bo = &stage(&l, StageId::BackwardOther);
    let from = |sd: &StageSide, src: &str| sd.kernels.iter().filter(|k| k.source == src).count();
    // Lab B: 5 unfused kernels / 1 fused, once per layer entry; Lab A: 9 / 2 parts × 3 LNs.
    assert_eq!(from(&bo.baseline, LAB_B_UNFUSED), 5);
    assert_eq!(from(&bo.lightseq2, LAB_B_FUSED), 1);
    assert_eq!(from(&bo.baseline, LAB_A_AUTOGRAD), 27);
    assert_eq!(from(&bo.lightseq2, LAB_A_FUSED), 6);
    // Lab B's unfused chain at 8 × 20 × 1024², by hand in score tensors: dropout backward
    // 1 + ½ + 1, P = g′⊙y 3, row sums 1, D = g′ − s 2, ∇x = y⊙D 3 = 11.5, plus f32 row sums
    // (4 bytes per row of 1024 fp16 elements, written once and read once: 2 × 4/2048). The lecture's 12.38 is Lab B's
    // to explain.
    let sc = 8.0 * 20.0 * 1024.0 * 1024.0 * 2.0;
    let b: f64 = bo
        .baseline
        .kernels
        .iter()
        .filter(|k| k.source == LAB_B_UNFUSED)
        .map(|k| k.per_instance.bytes())
        .sum();
    assert!(
        (b / sc - (11.5 + 2.0 * 4.0 / 2048.0)).abs() < 1e-9,
        "{}",
        b / sc
    );
}

#[test]
fn every_device_runs_and_a100_beats_v100() {
    let o = run(&params()).unwrap();
    assert_eq!(o.sweeps.devices.len(), DEVICE_IDS.len());
    let s = |id: &str| {
        o.sweeps
            .devices
            .iter()
            .find(|p| p.device == id)
            .unwrap()
            .speedup
    };
    // Lecture §6.2: faster GEMMs → larger speedup (A100 1.5–3.5× vs V100 1.4–2.8×).
    assert!(s("a100") > s("v100"));
}

#[test]
fn reported_figures_are_quoted_not_computed() {
    let o = run(&params()).unwrap();
    let r = o
        .reported
        .iter()
        .find(|r| r.figure.en.contains("GPT-2 large"))
        .unwrap();
    assert_eq!((r.low, r.high), (1.6, 1.9));
    let ln = o
        .operators
        .iter()
        .find(|r| r.category == Category::LayerNorm)
        .unwrap();
    assert_eq!(ln.reported_speedup, Some([4.0, 4.0]));
    assert!(ln.modelled_speedup > 1.0);
}

#[test]
fn invalid_parameters_are_refused_by_name() {
    let name = |e: Error| match e {
        Error::InvalidParam { name, .. } => name,
        other => panic!("{other:?}"),
    };
    let bad = |f: fn(&mut StepParams)| {
        let mut p = params();
        f(&mut p);
        name(run(&p).unwrap_err())
    };
    assert_eq!(bad(|p| p.gemm_efficiency = 0.0), "gemm_efficiency");
    assert_eq!(bad(|p| p.gemm_efficiency = 1.5), "gemm_efficiency");
    assert_eq!(bad(|p| p.gemm_efficiency = f64::NAN), "gemm_efficiency");
    assert_eq!(bad(|p| p.tokens = 1000), "tokens");
    assert_eq!(bad(|p| p.tokens = 0), "tokens");
    assert_eq!(bad(|p| p.tokens = MAX_TOKENS * 2), "tokens");
    assert_eq!(bad(|p| p.device = "tpu".into()), "device");
    assert_eq!(bad(|p| p.model = "transformer-big".into()), "model");
    assert_eq!(bad(|p| p.model = "nope".into()), "model");
    assert_eq!(bad(|p| p.seq_len = 2048), "seq_len");
    // Through the registry: the spec's checks.
    let mut v = SCENE.defaults();
    assert!(v.set(PARAMS, "tokens", "-5").is_err());
    // The advertised range is the accepted one: 0 is refused by the spec itself, its lowest
    // value is accepted.
    v = SCENE.defaults();
    assert!(v.set(PARAMS, "gemm_efficiency", "0").is_err());
    v.set(PARAMS, "gemm_efficiency", "0.01").unwrap();
    assert!((SCENE.run)(&v, None).is_ok());
}

#[test]
fn smallest_shape_and_other_models_run() {
    for m in GPT2_IDS {
        let p = StepParams {
            model: (*m).into(),
            tokens: 64,
            seq_len: 64,
            ..params()
        };
        let o = run(&p).unwrap();
        assert!(o.speedup.is_finite() && o.speedup > 1.0);
    }
}
