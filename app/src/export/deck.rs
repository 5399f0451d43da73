//! A deck ([`warpscope_core::deck`]) as one self-contained, offline HTML file: every slide's
//! figures as inline SVG (the scene's view at the 16 : 9 slide size, [`FigureOptions::slide`]),
//! in both languages, stepped with the keyboard; nothing is fetched from the network. The fonts
//! the figures name (the GUI's own: Ubuntu, the CJK and DejaVu subsets) are embedded as `data:`
//! URLs, so the page reads the same on a machine without them.
//!
//! A slide with a range of events shows [`KEY_FRAMES`] key frames spread over it
//! ([`warpscope_core::deck::key_frames`]). In the page: ← → space PgUp PgDn step through the
//! frames and slides, Home and End go to the first and last, `L` switches the language; the
//! position is kept in the URL hash (`#3.1` = slide 3, frame 1; `zh` added for Chinese), so a
//! reload or a link opens the same figure. `#selftest` makes the page step through itself once
//! and write what it saw into `<pre id="selftest">` (a headless browser's test reads it).

use super::{ExportError, FigureOptions, Lang, Theme, prepare, prepared_svg, steps};
use warpscope_core::deck::{Deck, key_frames};

/// Key frames a slide with a range of events shows, at most.
pub const KEY_FRAMES: usize = 4;

/// One figure of a slide: the event it shows (if any) and its SVG in English and Chinese.
struct Figure {
    event: Option<usize>,
    svg: [String; 2],
}

/// The figures of every slide of `deck`, drawn headless. `on_figure(done, total)` is called
/// after each (the CLI prints progress with it).
///
/// # Errors
/// [`ExportError::Scene`] naming the slide (`slides[3]`) and its key: the scene's own errors,
/// or `events` outside the scene's trace; rendering errors.
fn figures(
    deck: &Deck,
    on_figure: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Vec<Figure>>, ExportError> {
    let total = deck.figure_count(KEY_FRAMES);
    let mut done = 0;
    let mut out = Vec::with_capacity(deck.slides.len());
    for (i, slide) in deck.slides.iter().enumerate() {
        let at = |key: &str, e: warpscope_core::Error| {
            ExportError::Scene(warpscope_core::Error::BadInput(format!(
                "deck: slides[{i}] `{key}`: {e}"
            )))
        };
        let scene = warpscope_core::scene::find(&slide.scene).map_err(|e| at("scene", e))?;
        let mut state = prepare(
            scene,
            slide.params.clone(),
            slide.input.clone().map(std::sync::Arc::new),
        )
        .map_err(|e| match e {
            ExportError::Scene(e) => at("params", e),
            other => other,
        })?;
        let n = steps(&state);
        let events: Vec<Option<usize>> = match slide.events {
            None => vec![(n > 0).then_some(0)],
            Some((from, to)) => {
                if n == 0 || to >= n {
                    let expected = if n == 0 {
                        warpscope_core::error::Expected::custom(
                            format!("scene `{}` has no trace to step through", scene.id),
                            format!("场景 `{}` 没有可逐步播放的轨迹", scene.id),
                        )
                    } else {
                        warpscope_core::error::Expected::custom(
                            format!("scene `{}` has {n} trace events, 0..={}", scene.id, n - 1),
                            format!("场景 `{}` 有 {n} 个轨迹事件，0..={}", scene.id, n - 1),
                        )
                    };
                    return Err(at(
                        "events",
                        warpscope_core::Error::invalid(
                            "events",
                            format!("[{from}, {to}]"),
                            expected,
                        ),
                    ));
                }
                key_frames(from, to, KEY_FRAMES)
                    .into_iter()
                    .map(Some)
                    .collect()
            }
        };
        let mut figs = Vec::with_capacity(events.len());
        for event in events {
            let svg = [Lang::En, Lang::Zh].map(|lang| {
                let opts = FigureOptions {
                    step: event,
                    theme: Theme::Slides,
                    lang,
                    caption: false,
                    slide: true,
                    ..FigureOptions::default()
                };
                prepared_svg(&mut state, &opts)
            });
            figs.push(Figure { event, svg });
            done += 1;
            on_figure(done, total);
        }
        out.push(figs);
    }
    Ok(out)
}

/// `text` with `&`, `<`, `>` and `"` escaped for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `svg` for inlining as figure `k` of the page: its element ids (clip paths) made unique in the
/// document, its XML-free `<svg>` element scaled by the page's CSS.
fn inline_svg(svg: &str, k: usize) -> String {
    let svg = svg
        .replace("id=\"", &format!("id=\"f{k}-"))
        .replace("url(#", &format!("url(#f{k}-"));
    match svg.find("<svg") {
        Some(at) => svg[at..].to_owned(),
        None => svg,
    }
}

/// The deck as one self-contained HTML page (see the module's documentation).
/// `on_figure(done, total)` is called after each figure is drawn.
///
/// # Errors
/// As [`figures`].
pub fn deck_html(
    deck: &Deck,
    on_figure: &mut dyn FnMut(usize, usize),
) -> Result<String, ExportError> {
    let figures = figures(deck, on_figure)?;
    let both = |en: &str, zh: &str, tag: &str| {
        format!(
            "<{tag} lang=\"en\">{}</{tag}><{tag} lang=\"zh\">{}</{tag}>",
            escape(en),
            escape(zh)
        )
    };
    let mut body = String::new();
    let mut k = 0;
    for (i, (slide, figs)) in deck.slides.iter().zip(&figures).enumerate() {
        body.push_str(&format!(
            "<section class=\"slide\" id=\"slide-{i}\" data-frames=\"{}\">\n<h1>{}</h1>\n",
            figs.len(),
            both(&slide.title.en, &slide.title.zh, "span")
        ));
        for (f, fig) in figs.iter().enumerate() {
            let event = fig.event.map_or(String::new(), |e| {
                both(&format!("event {e}"), &format!("第 {e} 个事件"), "span")
            });
            body.push_str(&format!(
                "<figure data-frame=\"{f}\"><div lang=\"en\">{}</div><div lang=\"zh\">{}</div><figcaption>{event}</figcaption></figure>\n",
                inline_svg(&fig.svg[0], k),
                inline_svg(&fig.svg[1], k + 1),
            ));
            k += 2;
        }
        if let Some(n) = &slide.notes {
            body.push_str(&format!(
                "<aside class=\"notes\">{}</aside>\n",
                both(&n.en, &n.zh, "p")
            ));
        }
        body.push_str("</section>\n");
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{fonts}{STYLE}</style>\n</head>\n<body class=\"en\">\n\
         <header>{deck_title}<span id=\"pos\"></span></header>\n<main>\n{body}</main>\n\
         <pre id=\"selftest\"></pre>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
        title = escape(&deck.title.en),
        fonts = font_faces(),
        deck_title = both(&deck.title.en, &deck.title.zh, "span"),
    ))
}

