//! The cell cache: finished cells addressed by their content, reused by any later run.
//!
//! A cell's key is the text of everything that decides its result: the results format and the
//! program's version, the data's content hash and load options, the world, the policy's
//! canonical identity (family and every parameter; an external policy's command, environment
//! and code's content hashes), the task's own resolved inputs (reference points), the cell's
//! identity (task, budget, policy id, repetition), its seed and whether its steps are kept. Its
//! order in an experiment, the experiment's name and the policy's label are not part of it, so
//! adding a policy to a grid reuses every cell of the others. A hit gives back the cell's
//! [`CellResult`] as it was replayed; the results folder is built from it exactly as from a
//! replay, so it equals a fresh run's byte for byte, save the `program` column, which names the
//! build that replayed each cell.
//!
//! One file per cell, `ROOT/format-F/HH/HASH.cell` (HASH the key's xxh3-128), holds: a magic
//! line, the key's text, the program, the result (postcard, zstd-compressed), and an xxh3-128
//! checksum of all of it. A file is written under a temporary name and renamed, so a reader sees
//! a whole entry or none, and runs sharing a cache never see each other's halves; a kill leaves
//! at most a temporary file (`cache prune` removes those). Entries are not flushed to disk one by
//! one (that would cost more than most cells): an entry a crash truncated fails its checksum, is
//! named, removed and replayed. A full disk stops storing, never the run.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use anyhow::{Context, Result, bail};

use super::cell::{Cell, CellGrid, CellResult};
use super::progress::{Level, Progress};
use super::{DataInfo, Experiment};
use crate::results::RESULTS_FORMAT;

const MAGIC: &[u8; 8] = b"BBCELL1\n";
/// zstd level of an entry: 3, zstd's default (trajectories shrink about 4×).
const ZSTD_LEVEL: i32 = 3;
/// Temporary files older than this are a killed writer's: `prune` removes them.
const STALE_TMP_S: u64 = 3600;

/// Cells whose replay takes less than this (seconds) are not stored: writing an entry costs
/// about 30 µs and reading one back about as much (measured on the quickstart's cells, 2 cores),
/// so a cell is stored when reading it back saves at least 30 times that.
pub const MIN_CELL_S: f64 = 0.001;

/// The environment variable naming the cache folder when `--cache` is given without one.
pub const CACHE_ENV: &str = "BANDITBENCH_CACHE";

/// The cache folder `--cache` uses when given no folder: `$BANDITBENCH_CACHE`, else
/// `$XDG_CACHE_HOME/banditbench`, else `~/.cache/banditbench`.
pub fn default_cache_dir() -> Result<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = var(CACHE_ENV) {
        return Ok(d);
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return Ok(d.join("banditbench"));
    }
    match var("HOME") {
        Some(h) => Ok(h.join(".cache").join("banditbench")),
        None => bail!(
            "--cache: no folder given and neither {CACHE_ENV}, XDG_CACHE_HOME nor HOME is set; give one, e.g. --cache ~/bb-cache"
        ),
    }
}

/// One cell's key: its text (what decides the result) and the text's hash (its file name).
pub struct CellKey {
    text: String,
    hash: u128,
}

impl CellKey {
    /// The key of this text.
    pub fn new(text: String) -> CellKey {
        let hash = xxhash_rust::xxh3::xxh3_128(text.as_bytes());
        CellKey { text, hash }
    }

    /// What decides the cell, as hashed.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// Makes the cells' keys of one run: the parts shared by every cell are written once.
pub struct KeyMaker {
    /// Results format, version, data, load options, world, whether steps are kept (JSON).
    base: String,
    /// Per policy: its canonical identity (JSON of the fingerprint's `DecidingPolicy`).
    policies: Vec<String>,
    /// Per task: its resolved inputs beyond the data (several objectives: reference and ideal
    /// points, which a reference file may give), JSON, or empty.
    tasks: Vec<String>,
}

impl KeyMaker {
    /// The keys of `exp`'s cells on the data `info` describes, of `n_tasks` tasks.
    pub fn new(exp: &Experiment, info: &DataInfo, n_tasks: usize) -> Result<KeyMaker> {
        let d = exp.decides(&info.hash);
        let base = serde_json::json!({
            "results_format": RESULTS_FORMAT,
            "version": env!("CARGO_PKG_VERSION"),
            "data": info.hash,
            "learners": d.learners,
            "allow_missing_arms": d.allow_missing_arms,
            "world": d.world,
            "steps": exp.trajectories != super::TrajectoryMode::None,
        });
        let policies = d
            .policies
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<Vec<_>, _>>()?;
        let tasks = (0..n_tasks)
            .map(|t| match &info.objectives {
                Some(o) => serde_json::json!({
                    "reference": o.tasks[t].reference,
                    "ideal": o.tasks[t].ideal,
                })
                .to_string(),
                None => String::new(),
            })
            .collect();
        Ok(KeyMaker {
            base: base.to_string(),
            policies,
            tasks,
        })
    }

