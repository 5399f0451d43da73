//! Reads a snapshot as `warpscope report memory-snapshot` does — decoded with its frames
//! indexed, summarised, the timeline and the allocator-state index built, replayed and
//! what-if-replayed — and prints the wall time, the trace length and the distinct frame lists.
//! Used by `scripts/bench-snapshot.sh`.
//!
//!     cargo run --release -p warpscope-core --example snapshot_read -- FILE.pickle

use std::time::Instant;

use warpscope_core::memory::snapshot;

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: snapshot_read FILE.pickle");
        return std::process::ExitCode::from(2);
    };
    let t0 = Instant::now();
    let result = snapshot::read_file(&path).and_then(|s| {
        let read = t0.elapsed().as_secs_f64();
        let a = snapshot::analyse(&path, &s, -1)?;
        Ok((read, s, a))
    });
    match result {
        Ok((read, s, a)) => {
            println!(
                "events {} frame_lists {} read_s {:.3} total_s {:.3} histories {}",
                a.output.trace_events,
                s.frames.lists(),
                read,
                t0.elapsed().as_secs_f64(),
                a.histories.len()
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
