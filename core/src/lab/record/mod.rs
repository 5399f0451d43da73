//! Recording any lab kernel on a real GPU: an instrumentation pass over naga's IR.
//!
//! [`instrument`] takes the kernel's WGSL and entry point and returns a new WGSL module (naga's
//! WGSL back end) that computes exactly what the original does and, in addition, appends one
//! record of [`RECORD_WORDS`] `u32` words to a storage buffer after every workgroup-memory load,
//! store and atomic, every storage-buffer atomic, every control barrier and every subgroup
//! operation — and, with
//! [`Scope::global`] (the scenes' recorded views, which draw global loads and stores too), after
//! every storage-buffer load and store. The buffer is one added
//! binding, `array<atomic<u32>>`, in a group/binding the module leaves free: word 0 is the
//! counter every record takes its ticket from (`atomicAdd`), records follow from word 1. A
//! record whose ticket is past the capacity (`(arrayLength - 1) / RECORD_WORDS`) is not
//! written — the shader guards the index — so the counter minus the capacity is how many were
//! dropped. [`decode::decode`] turns the words back into a [`crate::simt::Trace`] and per-line
//! counters by the simulator's own bank rule.
//!
//! The record, word by word ([`Word`]): ticket, linear workgroup id, `subgroup_id`,
//! `subgroup_invocation_id` (lane; both derived from `local_invocation_index` where the
//! workgroup is multi-dimensional, since WGSL forbids those builtins there), `subgroup_size`, source line (1-based), op ([`Op`], with
//! the access width in bytes from bit 8), site (which instrumented place in the module),
//! byte address in workgroup memory (the simulator's layout: variables in declaration order,
//! each at its alignment), the byte offset in a storage buffer (the site names the binding), or
//! the lane argument of a subgroup gather (the xor mask, the delta, the source lane), and the
//! value's bits (a 32-bit scalar in the first value word; a 2-vector of 32-bit components in
//! both, so that `vec2` reductions such as LayerNorm's (Σg, Σg·x̂) can be read back; 0
//! otherwise).
//!
//! Not recorded (and counted in [`Instrumented::unrecorded`]): accesses through a pointer passed
//! as a function argument, to a struct or matrix as a whole, and `workgroupUniformLoad`.

pub mod decode;
mod pass;

use serde::Serialize;

use super::dispatch::Binding;
use crate::Error;
use crate::simt::shuffle::ShuffleMode;

pub use pass::{instrument, instrument_with};

/// `u32` words per record.
pub const RECORD_WORDS: u32 = 11;

/// The position of each field in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Word {
    /// Order of the append over the whole dispatch (the atomic counter's value).
    Ticket = 0,
    /// `workgroup_id.x + num_workgroups.x × (workgroup_id.y + num_workgroups.y × workgroup_id.z)`.
    Workgroup = 1,
    /// The builtin `subgroup_id` (a one-dimensional workgroup); `local_invocation_index /
    /// subgroup_size` where WGSL forbids the builtin (a multi-dimensional workgroup).
    Subgroup = 2,
    /// The builtin `subgroup_invocation_id`, or `local_invocation_index % subgroup_size` as
    /// for [`Word::Subgroup`].
    Lane = 3,
    /// The builtin `subgroup_size`.
    SubgroupSize = 4,
    /// 1-based source line.
    Line = 5,
    /// [`Op`] in bits 0–7, access width in bytes from bit 8.
    Op = 6,
    /// Index of the instrumented place ([`Instrumented::sites`]).
    Site = 7,
    /// Byte address in workgroup memory, or the lane argument of a subgroup gather.
    Address = 8,
    /// The value's bits (a scalar, or a 2-vector's first component).
    Value = 9,
    /// A 2-vector's second component's bits (0 for a scalar).
    Value2 = 10,
}

/// What a record is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// A workgroup-memory load.
    SharedLoad = 1,
    /// A workgroup-memory store.
    SharedStore = 2,
    /// An atomic on workgroup memory.
    SharedAtomic = 3,
    /// A control barrier (`workgroupBarrier`, `storageBarrier`, `subgroupBarrier`).
    Barrier = 4,
    /// A subgroup reduction, scan, ballot or `subgroupElect`-like collective.
    SubgroupCollective = 5,
    /// A subgroup shuffle or broadcast (the address word holds its lane argument).
    SubgroupGather = 6,
    /// A storage-buffer load ([`Scope::global`]; the address word holds the byte offset in
    /// the buffer).
    GlobalLoad = 7,
    /// A storage-buffer store ([`Scope::global`]).
    GlobalStore = 8,
    /// An atomic on a storage buffer (always recorded: the simulator counts it among the
    /// line's atomics).
    GlobalAtomic = 9,
}

impl Op {
    /// The op of a record's op word (bits 0–7), `None` for an unknown code.
    pub fn from_word(w: u32) -> Option<Op> {
        Some(match w & 0xff {
            1 => Op::SharedLoad,
            2 => Op::SharedStore,
            3 => Op::SharedAtomic,
            4 => Op::Barrier,
            5 => Op::SubgroupCollective,
            6 => Op::SubgroupGather,
            7 => Op::GlobalLoad,
            8 => Op::GlobalStore,
            9 => Op::GlobalAtomic,
            _ => return None,
        })
    }
}

/// One instrumented place in the module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Site {
    /// 1-based source line.
    pub line: u32,
    /// What it records.
    pub op: Op,
    /// Bytes per lane of the access (0 for barriers and subgroup operations).
    pub width: u32,
    /// The storage buffer of a global load, store or atomic.
    pub binding: Option<Binding>,
    /// The shuffle of a subgroup gather that names a lane (`None` for other sites, and for
    /// `subgroupBroadcastFirst` and quad swaps).
    pub gather: Option<ShuffleMode>,
}

/// What the pass records beyond workgroup memory, barriers and subgroup operations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scope {
    /// Also every load and store of a storage buffer (their sectors are counted by
    /// [`crate::simt::global`]'s rule); atomics on storage buffers are recorded either way.
    pub global: bool,
}

/// The instrumented module.
#[derive(Debug, Clone, PartialEq)]
pub struct Instrumented {
    /// The instrumented kernel as WGSL (naga's WGSL back end).
    pub source: String,
    /// The entry point's name.
    pub entry: String,
    /// `@workgroup_size` of the entry point.
    pub workgroup_size: [u32; 3],
    /// Where the record buffer is bound.
    pub binding: Binding,
    /// Every instrumented place, by site index.
    pub sites: Vec<Site>,
    /// Accesses the pass could not instrument (see the module documentation).
    pub unrecorded: u32,
}

fn bad(msg: String) -> Error {
    Error::BadInput(msg)
}

#[cfg(test)]
mod tests;
