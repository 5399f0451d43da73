//! PyTorch's CUDA memory snapshots: the files `torch.cuda.memory._snapshot()` /
//! `_dump_snapshot()` write, read without executing anything from them, and what the memory lab's
//! `memory-snapshot` and `memory-diff` scenes compute from them.
//!
//! - [`pickle`]: every opcode of a pickle checked before decoding (nothing that imports or
//!   calls; sizes, nesting and counts bounded).
//! - [`unpickle`]: the fast decoder of PyTorch's binary pickles, indexing stack frames into
//!   [`frames`]'s `FrameTable` while it reads.
//! - [`snapshot`] (`memory-snapshot`): the file's segments, blocks and trace, replayed through
//!   [`crate::caching`], the allocator state at any event, the checks and the what-if replay.
//! - [`timeline`]: reserved and live bytes after every trace event.
//! - [`active`]: the active memory timeline's allocation intervals.
//! - [`diff`] (`memory-diff`): two snapshots compared.
//!
//! Units: bytes are bytes; MiB = 2²⁰ bytes ([`crate::memory::MIB`]).

pub mod active;
pub mod diff;
pub mod frames;
pub mod pickle;
pub mod snapshot;
pub mod timeline;
pub mod unpickle;