/// `@font-face` rules for the fonts the figures name, embedded as base64 `data:` URLs.
fn font_faces() -> String {
    use base64::Engine as _;
    let ubuntu = egui::epaint::text::FontDefinitions::default()
        .font_data
        .get("Ubuntu-Light")
        .map(|d| (*d.font).as_ref().to_vec())
        .unwrap_or_default();
    let fonts: [(&str, &[u8], &str); 3] = [
        ("Ubuntu", &ubuntu, "truetype"),
        ("Noto Sans CJK SC", crate::fonts::NOTO_SC_SUBSET, "opentype"),
        ("DejaVu Sans", crate::fonts::DEJAVU_SUBSET, "truetype"),
    ];
    fonts
        .iter()
        .filter(|(_, bytes, _)| !bytes.is_empty())
        .map(|(family, bytes, format)| {
            format!(
                "@font-face{{font-family:'{family}';src:url(data:font/{};base64,{}) format('{format}')}}\n",
                if *format == "opentype" { "otf" } else { "ttf" },
                base64::engine::general_purpose::STANDARD.encode(bytes)
            )
        })
        .collect()
}

/// The page's style: one slide and one frame at a time, the figure as large as the window
/// allows at 16 : 9, the other language hidden.
const STYLE: &str = "
html,body{margin:0;background:#f8f8f8;color:#222;font-family:Ubuntu,'Noto Sans CJK SC','DejaVu Sans',sans-serif}
header{display:flex;justify-content:space-between;padding:4px 12px;font-size:14px;color:#666}
body.en [lang=zh],body.zh [lang=en]{display:none}
.slide{display:none;padding:0 12px}
.slide.current{display:block}
.slide h1{font-size:28px;margin:4px 0 8px}
figure{display:none;margin:0}
figure.current{display:block}
figure svg{display:block;width:100%;height:auto;max-height:calc(100vh - 150px)}
figcaption{font-size:14px;color:#666;text-align:right}
.notes{font-size:18px;color:#333;max-width:70em}
#selftest{display:none}
";

/// The page's script: stepping, the language switch, the hash, and the self-test.
const SCRIPT: &str = r#"
(function () {
  var slides = Array.prototype.slice.call(document.querySelectorAll('.slide'));
  var stops = [];
  slides.forEach(function (s, i) {
    var n = parseInt(s.getAttribute('data-frames'), 10) || 1;
    for (var f = 0; f < n; f++) stops.push([i, f]);
  });
  var at = 0, lang = 'en';
  function show() {
    var s = stops[at];
    slides.forEach(function (el, i) {
      el.classList.toggle('current', i === s[0]);
      Array.prototype.forEach.call(el.querySelectorAll('figure'), function (fig, f) {
        fig.classList.toggle('current', i === s[0] && f === s[1]);
      });
    });
    document.body.className = lang;
    document.documentElement.lang = lang;
    document.getElementById('pos').textContent = (s[0] + 1) + ' / ' + slides.length;
    var hash = '#' + s[0] + '.' + s[1] + (lang === 'zh' ? '.zh' : '');
    if (location.hash !== hash && location.hash !== '#selftest') history.replaceState(null, '', hash);
  }
  function go(to) { at = Math.max(0, Math.min(stops.length - 1, to)); show(); }
  function fromHash() {
    var m = /^#(\d+)\.(\d+)(\.zh)?$/.exec(location.hash);
    if (!m) return;
    lang = m[3] ? 'zh' : 'en';
    for (var k = 0; k < stops.length; k++) {
      if (stops[k][0] === +m[1] && stops[k][1] === +m[2]) { at = k; return; }
    }
  }
  function key(e) {
    var k = e.key;
    if (k === 'ArrowRight' || k === ' ' || k === 'PageDown') go(at + 1);
    else if (k === 'ArrowLeft' || k === 'PageUp') go(at - 1);
    else if (k === 'Home') go(0);
    else if (k === 'End') go(stops.length - 1);
    else if (k === 'l' || k === 'L') { lang = lang === 'en' ? 'zh' : 'en'; show(); }
    else return;
    e.preventDefault();
  }
  document.addEventListener('keydown', key);
  window.addEventListener('hashchange', function () { fromHash(); show(); });
  fromHash();
  show();
  if (location.hash === '#selftest') {
    var press = function (k) { key({ key: k, preventDefault: function () {} }); };
    var visible = function () {
      return Array.prototype.filter.call(document.querySelectorAll('figure'), function (f) {
        return f.offsetParent !== null;
      }).length;
    };
    var seen = [], ok = true;
    press('Home');
    for (var k = 0; k < stops.length; k++) {
      var cur = document.querySelector('.slide.current');
      seen.push(slides.indexOf(cur));
      if (visible() !== 1) ok = false;
      press('ArrowRight');
    }
    press('End');
    var last = at;
    press('PageUp');
    var back = at;
    press('L');
    var zhShown = document.querySelector('.slide.current h1 [lang=zh]').offsetParent !== null;
    var enHidden = document.querySelector('.slide.current h1 [lang=en]').offsetParent === null;
    document.getElementById('selftest').textContent = JSON.stringify({
      slides: slides.length,
      stops: stops.length,
      distinct: seen.filter(function (v, i) { return seen.indexOf(v) === i; }).length,
      oneFigure: ok,
      last: last,
      back: back,
      zh: zhShown && enHidden
    });
  }
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inlined_figures_get_their_own_ids() {
        let svg =
            "<?xml version=\"1.0\"?><svg><clipPath id=\"c0\"/><g clip-path=\"url(#c0)\"/></svg>";
        let s = inline_svg(svg, 7);
        assert!(s.starts_with("<svg"), "{s}");
        assert!(
            s.contains("id=\"f7-c0\"") && s.contains("url(#f7-c0)"),
            "{s}"
        );
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
