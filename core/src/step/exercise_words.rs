//! The §9 exercises' questions and the lecture's reference answers, worded in both languages:
//! the English short, the Chinese as the lecture asks and answers them.

use crate::text::Text;

/// One exercise's words.
pub(super) struct Words {
    /// The question.
    pub question: Text<&'static str>,
    /// The lecture's reference answer.
    pub answer: Text<&'static str>,
}

/// Exercise 1.
pub(super) const EX1: Words = Words {
    question: Text::new(
        "Softmax row y = (0.5, 0.3, 0.2), ∇y = (1, 0, 0): ∇x? Check Σ∇x = 0; why is it always 0?",
        "一行 softmax 的输出 y = (0.5, 0.3, 0.2)，∇y = (1, 0, 0)。求 ∇x，并验证 Σ∇x = 0。为什么 softmax 反向的结果总是和为 0？",
    ),
    answer: Text::new(
        "s = 0.5; ∇x = (0.25, −0.15, −0.10), sum 0: softmax is invariant to adding a constant to every input",
        "s = Σ∇y·y = 0.5；∇x = y ⊙ (∇y − s) = (0.5 × 0.5, 0.3 × (−0.5), 0.2 × (−0.5)) = (0.25, −0.15, −0.10)，和为 0。原因：softmax 对所有输入同时加一个常数不变，所以沿 (1, 1, …, 1) 方向的导数为 0；代数上 Σⱼ yⱼ(∇yⱼ − s) = s − s·Σy = 0。",
    ),
};

/// Exercise 2.
pub(super) const EX2: Words = Words {
    question: Text::new(
        "Prove with the HW4 formula that LayerNorm backward has Σᵢ∇xᵢ = 0. What does it mean?",
        "用 HW4 的公式证明 LayerNorm 反向满足 Σᵢ∇xᵢ = 0。这在直觉上是什么意思？",
    ),
    answer: Text::new(
        "Σᵢ∇xᵢ = r[Σg − Σg − 0] = 0 since Σx̂ᵢ = 0; LayerNorm is invariant to a constant shift of the row",
        "Σᵢ∇xᵢ = r[Σg − (m·Σg + Σᵢx̂ᵢ·Σgx̂)/m] = r[Σg − Σg − 0] = 0，因为 Σx̂ᵢ = 0。直觉：LayerNorm 对每行同时加一个常数不变（减均值抵消了），所以梯度没有”整体平移”的分量。",
    ),
};

/// Exercise 3.
pub(super) const EX3: Words = Words {
    question: Text::new(
        "Check the trainer's bytes per parameter: 40 per-tensor FP32 master, 22 LightSeq2 (Adam m, v in FP32).",
        "按 §4.2 的表，核对”原来”每个参数 40 字节、LightSeq2 22 字节的读写（Adam 的 m、v 为 FP32）。",
    ),
    answer: Text::new(
        "per-tensor: copy g 2 + 4 = 6, Adam 16 + 12 = 28, copy p 4 + 2 = 6, total 40; LightSeq2: 4 + 8 + 2 + 8 = 22",
        "原来：拷梯度读 FP16 2 + 写 FP32 4 = 6；Adam 读 p′、g′、m、v 16，写 p′、m、v 12，共 28；拷参数读 4 + 写 2 = 6；合计 40。LightSeq2：读 p、g（FP16）4，读 m、v 8，写 p（FP16）2，写 m、v 8，合计 22。",
    ),
};

/// Exercise 4.
pub(super) const EX4: Words = Words {
    question: Text::new(
        "7B parameters: memory saved by dropping the FP32 parameter and gradient copies? Only the gradient copy?",
        "一个 7B 参数的模型，去掉 FP32 的参数和梯度副本能省多少显存？如果还保留 FP32 主参数、只去掉 FP32 梯度副本呢？",
    ),
    answer: Text::new(
        "7e9 × 8 = 56 GB; 7e9 × 4 = 28 GB",
        "FP32 参数 + 梯度副本每个参数 8 字节：7e9 × 8 = 56 GB。只去掉梯度副本：7e9 × 4 = 28 GB。",
    ),
};

