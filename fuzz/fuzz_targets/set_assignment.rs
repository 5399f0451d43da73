//! The `--set` parser: the first byte picks a scene, the rest is newline-separated `key=value`
//! assignments parsed by `ParamValues::set_assignment` against that scene's specs; when every
//! assignment parses, the scene is run (except `memory-snapshot`, whose path is not followed).
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::set_assignment(data, |_| true));
