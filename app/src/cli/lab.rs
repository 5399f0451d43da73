//! `warpscope run kernel-lab --set source=… [--set entry=…] [--input D.json] [--json]`: a
//! WGSL kernel (a file or a bundled example) on the GPU adapter with the dispatch's buffers,
//! beside the simulation of the same source and bytes; prints
//! `{adapter, entry, workgroup_size, subgroup_size, buffers, comparison, time}`.
//!
//! Exit status: 0 when the buffers match the simulation (or the simulator refused the kernel,
//! which `note` says), 1 when they differ, when there is no adapter, or when the device fails;
//! 2 for bad input (an unknown `--set` key, a source that does not parse or validate, a
//! dispatch that does not fit it).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use warpscope_core::lab::dispatch::{Binding, Dispatch};
use warpscope_core::lab::examples::{Example, find};
use warpscope_core::lab::output::BufferOut;
use warpscope_core::lab::scene::{LabParams, load_source};
use warpscope_kernels::DeviceContext;
use warpscope_kernels::lab::{self, LabError, Resources, RunOptions};

use super::fail;

/// The name `warpscope run` takes for the lab.
pub const KERNEL: &str = "kernel-lab";

/// What `--set` asked for: the scene `kernel-lab`'s parameters (as `report kernel-lab` takes
/// them), whether the subgroup size was given, and the timed runs.
#[derive(Debug)]
struct Settings {
    params: LabParams,
    subgroup_size_given: bool,
    runs: u32,
}

/// Reads `--set`: `runs=N` here, every other key through the scene's own parameters.
fn settings(set: &[String]) -> Result<Settings, String> {
    let key = |a: &String| a.split_once('=').map(|(k, _)| k.trim().to_owned());
    let (runs_args, rest): (Vec<String>, Vec<String>) = set
        .iter()
        .cloned()
        .partition(|a| key(a).as_deref() == Some("runs"));
    let mut runs = lab::DEFAULT_RUNS;
    for a in &runs_args {
        let v = a.split_once('=').map_or("", |(_, v)| v.trim());
        runs = v
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=lab::MAX_RUNS).contains(n))
            .ok_or_else(|| {
                format!(
                    "invalid parameter `runs` = {v}: expected a whole number 1 ..= {} (timed runs)",
                    lab::MAX_RUNS
                )
            })?;
    }
    let resolved = super::resolve(super::Source {
        scene: Some(KERNEL),
        set: &rest,
        ..super::Source::default()
    })
    .map_err(|e| format!("{e} (run kernel-lab also takes runs=N, the timed runs)"))?;
    let params = LabParams::from_values(&resolved.values).map_err(|e| e.to_string())?;
    Ok(Settings {
        params,
        subgroup_size_given: rest
            .iter()
            .any(|a| key(a).as_deref() == Some("subgroup_size")),
        runs,
    })
}

/// The kernel to run: its source text, the example it is (if one).
struct Kernel {
    source: String,
    example: Option<&'static Example>,
}

/// `source=`: a bundled example's name or a `.wgsl` path, read as the scene reads it.
fn kernel(source: &str) -> Result<Kernel, String> {
    let (text, _) = load_source(source).map_err(|e| e.to_string())?;
    Ok(Kernel {
        source: text,
        example: find(source.trim()),
    })
}

/// The dispatch: `--input`, else the example's own.
fn dispatch(input: Option<&Path>, k: &Kernel) -> Result<Dispatch, String> {
    let value = match (input, k.example) {
        (Some(path), _) => warpscope_core::input::json::read(path).map_err(|e| e.to_string())?,
        (None, Some(ex)) => warpscope_core::input::json::parse(ex.input.as_bytes())
            .map_err(|e| format!("example `{}`'s dispatch: {e}", ex.name))?,
        (None, None) => {
            return Err(
                "a kernel from a file needs its dispatch: --input D.json with \
                 {\"workgroups\": [x, y, z], \"buffers\": {\"G:B\": {\"type\", \"data\" | \"len\"}}}"
                    .to_owned(),
            );
        }
    };
    Dispatch::from_json(&value).map_err(|e| e.to_string())
}

/// The simulation's buffers for the same source, entry point, subgroup size, bytes and
/// overrides — the one call the comparison needs.
fn simulated(
    source: &str,
    entry: &str,
    subgroup_size: u32,
    dispatch: &Dispatch,
) -> Result<BTreeMap<Binding, BufferOut>, String> {
    let options = warpscope_core::lab::Options {
        overrides: dispatch.overrides.clone(),
        ..Default::default()
    };
    warpscope_core::lab::simulate_with(source, Some(entry), subgroup_size, dispatch, &options)
        .map(|o| o.buffers)
        .map_err(|e| e.to_string())
}