    /// The key of `cell` of `grid`.
    pub fn key(&self, grid: &CellGrid, cell: &Cell) -> CellKey {
        CellKey::new(format!(
            "{}\n{}\n{}\n{}\n{}",
            self.base,
            self.policies[cell.policy],
            self.tasks[cell.task],
            grid.identity(cell).replace('\u{1f}', "|"),
            cell.seed
        ))
    }
}

/// What `CellCache::get` found.
pub enum Lookup {
    /// The cell's result and the program that replayed it.
    Hit(Box<CellResult>, String),
    /// No whole entry for this key.
    Miss,
}

/// A cache folder opened for one results format.
pub struct CellCache {
    root: PathBuf,
    dir: PathBuf,
    program: String,
    /// Cleared after the first failed write: the run goes on without storing.
    storing: AtomicBool,
    hits: AtomicU64,
    stored: AtomicU64,
    corrupt: AtomicU64,
}

/// A cache's counts for one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheCounts {
    /// Cells taken from the cache.
    pub hits: u64,
    /// Cells replayed and stored in it.
    pub stored: u64,
    /// Damaged entries found (removed and replayed).
    pub corrupt: u64,
}

fn format_dir(root: &Path, format: i64) -> PathBuf {
    root.join(format!("format-{format}"))
}

impl CellCache {
    /// Open (create) the cache under `root` for this build's results format.
    pub fn open(root: &Path) -> Result<CellCache> {
        let dir = format_dir(root, RESULTS_FORMAT);
        std::fs::create_dir_all(&dir).with_context(|| {
            format!(
                "{}: cannot create the cell cache folder (give another with --cache DIR, or run without --cache)",
                dir.display()
            )
        })?;
        Ok(CellCache {
            root: root.to_path_buf(),
            dir,
            program: super::store::program(),
            storing: AtomicBool::new(true),
            hits: AtomicU64::new(0),
            stored: AtomicU64::new(0),
            corrupt: AtomicU64::new(0),
        })
    }

    /// The cache folder given.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What the cache did so far.
    pub fn counts(&self) -> CacheCounts {
        CacheCounts {
            hits: self.hits.load(Ordering::Relaxed),
            stored: self.stored.load(Ordering::Relaxed),
            corrupt: self.corrupt.load(Ordering::Relaxed),
        }
    }

    fn path_of(&self, key: &CellKey) -> PathBuf {
        let hex = format!("{:032x}", key.hash);
        self.dir.join(&hex[..2]).join(format!("{hex}.cell"))
    }

    /// The cell's entry, if the cache holds a whole one for this key. A damaged entry is named
    /// to `progress`, removed and reported a miss (the cell is replayed and stored again).
    pub fn get(&self, key: &CellKey, progress: &dyn Progress) -> Lookup {
        let path = self.path_of(key);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(_) => return Lookup::Miss,
        };
        match decode(&bytes, key) {
            Ok(Some((r, program))) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                // The entry was used: `prune --max-size` keeps the recently used ones.
                let _ = std::fs::File::options()
                    .write(true)
                    .open(&path)
                    .and_then(|f| f.set_modified(std::time::SystemTime::now()));
                Lookup::Hit(Box::new(r), program)
            }
            // Another key with the same 128-bit hash: never seen, but not this cell's entry.
            Ok(None) => Lookup::Miss,
            Err(e) => {
                self.corrupt.fetch_add(1, Ordering::Relaxed);
                let _ = std::fs::remove_file(&path);
                progress.note(
                    Level::Warning,
                    &format!(
                        "cell cache: {}: {e:#}; the entry is removed and the cell replayed",
                        path.display()
                    ),
                );
                Lookup::Miss
            }
        }
    }

    /// Store a replayed cell. A failure (a full disk) is named once to `progress` and stops
    /// storing for the rest of the run; the run itself goes on.
    pub fn put(&self, key: &CellKey, result: &CellResult, progress: &dyn Progress) {
        if !self.storing.load(Ordering::Relaxed) {
            return;
        }
        let path = self.path_of(key);
        match self.write_entry(&path, key, result) {
            Ok(()) => {
                self.stored.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                if self.storing.swap(false, Ordering::Relaxed) {
                    let why = if super::store::disk_full(&e) {
                        "the disk is full".to_string()
                    } else {
                        format!("{e:#}")
                    };
                    progress.note(
                        Level::Warning,
                        &format!(
                            "cell cache {}: cannot store a cell ({why}); the rest of this run stores none (its results are not affected); free space or run `banditbench cache prune --max-size SIZE`",
                            self.root.display()
                        ),
                    );
                }
            }
        }
    }

    fn write_entry(&self, path: &Path, key: &CellKey, result: &CellResult) -> Result<()> {
        let bytes = encode(key, &self.program, result)?;
        let sub = path.parent().expect("an entry's folder");
        std::fs::create_dir_all(sub)
            .with_context(|| format!("{}: cannot create", sub.display()))?;
        let tmp = tmp_name(path);
        let written = std::fs::write(&tmp, &bytes)
            .map_err(anyhow::Error::from)
            .and_then(|()| super::store::check_size(&tmp, bytes.len() as u64));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(e.context(format!("{}: cannot write", tmp.display())));
        }
        std::fs::rename(&tmp, path).with_context(|| format!("{}: cannot publish", path.display()))
    }
}

