//! `warpscope run kernel-lab --set source=… [--set entry=…] [--input D.json] [--json]`: a
//! WGSL kernel (a file or a bundled example) on the GPU adapter with the dispatch's buffers,
//! beside the simulation of the same source and bytes; prints
//! `{adapter, entry, workgroup_size, subgroup_size, buffers, comparison, time}`.
//!
//! Exit status: 0 when the buffers match the simulation (or no simulation ran), 1 when they
//! differ, when there is no adapter, or when the device fails; 2 for bad input (an unknown
//! `--set` key, a source that does not parse or validate, a dispatch that does not fit it).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use warpscope_core::lab::dispatch::{Binding, Dispatch};
use warpscope_core::lab::examples::{EXAMPLES, Example, find};
use warpscope_core::lab::output::BufferOut;
use warpscope_kernels::DeviceContext;
use warpscope_kernels::lab::{self, LabError, Resources, RunOptions};

use super::fail;

/// The name `warpscope run` takes for the lab.
pub const KERNEL: &str = "kernel-lab";

/// Largest kernel source read (bytes).
const MAX_SOURCE_BYTES: u64 = 1 << 20;

/// Subgroup sizes the simulator models.
const SUBGROUP_SIZES: [u32; 4] = [8, 16, 32, 64];

/// The `--set` keys, with what each takes (for the refusal of an unknown one).
const KEYS: &str = "source (a .wgsl path or a bundled example), entry (a compute entry point), \
                    subgroup_size (8, 16, 32 or 64; default the adapter's), runs (timed runs, 1 ..= 1000)";

/// What `--set` asked for.
#[derive(Debug, Default)]
struct Settings {
    source: Option<String>,
    entry: Option<String>,
    subgroup_size: Option<u32>,
    runs: Option<u32>,
}

fn settings(set: &[String]) -> Result<Settings, String> {
    let mut s = Settings::default();
    for a in set {
        let (k, v) = a
            .split_once('=')
            .ok_or_else(|| format!("--set {a}: expected KEY=VALUE; keys: {KEYS}"))?;
        let v = v.trim();
        match k.trim() {
            "source" => s.source = Some(v.to_owned()),
            "entry" => s.entry = Some(v.to_owned()).filter(|e| !e.is_empty()),
            "subgroup_size" => {
                let n = v
                    .parse::<u32>()
                    .ok()
                    .filter(|n| SUBGROUP_SIZES.contains(n))
                    .ok_or_else(|| {
                        format!("invalid parameter `subgroup_size` = {v}: expected 8, 16, 32 or 64")
                    })?;
                s.subgroup_size = Some(n);
            }
            "runs" => {
                let n = v
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=lab::MAX_RUNS).contains(n))
                    .ok_or_else(|| {
                        format!(
                            "invalid parameter `runs` = {v}: expected a whole number 1 ..= {}",
                            lab::MAX_RUNS
                        )
                    })?;
                s.runs = Some(n);
            }
            other => {
                return Err(format!(
                    "kernel-lab has no parameter `{other}`; keys: {KEYS}"
                ));
            }
        }
    }
    Ok(s)
}

/// The kernel to run: its source text, the example it is (if one), its default entry point.
struct Kernel {
    source: String,
    example: Option<&'static Example>,
}

