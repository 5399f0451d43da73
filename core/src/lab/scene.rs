//! The scene `kernel-lab`: a WGSL kernel (a bundled example's name or a `.wgsl` path) simulated
//! warp by warp on a dispatch (the example's own, or `--input FILE.json`).
//!
//! The typed computation is [`run`] / [`run_input`] (`LabParams` → [`LabOutput`]);
//! [`KernelLabScene`] gives the registry a [`LabRun`]: that output with the source text and the
//! dispatch it ran, which the window shows and reruns on the GPU.

use std::sync::Arc;

use serde::Serialize;

use super::dispatch::Dispatch;
use super::examples::{EXAMPLES, find};
use super::output::LabOutput;
use crate::Error;
use crate::error::Expected;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, InputSpec, Scene, SceneDef, erase};
use crate::text::Text;

/// Largest `.wgsl` file the lab reads (bytes).
pub const MAX_SOURCE_BYTES: u64 = 1 << 20;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::text(
        "source",
        "kernel: a bundled example's name or a .wgsl path",
        "内核：内置示例名或 .wgsl 路径",
        "reduce-shared",
    ),
    ParamSpec::text(
        "entry",
        "entry point (empty: the only @compute one)",
        "入口函数（空：唯一的 @compute 入口）",
        "",
    ),
    ParamSpec::choice(
        "subgroup_size",
        "subgroup (warp) size, lanes",
        "子组（warp）大小（lane 数）",
        &["8", "16", "32", "64"],
        "32",
    ),
];

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: "kernel-lab",
    section: "Lab",
    title: Text::new(
        "Kernel lab: your WGSL kernel, warp by warp",
        "内核实验室：逐 warp 运行你的 WGSL 内核",
    ),
    summary: Text::new(
        "A WGSL compute kernel simulated warp by warp: per-line shared-memory wavefronts, global sectors, divergence, and sanitizer warnings.",
        "逐 warp 模拟 WGSL 计算内核：逐行的共享内存轮数、全局内存扇区、分支发散与检查器警告。",
    ),
    params: PARAMS,
    run: erase::<KernelLabScene>(),
    input: Some(&INPUT),
    chapter: &Chapter::KERNEL_LAB,
    // The default example's last store before its first barrier: the bank grid, and the other
    // warps waiting at the barrier.
    featured: Featured::Event(15),
    cost: Cost::Moderate,
};

/// The scene's typed definition (`kernel-lab`).
pub struct KernelLabScene;

impl SceneDef for KernelLabScene {
    const ID: &'static str = "kernel-lab";
    type Output = LabRun;

    fn run(v: &ParamValues) -> Result<LabRun, Error> {
        let p = LabParams::from_values(v)?;
        let json = bundled_dispatch(&p)?;
        run_shown(&p, &json)
    }

    fn run_input(v: &ParamValues, input: &serde_json::Value) -> Result<LabRun, Error> {
        run_shown(&LabParams::from_values(v)?, input)
    }
}

/// `kernel-lab`'s result: the simulation (its serialisation, the report's `result`) with the
/// source text it ran and its dispatch — the window lists the text beside the per-line
/// counters and runs the same dispatch on the GPU.
#[derive(Debug, Clone)]
pub struct LabRun {
    /// The `source` parameter as given: a bundled example's name or a path.
    pub name: String,
    /// The WGSL text that ran.
    pub source: Arc<str>,
    /// The dispatch it ran with.
    pub dispatch: Dispatch,
    /// The simulation.
    pub out: LabOutput,
}

impl Serialize for LabRun {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.out.serialize(s)
    }
}

fn run_shown(p: &LabParams, input: &serde_json::Value) -> Result<LabRun, Error> {
    // The text and the dispatch once more beside the simulation: both are small, and reading
    // them here keeps `run_input` the one place an example's entry and overrides are chosen.
    let (source, _) = load_source(&p.source)?;
    let dispatch = Dispatch::from_json(input)?;
    let out = run_input(p, input)?;
    Ok(LabRun {
        name: p.source.clone(),
        source: Arc::from(source),
        dispatch,
        out,
    })
}

/// The scene's input: the dispatch.
pub const INPUT: InputSpec = InputSpec {
    keys: Text::new(
        "workgroups: [x, y, z] workgroups to run, required\n\
         buffers: {\"GROUP:BINDING\": {\"type\": \"f32\"|\"u32\"|\"i32\"|\"f16\"|\"vec2<f32>\"|…, \
         \"data\": [...]} or {\"type\": …, \"len\": N, \"fill\": NUMBER|\"iota\"|\"random\"}} one per binding the kernel uses\n\
         seed: integer seeding \"random\" fills (default 0)",
        "workgroups: [x, y, z] 要运行的工作组数，必填\n\
         buffers: {\"组:绑定\": {\"type\": \"f32\"|\"u32\"|\"i32\"|\"f16\"|\"vec2<f32>\"|…, \
         \"data\": [...]} 或 {\"type\": …, \"len\": N, \"fill\": 数字|\"iota\"|\"random\"}} 内核用到的每个绑定一项\n\
         seed: \"random\" 填充的种子（默认 0）",
    ),
    example: include_str!("../../../assets/kernels/reduce_shared.json"),
    example_params: &[],
    params: &["source", "entry", "subgroup_size"],
};

/// The scene's parameters, typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabParams {
    /// A bundled example's name or a `.wgsl` path (`~` expanded).
    pub source: String,
    /// The entry point (empty: the only compute one).
    pub entry: String,
    /// Lanes per warp: 8, 16, 32 or 64.
    pub subgroup_size: u32,
}

