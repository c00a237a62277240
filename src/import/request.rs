//! The importers as a library: one [`Importer`] trait that every run-log tool implements, one
//! [`ImportRequest`] naming the tool and its options, and [`import`], which the command line's
//! `import` and Python's `import_runs` both call. Every option's default is written once, in
//! the tool's `Request::default()`; the command line's flags show it from there.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Deserialize;

use super::{Import, Written, blackbox, carps, deepcave, hposuite, optuna, syne_tune};

/// What every importer of run logs takes besides its own options: the command line's shared
/// flags (`--budget`, `--task`, `--prefix`, `--one-minus`) and Python's shared keywords.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Common {
    /// The budget on the clock: later results are left out [default: the latest time any run
    /// reached].
    pub budget: Option<f64>,
    /// The task of every run, overriding what the files say (dataset, dataset/run or
    /// dataset/run/learner).
    pub task: Option<String>,
    /// Put before every policy's name [default: the tool's name and a colon, `optuna:`].
    pub prefix: Option<String>,
    /// The tool records one minus the score: import 1 - value, in the opposite direction.
    pub one_minus: bool,
    /// Runs of several objectives: the pool (table) they were made on, whose true front and
    /// reference point per task measure them.
    pub pool: Option<PathBuf>,
    /// Runs of several objectives: the pool's name of each value the runs report, in order,
    /// `1-NAME` for a value reported as one minus the pool's [default: the names the tool
    /// records].
    pub objectives: Option<Vec<String>>,
    /// Runs of several objectives: the reference rule, `nadir`, `worst` or a CSV of points
    /// per task [default: nadir].
    pub reference: Option<String>,
    /// Runs of several objectives: the share of the range beyond the nadir or the worst value
    /// [default: 0.1].
    pub reference_margin: Option<f64>,
}

impl Common {
    /// The prefix of every policy's name: the one given, or `TOOL:`.
    pub(crate) fn prefix_or(&self, tool: &str) -> String {
        self.prefix.clone().unwrap_or_else(|| format!("{tool}:"))
    }

    /// How the task is named, for the lock file's provenance: `--task T` or `'KEY'`.
    pub(crate) fn task_source(&self, key: &str) -> String {
        match &self.task {
            Some(t) => format!("--task {t}"),
            None => format!("'{key}'"),
        }
    }
}

/// A tool whose run logs become a results folder: it reads every run under the paths given
/// into one [`Import`] (the shape every tool shares), with notes for the user (runs skipped,
/// and why). Adding a tool: its reader, this trait, a [`Tool`] variant and a subcommand.
pub(crate) trait Importer {
    /// The tool's name on the command line, in Python and in the results (`optuna`).
    const TOOL: &'static str;
    /// Read the runs under `paths`.
    fn read(&self, paths: &[PathBuf], common: &Common) -> Result<(Import, Vec<String>)>;
}

/// The tool an import reads, with its own options.
#[derive(Clone, Debug)]
pub enum Tool {
    /// Syne Tune's experiment folders.
    SyneTune(syne_tune::Request),
    /// Optuna's storages (journal or SQLite).
    Optuna(optuna::Request),
    /// CARP-S's run folders.
    Carps(carps::Request),
    /// hposuite's run files.
    Hposuite(hposuite::Request),
    /// DeepCAVE's run folders.
    Deepcave(deepcave::Request),
}

/// The run-log tools by name, as `banditbench import TOOL` and `import_runs(TOOL, ...)` take
/// them; `blackbox` (a pool, not run logs) is separate: [`import_pool`].
#[cfg(any(feature = "python", test))]
pub(crate) const TOOLS: [&str; 5] = [
    syne_tune::Request::TOOL,
    optuna::Request::TOOL,
    carps::Request::TOOL,
    hposuite::Request::TOOL,
    deepcave::Request::TOOL,
];

/// One import of run logs: the tool, the paths it reads, the results folder it writes (which
/// must not exist) and the options every tool shares.
#[derive(Clone, Debug)]
pub struct ImportRequest {
    /// The tool and its own options.
    pub tool: Tool,
    /// The files or folders to read.
    pub paths: Vec<PathBuf>,
    /// The results folder to write.
    pub out: PathBuf,
    /// The options every tool shares.
    pub common: Common,
}

