//! The bundled trace sets and experiments, wherever banditbench runs. In a clone they are
//! `traces/` and `experiments/` of its root, found from any folder below it; from installed
//! wheels they are the data wheel's folder, which the Python package names in
//! `BANDITBENCH_DATA` when it is imported (any program may set it too). So `run quickstart`, `run experiments/quickstart.toml`
//! and `traces list` work from any folder, while a file or folder that exists where it is
//! named always wins.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// The environment variable naming the folder that holds the bundled `traces/` and
/// `experiments/`.
pub const ENV: &str = "BANDITBENCH_DATA";

/// The bundled data's folder: the one `BANDITBENCH_DATA` names, else the banditbench clone the
/// current folder is in (a notebook's kernel starts in `examples/`, a shell anywhere below the
/// root), if any.
pub fn data_root() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(p)).filter(|p| p.is_dir());
    }
    let here = std::env::current_dir().ok()?;
    here.ancestors()
        .find(|d| is_clone(d))
        .map(Path::to_path_buf)
}

/// Whether `dir` is the root of a banditbench clone: its Cargo.toml names the package, and it
/// holds `traces/` and `experiments/`.
fn is_clone(dir: &Path) -> bool {
    dir.join("traces").is_dir()
        && dir.join("experiments").is_dir()
        && std::fs::read_to_string(dir.join("Cargo.toml"))
            .is_ok_and(|t| t.lines().any(|l| l.trim() == "name = \"banditbench\""))
}

/// The experiment file `arg` names: the file itself if it exists; else, for a bare name
/// (`quickstart`), `experiments/NAME.toml` here and then in the bundled data; else, for a
/// relative path (`experiments/quickstart.toml`), the same path in the bundled data. An error
/// lists what was tried and the bundled experiments' names.
pub fn experiment(arg: &Path) -> Result<PathBuf> {
    if arg.is_file() {
        return Ok(arg.to_path_buf());
    }
    let root = data_root();
    let bare = arg.components().count() == 1 && arg.extension().is_none();
    let mut tried = vec![arg.to_path_buf()];
    if bare {
        let file = Path::new("experiments").join(arg).with_extension("toml");
        tried.push(file.clone());
        if let Some(r) = &root {
            tried.push(r.join(&file));
        }
    } else if arg.is_relative()
        && let Some(r) = &root
    {
        tried.push(r.join(arg));
    }
    if let Some(found) = tried.iter().skip(1).find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    let names = bundled_experiments(root.as_deref());
    bail!(
        "{}: no such experiment file (looked for {}){}",
        arg.display(),
        tried
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        if names.is_empty() {
            format!(
                "; no bundled experiments either: run from a clone of banditbench, or install the Python package, whose data folder {ENV} names"
            )
        } else {
            format!("; the bundled experiments are {}", names.join(", "))
        }
    )
}

/// A folder of trace sets (`traces list`'s argument): the folder itself if it exists; else, for
/// a relative path, the same path in the bundled data, if there.
pub fn folder(arg: &Path) -> PathBuf {
    if arg.is_dir() || arg.is_absolute() {
        return arg.to_path_buf();
    }
    match data_root().map(|r| r.join(arg)).filter(|p| p.is_dir()) {
        Some(p) => p,
        None => arg.to_path_buf(),
    }
}

/// An experiment's `traces` folder `given`, relative to the experiment's folder `base`: that
/// folder if it exists; else the bundled trace set or pool of the same name (`../traces/lcdb`
/// and `traces/lcdb` both find the bundled `lcdb`), if there is one; else the path as given
/// (whose absence the loader reports).
pub fn traces(base: &Path, given: &str) -> PathBuf {
    let path = base.join(given);
    if path.exists() {
        return path;
    }
    let bundled = Path::new(given)
        .file_name()
        .zip(data_root())
        .map(|(name, root)| root.join("traces").join(name))
        .filter(|p| p.is_dir());
    bundled.unwrap_or(path)
}

/// The names of the experiments in `experiments/` here, else in the bundled data.
fn bundled_experiments(root: Option<&Path>) -> Vec<String> {
    let here = Path::new("experiments");
    let dir = if here.is_dir() {
        here.to_path_buf()
    } else if let Some(r) = root {
        r.join("experiments")
    } else {
        return Vec::new();
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(String::from))
        .collect();
    names.sort();
    names
}
