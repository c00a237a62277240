//! What an external policy is: its command, limits, failure rule and the content hashes that
//! name the files it runs.

use super::process::Process;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// What a run does when an external policy's process fails in a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnFailure {
    /// Keep the finished cells and stop the run with the error.
    Stop,
    /// Kill the process, leave the cell unfinished and go on with a fresh process; the run ends
    /// with an error listing the failed cells, which a rerun retries.
    Restart,
}

impl OnFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            OnFailure::Stop => "stop",
            OnFailure::Restart => "restart",
        }
    }
}

/// How to run one external policy, from its `[[policies]]` entry.
pub struct ExternalSpec {
    /// The name results and figures give it (its `family`).
    pub name: String,
    /// Program and arguments, run in the current directory.
    pub command: Vec<String>,
    /// The files its results depend on, each with a hash of its content: every argument of
    /// `command` that names a file, and the files under its `files` entries.
    pub files: Vec<(String, String)>,
    /// Extra environment variables for the process.
    pub env: BTreeMap<String, String>,
    /// How long to wait for any one answer (including the first, while the process starts).
    pub timeout: Duration,
    pub on_failure: OnFailure,
    /// Pin each process and the worker thread that talks to it to one CPU (default: on).
    pub pin_cpu: bool,
    /// Pool world: send the space and the open configurations' encodings at each cell's start.
    pub pool_space: bool,
    /// Run in this process by the program that embeds banditbench (`family = "python"`, the
    /// Python package): the class to load (`file.py:Class` or `module:Class`), or `None` for the
    /// object the program registered under `name`. `None` for a process.
    pub in_process: Option<InProcess>,
    idle: Mutex<Vec<Process>>,
}

/// Where an in-process policy comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InProcess {
    /// `file.py:Class` or `module:Class`; `None`: the object registered under the policy's name.
    pub class: Option<String>,
}

impl std::fmt::Debug for ExternalSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "external {} `{}`", self.name, self.command.join(" "))
    }
}

impl ExternalSpec {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        command: Vec<String>,
        files: Vec<(String, String)>,
        env: BTreeMap<String, String>,
        timeout: Duration,
        on_failure: OnFailure,
        pin_cpu: bool,
        pool_space: bool,
    ) -> Self {
        ExternalSpec {
            name,
            command,
            files,
            env,
            timeout,
            on_failure,
            pin_cpu,
            pool_space,
            in_process: None,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// An in-process policy (`family = "python"`): built by the embedding program's host.
    pub fn in_process(
        name: String,
        class: Option<String>,
        files: Vec<(String, String)>,
        on_failure: OnFailure,
        pool_space: bool,
    ) -> Self {
        let shown = class
            .clone()
            .unwrap_or_else(|| format!("<registered {name}>"));
        let mut s = ExternalSpec::new(
            name,
            vec!["<in-process>".to_string(), shown],
            files,
            BTreeMap::new(),
            Duration::from_secs(60),
            on_failure,
            false,
            pool_space,
        );
        s.in_process = Some(InProcess { class });
        s
    }

    /// What decides its results besides its parameters: the command, the environment and the
    /// content of its files (for the experiment's fingerprint).
    pub fn identity(&self) -> String {
        format!("{:?}|{:?}|{:?}", self.command, self.env, self.files)
    }

    pub(super) fn take_idle(&self) -> Option<Process> {
        self.idle.lock().ok()?.pop()
    }

    pub(super) fn give_back(&self, p: Process) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(p);
        }
    }
}

/// The files an external policy's results depend on, each with a 64-bit FNV-1a hash of its content
/// (hex): every element of `command` that names a file (the script, a compiled policy), and every
/// file under the paths of `extra` (files or folders, walked in name order; `__pycache__` and
/// hidden entries skipped). Paths are as given, relative to the current directory. An `extra`
/// path that does not exist is an error.
pub fn content_hashes(
    command: &[String],
    extra: &[String],
) -> anyhow::Result<Vec<(String, String)>> {
    use anyhow::Context as _;
    fn walk(p: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(p)?
                .map(|e| e.map(|e| e.path()))
                .collect::<std::io::Result<_>>()?;
            entries.sort();
            for e in entries {
                let name = e.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if name.starts_with('.') || name == "__pycache__" {
                    continue;
                }
                walk(&e, out)?;
            }
        } else if p.is_file() {
            out.push(p.to_path_buf());
        }
        Ok(())
    }
    let mut paths: Vec<PathBuf> = command
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .collect();
    for e in extra {
        let p = Path::new(e);
        if !p.exists() {
            anyhow::bail!(
                "'files' names {e}, which does not exist (paths are relative to the current directory, {})",
                std::env::current_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_else(|_| "unknown".into())
            );
        }
        walk(p, &mut paths).with_context(|| format!("'files': cannot read {e}"))?;
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for p in paths {
        let key = p.display().to_string();
        if out.iter().any(|(k, _)| *k == key) {
            continue;
        }
        let bytes = std::fs::read(&p).with_context(|| format!("{key}: cannot read"))?;
        out.push((key, format!("{:016x}", crate::rng::fnv1a64(&bytes))));
    }
    Ok(out)
}

/// A failure of an external policy's process is the vocabulary's `PolicyFailure`.
pub use crate::protocol::PolicyFailure as PolicyProcessError;
