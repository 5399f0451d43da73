//! The WGSL sources, each as the device compiles it. The shared block reduction
//! (`shaders/block_reduce.wgsl`: `block_sum`, `block_sum2`) is written once and prepended to
//! the shaders that use it, so no two files carry copies of it.

/// The shared block reduction alone (it needs the including shader's `const WG`).
pub const BLOCK_REDUCE: &str = include_str!("shaders/block_reduce.wgsl");

/// LayerNorm backward ∇x, fused, with subgroups (`fused`).
pub const LAYERNORM_FUSED_SG: &str = include_str!("shaders/layernorm_fused_sg.wgsl");
/// LayerNorm backward ∇x, fused, a shared-memory tree (`fused`).
pub const LAYERNORM_FUSED_WG: &str = concat!(
    include_str!("shaders/block_reduce.wgsl"),
    include_str!("shaders/layernorm_fused_wg.wgsl")
);
/// LayerNorm backward ∇x, the autograd-style chain of 7 kernels.
pub const LAYERNORM_CHAIN: &str = concat!(
    include_str!("shaders/block_reduce.wgsl"),
    include_str!("shaders/layernorm_chain.wgsl")
);
/// LayerNorm ∇γ/∇β, the 32 × 32 tile (`tile`, override `PAD`).
pub const DGAMMA: &str = include_str!("shaders/dgamma.wgsl");
/// Softmax + dropout backward, one row per subgroup (`fused`, `row_sum`).
pub const SOFTMAX_SG: &str = include_str!("shaders/softmax_sg.wgsl");
/// Softmax + dropout backward, one row per workgroup (`fused`, `row_sum`).
pub const SOFTMAX_WG: &str = concat!(
    include_str!("shaders/block_reduce.wgsl"),
    include_str!("shaders/softmax_wg.wgsl")
);
/// The unfused softmax backward's element-wise kernels.
pub const SOFTMAX_EW: &str = include_str!("shaders/softmax_ew.wgsl");
/// Adam, f32 storage.
pub const ADAM: &str = include_str!("shaders/adam.wgsl");
/// Adam, FP16 storage of p and g (needs `SHADER_F16`).
pub const ADAM_F16: &str = include_str!("shaders/adam_f16.wgsl");
/// The copy-bandwidth kernel.
pub const COPY: &str = include_str!("shaders/copy.wgsl");

/// Every shader the kernels compile, by file name.
pub const ALL: &[(&str, &str)] = &[
    ("layernorm_fused_sg.wgsl", LAYERNORM_FUSED_SG),
    ("layernorm_fused_wg.wgsl", LAYERNORM_FUSED_WG),
    ("layernorm_chain.wgsl", LAYERNORM_CHAIN),
    ("dgamma.wgsl", DGAMMA),
    ("softmax_sg.wgsl", SOFTMAX_SG),
    ("softmax_wg.wgsl", SOFTMAX_WG),
    ("softmax_ew.wgsl", SOFTMAX_EW),
    ("adam.wgsl", ADAM),
    ("adam_f16.wgsl", ADAM_F16),
    ("copy.wgsl", COPY),
];

#[cfg(test)]
mod tests {
    use wgpu::naga;

    use super::*;

    /// Every shader parses and validates as naga checks it before a pipeline is built (all
    /// capabilities: which ones an adapter has is the GPU tests' business).
    #[test]
    fn every_shader_validates() {
        for (name, src) in ALL {
            let module = naga::front::wgsl::parse_str(src)
                .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
            naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::all(),
            )
            .subgroup_stages(naga::valid::ShaderStages::all())
            .subgroup_operations(naga::valid::SubgroupOperationSet::all())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
        }
    }

    /// The block reduction is defined once: only the prelude declares `fn block_sum`.
    #[test]
    fn the_block_reduction_is_written_once() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/shaders");
        let mut defining = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            if text.contains("fn block_sum") {
                defining.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
        assert_eq!(defining, ["block_reduce.wgsl"]);
    }
}
