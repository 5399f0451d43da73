//! `exercises`: the twelve §9 exercises computed by the labs, beside the lecture's answers.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets;
use warpscope_core::step::exercises::ExercisesOutput;

/// The `exercises` view.
#[derive(Debug, Clone, Default)]
pub struct ExercisesView;

impl View for ExercisesView {
    type Scene = warpscope_core::step::exercises::ExercisesScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

/// `exercises`: each exercise's question, the lecture's answer, whether the computation agrees,
/// and the computed answer.
fn draw(ui: &mut egui::Ui, out: &ExercisesOutput) {
    for e in out.items() {
        let k = e.key;
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.horizontal_wrapped(|ui| {
                ui.strong(trf!(ui, "Exercise {}", "练习 {}", e.number));
                match e.agrees {
                    Some(true) => ui.colored_label(
                        widgets::GREEN,
                        tr(
                            ui,
                            "computed answer agrees with the lecture",
                            "计算结果与讲义的答案一致",
                        ),
                    ),
                    Some(false) => ui.colored_label(
                        widgets::VERMILLION,
                        tr(
                            ui,
                            "computed answer differs from the lecture",
                            "计算结果与讲义的答案不同",
                        ),
                    ),
                    None => ui.label(tr(
                        ui,
                        "open question: computed, no single answer in the lecture",
                        "开放问题：已计算，讲义里没有唯一答案",
                    )),
                };
            });
            // The lecture's own Chinese wording where the window is in Chinese.
            let n = e.number.checked_sub(1);
            let zh = crate::i18n::zh(ui);
            let zh_text =
                |texts: &[&'static str; 12]| n.and_then(|n| texts.get(n).copied()).filter(|_| zh);
            let question = zh_text(&QUESTIONS_ZH).unwrap_or(e.question);
            crate::widgets::marks::label(ui, question);
            let answer = zh_text(&ANSWERS_ZH).or(e.lecture_answer);
            if let Some(a) = answer {
                crate::widgets::marks::label(
                    ui,
                    egui::RichText::new(trf!(ui, "Lecture: {a}", "讲义：{a}")).italics(),
                );
            }
            let computed = e.computed.get(zh);
            if crate::widgets::stepper::figure_mode(ui.ctx()) {
                // A figure has no expanders: the computed answer in full, without its JSON.
                crate::widgets::marks::label(
                    ui,
                    egui::RichText::new(trf!(ui, "Computed: {computed}", "计算结果：{computed}")),
                );
            } else {
                ui.collapsing(
                    trf!(ui, "computed answer ({k})", "计算结果（{k}）"),
                    |ui| {
                        crate::widgets::marks::label(ui, egui::RichText::new(computed).small());
                        crate::widgets::marks::label(
                            ui,
                            egui::RichText::new(e.answer_json.as_str()).monospace(),
                        );
                    },
                );
            }
        });
    }
}

/// The §9 exercises as the lecture asks them in Chinese (the questions in core are English).
const QUESTIONS_ZH: [&str; 12] = [
    "一行 softmax 的输出 y = (0.5, 0.3, 0.2)，∇y = (1, 0, 0)。求 ∇x，并验证 Σ∇x = 0。为什么 softmax 反向的结果总是和为 0？",
    "用 HW4 的公式证明 LayerNorm 反向满足 Σᵢ∇xᵢ = 0。这在直觉上是什么意思？",
    "按 §4.2 的表，核对”原来”每个参数 40 字节、LightSeq2 22 字节的读写（Adam 的 m、v 为 FP32）。",
    "一个 7B 参数的模型，去掉 FP32 的参数和梯度副本能省多少显存？如果还保留 FP32 主参数、只去掉 FP32 梯度副本呢？",
    "B = 4、L = 2048、H = 4096、N = 32、fp16：自注意力反向的临时显存下界是多少 MiB？",
    "什么时候 BL²N ≥ 3BLH？用每个头的维度 dₕ = H/N 表示。dₕ = 64 时 L 至少多长？",
    "N = 8192、d = 1024 的 γ、β 梯度：设计一个”两段”的归约，让线程数接近 A100 的 221,184 个常驻线程。第一段多少线程、每线程几步？第二段做什么？",
    "GPT-2 large 有 436 个参数张量、7.74 亿参数。按”原来”的训练器（每个张量 3 个内核、每个参数 40 字节），发射开销和读写时间各多少？LightSeq2 呢？",
    "一个 LayerNorm 的 γ = 1.5，学习率 3e-4，用 FP16 存储：更新会被吞掉吗？γ = 0.6 呢？在 γ = 0.6 时，实际加上去的量是多少？",
    "缓存分配器里有两段各 100 MB 的空闲块（不相邻），来了一个 150 MB 的请求。会发生什么？LightSeq2 的预先分配怎样避免它？",
    "05 号脚本里，1024 个 token 时训练器占基线的 32%，16384 个 token 时只占 3%。为什么？这对”梯度累积”有什么启示？",
    "注意力 dropout 反向和 softmax 反向可以融合成一个内核。下一步 ∇Q = ∇S·K 是一个 GEMM，能不能把 softmax 反向也融合进这个 GEMM？代价是什么？",
];

