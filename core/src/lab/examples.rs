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
    /// The compute entry point to run; `None` where the source has only one.
    pub entry: Option<&'static str>,
    /// The dispatch it runs with ([`super::dispatch::Dispatch`] JSON).
    pub input: &'static str,
    /// What it teaches, in one sentence.
    pub lesson: Text<&'static str>,
}

/// Every bundled example, the default first: the classic teaching kernels, then the lecture's
/// own shaders (the very files `warpscope-kernels` runs, not copies).
pub static EXAMPLES: &[Example] = &[
    Example {
        name: "reduce-shared",
        source: include_str!("../../../assets/kernels/reduce_shared.wgsl"),
        entry: None,
        input: include_str!("../../../assets/kernels/reduce_shared.json"),
        lesson: Text {
            en: "A tree reduction in workgroup memory with sequential addressing: a barrier per step, no bank conflict, and from 32 active threads on whole warps idle.",
            zh: "顺序寻址的共享内存树形归约：每一步一个屏障、没有 bank 冲突；活跃线程少于 32 后，整个 warp 空闲。",
        },
    },
    Example {
        name: "reduce-interleaved",
        source: include_str!("../../../assets/kernels/reduce_interleaved.wgsl"),
        entry: None,
        input: include_str!("../../../assets/kernels/reduce_interleaved.json"),
        lesson: Text {
            en: "The naive reduction keeps threads whose index is a multiple of 2s, so every warp diverges at every step while most of its lanes do nothing.",
            zh: "朴素归约让下标为 2s 倍数的线程工作，于是每一步每个 warp 都发生分支分化，大部分 lane 空转。",
        },
    },
    Example {
        name: "reduce-strided",
        source: include_str!("../../../assets/kernels/reduce_strided.wgsl"),
        entry: None,
        input: include_str!("../../../assets/kernels/reduce_strided.json"),
        lesson: Text {
            en: "Giving the work to the first threads (index 2·s·tid) removes the divergence but strides shared memory by 2s words, so the lanes of a warp collide in a few banks.",
            zh: "把工作交给前面的线程（下标 2·s·tid）消除了分支分化，但共享内存访问步长为 2s 个字，warp 内的 lane 挤在少数几个 bank 上发生冲突。",
        },
    },
    Example {
        name: "reduce-shuffle",
        source: include_str!("../../../assets/kernels/reduce_shuffle.wgsl"),
        entry: None,
        input: include_str!("../../../assets/kernels/reduce_shuffle.json"),
        lesson: Text {
            en: "Within a warp a butterfly of subgroupShuffleXor sums in registers with no shared memory and no barrier, leaving one shared partial per warp and a single barrier.",
            zh: "在 warp 内用 subgroupShuffleXor 蝶形交换在寄存器中求和，不用共享内存也不用屏障，每个 warp 只留一个部分和，整个归约只需一个屏障。",
        },
    },
    Example {
        name: "transpose-tiled",
        source: include_str!("../../../assets/kernels/transpose_tiled.wgsl"),
        entry: None,
        input: include_str!("../../../assets/kernels/transpose_tiled.json"),
        lesson: Text {
            en: "A 32 × 32 tile makes both global accesses coalesced, but reading it down a column puts every lane of a warp in the same bank.",
            zh: "32 × 32 的 tile 让全局内存的读写都合并，但按列读取 tile 时，warp 的所有 lane 落在同一个 bank 上。",
        },
    },
    Example {
        name: "transpose-padded",
        source: include_str!("../../../assets/kernels/transpose_padded.wgsl"),
        entry: None,
        input: include_str!("../../../assets/kernels/transpose_padded.json"),
        lesson: Text {
            en: "Padding each tile row to 33 words shifts every row by one bank, so the column read touches 32 different banks and the conflicts vanish.",
            zh: "把 tile 的每行填充到 33 个字，每行错开一个 bank，按列读取落在 32 个不同的 bank 上，冲突消失。",
        },
    },
    Example {
        name: "histogram",
        source: include_str!("../../../assets/kernels/histogram.wgsl"),
        entry: None,
        input: include_str!("../../../assets/kernels/histogram.json"),
        lesson: Text {
            en: "Counting into per-workgroup bins with atomics in shared memory turns one global atomic per value into one per bin, at the cost of lanes serialising on a shared bin.",
            zh: "先用共享内存原子操作计入每个工作组自己的桶，把每个值一次全局原子操作变成每个桶一次，代价是同一桶上的 lane 串行执行。",
        },
    },
    Example {
        name: "prefix-sum",
        source: include_str!("../../../assets/kernels/prefix_sum.wgsl"),
        entry: None,
        input: include_str!("../../../assets/kernels/prefix_sum.json"),
        lesson: Text {
            en: "The Hillis–Steele scan finishes in log2(n) barrier-separated steps by doing n·log2(n) additions, ping-ponging between two shared buffers so no step reads what it overwrites.",
            zh: "Hillis–Steele 扫描用 n·log2(n) 次加法换来 log2(n) 个以屏障分隔的步骤，并在两块共享缓冲之间来回切换，避免读到本步刚写的值。",
        },
    },
    Example {
        name: "dgamma-32",
        source: include_str!("../../../kernels/src/shaders/dgamma.wgsl"),
        entry: None,
        input: include_str!("../../../assets/kernels/dgamma_32.json"),
        lesson: Text {
            en: "The lecture's ∇γ tile stores partials as buf[y][x] and reads them back transposed with a row stride of 32 words: a 32-way bank conflict.",
            zh: "课程中的 ∇γ tile 以 buf[y][x] 存部分和、再转置读取，行步长 32 个字：32 路 bank 冲突。",
        },
    },
    Example {
        name: "dgamma-33",
        source: include_str!("../../../kernels/src/shaders/dgamma.wgsl"),
        entry: None,
        input: include_str!("../../../assets/kernels/dgamma_33.json"),
        lesson: Text {
            en: "The same ∇γ tile with PAD = 1 (a row stride of 33 words) spreads the transposed read over 32 banks: one wavefront instead of 32.",
            zh: "同一个 ∇γ tile 取 PAD = 1（行步长 33 个字），转置读取分散到 32 个 bank：1 个 wavefront 而不是 32 个。",
        },
    },
    Example {
        name: "softmax-warp",
        source: include_str!("../../../kernels/src/shaders/softmax_sg.wgsl"),
        entry: Some("fused"),
        input: include_str!("../../../assets/kernels/softmax_warp.json"),
        lesson: Text {
            en: "Softmax backward with one row per warp keeps the row in registers and sums it with one butterfly of shuffles: no shared memory and no barrier.",
            zh: "每个 warp 处理一行的 softmax 反向把整行放在寄存器里，用一轮蝶形 shuffle 求和：不用共享内存，也没有屏障。",
        },
    },
    Example {
        name: "layernorm-fused",
        source: include_str!("../../../kernels/src/shaders/layernorm_fused_sg.wgsl"),
        entry: None,
        input: include_str!("../../../assets/kernels/layernorm_fused.json"),
        lesson: Text {
            en: "Fused LayerNorm backward reduces its two row sums as one vec2 with subgroupAdd and a single barrier, where a shared-memory tree needs one barrier per halving.",
            zh: "融合的 LayerNorm 反向把两个行和当作一个 vec2，用 subgroupAdd 和一个屏障完成归约，而共享内存树形归约每折半一次就要一个屏障。",
        },
    },
];

