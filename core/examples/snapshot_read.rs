//! Reads a snapshot as `warpscope report memory-snapshot` does — decoded with its frames
//! indexed, summarised, the timeline and the allocator-state index built, replayed and
//! what-if-replayed — and prints the wall time, the trace length and the distinct frame lists.
//! Used by `scripts/bench-snapshot.sh`.
//!
//!     cargo run --release -p warpscope-core --example snapshot_read -- FILE.pickle

use std::time::Instant;

use warpscope_core::torch::snapshot;

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: snapshot_read FILE.pickle");
        return std::process::ExitCode::from(2);
    };
    let t0 = Instant::now();
    let result = snapshot::read_file(&path).and_then(|s| {
        let read = t0.elapsed().as_secs_f64();
        let read_peak = peak_rss_mib();
        let a = snapshot::analyse(path.as_str(), &s, -1)?;
        Ok(((read, read_peak), s, a))
    });
    match result {
        Ok(((read, read_peak), s, a)) => {
            println!(
                "events {} frame_lists {} read_s {:.3} total_s {:.3} histories {} peak_rss_mib after read {} after analyse {}",
                a.output.trace_events,
                s.frames.lists(),
                read,
                t0.elapsed().as_secs_f64(),
                a.histories.len(),
                read_peak,
                peak_rss_mib()
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The process's peak resident memory so far (MiB; Linux's `VmHWM`, `?` elsewhere).
fn peak_rss_mib() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or_else(|| "?".to_owned(), |kib| (kib / 1024).to_string())
}