/// The lecture's reference answers in Chinese, in the same order.
const ANSWERS_ZH: [&str; 12] = [
    "s = Σ∇y·y = 0.5；∇x = y ⊙ (∇y − s) = (0.5 × 0.5, 0.3 × (−0.5), 0.2 × (−0.5)) = (0.25, −0.15, −0.10)，和为 0。原因：softmax 对所有输入同时加一个常数不变，所以沿 (1, 1, …, 1) 方向的导数为 0；代数上 Σⱼ yⱼ(∇yⱼ − s) = s − s·Σy = 0。",
    "Σᵢ∇xᵢ = r[Σg − (m·Σg + Σᵢx̂ᵢ·Σgx̂)/m] = r[Σg − Σg − 0] = 0，因为 Σx̂ᵢ = 0。直觉：LayerNorm 对每行同时加一个常数不变（减均值抵消了），所以梯度没有”整体平移”的分量。",
    "原来：拷梯度读 FP16 2 + 写 FP32 4 = 6；Adam 读 p′、g′、m、v 16，写 p′、m、v 12，共 28；拷参数读 4 + 写 2 = 6；合计 40。LightSeq2：读 p、g（FP16）4，读 m、v 8，写 p（FP16）2，写 m、v 8，合计 22。",
    "FP32 参数 + 梯度副本每个参数 8 字节：7e9 × 8 = 56 GB。只去掉梯度副本：7e9 × 4 = 28 GB。",
    "BLH = 4 × 2048 × 4096 × 2 字节 = 64 MiB；BL²N = 4 × 2048² × 32 × 2 字节 = 1024 MiB = 16 BLH。下界 3 × 64 + max(1024, 192) = 1216 MiB。",
    "BL²N ≥ 3BLH ⇔ LN ≥ 3H ⇔ L ≥ 3dₕ。dₕ = 64 时 L ≥ 192：几乎所有实际的训练长度下，分数矩阵那一块都更大。",
    "把 8192 行切成 P 段：第一段 P·d 个线程，每个线程累加 8192/P 行，写出 P × d 个部分和；第二段 d 个线程（或 d/32 个线程束）把每列的 P 个部分和加起来。P = 216 时第一段 221,184 个线程，每个约 38 步；第二段每列只加 216 个数，代价很小。",
    "原来：发射 3 × 436 × 4 μs = 5.2 ms，读写 40 × 7.74e8 ÷ 1.555e12 = 19.9 ms（合计 25.1 ms，与 05 号脚本一致）。LightSeq2：发射 4 μs，读写 22 × 7.74e8 ÷ 1.555e12 = 10.95 ms。",
    "γ = 1.5 在 [1, 2) 里，FP16 间距 2⁻¹⁰ ≈ 9.77e-4，一半 4.88e-4 > 3e-4：被吞掉。γ = 0.6 在 [0.5, 1) 里，间距 4.88e-4，一半 2.44e-4 < 3e-4：不会被吞掉，但舍入后实际加上的是一个整间距 4.88e-4（比 3e-4 多 63%）——FP16 存储不只吞掉小更新，还会放大”刚过半个间距”的更新。",
    "两个空闲块总量 200 MB 够，但都不够 150 MB 连续：分配器只好 cudaMalloc 一个新段，已占用涨到至少 350 MB。预先分配时，临时显存的布局在训练前就按最大形状规划好（§5.2），每批都用同样几块，不会切碎。",
    "训练器的时间只取决于参数个数（每步都要更新全部参数），GEMM 和非 GEMM 的时间随 token 数增长。梯度累积时，多个小批次只做一次更新，训练器被摊薄；但每个小批次本身的前向、反向更小、更受发射开销影响，融合内核更重要。",
    "可以，但 GEMM 需要 ∇S 的整块数据：要把 softmax 反向放进 GEMM 的分块循环里，在每个 tile 读进来时现算 y ⊙ (∇P − s)，而行和 s 需要整行的信息（可以提前单独算好，每行一个数）。这正是 FlashAttention 反向的做法（第 21 讲）：不把 ∇S 写回显存，代价是更复杂的内核，并且要重算 y。",
];
