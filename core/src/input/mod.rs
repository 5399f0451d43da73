//! The one door every input file goes through (snapshots, presets, sessions, [`json`] inputs): its type and size
//! are checked *before* it is opened, it is opened without blocking, checked again through the
//! open handle, and read through a bounded reader.
//!
//! So a FIFO (which would block `open` until a writer comes), a device (`/dev/zero` reports size
//! 0 and never ends), a socket or a directory is refused at once with its path and kind named,
//! and a file that grows or is swapped between the check and the read is still never read past
//! its limit.

pub mod expr;
pub mod json;
pub mod memory;
pub mod nonfinite;
pub mod strict;

use std::io::Read as _;
use std::path::Path;

use crate::Error;

/// What kind of file `meta` describes, in words (`a FIFO`, `a character device`, …).
fn kind(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// `limit` bytes in words: `64 KiB`, `1 GiB`, or bytes.
fn size_words(limit: u64) -> String {
    if limit >= 1 << 30 && limit.is_multiple_of(1 << 30) {
        format!("{limit} bytes ({} GiB)", limit >> 30)
    } else if limit >= 1 << 20 && limit.is_multiple_of(1 << 20) {
        format!("{limit} bytes ({} MiB)", limit >> 20)
    } else if limit >= 1 << 10 && limit.is_multiple_of(1 << 10) {
        format!("{limit} bytes ({} KiB)", limit >> 10)
    } else {
        format!("{limit} bytes")
    }
}

/// Checks that `meta` is a regular file of at most `limit` bytes.
fn check(meta: &std::fs::Metadata, path: &Path, limit: u64, what: &str) -> Result<(), Error> {
    if !meta.file_type().is_file() {
        return Err(Error::BadInput(format!(
            "{what} `{}` is {}, not a regular file; warpscope reads only regular files",
            path.display(),
            kind(meta)
        )));
    }
    if meta.len() > limit {
        return Err(Error::BadInput(format!(
            "{what} `{}` is {} bytes; warpscope reads files up to {}",
            path.display(),
            meta.len(),
            size_words(limit)
        )));
    }
    Ok(())
}

/// Reads the regular file at `path` (symlinks followed), at most `limit` bytes. `what` names it
/// in messages (`snapshot`, `preset`).
///
/// The path's type and size are checked before it is opened; it is then opened non-blocking
/// (`O_NONBLOCK`: a FIFO swapped in after the check cannot block the open), its type and size
/// are checked again through the handle, and at most `limit + 1` bytes are read.
///
/// # Errors
/// [`Error::BadInput`] naming the path: missing or unreadable, not a regular file (a directory,
/// FIFO, device or socket — saying which), or over `limit` bytes.
pub fn read_regular(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>, Error> {
    let cannot = |verb: &str, e: std::io::Error| {
        Error::BadInput(format!("cannot {verb} {what} `{}`: {e}", path.display()))
    };
    let open_err = |e| cannot("open", e);
    check(
        &std::fs::metadata(path).map_err(open_err)?,
        path,
        limit,
        what,
    )?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(open_err)?;
    // The path may have been replaced between the check and the open.
    check(&file.metadata().map_err(open_err)?, path, limit, what)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| cannot("read", e))?;
    if bytes.len() as u64 > limit {
        return Err(Error::BadInput(format!(
            "{what} `{}` grew past {} while it was read; warpscope reads files up to that size",
            path.display(),
            size_words(limit)
        )));
    }
    Ok(bytes)
}

/// A file's bytes: memory-mapped, or read into memory for small files.
pub enum FileBytes {
    /// Mapped read-only (files of at least [`MAP_FROM`] bytes).
    Mapped(memmap2::Mmap),
    /// Read.
    Read(Vec<u8>),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Read(v) => v,
        }
    }
}

/// Files from this size on are memory-mapped rather than read (bytes, 16 MiB).
pub const MAP_FROM: u64 = 16 << 20;

/// [`read_regular`] without a size limit, memory-mapping a file of [`MAP_FROM`] bytes or more
/// instead of copying it into memory: the same checks before and after the non-blocking open
/// (a FIFO or device is refused by name), then the pages are the operating system's page cache
/// and a multi-gigabyte file costs no heap.
///
/// A mapped file must not be truncated by another program while it is read (the read would
/// then fault); snapshots are written once and read afterwards.
///
/// # Errors
/// As [`read_regular`], and when the file cannot be mapped.
pub fn map_regular(path: &Path, what: &str) -> Result<FileBytes, Error> {
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::BadInput(format!("cannot open {what} `{}`: {e}", path.display())))?;
    check(&meta, path, u64::MAX, what)?;
    if meta.len() < MAP_FROM {
        return read_regular(path, MAP_FROM, what).map(FileBytes::Read);
    }
    let cannot = |verb: &str, e: std::io::Error| {
        Error::BadInput(format!("cannot {verb} {what} `{}`: {e}", path.display()))
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| cannot("open", e))?;
    check(
        &file.metadata().map_err(|e| cannot("open", e))?,
        path,
        u64::MAX,
        what,
    )?;
    // SAFETY: the mapping is read-only and lives in the returned value; the file was checked to
    // be a regular file through this handle. Another process truncating it while it is mapped
    // would fault the reader — the documented limitation of mapping.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| cannot("map", e))?;
    Ok(FileBytes::Mapped(map))
}

/// Memory this process may still allocate (bytes; `None` where nothing is known): the least
/// of `MemAvailable`, its rlimits and its cgroup's limit ([`memory::headroom`], which also
/// names the limit).
pub fn memory_available() -> Option<u64> {
    memory::headroom().map(|h| h.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn temp_dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("warpscope-input-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn regular_files_are_read_and_bounded() {
        let d = temp_dir("regular");
        let p = d.join("a.json");
        std::fs::write(&p, b"hello").unwrap();
        assert_eq!(read_regular(&p, 5, "preset").unwrap(), b"hello");
        let e = read_regular(&p, 4, "preset").unwrap_err().to_string();
        assert!(e.contains("a.json") && e.contains("5 bytes"), "{e}");
        // A symlink is followed to the file it names.
        #[cfg(unix)]
        {
            let l = d.join("link.json");
            std::os::unix::fs::symlink(&p, &l).unwrap();
            assert_eq!(read_regular(&l, 64, "preset").unwrap(), b"hello");
        }
        let e = read_regular(&d.join("missing"), 64, "preset")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cannot open preset") && e.contains("missing"),
            "{e}"
        );
        let e = read_regular(&d, 64, "preset").unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn fifos_and_devices_are_refused_at_once() {
        let d = temp_dir("fifo");
        let fifo = d.join("f.pickle");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = Instant::now();
        let e = read_regular(&fifo, 1 << 30, "snapshot")
            .unwrap_err()
            .to_string();
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(e.contains("FIFO") && e.contains("f.pickle"), "{e}");
        for dev in ["/dev/zero", "/dev/urandom", "/dev/null"] {
            let started = Instant::now();
            let e = read_regular(Path::new(dev), 64 * 1024, "preset")
                .unwrap_err()
                .to_string();
            assert!(started.elapsed() < Duration::from_secs(1));
            assert!(e.contains("character device") && e.contains(dev), "{e}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
