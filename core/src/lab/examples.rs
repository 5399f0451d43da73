//! The kernel lab's bundled examples: a WGSL kernel, the dispatch it runs with, and its lesson
//! in one sentence, in both languages. The sources live in `assets/kernels/` (teaching
//! kernels) and `kernels/src/shaders/` (the lecture's own shaders), embedded here so that each
//! kernel is written once and both simulated and run on the GPU.

use crate::text::Text;

/// One bundled kernel.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// The name `--set source=NAME` takes, e.g. `reduce-shared`.
    pub name: &'static str,
    /// The WGSL source.
    pub source: &'static str,
    /// The dispatch it runs with ([`super::dispatch::Dispatch`] JSON).
    pub input: &'static str,
    /// What it teaches, in one sentence.
    pub lesson: Text<&'static str>,
}

/// Every bundled example, the default first.
pub static EXAMPLES: &[Example] = &[Example {
    name: "reduce-shared",
    source: include_str!("../../../assets/kernels/reduce_shared.wgsl"),
    input: include_str!("../../../assets/kernels/reduce_shared.json"),
    lesson: Text {
        en: "A tree reduction in workgroup memory: a barrier per step, and from 32 active threads on whole warps idle.",
        zh: "共享内存中的树形归约：每一步一个屏障；活跃线程少于 32 后，整个 warp 空闲。",
    },
}];

/// The example named `name`.
pub fn find(name: &str) -> Option<&'static Example> {
    EXAMPLES.iter().find(|e| e.name == name)
}