impl LabParams {
    /// Reads validated values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a missing or malformed value.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let sg = v.text("subgroup_size")?;
        Ok(LabParams {
            source: v.text("source")?.to_owned(),
            entry: v.text("entry")?.to_owned(),
            subgroup_size: sg.parse().map_err(|_| {
                Error::invalid(
                    "subgroup_size",
                    sg,
                    Expected::OneOf(vec!["8".into(), "16".into(), "32".into(), "64".into()]),
                )
            })?,
        })
    }
}

/// The kernel's text and, for a bundled example, its own dispatch JSON.
///
/// # Errors
/// [`Error::InvalidParam`] `source` when it is neither an example nor a `.wgsl` path;
/// [`Error::BadInput`] when the file cannot be read, is past [`MAX_SOURCE_BYTES`] or is not
/// UTF-8.
pub fn load_source(source: &str) -> Result<(String, Option<&'static str>), Error> {
    if let Some(ex) = find(source.trim()) {
        return Ok((ex.source.to_owned(), Some(ex.input)));
    }
    if !source.trim().ends_with(".wgsl") {
        let names: Vec<&str> = EXAMPLES.iter().map(|e| e.name).collect();
        return Err(Error::invalid(
            "source",
            source,
            crate::error::Expected::custom(
                format!(
                    "expected a bundled example ({}) or a path ending in .wgsl",
                    names.join(", ")
                ),
                format!(
                    "应为自带的示例（{}）或以 .wgsl 结尾的路径",
                    names.join(", ")
                ),
            ),
        ));
    }
    let path = crate::torch::snapshot::expand_home(source.trim());
    let bytes = crate::input::read_regular(&path, MAX_SOURCE_BYTES, "WGSL source")?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::BadInput(format!("`{source}` is not UTF-8 text")))?;
    Ok((text, None))
}

/// Runs the kernel on its bundled example's dispatch.
///
/// # Errors
/// As [`load_source`] and [`super::simulate`]; [`Error::InvalidInput`] when `source` is a
/// file (a file brings no dispatch: give one with `--input`).
pub fn run(p: &LabParams) -> Result<LabOutput, Error> {
    run_input(p, &bundled_dispatch(p)?)
}

/// The bundled example's own dispatch.
///
/// # Errors
/// As [`load_source`]; [`Error::InvalidInput`] when `source` is a file (a file brings no
/// dispatch).
fn bundled_dispatch(p: &LabParams) -> Result<serde_json::Value, Error> {
    let (_, input) = load_source(&p.source)?;
    let Some(input) = input else {
        return Err(Error::input(
            "",
            Text::new(
                format!(
                    "`{}` is a file: give its dispatch with --input FILE.json or under Your input \
                     (JSON) (workgroups and buffers)",
                    p.source
                ),
                format!(
                    "`{}` 是文件：请用 `--input FILE.json` 或在“你的输入（JSON）”下给出它的调度\
                     （workgroups 与 buffers）",
                    p.source
                ),
            ),
        ));
    };
    serde_json::from_str(input).map_err(|e| Error::BadInput(format!("bundled dispatch: {e}")))
}

/// Runs the kernel on the dispatch `input` ([`Dispatch::from_json`]).
///
/// # Errors
/// As [`load_source`], [`Dispatch::from_json`] and [`super::simulate`].
pub fn run_input(p: &LabParams, input: &serde_json::Value) -> Result<LabOutput, Error> {
    let (text, _) = load_source(&p.source)?;
    let d = Dispatch::from_json(input)?;
    // An example names its entry point when its source has several (the softmax shader).
    let entry = (!p.entry.trim().is_empty())
        .then_some(p.entry.trim())
        .or_else(|| find(p.source.trim()).and_then(|e| e.entry));
    // The dispatch's overrides are the pipeline constants the GPU run gets too (the ∇γ tile's
    // PAD), so both runs see the same module.
    let options = super::Options {
        overrides: d.overrides.clone(),
        ..Default::default()
    };
    super::simulate_with(&text, entry, p.subgroup_size, &d, &options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_the_default_example_and_a_file() {
        let s = crate::scene::find("kernel-lab").unwrap();
        let r = s.report(s.defaults()).unwrap();
        // reduce-shared: 4 workgroups of 256 over iota(1024); sum of group 0 = 0 + … + 255.
        assert_eq!(r.result["buffers"]["0:1"][0], 32640.0);
        // 256 invocations in warps of 32 lanes: 8 warps a workgroup, 4 workgroups.
        assert_eq!(r.result["warps_per_workgroup"], 8);
        assert_eq!(r.result["totals"]["warps"], 32);
        assert!(r.result["lines"].as_array().is_some_and(|l| !l.is_empty()));
        let dir = std::env::temp_dir().join(format!("wslab-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("k.wgsl");
        std::fs::write(
            &path,
            "@group(0) @binding(0) var<storage, read_write> a: array<u32>;\n\
             @compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32) { a[i] = i * i; }\n",
        )
        .unwrap();
        let mut v = s.defaults();
        v.set(s.params, "source", path.to_str().unwrap()).unwrap();
        let input = serde_json::json!({"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "u32", "len": 4}}});
        let r = s.report_with(v.clone(), Some(&input)).unwrap();
        assert_eq!(
            r.result["buffers"]["0:0"],
            serde_json::json!([0.0, 1.0, 4.0, 9.0])
        );
        // A file without --input, a bad name: refused with what would do.
        assert!(matches!(s.report(v), Err(Error::InvalidInput { .. })));
        let mut v = s.defaults();
        v.set(s.params, "source", "nope").unwrap();
        match s.report(v) {
            Err(Error::InvalidParam { name, expected, .. }) => {
                assert_eq!(name, "source");
                assert!(expected.to_string().contains("reduce-shared"));
            }
            other => panic!("{other:?}"),
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
