//! The session/preset reader (`warpscope … --preset FILE`): bytes → `Session::from_bytes` →
//! the scene it names, run with its validated parameters.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::session(data, |_| true));