/// A temporary name no other writer uses: the process and a counter.
fn tmp_name(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut name = path.file_name().expect("a file name").to_os_string();
    name.push(format!(".tmp-{}-{n}", std::process::id()));
    path.with_file_name(name)
}

fn put_block(out: &mut Vec<u8>, block: &[u8]) {
    out.extend_from_slice(&(block.len() as u64).to_le_bytes());
    out.extend_from_slice(block);
}

/// An entry's bytes: magic, key, program, zstd(postcard(result)), each block prefixed by its
/// length (u64 LE), then the xxh3-128 (LE) of everything before it.
fn encode(key: &CellKey, program: &str, result: &CellResult) -> Result<Vec<u8>> {
    let raw = postcard::to_stdvec(result).context("cannot encode a cell's result")?;
    let packed = zstd::bulk::compress(&raw, ZSTD_LEVEL).context("cannot compress a cell")?;
    let mut out = Vec::with_capacity(packed.len() + key.text.len() + program.len() + 64);
    out.extend_from_slice(MAGIC);
    put_block(&mut out, key.text.as_bytes());
    put_block(&mut out, program.as_bytes());
    put_block(&mut out, &packed);
    let sum = xxhash_rust::xxh3::xxh3_128(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    Ok(out)
}

/// Reads an entry's blocks in order.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn block(&mut self) -> Result<&'a [u8]> {
        let rest = &self.bytes[self.at..];
        if rest.len() < 8 {
            bail!("cut short");
        }
        let n = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
        let n = usize::try_from(n).ok().filter(|&n| n <= rest.len() - 8);
        let Some(n) = n else {
            bail!("a block's length runs past the end");
        };
        self.at += 8 + n;
        Ok(&rest[8..8 + n])
    }
}

/// An entry's result and program; `None` when it is whole but another key's. Errors say how
/// it is damaged.
fn decode(bytes: &[u8], key: &CellKey) -> Result<Option<(CellResult, String)>> {
    if bytes.len() < MAGIC.len() + 16 || &bytes[..MAGIC.len()] != MAGIC {
        bail!("not a cell cache entry (its first bytes differ)");
    }
    let (body, sum) = bytes.split_at(bytes.len() - 16);
    let sum = u128::from_le_bytes(sum.try_into().expect("16 bytes"));
    if xxhash_rust::xxh3::xxh3_128(body) != sum {
        bail!("its checksum does not match its content (a damaged or cut-short file)");
    }
    let mut r = Reader {
        bytes: body,
        at: MAGIC.len(),
    };
    if r.block()? != key.text.as_bytes() {
        return Ok(None);
    }
    let program = String::from_utf8_lossy(r.block()?).into_owned();
    let raw = zstd::stream::decode_all(r.block()?).context("cannot decompress")?;
    let result: CellResult = postcard::from_bytes(&raw).context("cannot decode the result")?;
    Ok(Some((result, program)))
}

/// What a cache folder holds, per results format (`cache info`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FormatUsage {
    /// The folder's name, `format-F`.
    pub format: String,
    /// Cells held.
    pub entries: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Temporary files left by killed writers.
    pub temporary: u64,
}