/// Exercise 5.
pub(super) const EX5: Words = Words {
    question: Text::new(
        "B = 4, L = 2048, H = 4096, N = 32, fp16: lower bound of self-attention backward temporaries, MiB?",
        "B = 4、L = 2048、H = 4096、N = 32、fp16：自注意力反向的临时显存下界是多少 MiB？",
    ),
    answer: Text::new(
        "BLH = 64 MiB, BL²N = 1024 MiB; 3 × 64 + max(1024, 192) = 1216 MiB",
        "BLH = 4 × 2048 × 4096 × 2 字节 = 64 MiB；BL²N = 4 × 2048² × 32 × 2 字节 = 1024 MiB = 16 BLH。下界 3 × 64 + max(1024, 192) = 1216 MiB。",
    ),
};

/// Exercise 6.
pub(super) const EX6: Words = Words {
    question: Text::new(
        "When is BL²N ≥ 3BLH, in terms of d_h = H/N? At d_h = 64, how long must L be?",
        "什么时候 BL²N ≥ 3BLH？用每个头的维度 dₕ = H/N 表示。dₕ = 64 时 L 至少多长？",
    ),
    answer: Text::new(
        "LN ≥ 3H ⇔ L ≥ 3·d_h; d_h = 64 → L ≥ 192",
        "BL²N ≥ 3BLH ⇔ LN ≥ 3H ⇔ L ≥ 3dₕ。dₕ = 64 时 L ≥ 192：几乎所有实际的训练长度下，分数矩阵那一块都更大。",
    ),
};

/// Exercise 7.
pub(super) const EX7: Words = Words {
    question: Text::new(
        "N = 8192, d = 1024 ∇γ/∇β: a two-stage reduction with about A100's 221,184 resident threads — stage 1 threads and steps, stage 2?",
        "N = 8192、d = 1024 的 γ、β 梯度：设计一个”两段”的归约，让线程数接近 A100 的 221,184 个常驻线程。第一段多少线程、每线程几步？第二段做什么？",
    ),
    answer: Text::new(
        "P = 216: stage 1 has 221,184 threads, about 38 rows each; stage 2 sums each column's 216 partials (d threads)",
        "把 8192 行切成 P 段：第一段 P·d 个线程，每个线程累加 8192/P 行，写出 P × d 个部分和；第二段 d 个线程（或 d/32 个线程束）把每列的 P 个部分和加起来。P = 216 时第一段 221,184 个线程，每个约 38 步；第二段每列只加 216 个数，代价很小。",
    ),
};

/// Exercise 8.
pub(super) const EX8: Words = Words {
    question: Text::new(
        "GPT-2 large, 436 tensors, 7.74e8 parameters: launch and byte time of the per-tensor trainer (3 kernels per tensor, 40 B/param) and of LightSeq2's?",
        "GPT-2 large 有 436 个参数张量、7.74 亿参数。按”原来”的训练器（每个张量 3 个内核、每个参数 40 字节），发射开销和读写时间各多少？LightSeq2 呢？",
    ),
    answer: Text::new(
        "3 × 436 × 4 µs = 5.2 ms and 40 × 7.74e8 / 1.555e12 = 19.9 ms (25.1 ms); LightSeq2 4 µs and 22 × 7.74e8 / 1.555e12 = 10.95 ms",
        "原来：发射 3 × 436 × 4 μs = 5.2 ms，读写 40 × 7.74e8 ÷ 1.555e12 = 19.9 ms（合计 25.1 ms，与 05 号脚本一致）。LightSeq2：发射 4 μs，读写 22 × 7.74e8 ÷ 1.555e12 = 10.95 ms。",
    ),
};

