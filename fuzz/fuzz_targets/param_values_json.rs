//! The preset/session reader's core: JSON bytes → `ParamValues` (what a saved preset holds) →
//! `validated` against every scene's specs; for the first scene that accepts them, the scene
//! is run. warpscope has no preset file reader yet, so this fuzzes the part it will use.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::param_values_json(data, |_| true));
