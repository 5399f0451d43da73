//! Snapshot reader: any bytes → `parse` (the opcode guard, then `serde-pickle`, then the
//! snapshot layout) and, when it decodes, `summarise` (statistics and the allocator replay).
//! Must never panic, hang or allocate without bound.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::snapshot(data));
