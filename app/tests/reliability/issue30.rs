//! Issue 30, "reliability III": each fixed item's reproduction, run through the binary (the
//! helpers are the parent's). A refusal exits with status 2 and names what to change; work that
//! could not be done exits with status 1 (README's exit-code rule).

use super::*;

// Issue 30, item 12: an export respects the permissions of the file it would replace.

#[cfg(unix)]
#[test]
fn issue30_item12_a_read_only_target_is_refused_and_a_replaced_file_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let ro = dir.path().join("ro.png");
    std::fs::write(&ro, "keep\n").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = warpscope(&["export", "banks", "--out", s(&ro)]);
    let err = String::from_utf8_lossy(&out.stderr);
    // A write that cannot be done is a runtime failure: status 1 (README's exit-code rule).
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("read-only") && err.contains("ro.png"), "{err}");
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep\n");
    let mode = std::fs::metadata(&ro).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o444);

    let private = dir.path().join("private.svg");
    std::fs::write(&private, "old").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = warpscope(&["export", "banks", "--out", s(&private)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&private)
            .unwrap()
            .starts_with("<svg")
    );
    let mode = std::fs::metadata(&private).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the replaced file keeps its mode");

    // A new file is an ordinary document: 0644 (the umask aside, which the rename ignores).
    let fresh = dir.path().join("fresh.svg");
    let out = warpscope(&["export", "banks", "--out", s(&fresh)]);
    assert!(out.status.success());
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
}

// Issue 30, item 14: names a file supplies, with characters XML cannot hold.

#[test]
fn issue30_item14_control_characters_in_names_leave_a_well_formed_svg_and_a_png() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("plan.json");
    // U+0001, BEL, ESC, NUL and U+FFFF in tensor names, as JSON escapes.
    std::fs::write(
        &input,
        r#"{"tensors": [{"name": "a\u0001\u0007", "size_bytes": 4096, "first_op": 0, "last_op": 1},
                        {"name": "b\u001b\u0000\uffff", "size_bytes": 4096, "first_op": 1, "last_op": 2}]}"#,
    )
    .unwrap();
    let svg = dir.path().join("plan.svg");
    let out = warpscope(&[
        "export",
        "memory-plan",
        "--input",
        s(&input),
        "--out",
        s(&svg),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text);
    assert!(doc.is_ok(), "not well-formed: {:?}", doc.err());
    assert!(
        text.contains(r"a\u{1}\u{7}"),
        "the characters are shown by their code"
    );
    let png = dir.path().join("plan.png");
    let out = warpscope(&[
        "export",
        "memory-plan",
        "--input",
        s(&input),
        "--out",
        s(&png),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let outlined = dir.path().join("outlined.svg");
    let out = warpscope(&[
        "export",
        "memory-plan",
        "--input",
        s(&input),
        "--outline-text",
        "--out",
        s(&outlined),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