/// What an import wrote.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The results folder.
    pub out: PathBuf,
    /// The tool's name.
    pub tool: &'static str,
    /// What the clock counts (`seconds`, `trials`).
    pub budget_unit: String,
    /// Notes for the user: runs skipped, and why.
    pub notes: Vec<String>,
    pub(crate) written: Written,
}

impl Imported {
    /// What was imported, in words (the lines `banditbench import` prints).
    pub fn describe(&self) -> String {
        let w = &self.written;
        let mut text = format!(
            "imported {} runs ({} policies: {}; {} tasks) from {}: {} results within the budget of {} {}{}\n",
            w.cells,
            w.policies.len(),
            w.policies.join(", "),
            w.tasks,
            self.tool,
            w.decisions,
            w.budget,
            self.budget_unit,
            if w.cut > 0 {
                format!(" ({} later ones left out)", w.cut)
            } else {
                String::new()
            }
        );
        if w.failures > 0 || w.pending > 0 {
            text.push_str(&format!(
                "{} failed trials kept as decisions without a value; {} pending (running or waiting) trials left out\n",
                w.failures, w.pending
            ));
        }
        text
    }
}

fn read_with<I: Importer>(
    tool: &I,
    paths: &[PathBuf],
    common: &Common,
) -> Result<(Import, Vec<String>)> {
    let (mut imp, notes) = tool.read(paths, common)?;
    if common.one_minus {
        for r in &mut imp.runs {
            for e in &mut r.evals {
                e.value = 1.0 - e.value;
            }
        }
        imp.maximize = !imp.maximize;
        imp.metric = format!("1 - {}", imp.metric);
        imp.how.push_str(", scores 1 - value (--one-minus)");
    }
    Ok((imp, notes))
}

/// Import another tool's run logs as a results folder (`banditbench import TOOL`, Python's
/// `import_runs`).
pub fn import(req: &ImportRequest) -> Result<Imported> {
    let (p, c) = (&req.paths, &req.common);
    let (imp, notes) = match &req.tool {
        Tool::SyneTune(t) => read_with(t, p, c)?,
        Tool::Optuna(t) => read_with(t, p, c)?,
        Tool::Carps(t) => read_with(t, p, c)?,
        Tool::Hposuite(t) => read_with(t, p, c)?,
        Tool::Deepcave(t) => read_with(t, p, c)?,
    };
    let mut imp = imp;
    let measure = super::objectives::measure(&imp, c)?;
    if measure.is_some() && imp.budget_unit == "trials" {
        // On a pool, one trial is one evaluation of a configuration: the pool world's unit, so
        // the import ranks beside a `run` of `budget_unit = "evaluations"`.
        imp.budget_unit = "evaluations".into();
    }
    let written = super::write(&imp, &req.out, c.budget, measure.as_ref())?;
    Ok(Imported {
        out: req.out.clone(),
        tool: imp.tool,
        budget_unit: imp.budget_unit,
        notes,
        written,
    })
}

/// A Syne Tune blackbox into a pool (`banditbench import blackbox`, Python's
/// `import_runs("blackbox", ...)`); returns what it wrote, in words.
pub fn import_pool(dir: &Path, out: &Path, opts: &blackbox::Options) -> Result<String> {
    let w = blackbox::import(dir, out, opts)?;
    Ok(format!(
        "imported a pool of {} configurations on {} tasks x {} runs, {} units each{}\n",
        w.configs,
        w.tasks,
        w.runs,
        w.units,
        if w.failed_curves > 0 {
            format!(
                " ({} curves end in a missing score, kept as failed units)",
                w.failed_curves
            )
        } else {
            String::new()
        }
    ))
}

