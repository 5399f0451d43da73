//! Embeds the bundled presets: every `assets/presets/*.json` becomes one entry of
//! `$OUT_DIR/presets.rs`, so adding a preset is adding a file.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // The crate's directory as cargo gives it when it runs this script, not as it was when the
    // script was compiled: checkouts sharing one target directory share the compiled script.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let dir = Path::new(&manifest).join("../assets/presets");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(d) => d
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect(),
        Err(e) => {
            // No presets would build a warpscope whose *Examples* are silently empty.
            println!(
                "cargo::error=cannot read the presets in {}: {e}",
                dir.display()
            );
            return;
        }
    };
    files.sort();
    let mut out = String::from("&[\n");
    for f in &files {
        println!("cargo::rerun-if-changed={}", f.display());
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = f
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        // The path is spelt from the crate's own directory at compile time, not written out
        // here: two checkouts sharing one target directory share this script's output.
        let _ = writeln!(
            out,
            "    ({name:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/../assets/presets/\", {file:?}))),"
        );
    }
    out.push(']');
    let target = Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("presets.rs");
    if let Err(e) = std::fs::write(&target, out) {
        println!("cargo::warning=cannot write {}: {e}", target.display());
    }
}
