//! Reading files a user points at, which may be anything: a FIFO (opening it blocks until a
//! writer comes), `/dev/zero` (reading never ends), a folder with symbolic links back to itself
//! (a naive walk is exponential). Every importer and every reader of other tools' files opens
//! through here: only regular files are read, text only up to a stated size, and folder walks
//! visit each real folder once.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The largest text file read whole (JSON, YAML, CSV logs): 2 GiB.
pub const MAX_TEXT: u64 = 2 << 30;

/// What a path is, in words, when it is not a regular file.
fn kind(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
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
    "not a regular file"
}

/// Open `path` for reading if it is a regular file (symbolic links followed); otherwise an error
/// naming what it is. `what` says what the file should be ("Syne Tune's metadata.json").
pub fn open(path: &Path, what: &str) -> Result<std::fs::File> {
    let meta = std::fs::metadata(path)
        .with_context(|| format!("{}: cannot read ({what})", path.display()))?;
    if !meta.is_file() {
        bail!(
            "{}: is {}, not a regular file; give {what}",
            path.display(),
            kind(&meta)
        );
    }
    std::fs::File::open(path).with_context(|| format!("{}: cannot open ({what})", path.display()))
}

/// Check that `path` is a regular file, for readers that open it themselves (polars, SQLite).
pub fn check(path: &Path, what: &str) -> Result<()> {
    open(path, what).map(drop)
}

/// A regular file's bytes, refusing one over `max` bytes.
pub fn read_bytes(path: &Path, what: &str, max: u64) -> Result<Vec<u8>> {
    let f = open(path, what)?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len > max {
        bail!(
            "{}: {len} bytes, more than the {max} this reader takes ({what})",
            path.display()
        );
    }
    let mut out = Vec::with_capacity(len as usize);
    f.take(max.saturating_add(1))
        .read_to_end(&mut out)
        .with_context(|| format!("{}: cannot read ({what})", path.display()))?;
    if out.len() as u64 > max {
        bail!(
            "{}: more than the {max} bytes this reader takes ({what})",
            path.display()
        );
    }
    Ok(out)
}

/// A regular file's text (UTF-8), at most [`MAX_TEXT`] bytes.
pub fn read_text(path: &Path, what: &str) -> Result<String> {
    let bytes = read_bytes(path, what, MAX_TEXT)?;
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: not UTF-8 text (byte {}); give {what}",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Walk the folder `root` and its sub-folders at any depth, in name order, calling `visit` on
/// each folder; `visit` returns whether to go into that folder's sub-folders. Symbolic links to
/// folders below `root` are not followed (a link to `.` or `..` would loop, or leave the folder
/// given); `root` itself may be one. Every real folder is visited once, by its canonical path.
pub fn walk_folders(root: &Path, visit: &mut dyn FnMut(&Path) -> Result<bool>) -> Result<()> {
    let mut seen = HashSet::new();
    walk(root, visit, &mut seen)
}

fn walk(
    p: &Path,
    visit: &mut dyn FnMut(&Path) -> Result<bool>,
    seen: &mut HashSet<PathBuf>,
) -> Result<()> {
    let real = p
        .canonicalize()
        .with_context(|| format!("{}: cannot read the folder", p.display()))?;
    if !seen.insert(real) {
        return Ok(());
    }
    if !visit(p)? {
        return Ok(());
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(p)
        .with_context(|| format!("{}: cannot read the folder", p.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for d in dirs {
        walk(&d, visit, seen)?;
    }
    Ok(())
}

/// The entries directly in `dir` that are not folders, in name order: FIFOs and devices among
/// them, so that the reader refuses them by name instead of passing them over.
pub fn files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot read the folder", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|e| !e.is_dir())
        .collect();
    out.sort();
    Ok(out)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("banditbench-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn special_files_are_refused_by_what_they_are() {
        let d = scratch("special");
        let fifo = d.join("metadata.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&fifo, "a JSON file").unwrap_err().to_string();
        assert!(e.contains("FIFO"), "{e}");
        let e = read_text(Path::new("/dev/zero"), "a JSON file")
            .unwrap_err()
            .to_string();
        assert!(e.contains("character device"), "{e}");
        let e = read_text(&d, "a JSON file").unwrap_err().to_string();
        assert!(e.contains("a folder"), "{e}");
        let big = d.join("big");
        std::fs::write(&big, vec![b'x'; 100]).unwrap();
        let e = read_bytes(&big, "x", 99).unwrap_err().to_string();
        assert!(e.contains("100 bytes"), "{e}");
        assert_eq!(read_bytes(&big, "x", 100).unwrap().len(), 100);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn symbolic_links_back_up_the_tree_are_walked_once() {
        let d = scratch("loops");
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        std::os::unix::fs::symlink(&d, d.join("a/up")).unwrap();
        std::os::unix::fs::symlink(".", d.join("a/b/here")).unwrap();
        std::os::unix::fs::symlink("..", d.join("a/b/parent")).unwrap();
        let mut visited = Vec::new();
        walk_folders(&d, &mut |p| {
            visited.push(p.strip_prefix(&d).unwrap().to_path_buf());
            Ok(true)
        })
        .unwrap();
        assert_eq!(
            visited,
            vec![PathBuf::new(), PathBuf::from("a"), PathBuf::from("a/b")]
        );
        // The folder given may itself be a link.
        let link = d.with_extension("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&d, &link).unwrap();
        let mut n = 0;
        walk_folders(&link, &mut |_| {
            n += 1;
            Ok(true)
        })
        .unwrap();
        assert_eq!(n, 3);
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_dir_all(&d).unwrap();
    }
}

/// Read a parquet file, naming it in the error (the one copy: results, pools and importers).
pub fn read_parquet(path: &Path) -> Result<polars::prelude::DataFrame> {
    use polars::prelude::SerReader as _;
    let file =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    polars::prelude::ParquetReader::new(file)
        .finish()
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{}: cannot read as parquet", path.display()))
}
