//! The lock file a run writes and checks: what decides the cells, the external policies' files
//! and what changed since the folder was written.

use super::*;
use anyhow::{Result, bail};
use std::path::Path;

pub(super) fn lock_text(
    exp: &Experiment,
    info: &DataInfo,
    n_cells: usize,
    fingerprint: &str,
    shard: Option<Shard>,
) -> Result<String> {
    LockFile {
        resolved: Resolved {
            results_format: store::RESULTS_FORMAT,
            fingerprint: fingerprint.into(),
            program: store::program(),
            git_commit: store::build_commit().into(),
            experiment_file: exp.file.display().to_string(),
            trace_set: info.name.clone(),
            trace_dir: info.dir.display().to_string(),
            trace_hash: info.hash.clone(),
            trace_source: info.source.clone(),
            world: exp.world.describe(),
            tasks: info.tasks.clone(),
            learners: info.learners.clone(),
            policies: exp.policies.iter().map(|p| p.id()).collect(),
            repetitions: i64::from(exp.repetitions),
            cells: Some(n_cells as i64),
            trajectories: exp.trajectories.as_str().into(),
            external_files: external_files(exp),
            shard: shard.map(|s| s.label()),
            shard_cells: shard.map(|s| s.cells_of(n_cells) as i64),
            imported: None,
            objectives: info.objectives.clone(),
        },
        experiment: exp.source.parse().unwrap_or_default(),
    }
    .to_toml()
}

/// Per external policy (by name), its files and their content hashes (the lock file's
/// `[resolved.external_files]`).
pub(super) fn external_files(exp: &Experiment) -> ExternalFiles {
    exp.policies
        .iter()
        .filter_map(|p| p.external.as_ref())
        .map(|e| (e.name.clone(), e.files.iter().cloned().collect()))
        .collect()
}

pub(super) type ExternalFiles =
    std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>;

/// What changed in the external policies' files since a lock file was written, in words.
pub(super) fn external_changes(old: &Resolved, exp: &Experiment) -> Vec<String> {
    let now = external_files(exp);
    let mut out = Vec::new();
    for (name, files) in &now {
        let Some(before) = old.external_files.get(name) else {
            continue;
        };
        for (f, h) in files {
            match before.get(f) {
                Some(b) if b != h => out.push(format!(
                    "external policy '{name}': {f} changed since these results were written (content hash {b}, now {h})"
                )),
                None => out.push(format!(
                    "external policy '{name}': {f} is new among its files"
                )),
                _ => {}
            }
        }
        for f in before.keys() {
            if !files.contains_key(f) {
                out.push(format!(
                    "external policy '{name}': {f} is no longer among its files"
                ));
            }
        }
    }
    out
}

/// The `[resolved]` table of a lock file, if the file exists.
pub(super) fn read_lock(lock: &Path) -> Result<Option<Resolved>> {
    Ok(read_lock_file(lock)?.map(|t| t.resolved))
}

/// Check that a results folder's lock file agrees with the run about to write into it.
pub(super) fn check_lock(
    out: &Path,
    resolved: &Resolved,
    exp: &Experiment,
    fingerprint: &str,
    shard: Option<Shard>,
) -> Result<()> {
    let format = resolved.results_format;
    if format != store::RESULTS_FORMAT {
        bail!(
            "{}: these results are in results format {format}, this build writes format {}; the finished results are kept and `banditbench report` still reads them, but a run cannot continue them: choose another --out, or rerun with --fresh to delete them and start again",
            out.display(),
            store::RESULTS_FORMAT
        );
    }
    let old = &resolved.fingerprint;
    if old != fingerprint {
        let changes = external_changes(resolved, exp);
        if !changes.is_empty() {
            bail!(
                "{}: {}. The finished cells were made by the old code and are not continued with the new: rerun with --fresh to delete them and start again, or give this run another --out (the old results stay)",
                out.display(),
                changes.join("; ")
            );
        }
        bail!(
            "{}: these results come from a different experiment or trace set (fingerprint {old}, now {fingerprint}); finished results are kept: choose another --out, or rerun with --fresh to delete them and start again (adding --cache replays only the cells a cell cache lacks: those of a run with the same cache are kept there)",
            out.display()
        );
    }
    let old_shard = resolved.shard.as_deref();
    let new_shard = shard.map(|s| s.label());
    if old_shard != new_shard.as_deref() {
        bail!(
            "{}: these results are {}, this run is {}; finished results are kept: choose another --out",
            out.display(),
            old_shard.map_or("a whole experiment".to_string(), |s| format!("shard {s}")),
            new_shard.map_or("the whole experiment".to_string(), |s| format!("shard {s}"))
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic experiment (no trace set needed) written to a fresh folder.
    fn synthetic() -> (std::path::PathBuf, Experiment, Data) {
        let dir = std::env::temp_dir().join(format!("bb-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("s.toml");
        std::fs::write(
            &file,
            "name = \"s\"\ndescription = \"two arms\"\nseed = 1\nrepetitions = 2\n\
             [world]\nkind = \"synthetic\"\nbudgets = [10]\n\
             [[world.arms]]\nname = \"a\"\ndistribution = \"gaussian\"\nmean = 0.5\nsd = 0.1\n\
             [[world.arms]]\nname = \"b\"\ndistribution = \"gaussian\"\nmean = 0.6\nsd = 0.1\n\
             [[policies]]\nfamily = \"ucb1\"\n",
        )
        .unwrap();
        let (exp, data) = prepare(&file).unwrap();
        (dir, exp, data)
    }

    #[test]
    fn a_lock_file_agrees_with_its_own_run_and_names_each_kind_of_disagreement() {
        let (dir, exp, data) = synthetic();
        assert_eq!((data.n_tasks(), exp.policies.len()), (1, 1));
        let text = lock_text(&exp, &data.info(), 2, "f1", None).unwrap();
        let lock: crate::results::LockFile = toml::from_str(&text).unwrap();
        let r = lock.resolved;
        assert_eq!(
            (r.cells, r.repetitions, r.fingerprint.as_str()),
            (Some(2), 2, "f1")
        );
        let out = Path::new("out");
        check_lock(out, &r, &exp, "f1", None).unwrap();
        let e = check_lock(out, &r, &exp, "f2", None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("out: these results come from a different experiment or trace set (fingerprint f1, now f2)"), "{e}");
        let shard = Shard { index: 0, count: 2 };
        let e = check_lock(out, &r, &exp, "f1", Some(shard))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("these results are a whole experiment, this run is shard 0/2"),
            "{e}"
        );
        let old = Resolved {
            results_format: store::RESULTS_FORMAT - 1,
            ..r.clone()
        };
        let e = check_lock(out, &old, &exp, "f1", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a run cannot continue them"), "{e}");
        // No external policy: nothing to compare file by file.
        assert!(external_changes(&r, &exp).is_empty() && external_files(&exp).is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }
}