/// `warpscope run kernel-lab …` (see the module docs); with `record`, also the kernel
/// instrumented by the record pass (`result.recorded`, README § kernel lab).
pub fn run(set: &[String], input: Option<&Path>, json: bool, record: bool) -> ExitCode {
    let prepared = settings(set).and_then(|s| {
        let k = kernel(&s.params.source)?;
        let d = dispatch(input, &k)?;
        let entry = Some(s.params.entry.trim())
            .filter(|e| !e.is_empty())
            .or_else(|| k.example.and_then(|e| e.entry));
        // Checked before the adapter is opened: a bad source or dispatch is the user's to fix
        // (status 2) whether or not a GPU is present.
        let res = Resources::of(&k.source, entry).map_err(|e| e.to_string())?;
        res.check_dispatch(&d).map_err(|e| e.to_string())?;
        Ok((s, k, d, res))
    });
    let (s, k, d, res) = match prepared {
        Ok(p) => p,
        Err(e) => return fail(2, &e),
    };
    let ctx = match DeviceContext::open() {
        Ok(c) => c,
        Err(e) => return fail(1, &e.to_string()),
    };
    let opts = RunOptions { runs: s.runs };
    let gpu = match lab::run(&k.source, Some(&res.entry), &d, &ctx, opts) {
        Ok(r) => r,
        Err(e @ LabError::Input(_)) => return fail(2, &e.to_string()),
        Err(e) => return fail(1, &e.to_string()),
    };
    // Simulate at the adapter's subgroup size unless told otherwise, so the two runs split
    // the workgroup into the same warps.
    let subgroup_size = if s.subgroup_size_given {
        s.params.subgroup_size
    } else {
        gpu.subgroup_size.unwrap_or(s.params.subgroup_size)
    };
    // Warps of another size than the adapter's group lanes differently: subgroup results can
    // differ for that reason alone, and the output says so.
    let size_note = gpu.subgroup_size.filter(|&g| g != subgroup_size).map(|g| {
        format!(
            "simulated with subgroups of {subgroup_size} lanes; the adapter's are {g}: subgroup \
                 operations may give other results"
        )
    });
    let (comparison, note) = match simulated(&k.source, &res.entry, subgroup_size, &d) {
        Ok(sim) => (Some(lab::compare(&gpu.buffers, &sim)), size_note),
        Err(e) => (None, Some(format!("the simulation failed: {e}"))),
    };
    let recorded = if record {
        let opts = warpscope_kernels::lab::record::RecordOptions::default();
        match warpscope_kernels::lab::record::record(&k.source, Some(&res.entry), &d, &ctx, &opts) {
            Ok(r) => Some(r),
            Err(e @ LabError::Input(_)) => return fail(2, &e.to_string()),
            Err(e) => return fail(1, &e.to_string()),
        }
    } else {
        None
    };
    let mut value = serde_json::to_value(&gpu).unwrap_or_default();
    if let Some(o) = value.as_object_mut() {
        if let Some(r) = &recorded {
            o.insert(
                "recorded".to_owned(),
                serde_json::to_value(r).unwrap_or_default(),
            );
        }
        o.insert(
            "comparison".to_owned(),
            serde_json::to_value(&comparison).unwrap_or_default(),
        );
        o.insert(
            "simulated_subgroup_size".to_owned(),
            serde_json::json!(subgroup_size),
        );
        if let Some(n) = &note {
            o.insert("note".to_owned(), serde_json::json!(n));
        }
    }
    let text = if json {
        serde_json::to_string(&value)
    } else {
        serde_json::to_string_pretty(&value)
    };
    say!("{}", text.unwrap_or_default());
    if let Some(n) = note {
        eprintln!("warpscope: {n}");
    }
    match comparison {
        Some(c) if !c.passed => {
            let bad: Vec<String> = c
                .buffers
                .iter()
                .filter(|(_, b)| !b.passed)
                .map(|(k, b)| format!("{k} ({} elements differ)", b.mismatches))
                .collect();
            eprintln!(
                "warpscope: the GPU's buffers differ from the simulation on {}: {}",
                ctx.report.name,
                bad.join(", ")
            );
            ExitCode::from(1)
        }
        _ => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_and_sources() {
        let s = settings(&["source=histogram".into(), "subgroup_size=8".into()]).unwrap();
        assert_eq!(s.params.source, "histogram");
        assert_eq!(s.params.subgroup_size, 8);
        assert!(s.subgroup_size_given);
        assert_eq!(s.runs, lab::DEFAULT_RUNS);
        let s = settings(&["runs=3".into()]).unwrap();
        assert_eq!((s.runs, s.subgroup_size_given), (3, false));
        assert_eq!(s.params.source, "reduce-shared");
        assert!(settings(&["subgroup_size=12".into()]).is_err());
        assert!(settings(&["runs=0".into()]).unwrap_err().contains("`runs`"));
        let e = settings(&["rows=3".into()]).unwrap_err();
        assert!(e.contains("rows"), "{e}");
        assert!(kernel("/nonexistent/k.wgsl").is_err());
        assert!(kernel("no-such-example").is_err());
        let k = kernel("softmax-warp").unwrap();
        assert_eq!(k.example.and_then(|e| e.entry), Some("fused"));
        let d = dispatch(None, &k).unwrap();
        assert_eq!(d.workgroups, [2, 1, 1]);
        let no_input = Kernel {
            source: String::new(),
            example: None,
        };
        assert!(dispatch(None, &no_input).unwrap_err().contains("--input"));
    }
}
