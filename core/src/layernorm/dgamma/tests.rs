//! Tests of the ∇γ/∇β scene: the tile's bank counts with and without padding, its sums against
//! f64, the atomic scheme's contention and order dependence, the two-stage scheme, and
//! validation.

use super::*;

fn p(scheme: &str, pad: u32) -> DgammaParams {
    DgammaParams {
        rows: 8192,
        cols: 1024,
        scheme: scheme.into(),
        pad,
        segments: 216,
        orders: 8,
        seed: 1,
    }
}

/// The bank rule by hand: lane x of the transposed read touches word x·(32 + pad) + y, bank
/// (x·(32 + pad) + y) mod 32 = (x·pad + y) mod 32; the degree is the largest number of
/// lanes (distinct words) sharing a bank.
fn degree_by_hand(pad: u32) -> u32 {
    let mut count = [0u32; 32];
    for x in 0..32 {
        count[((x * (32 + pad)) % 32) as usize] += 1;
    }
    count.into_iter().max().unwrap()
}

#[test]
fn padding_removes_the_conflict() {
    let o = run(&p("tiled", 0)).unwrap();
    assert_eq!(o.transposed_conflict_degree, 32);
    assert_eq!(o.tile.load_banks, vec![0; 32], "every lane in bank 0");
    assert_eq!(o.tile.store_conflict_degree, 1);
    // 32 blocks × 32 warps × 4 requests; wavefronts 2·1 + 2·32 per warp.
    assert_eq!(o.shared_requests, 32 * 32 * 4);
    assert_eq!(o.shared_wavefronts, 32 * 32 * (2 + 64));
    assert_eq!(o.avg_wavefronts_per_request, Some(16.5));
    let o = run(&p("tiled", 1)).unwrap();
    assert_eq!(o.transposed_conflict_degree, 1);
    assert_eq!(o.avg_wavefronts_per_request, Some(1.0));
    assert_eq!(o.tile.load_banks, (0..32).collect::<Vec<u32>>());
    for pad in 0..=8 {
        let o = run(&DgammaParams {
            rows: 64,
            cols: 64,
            ..p("tiled", pad)
        })
        .unwrap();
        assert_eq!(
            o.transposed_conflict_degree,
            degree_by_hand(pad),
            "pad {pad}"
        );
    }
    assert_eq!(degree_by_hand(2), 2);
}

#[test]
fn tile_sums_match_f64() {
    let o = run(&p("tiled", 1)).unwrap();
    // 8192 standard normals summed in f32 in 256-term strands: error well under 1e-3.
    assert!(
        o.tile.max_abs_error_dbeta < 1e-3,
        "{}",
        o.tile.max_abs_error_dbeta
    );
    assert!(o.tile.max_abs_error_dgamma < 1e-3);
    assert_eq!(o.tile.dbeta.len(), 32);
    // Integer data: exact. 40 rows × 5 columns of ∇y = 1, x̂ = row index.
    let (n, w) = (40usize, 5usize);
    let dy = vec![1.0f32; n * w];
    let xh: Vec<f32> = (0..n * w).map(|i| (i / w) as f32).collect();
    let (_, b, g) = simulate_tile(n, w, 5, 0, &dy, &xh, &mut |_| Ok(())).unwrap();
    assert_eq!(b, vec![40.0; 5]);
    assert_eq!(g, vec![780.0; 5], "0 + 1 + … + 39 = 780");
}

#[test]
fn threads_per_scheme_and_exercise_7() {
    let o = run(&p("tiled", 0)).unwrap();
    let t: Vec<u64> = o.schemes.iter().map(|s| s.threads).collect();
    assert_eq!(t, vec![1024, 8192 * 1024, 32 * 1024, 216 * 1024]);
    // Exercise 7: P = 216 → 221,184 threads (A100's resident threads), ≈ 38 rows each.
    assert_eq!(o.two_stage.stage1_threads, 221_184);
    assert_eq!(o.two_stage.stage1_steps, 38);
    assert_eq!(o.two_stage.stage2_steps, 216);
    assert_eq!(o.two_stage.partial_bytes, 216 * 1024 * 2 * 4 * 2);
    let o = run(&p("two_stage", 0)).unwrap();
    assert_eq!(o.threads, 221_184);
    assert_eq!(o.avg_wavefronts_per_request, None);
}

#[test]
fn atomics_contend_and_order_changes_the_result() {
    let o = run(&p("atomic", 0)).unwrap();
    assert_eq!(o.threads, 8192 * 1024);
    assert_eq!(o.atomic.updates_per_address, 8192);
    assert_eq!(o.atomic.warp_contention_row_major, 1);
    assert_eq!(o.atomic.warp_contention_column_major, 32);
    assert!(o.atomic.distinct_results >= 2, "{:?}", o.atomic.order_sums);
    for s in &o.atomic.order_sums {
        assert!((f64::from(*s) - o.atomic.reference).abs() < 1e-2);
    }
    // The order matters, by hand: (1e8 + 1) − 1e8 = 0 in f32, (1e8 − 1e8) + 1 = 1.
    let v = [1e8f32, 1.0, -1e8];
    assert_eq!(sum_in_order(&v, &[0, 1, 2]), 0.0);
    assert_eq!(sum_in_order(&v, &[0, 2, 1]), 1.0);
}

#[test]
fn limits_are_refused_with_the_number() {
    let e = DgammaParams {
        rows: 1 << 20,
        ..p("tiled", 0)
    }
    .validate()
    .unwrap_err();
    assert!(e.to_string().contains("268435456 bytes"), "{e}");
    assert!(
        DgammaParams {
            segments: 0,
            ..p("tiled", 0)
        }
        .validate()
        .is_err()
    );
    let o = run(&DgammaParams {
        rows: 64,
        ..p("two_stage", 0)
    })
    .unwrap();
    assert_eq!((o.two_stage.segments, o.two_stage.stage1_steps), (64, 1));
    assert!(
        DgammaParams {
            scheme: "magic".into(),
            ..p("tiled", 0)
        }
        .validate()
        .is_err()
    );
    assert!(
        DgammaParams {
            pad: 9,
            ..p("tiled", 0)
        }
        .validate()
        .is_err()
    );
}

#[test]
fn narrow_matrices_work() {
    let o = run(&DgammaParams {
        rows: 32,
        cols: 1,
        segments: 1,
        ..p("tiled", 0)
    })
    .unwrap();
    assert_eq!(o.tile.blocks, 1);
    assert_eq!(o.tile.dbeta.len(), 1);
    assert!(o.tile.max_abs_error_dbeta < 1e-5);
}
