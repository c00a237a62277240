//! Slurm job arrays for an experiment: one array task per shard (`run --shard I/N`) and a merge
//! job that starts when every shard has finished (`--dependency=afterok`), and, optionally, their
//! submission with `sbatch`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::experiment::{Experiment, Shard, default_out};

/// What the scripts ask of Slurm.
#[derive(Clone, Debug)]
pub struct SlurmOptions {
    pub shards: u32,
    /// Results folder of the merged run (default: `results/<name>`).
    pub out: Option<PathBuf>,
    /// Where the shards write (default: `results/<name>-shards`).
    pub shards_dir: Option<PathBuf>,
    /// Where the scripts go [default: <shards_dir>/slurm].
    pub script_dir: Option<PathBuf>,
    pub cpus_per_task: u32,
    pub mem: String,
    pub time: String,
    pub partition: Option<String>,
    pub account: Option<String>,
    /// At most this many array tasks at once (`--array=0-N%K`).
    pub max_running: Option<u32>,
    /// The banditbench binary the jobs run (on a file system every node sees).
    pub binary: PathBuf,
    /// Further `#SBATCH` lines, e.g. "--qos=short".
    pub extra: Vec<String>,
}

/// The scripts written for an experiment.
pub struct Scripts {
    pub array: PathBuf,
    pub merge: PathBuf,
    pub shards_dir: PathBuf,
    pub out: PathBuf,
    pub logs: PathBuf,
}

fn absolute(p: &Path) -> Result<PathBuf> {
    if p.is_absolute() {
        return Ok(p.to_path_buf());
    }
    Ok(std::env::current_dir()
        .context("cannot read the working directory")?
        .join(p))
}

/// Quote for a POSIX shell (single quotes, embedded ones escaped).
fn sh(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:=,@%".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn p(path: &Path) -> String {
    sh(&path.display().to_string())
}

fn header(
    name: &str,
    o: &SlurmOptions,
    logs: &Path,
    log_name: &str,
    array: Option<&str>,
) -> String {
    let mut h = vec![
        "#!/bin/bash".to_string(),
        format!("#SBATCH --job-name={name}"),
    ];
    if let Some(a) = array {
        h.push(format!("#SBATCH --array={a}"));
    }
    h.push(format!("#SBATCH --cpus-per-task={}", o.cpus_per_task));
    h.push(format!("#SBATCH --mem={}", o.mem));
    h.push(format!("#SBATCH --time={}", o.time));
    h.push(format!(
        "#SBATCH --output={}",
        logs.join(log_name).display()
    ));
    if let Some(part) = &o.partition {
        h.push(format!("#SBATCH --partition={part}"));
    }
    if let Some(acc) = &o.account {
        h.push(format!("#SBATCH --account={acc}"));
    }
    for e in &o.extra {
        h.push(format!("#SBATCH {e}"));
    }
    h.join("\n")
}