/// `source=`: a bundled example's name, else a file (`~` expanded); none: the first example.
fn kernel(source: Option<&str>) -> Result<Kernel, String> {
    let name = source.unwrap_or_else(|| EXAMPLES.first().map_or("", |e| e.name));
    if let Some(ex) = find(name) {
        return Ok(Kernel {
            source: ex.source.to_owned(),
            example: Some(ex),
        });
    }
    let path = warpscope_core::memory::snapshot::expand_home(name);
    let bytes = warpscope_core::input::read_regular(&path, MAX_SOURCE_BYTES, "kernel source")
        .map_err(|e| {
            let names: Vec<&str> = EXAMPLES.iter().map(|e| e.name).collect();
            format!(
                "source `{name}` is neither a bundled example ({}) nor a readable file: {e}",
                names.join(", ")
            )
        })?;
    let source = String::from_utf8(bytes)
        .map_err(|_| format!("the kernel source {} is not UTF-8 text", path.display()))?;
    Ok(Kernel {
        source,
        example: None,
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
/// overrides — the one call the comparison needs. `None` while this build has no simulator.
fn simulated(
    source: &str,
    entry: &str,
    subgroup_size: u32,
    dispatch: &Dispatch,
) -> Option<Result<BTreeMap<Binding, BufferOut>, String>> {
    let options = warpscope_core::lab::Options {
        overrides: dispatch.overrides.clone(),
        ..Default::default()
    };
    Some(
        warpscope_core::lab::simulate_with(source, Some(entry), subgroup_size, dispatch, &options)
            .map(|o| o.buffers)
            .map_err(|e| e.to_string()),
    )
}

/// `warpscope run kernel-lab …` (see the module docs); with `record`, also the kernel
/// instrumented by the record pass (`result.recorded`, README § kernel lab).
pub fn run(set: &[String], input: Option<&Path>, json: bool, record: bool) -> ExitCode {
    let prepared = settings(set).and_then(|s| {
        let k = kernel(s.source.as_deref())?;
        let d = dispatch(input, &k)?;
        let entry = s
            .entry
            .clone()
            .or_else(|| k.example.and_then(|e| e.entry).map(str::to_owned));
        // Checked before the adapter is opened: a bad source or dispatch is the user's to fix
        // (status 2) whether or not a GPU is present.
        let res = Resources::of(&k.source, entry.as_deref()).map_err(|e| e.to_string())?;
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
    let opts = RunOptions {
        runs: s.runs.unwrap_or(lab::DEFAULT_RUNS),
    };
    let gpu = match lab::run(&k.source, Some(&res.entry), &d, &ctx, opts) {
        Ok(r) => r,
        Err(e @ LabError::Input(_)) => return fail(2, &e.to_string()),
        Err(e) => return fail(1, &e.to_string()),
    };
    // Simulate at the adapter's subgroup size unless told otherwise, so the two runs split
    // the workgroup into the same warps.
    let subgroup_size = s.subgroup_size.or(gpu.subgroup_size).unwrap_or(32);
    let (comparison, note) = match simulated(&k.source, &res.entry, subgroup_size, &d) {
        Some(Ok(sim)) => (Some(lab::compare(&gpu.buffers, &sim)), None),
        Some(Err(e)) => (None, Some(format!("the simulation failed: {e}"))),
        None => (
            None,
            Some("this build has no simulator: the GPU's buffers are not compared".to_owned()),
        ),
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
        assert_eq!(s.source.as_deref(), Some("histogram"));
        assert_eq!(s.subgroup_size, Some(8));
        assert!(settings(&["subgroup_size=12".into()]).is_err());
        assert!(settings(&["runs=0".into()]).is_err());
        let e = settings(&["rows=3".into()]).unwrap_err();
        assert!(e.contains("no parameter `rows`"), "{e}");
        let k = kernel(None).unwrap();
        assert_eq!(k.example.map(|e| e.name), Some("reduce-shared"));
        let e = kernel(Some("/nonexistent/k.wgsl")).err().unwrap();
        assert!(e.contains("neither a bundled example"), "{e}");
        let file = kernel(Some("/nonexistent/k.wgsl"));
        assert!(file.is_err());
        let k = kernel(Some("softmax-warp")).unwrap();
        let d = dispatch(None, &k).unwrap();
        assert_eq!(d.workgroups, [2, 1, 1]);
        let no_input = Kernel {
            source: String::new(),
            example: None,
        };
        assert!(dispatch(None, &no_input).unwrap_err().contains("--input"));
    }
}
