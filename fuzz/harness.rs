//! The fuzz targets' bodies, shared with `core/tests/fuzz_regressions.rs` (which includes this
//! file with `#[path]`), so the committed corpus replays exactly what the fuzzers ran.

use warpscope_core::params::ParamValues;
use warpscope_core::scene::{self, Scene};
use warpscope_core::torch::snapshot;

/// Snapshot reader: any bytes → `parse` (opcode guard, `serde-pickle`, snapshot layout) and,
/// when it decodes, `summarise` (statistics and the allocator replay) and JSON.
pub fn snapshot(data: &[u8]) {
    if let Ok(s) = snapshot::parse(data) {
        let out = snapshot::summarise("fuzz", &s);
        let _ = serde_json::to_vec(&out);
    }
}

/// `--set` parser: the first byte picks a scene, the rest is newline-separated `key=value`
/// assignments for `ParamValues::set_assignment`; when all parse and `run(scene)` says so, the
/// scene is computed. `memory-snapshot` is never run here: its path would make the fuzzer read
/// arbitrary files (`/dev/zero`, FIFOs); the reader is the `snapshot` target's business.
pub fn set_assignment(data: &[u8], run: impl Fn(&Scene) -> bool) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let all: Vec<&Scene> = scene::scenes().collect();
    let s = all[usize::from(pick) % all.len()];
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let mut values = ParamValues::defaults(s.params);
    let mut all_ok = true;
    for line in text.lines().take(16) {
        all_ok &= values.set_assignment(s.params, line).is_ok();
    }
    if all_ok
        && s.id != "memory-snapshot"
        && run(s)
        && let Ok(r) = s.report(values)
    {
        let _ = serde_json::to_vec(&r);
    }
}

/// Preset reader: JSON bytes → `ParamValues` (what a saved preset holds) → `validated` against
/// every scene's specs; each scene that accepts a non-empty set is computed when `run` says so.
pub fn param_values_json(data: &[u8], run: impl Fn(&Scene) -> bool) {
    let Ok(values) = serde_json::from_slice::<ParamValues>(data) else {
        return;
    };
    for s in scene::scenes() {
        if let Ok(v) = values.clone().validated(s.params)
            && s.id != "memory-snapshot"
            && !values.0.is_empty()
            && run(s)
            && let Ok(r) = s.report(v)
        {
            let _ = serde_json::to_vec(&r);
        }
    }
}

/// Session (preset) reader: any bytes → `Session::from_bytes` (size bound, JSON shape, known
/// scene, every parameter validated); when it reads and `run(scene)` says so, the scene runs.
pub fn session(data: &[u8], run: impl Fn(&Scene) -> bool) {
    if let Ok(s) = warpscope_core::session::Session::from_bytes(data)
        && let Ok(sc) = scene::find(&s.scene)
        && sc.id != "memory-snapshot"
        && run(sc)
        && let Ok(r) = sc.report(s.params)
    {
        let _ = serde_json::to_vec(&r);
    }
}
