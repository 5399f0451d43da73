//! Times the kernel lab on one kernel and dispatch, as `warpscope kernel-lab` runs it (warps of
//! 32 lanes, `override`s at their defaults): prints the best wall time of REPS runs, the lane
//! instructions and their rate as one JSON line, and writes the writable buffers after the run
//! (the CLI's `buffers` object) to OUT when given. Used by `scripts/bench-lab-numba.sh`.
//!
//!     cargo run --release -p warpscope-core --example lab_time -- SOURCE.wgsl DISPATCH.json [REPS [OUT.json]]

use std::time::Instant;

use warpscope_core::lab::dispatch::Dispatch;
use warpscope_core::lab::simulate;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(src_path), Some(dispatch_path)) = (args.first(), args.get(1)) else {
        eprintln!("usage: lab_time SOURCE.wgsl DISPATCH.json [REPS [OUT.json]]");
        return std::process::ExitCode::from(2);
    };
    let reps: u32 = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(3).max(1);
    let run = || -> Result<(), String> {
        let source = std::fs::read_to_string(src_path).map_err(|e| format!("{src_path}: {e}"))?;
        let text =
            std::fs::read_to_string(dispatch_path).map_err(|e| format!("{dispatch_path}: {e}"))?;
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{dispatch_path}: {e}"))?;
        let dispatch = Dispatch::from_json(&json).map_err(|e| e.to_string())?;
        let mut best = f64::INFINITY;
        let mut last = None;
        for _ in 0..reps {
            let t0 = Instant::now();
            let out = simulate(&source, None, 32, &dispatch).map_err(|e| e.to_string())?;
            best = best.min(t0.elapsed().as_secs_f64());
            last = Some(out);
        }
        let out = last.ok_or("no run")?;
        let lanes = out.totals.lane_instructions;
        println!(
            "{}",
            serde_json::json!({
                "seconds": best,
                "reps": reps,
                "lane_instructions": lanes,
                "lane_instructions_per_s": lanes as f64 / best,
                "warnings": out.warnings.len(),
            })
        );
        if let Some(path) = args.get(3) {
            let buffers = serde_json::to_string(&out.buffers).map_err(|e| e.to_string())?;
            std::fs::write(path, buffers).map_err(|e| format!("{path}: {e}"))?;
        }
        Ok(())
    };
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lab_time: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
