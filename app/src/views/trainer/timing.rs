//! `trainer-timing`: per-tensor Adam, one-buffer Adam and a plain copy of the same bytes, timed
//! on this CPU, as bars with the runs' spread, and what the ratio means.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::{self, Bar, BarGroup, Scale, Series, bytes_text, format_sig};
use warpscope_core::trainer::timing::{Timing, TimingOutput};

/// The `trainer-timing` view.
#[derive(Debug, Clone, Default)]
pub struct TimingView;

impl View for TimingView {
    type Scene = warpscope_core::trainer::timing::TimingScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

fn num(v: f64) -> String {
    format_sig(v, 3)
}

/// Bytes per second as GB/s (10⁹ bytes per second).
fn gbps(t: &Timing) -> String {
    format_sig(t.bytes_per_s / 1e9, 3)
}

/// One bar: the median, the fastest and slowest run as a whisker, the bandwidth.
fn bar(ui: &egui::Ui, series: usize, t: &Timing) -> Bar {
    Bar {
        series,
        value: t.median_ms,
        range: Some((t.min_ms, t.max_ms)),
        text: trf!(
            ui,
            "{} ms ({}–{}) · {} GB/s",
            "{} ms（{}–{}）· {} GB/s",
            num(t.median_ms),
            num(t.min_ms),
            num(t.max_ms),
            gbps(t)
        ),
    }
}

/// `trainer-timing`.
fn draw(ui: &mut egui::Ui, o: &TimingOutput) {
    let per_param = o.bytes_per_step.checked_div(o.parameters).unwrap_or(0);
    ui.label(trf!(
        ui,
        "{}: {} tensors, {} parameters; one Adam step moves {} ({} B per parameter in f32: reads p, g, m, v, writes p, m, v). Median of {} runs after a warm-up, on this machine's CPU.",
        "{}：{} 个张量，{} 个参数；一步 Adam 读写 {}（f32 下每个参数 {} B：读 p、g、m、v，写 p、m、v）。{} 次计时的中位数（先预热一次），在本机 CPU 上。",
        o.model,
        o.tensors,
        o.parameters,
        bytes_text(o.bytes_per_step),
        per_param,
        o.runs
    ));
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Time per step, measured (bars: median; whiskers: fastest to slowest run)",
            "每步时间，实测（柱：中位数；须线：最快到最慢的一次）",
        ))
        .strong(),
    );
    let series = [
        (
            trf!(
                ui,
                "Adam once per tensor ({} calls)",
                "逐张量 Adam（{} 次调用）",
                o.tensors
            ),
            widgets::VERMILLION,
        ),
        (
            tr(
                ui,
                "Adam once over the buffer (1 call)",
                "整块 Adam（1 次调用）",
            )
            .to_owned(),
            widgets::BLUE,
        ),
        (
            tr(ui, "plain copy of the same bytes", "同样字节数的普通拷贝").to_owned(),
            widgets::GREY,
        ),
    ]
    .map(|(name, colour)| Series { name, colour });
    let groups = [
        (tr(ui, "per tensor", "逐张量"), 0, &o.per_tensor),
        (tr(ui, "one buffer", "整块"), 1, &o.whole_buffer),
        (tr(ui, "copy", "拷贝"), 2, &o.copy),
    ]
    .map(|(name, s, t)| BarGroup {
        name: name.to_owned(),
        bars: vec![bar(ui, s, t)],
    });
    widgets::grouped_bars(
        ui,
        &groups,
        &series,
        Scale::Linear,
        tr(ui, "milliseconds per step", "每步毫秒数"),
    );
    // What the ratio means, and whether the per-call cost is a result at all (core's rule: the
    // difference must exceed the larger of the two ways' spreads).
    let spread = (o.per_tensor.max_ms - o.per_tensor.min_ms)
        .max(o.whole_buffer.max_ms - o.whole_buffer.min_ms);
    let difference = o.per_tensor.median_ms - o.whole_buffer.median_ms;
    if o.overhead_resolved {
        ui.label(trf!(
            ui,
            "Per-tensor Adam takes {}× the one-buffer time: {} ms more, above the runs' spread of {} ms — over its {} calls, about {} µs per call beyond the arithmetic.",
            "逐张量 Adam 用时是整块的 {} 倍：多 {} ms，超过了各次计时的离散范围 {} ms——分摊到它的 {} 次调用，每次约 {} µs（运算本身之外）。",
            num(o.ratio),
            num(difference),
            num(spread),
            o.tensors,
            num(o.per_call_overhead_us)
        ));
    } else {
        ui.label(trf!(
            ui,
            "Per-tensor Adam takes {}× the one-buffer time, a difference of {} ms that is within the runs' own spread ({} ms): on this CPU, one more call costs less than this measurement can resolve, so no per-call cost is claimed — a function call on a CPU launches no kernel.",
            "逐张量 Adam 用时是整块的 {} 倍，相差 {} ms，没有超出各次计时本身的离散范围（{} ms）：在本机 CPU 上，多一次调用的代价小于这次测量的分辨能力，所以不给出每次调用的开销——CPU 上的函数调用不需要发射内核。",
            num(o.ratio),
            num(difference),
            num(spread)
        ));
    }
    if o.copy.bytes_per_s > 0.0 {
        ui.label(trf!(
            ui,
            "One-buffer Adam moves its bytes at {} GB/s, {}% of what a plain copy reaches here ({} GB/s): the update is a pass over memory with a few FLOPs per byte.",
            "整块 Adam 以 {0} GB/s 读写，是这里普通拷贝（{2} GB/s）的 {1}%：这个更新就是把内存扫一遍，每个字节只做几次运算。",
            gbps(&o.whole_buffer),
            num(100.0 * o.whole_buffer.bytes_per_s / o.copy.bytes_per_s),
            gbps(&o.copy)
        ));
    }
    let identical = if o.bitwise_identical {
        tr(
            ui,
            "Both ways leave p, m and v bitwise identical (the same arithmetic in the same order).",
            "两种方式得到的 p、m、v 逐位相同（同样的运算、同样的顺序）。",
        )
    } else {
        tr(
            ui,
            "The two ways' p, m, v differ in some bits, which they should not: the arithmetic is the same.",
            "两种方式得到的 p、m、v 有些位不同——本不应如此：运算是一样的。",
        )
    };
    let build = if o.release_build {
        tr(ui, "Timed in a release build.", "在 release 构建下计时。")
    } else {
        tr(
            ui,
            "Timed in a development build (slower, noisier): compare the ratios, not the absolute times.",
            "在开发构建下计时（更慢、更抖）：请比较比值，而不是绝对时间。",
        )
    };
    ui.label(egui::RichText::new(format!("{identical} {build}")).small());
}