/// The example named `name`.
pub fn find(name: &str) -> Option<&'static Example> {
    EXAMPLES.iter().find(|e| e.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::dispatch::Dispatch;

    #[test]
    fn every_example_parses_validates_and_has_its_entry_point() {
        let mut names = std::collections::BTreeSet::new();
        for ex in EXAMPLES {
            assert!(names.insert(ex.name), "two examples named {}", ex.name);
            assert!(
                !ex.lesson.en.is_empty() && !ex.lesson.zh.is_empty(),
                "{}",
                ex.name
            );
            let module = naga::front::wgsl::parse_str(ex.source)
                .unwrap_or_else(|e| panic!("{}: {}", ex.name, e.emit_to_string(ex.source)));
            naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::all(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}: {}", ex.name, e.emit_to_string(ex.source)));
            let computes: Vec<&str> = module
                .entry_points
                .iter()
                .filter(|e| e.stage == naga::ShaderStage::Compute)
                .map(|e| e.name.as_str())
                .collect();
            match ex.entry {
                Some(e) => assert!(computes.contains(&e), "{}: {computes:?}", ex.name),
                None => assert_eq!(computes.len(), 1, "{}: {computes:?}", ex.name),
            }
            let v: serde_json::Value = serde_json::from_str(ex.input).unwrap();
            let d = Dispatch::from_json(&v).unwrap_or_else(|e| panic!("{}: {e}", ex.name));
            // Small enough to step through: a few workgroups.
            assert!(d.workgroup_count() <= 8, "{}", ex.name);
        }
        assert_eq!(find("dgamma-33").map(|e| e.name), Some("dgamma-33"));
        assert!(find("nope").is_none());
    }
}
