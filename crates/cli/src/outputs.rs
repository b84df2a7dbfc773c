//! What `nonzero optimize` writes, and what it refuses to. Nothing the user owns is destroyed:
//! an output that is the input (or the other output) is refused before anything is read,
//! whatever path names it (a link, `./m.onnx`, an absolute path); an output that exists but is
//! not a regular file is refused; each output goes to a temporary file next to it, which is
//! renamed into place only once the whole run has succeeded ([`Staged::commit`]), keeps the
//! permissions of the file it replaces, and is removed on an error, a panic, SIGINT or SIGTERM.

use anyhow::{anyhow, bail, Context, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use tempfile::NamedTempFile;

/// The temporary files not yet renamed into place, which SIGINT and SIGTERM remove.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn pending() -> MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs, once, a handler for SIGINT and SIGTERM that removes the pending temporary files,
/// then ends the process by the same signal (the shell sees 130 or 143).
#[cfg(unix)]
pub fn remove_temporaries_on_signals() -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    let mut result = Ok(());
    INSTALLED.call_once(|| {
        let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
            Ok(s) => s,
            Err(e) => {
                result = Err(anyhow!("installing the SIGINT and SIGTERM handler: {e}"));
                return;
            }
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // The lock is held to the end: no temporary file is made or renamed meanwhile.
                let files = pending();
                for path in files.iter() {
                    let _ = std::fs::remove_file(path);
                }
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
    });
    result
}

#[cfg(not(unix))]
pub fn remove_temporaries_on_signals() -> Result<()> {
    Ok(())
}

/// What a path names: an existing file (device and inode on Unix, the canonical path
/// elsewhere), or, where nothing exists yet, its canonical directory and its name.
#[derive(Debug, PartialEq, Eq)]
enum FileId {
    #[cfg(unix)]
    Existing(u64, u64),
    #[cfg(not(unix))]
    Existing(PathBuf),
    New(PathBuf),
}

fn file_id(path: &Path, what: &str) -> Result<FileId> {
    if let Ok(meta) = std::fs::metadata(path) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            return Ok(FileId::Existing(meta.dev(), meta.ino()));
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            return Ok(FileId::Existing(std::fs::canonicalize(path)?));
        }
    }
    let name = path
        .file_name()
        .ok_or_else(|| anyhow!("'{}' is not a file path", path.display()))?;
    let dir = directory_of(path);
    let dir = std::fs::canonicalize(&dir).with_context(|| {
        format!(
            "cannot write the {what} '{}': no directory '{}'",
            path.display(),
            dir.display()
        )
    })?;
    Ok(FileId::New(dir.join(name)))
}

fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// What an existing path that is not a regular file is, in words.
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_file() {
        return None;
    }
    if kind.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if kind.is_char_device() {
            return Some("a character device");
        }
        if kind.is_block_device() {
            return Some("a block device");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// Refuses, before anything is read, an output or report path that names the input file or
/// the other output, and an output that exists but is not a regular file.
pub fn refuse_clobbering(input: &Path, output: &Path, report: Option<&Path>) -> Result<()> {
    let input_id = file_id(input, "input").ok();
    let output_id = file_id(output, "output")?;
    if input_id.as_ref() == Some(&output_id) {
        bail!(
            "the output '{}' is the input '{}' (the same file): nonzero optimize never overwrites its input; name another output file",
            output.display(),
            input.display()
        );
    }
    if let Some(report) = report {
        let report_id = file_id(report, "report")?;
        if input_id.as_ref() == Some(&report_id) {
            bail!(
                "the report '{}' (--report-json) is the input '{}' (the same file): nonzero optimize never overwrites its input; name another report file",
                report.display(),
                input.display()
            );
        }
        if report_id == output_id {
            bail!(
                "the report '{}' (--report-json) is the output '{}' (the same file): the model and the report need two files",
                report.display(),
                output.display()
            );
        }
    }
    for (what, path) in [("output", Some(output)), ("report", report)] {
        let Some(path) = path else { continue };
        if let Some(kind) = std::fs::metadata(path).ok().as_ref().and_then(not_regular) {
            bail!(
                "the {what} '{}' exists and is {kind}, not a regular file: nonzero optimize writes a new file and renames it into place, which would replace it; name a regular file or a new path",
                path.display()
            );
        }
    }
    Ok(())
}

/// An output written to a temporary file beside it, not yet in place. Dropped without
/// [`Staged::commit`], the temporary file is removed.
#[derive(Debug)]
pub struct Staged {
    temp: Option<NamedTempFile>,
    target: PathBuf,
}

/// The file a write to `path` replaces: a symbolic link's target (the link stays a link).
fn write_target(path: &Path) -> PathBuf {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_link {
        if let Ok(target) = std::fs::canonicalize(path) {
            return target;
        }
    }
    path.to_path_buf()
}

/// Writes `path`'s new content to a temporary file in its directory with `write` (through a
/// buffer), synced to disk, with the permissions of the file it will replace (or the umask's
/// for a new one).
pub fn stage(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<&File>) -> std::io::Result<()>,
) -> Result<Staged> {
    let target = write_target(path);
    let name = target
        .file_name()
        .ok_or_else(|| anyhow!("'{}' is not a file path", path.display()))?;
    let prefix = format!(".{}.", name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Subject to the umask, as a new file made by any other tool.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let staged = {
        // Under the lock: a signal never comes between the file's creation and its record.
        let mut files = pending();
        let temp = builder
            .tempfile_in(directory_of(&target))
            .with_context(|| format!("cannot write the output '{}'", path.display()))?;
        files.push(temp.path().to_path_buf());
        Staged {
            temp: Some(temp),
            target,
        }
    };
    let temp = staged.temp.as_ref().expect("just made");
    if let Ok(meta) = std::fs::metadata(&staged.target) {
        std::fs::set_permissions(temp.path(), meta.permissions()).with_context(|| {
            format!(
                "giving '{}' the permissions of '{}'",
                temp.path().display(),
                path.display()
            )
        })?;
    }
    let mut f = BufWriter::with_capacity(1 << 20, temp.as_file());
    write(&mut f)
        .and_then(|_| f.flush())
        .and_then(|_| temp.as_file().sync_all())
        .with_context(|| format!("writing '{}'", temp.path().display()))?;
    drop(f);
    Ok(staged)
}

impl Staged {
    /// Renames the temporary file into place.
    pub fn commit(mut self) -> Result<()> {
        let mut files = pending();
        let temp = self.temp.take().expect("committed once");
        let temp_path = temp.path().to_path_buf();
        files.retain(|p| *p != temp_path);
        temp.persist(&self.target).map_err(|e| {
            anyhow!(
                "cannot write the output '{}': {}",
                self.target.display(),
                e.error
            )
        })?;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let mut files = pending();
            let temp_path = temp.path().to_path_buf();
            drop(temp); // removes the file
            files.retain(|p| *p != temp_path);
        }
    }
}