/// Every file under a format folder, with its size, modification time and whether it is an
/// entry (else a temporary file).
fn files_of(dir: &Path) -> Result<Vec<(PathBuf, u64, std::time::SystemTime, bool)>> {
    let mut out = Vec::new();
    let read =
        |d: &Path| std::fs::read_dir(d).with_context(|| format!("{}: cannot list", d.display()));
    for sub in read(dir)? {
        let sub = sub?.path();
        if !sub.is_dir() {
            continue;
        }
        for f in read(&sub)? {
            let f = f?;
            let meta = f.metadata()?;
            let name = f.file_name().to_string_lossy().into_owned();
            let entry = name.ends_with(".cell");
            if entry || name.contains(".cell.tmp-") {
                let at = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
                out.push((f.path(), meta.len(), at, entry));
            }
        }
    }
    Ok(out)
}

/// The results-format folders of a cache, by name (`format-6`, …).
fn format_dirs(root: &Path) -> Result<Vec<(String, PathBuf)>> {
    if !root.exists() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).with_context(|| format!("{}: cannot list", root.display()))? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if e.path().is_dir() && name.starts_with("format-") {
            out.push((name, e.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// What the cache under `root` holds, per results format.
pub fn usage(root: &Path) -> Result<Vec<FormatUsage>> {
    let mut out = Vec::new();
    for (name, dir) in format_dirs(root)? {
        let mut u = FormatUsage {
            format: name,
            ..FormatUsage::default()
        };
        for (_, len, _, entry) in files_of(&dir)? {
            if entry {
                u.entries += 1;
                u.bytes += len;
            } else {
                u.temporary += 1;
            }
        }
        out.push(u);
    }
    Ok(out)
}

/// What `prune` removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Entries of this build's format removed.
    pub entries: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Whole folders of other results formats (this build can never use them).
    pub other_formats: u64,
    /// Temporary files of killed writers.
    pub temporary: u64,
}

/// Remove what the cache under `root` cannot use (other results formats' folders, killed
/// writers' temporary files older than an hour), then, with `max_bytes`, the least recently
/// used entries of this format until the rest fit; with `all`, every entry.
pub fn prune(root: &Path, max_bytes: Option<u64>, all: bool) -> Result<Pruned> {
    let mut p = Pruned::default();
    let mine = format!("format-{RESULTS_FORMAT}");
    for (name, dir) in format_dirs(root)? {
        if name != mine || all {
            if name == mine {
                for (_, len, _, entry) in files_of(&dir)? {
                    if entry {
                        p.entries += 1;
                        p.bytes += len;
                    }
                }
            } else {
                p.other_formats += 1;
            }
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("{}: cannot remove", dir.display()))?;
            continue;
        }
        let now = std::time::SystemTime::now();
        let mut entries = Vec::new();
        for (path, len, at, entry) in files_of(&dir)? {
            let age = now.duration_since(at).map_or(0, |d| d.as_secs());
            if !entry {
                if age >= STALE_TMP_S && std::fs::remove_file(&path).is_ok() {
                    p.temporary += 1;
                }
                continue;
            }
            entries.push((at, len, path));
        }
        let Some(max) = max_bytes else { continue };
        // Oldest use first.
        entries.sort();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        for (_, len, path) in entries {
            if total <= max {
                break;
            }
            std::fs::remove_file(&path)
                .with_context(|| format!("{}: cannot remove", path.display()))?;
            total -= len;
            p.entries += 1;
            p.bytes += len;
        }
    }
    Ok(p)
}

/// Parse a size: bytes, or a number with K, M, G or T (powers of 1024; `KiB`, `MB`, … accepted).
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || {
        anyhow::anyhow!("size '{s}': expected a number of bytes or one with K, M, G or T, e.g. 2G")
    };
    let n: f64 = num.parse().map_err(|_| bad())?;
    let unit = unit.trim().to_ascii_uppercase();
    let unit = unit.trim_end_matches('B').trim_end_matches('I');
    let mult: u64 = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return Err(bad()),
    };
    if !n.is_finite() || n < 0.0 {
        return Err(bad());
    }
    Ok((n * mult as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("2G").unwrap(), 2 << 30);
        assert_eq!(parse_size("1.5 MiB").unwrap(), 3 << 19);
        assert_eq!(parse_size("10kb").unwrap(), 10 << 10);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("3X").is_err());
    }
}