#[cfg(any(feature = "python", test))]
/// Every key a request of `tool` given by name takes (for rewording the command line's
/// messages as keywords): the tool's own, the shared ones, and `out`.
pub(crate) fn keys(tool: &str) -> Vec<&'static str> {
    use crate::options::keys as of;
    let own = match tool {
        syne_tune::Request::TOOL => of::<syne_tune::Request>(),
        optuna::Request::TOOL => of::<optuna::Request>(),
        carps::Request::TOOL => of::<carps::Request>(),
        hposuite::Request::TOOL => of::<hposuite::Request>(),
        deepcave::Request::TOOL => of::<deepcave::Request>(),
        "blackbox" => of::<blackbox::Options>(),
        _ => &[],
    };
    let mut k: Vec<&str> = own.to_vec();
    k.extend(of::<Common>());
    k.push("out");
    k
}

#[cfg(any(feature = "python", test))]
/// Deserialize `T` from a JSON object of options, naming the tool and the key in the error.
fn options_from<T: serde::de::DeserializeOwned>(
    tool: &str,
    map: serde_json::Map<String, serde_json::Value>,
    also: &str,
) -> Result<T> {
    crate::options::from_value(&format!("import {tool}"), serde_json::Value::Object(map))
        .map_err(|e| anyhow::anyhow!("{e}{also}"))
}

#[cfg(any(feature = "python", test))]
/// A request given by name, as Python's `import_runs(tool, paths, out, **options)` gives it:
/// `options` is a JSON object of the tool's own options and the shared ones ([`Common`]); an
/// unknown key is refused, naming it and the keys the tool takes.
pub(crate) fn request_from_json(
    tool: &str,
    paths: Vec<PathBuf>,
    out: PathBuf,
    options: &str,
) -> Result<ImportRequest> {
    let shared_keys = crate::options::keys::<Common>();
    let (mut shared, mut own) = (serde_json::Map::new(), serde_json::Map::new());
    for (k, v) in crate::options::keywords("import", options)? {
        if shared_keys.contains(&k.as_str()) {
            shared.insert(k, v);
        } else {
            own.insert(k, v);
        }
    }
    let also = format!(" (every importer also takes {})", shared_keys.join(", "));
    let common: Common = options_from(tool, shared, "")?;
    let tool = match tool {
        syne_tune::Request::TOOL => Tool::SyneTune(options_from(tool, own, &also)?),
        optuna::Request::TOOL => Tool::Optuna(options_from(tool, own, &also)?),
        carps::Request::TOOL => Tool::Carps(options_from(tool, own, &also)?),
        hposuite::Request::TOOL => Tool::Hposuite(options_from(tool, own, &also)?),
        deepcave::Request::TOOL => Tool::Deepcave(options_from(tool, own, &also)?),
        other => anyhow::bail!(
            "import: no tool '{other}'; the tools are {} and blackbox",
            TOOLS.join(", ")
        ),
    };
    Ok(ImportRequest {
        tool,
        paths,
        out,
        common,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_by_name_splits_shared_and_own_options_and_names_an_unknown_key() {
        let r = request_from_json(
            "optuna",
            vec!["j.log".into()],
            "out".into(),
            r#"{"names": "{policy}.{seed}", "clock": "attr:cost_s", "budget": 60, "task": null}"#,
        )
        .unwrap();
        assert_eq!(r.common.budget, Some(60.0));
        assert_eq!(r.common.task, None);
        let Tool::Optuna(o) = r.tool else {
            panic!("{:?}", r.tool)
        };
        assert_eq!(o.names, "{policy}.{seed}");
        assert_eq!(o.clock, optuna::Clock::Attr("cost_s".into()));
        assert_eq!(o.task_attr, optuna::Request::default().task_attr);
        let e = request_from_json("optuna", vec![], "o".into(), r#"{"nmes": "x"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("import optuna") && e.contains("nmes") && e.contains("names"),
            "{e}"
        );
        let e = request_from_json("optuna", vec![], "o".into(), r#"{"clock": "hours"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("'hours'") && e.contains("attr:NAME"), "{e}");
        let e = request_from_json("optuna", vec![], "o".into(), r#"{"budget": "60"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("import optuna") && e.contains("f64"), "{e}");
        let e = request_from_json("comet", vec![], "o".into(), "{}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'comet'") && e.contains("syne-tune"), "{e}");
    }
}
