//! Atomic writes: a temporary file beside the target, then a rename; through a symbolic link,
//! the link's target is replaced.

use super::ExportError;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically: a temporary file beside it, then a rename. When `path`
/// is a symbolic link (to a link, …) the file it finally names is replaced — the temporary file
/// is made beside that target and renamed over it — so the link stays a link and its target is
/// what changes.
///
/// # Errors
/// [`ExportError::Write`] naming the path and the reason (missing folder, no permission, …).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    let err = |reason: String| ExportError::Write {
        path: path.to_owned(),
        reason,
    };
    let target = link_target(path).map_err(err)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(err(format!("the folder {} does not exist", dir.display())));
    }
    if target.is_dir() {
        return Err(err(
            "that is a folder; give a file name (e.g. fig.png), or use `export --all --out DIR`"
                .into(),
        ));
    }
    // A rename replaces a file whatever its own mode says: check the mode first, so a file the
    // user made read-only stays as it is, and a replaced file keeps the mode it had.
    let mode = existing_mode(&target).map_err(err)?;
    // The temporary file's own name means nothing to the user: say the folder and the reason.
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| {
        err(format!(
            "cannot create a file in {}: {}",
            dir.display(),
            e.kind()
        ))
    })?;
    std::io::Write::write_all(&mut tmp, bytes).map_err(|e| err(e.to_string()))?;
    // A new figure is an ordinary document: readable by others, like any file the user saves;
    // a replaced one keeps its own mode (a private 0600 file stays private).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode.unwrap_or(0o644)))
            .map_err(|e| err(e.to_string()))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    tmp.persist(&target).map_err(|e| err(e.error.to_string()))?;
    Ok(())
}

/// The permission bits of the file a write would replace (`None` when there is none yet).
///
/// # Errors
/// The target is read-only: a rename would replace it anyway, so it is refused by name.
fn existing_mode(target: &Path) -> Result<Option<u32>, String> {
    let Ok(meta) = std::fs::metadata(target) else {
        return Ok(None);
    };
    if meta.permissions().readonly() {
        return Err(
            "the file is read-only; make it writable (chmod u+w) or choose another name".into(),
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Ok(Some(meta.permissions().mode() & 0o7777))
    }
    #[cfg(not(unix))]
    Ok(None)
}

/// The path a write to `path` should replace: `path` itself unless it is a symbolic link, else
/// the file the chain of links finally names (which need not exist yet: a dangling link
/// creates its target). A loop of links is refused.
fn link_target(path: &Path) -> Result<PathBuf, String> {
    let mut current = path.to_owned();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let next = std::fs::read_link(&current)
                    .map_err(|e| format!("cannot read the link {}: {e}", current.display()))?;
                current = if next.is_absolute() {
                    next
                } else {
                    current
                        .parent()
                        .map_or_else(|| next.clone(), |d| d.join(&next))
                };
            }
            _ => return Ok(current),
        }
    }
    Err(format!(
        "{} is a loop of symbolic links (more than 40 deep)",
        path.display()
    ))
}