/// Exercise 9.
pub(super) const EX9: Words = Words {
    question: Text::new(
        "LayerNorm γ = 1.5, lr 3e-4, FP16 storage: is the update swallowed? γ = 0.6? What is really added at 0.6?",
        "一个 LayerNorm 的 γ = 1.5，学习率 3e-4，用 FP16 存储：更新会被吞掉吗？γ = 0.6 呢？在 γ = 0.6 时，实际加上去的量是多少？",
    ),
    answer: Text::new(
        "γ = 1.5: half spacing 4.88e-4 > 3e-4, swallowed; γ = 0.6: half spacing 2.44e-4 < 3e-4, a whole spacing 4.88e-4 is added (63 % more)",
        "γ = 1.5 在 [1, 2) 里，FP16 间距 2⁻¹⁰ ≈ 9.77e-4，一半 4.88e-4 > 3e-4：被吞掉。γ = 0.6 在 [0.5, 1) 里，间距 4.88e-4，一半 2.44e-4 < 3e-4：不会被吞掉，但舍入后实际加上的是一个整间距 4.88e-4（比 3e-4 多 63%）——FP16 存储不只吞掉小更新，还会放大”刚过半个间距”的更新。",
    ),
};

/// Exercise 10.
pub(super) const EX10: Words = Words {
    question: Text::new(
        "Two free, non-adjacent 100 MB blocks in the caching allocator; a 150 MB request arrives. What happens? How does pre-allocation avoid it?",
        "缓存分配器里有两段各 100 MB 的空闲块（不相邻），来了一个 150 MB 的请求。会发生什么？LightSeq2 的预先分配怎样避免它？",
    ),
    answer: Text::new(
        "200 MB free but no 150 MB contiguous: a new segment is cudaMalloc'ed, reserved grows to at least 350 MB; pre-allocation plans the layout for the largest shape before training",
        "两个空闲块总量 200 MB 够，但都不够 150 MB 连续：分配器只好 cudaMalloc 一个新段，已占用涨到至少 350 MB。预先分配时，临时显存的布局在训练前就按最大形状规划好（§5.2），每批都用同样几块，不会切碎。",
    ),
};

/// Exercise 11.
pub(super) const EX11: Words = Words {
    question: Text::new(
        "Why does the trainer take 32 % of the baseline step at 1024 tokens but 3 % at 16384? What does it imply for gradient accumulation?",
        "05 号脚本里，1024 个 token 时训练器占基线的 32%，16384 个 token 时只占 3%。为什么？这对”梯度累积”有什么启示？",
    ),
    answer: Text::new(
        "trainer time depends only on the parameter count; GEMM and non-GEMM time grow with tokens. Accumulation amortises the update, but each small micro-batch is more launch-bound, so fused kernels matter more",
        "训练器的时间只取决于参数个数（每步都要更新全部参数），GEMM 和非 GEMM 的时间随 token 数增长。梯度累积时，多个小批次只做一次更新，训练器被摊薄；但每个小批次本身的前向、反向更小、更受发射开销影响，融合内核更重要。",
    ),
};

/// Exercise 12.
pub(super) const EX12: Words = Words {
    question: Text::new(
        "Dropout and softmax backward fuse into one kernel. Can softmax backward also fuse into the next GEMM ∇Q = ∇S·K? At what cost?",
        "注意力 dropout 反向和 softmax 反向可以融合成一个内核。下一步 ∇Q = ∇S·K 是一个 GEMM，能不能把 softmax 反向也融合进这个 GEMM？代价是什么？",
    ),
    answer: Text::new(
        "yes, computing y⊙(∇P − s) as each tile is loaded, with the row sums s precomputed; that is FlashAttention's backward: ∇S never goes to DRAM, at the cost of a more complex kernel and recomputing y",
        "可以，但 GEMM 需要 ∇S 的整块数据：要把 softmax 反向放进 GEMM 的分块循环里，在每个 tile 读进来时现算 y ⊙ (∇P − s)，而行和 s 需要整行的信息（可以提前单独算好，每行一个数）。这正是 FlashAttention 反向的做法（第 21 讲）：不把 ∇S 写回显存，代价是更复杂的内核，并且要重算 y。",
    ),
};
