#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `warpscope deck`: a deck file becomes one offline HTML page with every slide's figures inline
//! in both languages; bad slides are refused naming the slide and key. Where Chromium is
//! installed, the page is loaded headless and steps through itself (`#selftest`).

mod common;
use common::warpscope;

/// Three slides: a scene without a stepper, a range of 10 events, a preset at one event.
const DECK: &str = r#"{"title": {"en": "Small", "zh": "小"}, "slides": [
 {"scene": "banks", "title": {"en": "Banks", "zh": "存储体"}, "notes": {"en": "n", "zh": "注"}},
 {"scene": "reduction", "params": {"threads": 64}, "events": [0, 9], "title": {"en": "Red", "zh": "归约"}},
 {"preset": "reduction-partial-warp-48", "event": 2, "title": {"en": "P", "zh": "预设"}}]}"#;
/// Slides in [`DECK`].
const SLIDES: usize = 3;
/// Figures in [`DECK`]: 1, 4 key frames of the 10 events (`KEY_FRAMES`), 1.
const FIGURES: usize = 1 + 4 + 1;

#[test]
fn a_deck_is_one_offline_page_that_steps_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let deck = dir.path().join("d.json");
    std::fs::write(&deck, DECK).unwrap();
    let html = dir.path().join("d.html");
    let r = warpscope(&[
        "deck",
        deck.to_str().unwrap(),
        "--out",
        html.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stdout).contains("wrote "));
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("<section class=\"slide\"").count(), SLIDES);
    assert_eq!(page.matches("<svg").count(), 2 * FIGURES, "both languages");
    assert!(
        page.contains("width=\"1920\" height=\"1080\""),
        "slide-sized figures"
    );
    // The figures' fonts travel with the page (Latin, CJK, symbols).
    assert_eq!(page.matches("@font-face").count(), 3);
    assert!(page.contains("font-family:'Noto Sans CJK SC';src:url(data:font/otf;base64,"));
    // Nothing to fetch: no links, sources or network calls (the SVG namespace is a name).
    for fetch in [
        "<link",
        " src=",
        "href=",
        "fetch(",
        "XMLHttpRequest",
        "@import",
    ] {
        assert!(!page.contains(fetch), "the page fetches nothing: {fetch}");
    }
    let Some(chromium) = ["chromium", "chromium-browser"].into_iter().find(|b| {
        std::process::Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }) else {
        println!("skipped the browser check: no chromium installed (apt-get install chromium)");
        return;
    };
    let out = std::process::Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}#selftest", html.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom.find("<pre id=\"selftest\">").expect("the page loaded") + 19;
    let result = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let v: serde_json::Value = serde_json::from_str(result).expect("the self-test ran");
    assert_eq!(v["slides"], SLIDES, "{v}");
    assert_eq!(v["stops"], FIGURES, "one stop per figure: {v}");
    assert_eq!(v["distinct"], SLIDES, "stepping visits every slide: {v}");
    assert_eq!(v["oneFigure"], true, "one figure shown at a time: {v}");
    assert_eq!(v["last"], FIGURES - 1, "End goes to the last figure: {v}");
    assert_eq!(v["back"], FIGURES - 2, "PgUp steps back: {v}");
    assert_eq!(v["zh"], true, "L switches to Chinese: {v}");
}

#[test]
fn a_bad_slide_is_refused_naming_the_slide_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let deck = dir.path().join("d.json");
    let html = dir.path().join("d.html");
    let t = r#""title": {"en": "t", "zh": "题"}"#;
    for (slide, key) in [
        (
            r#"{"scene": "banks", "params": {"pad": 99}, TITLE}"#,
            "`params`",
        ),
        (
            r#"{"scene": "reduction", "events": [0, 100000], TITLE}"#,
            "`events`",
        ),
        (r#"{"scene": "banks", "event": 3, TITLE}"#, "`events`"),
    ] {
        let text = format!(
            r#"{{{t}, "slides": [{{"scene": "banks", {t}}}, {}]}}"#,
            slide.replace("TITLE", t)
        );
        std::fs::write(&deck, text).unwrap();
        let r = warpscope(&[
            "deck",
            deck.to_str().unwrap(),
            "--out",
            html.to_str().unwrap(),
        ]);
        let e = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{e}");
        assert!(e.contains("slides[1]") && e.contains(key), "{e}");
        assert!(!html.exists(), "nothing written");
    }
    let r = warpscope(&["deck", "--out", dir.path().join("d.txt").to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2));
}