/// Write the array script and the merge script for an experiment.
pub fn write_scripts(exp: &Experiment, o: &SlurmOptions) -> Result<Scripts> {
    if o.shards == 0 {
        bail!("--shards must be at least 1");
    }
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let out = absolute(&o.out.clone().unwrap_or_else(|| default_out(exp, None)))?;
    let shards_dir = absolute(&o.shards_dir.clone().unwrap_or_else(|| {
        default_out(exp, Some(Shard { index: 0, count: 1 }))
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("results"))
    }))?;
    let script_dir = absolute(
        &o.script_dir
            .clone()
            .unwrap_or_else(|| shards_dir.join("slurm")),
    )?;
    let logs = script_dir.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("{}: cannot create", logs.display()))?;
    let exp_file = absolute(&exp.file)?;
    let bin = absolute(&o.binary)?;
    let n = o.shards;
    let job = format!("bb-{}", exp.name);
    let array_spec = match o.max_running {
        Some(k) => format!("0-{}%{k}", n - 1),
        None => format!("0-{}", n - 1),
    };
    let array = format!(
        "{}
# {n} shards of the experiment {exp_file}: array task I runs the cells whose index is I modulo N
# (banditbench run --shard I/N). A task that is killed or fails can be resubmitted: it resumes.
# Written by `banditbench slurm`; submit with `sbatch {array_path}`, then the merge job with
# `sbatch --dependency=afterok:JOBID {merge_path}` (or let `banditbench slurm --submit` do both).
set -euo pipefail
cd {cwd}
I=\"$SLURM_ARRAY_TASK_ID\"
N=\"${{SLURM_ARRAY_TASK_COUNT:-{n}}}\"
exec {bin} run {exp_file} --shard \"$I/$N\" --out {shards}/\"$I-of-$N\" \\
    --threads \"${{SLURM_CPUS_PER_TASK:-{cpus}}}\" --quiet
",
        header(&job, o, &logs, "shard-%a.out", Some(&array_spec)),
        array_path = p(&script_dir.join("array.sbatch")),
        merge_path = p(&script_dir.join("merge.sbatch")),
        cwd = p(&cwd),
        bin = p(&bin),
        exp_file = p(&exp_file),
        shards = p(&shards_dir),
        cpus = o.cpus_per_task,
    );
    let shard_list: String = if n <= 64 {
        (0..n)
            .map(|i| p(&shards_dir.join(format!("{i}-of-{n}"))))
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        format!("{}/*-of-{n}", p(&shards_dir))
    };
    let merge_opts = SlurmOptions {
        cpus_per_task: 1,
        ..o.clone()
    };
    let merge = format!(
        "{}
# Merge the {n} shards into {out}: byte for byte what one unsharded run writes. Refuses shards of
# another experiment and names any missing or duplicated cell.
set -euo pipefail
cd {cwd}
{bin} merge {shard_list} --out {out_q}
exec {bin} report {out_q}
",
        header(
            &format!("{job}-merge"),
            &merge_opts,
            &logs,
            "merge.out",
            None
        ),
        out = out.display(),
        out_q = p(&out),
        cwd = p(&cwd),
        bin = p(&bin),
    );
    let array_path = script_dir.join("array.sbatch");
    let merge_path = script_dir.join("merge.sbatch");
    for (path, text) in [(&array_path, &array), (&merge_path, &merge)] {
        std::fs::write(path, text).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok(Scripts {
        array: array_path,
        merge: merge_path,
        shards_dir,
        out,
        logs,
    })
}

/// Run `sbatch --parsable ARGS SCRIPT` and return the job id.
pub fn sbatch(args: &[String], script: &Path) -> Result<String> {
    let o = Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .arg(script)
        .output()
        .context("cannot run sbatch: is this a Slurm login node (is sbatch on PATH)? Without --submit, the scripts are only written")?;
    if !o.status.success() {
        bail!(
            "sbatch {} failed: {}",
            script.display(),
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&o.stdout);
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        bail!(
            "sbatch {}: unexpected answer '{}'",
            script.display(),
            text.trim()
        );
    }
    Ok(id)
}

/// Submit the array, then the merge job depending on it. Returns (array id, merge id).
pub fn submit(s: &Scripts) -> Result<(String, String)> {
    let array = sbatch(&[], &s.array)?;
    let merge = sbatch(
        &[
            format!("--dependency=afterok:{array}"),
            "--kill-on-invalid-dep=yes".into(),
        ],
        &s.merge,
    )?;
    Ok((array, merge))
}

#[cfg(test)]
mod tests {
    use super::sh;

    #[test]
    fn shell_quoting_leaves_plain_paths_and_quotes_the_rest() {
        assert_eq!(sh("/a/b-c_d.toml"), "/a/b-c_d.toml");
        assert_eq!(sh("/a b/c"), "'/a b/c'");
        assert_eq!(sh("it's"), "'it'\\''s'");
        assert_eq!(sh(""), "''");
    }
}
