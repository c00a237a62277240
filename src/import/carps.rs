//! CARP-S's run logs (Benjamins et al. 2025, "CARP-S: A Benchmarking Framework for Comprehensive
//! and Reproducible Optimization"): one folder per run, `runs/<optimizer>/<benchmark>/<task>/<seed>`,
//! holding `trial_logs.jsonl` (one JSON line per evaluation: `n_trials`, `n_function_calls`,
//! `trial_info{config, budget, seed, ...}`, `trial_value{cost, time, virtual_time, status,
//! starttime, endtime, ...}`) and Hydra's `.hydra/config.yaml` (`optimizer_id`, `benchmark_id`,
//! `task_id`, `seed`), as `carps/loggers/file_logger.py` writes them. CARP-S minimises `cost`.
//!
//! A configuration is a trial (its arm): re-evaluating it at a higher budget is the same arm at
//! a higher fidelity. Status 1 (SUCCESS) gives a value; 2, 3 and 4 (CRASHED, TIMEOUT,
//! MEMORYOUT) are failed decisions; 0 (RUNNING) is pending. `trajectory_logs.jsonl` is not read:
//! every trial is in `trial_logs.jsonl`, and the incumbent is their running minimum, as CARP-S's
//! own analysis (`process_logs`) computes it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

use super::{Eval, ImportedRun, Task, parse_seed, task_of};

/// What the imported clock counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// `n_trials`: trials so far, a multi-fidelity evaluation counting its fraction of the full
    /// budget (CARP-S's own x axis).
    Trials,
    /// `n_function_calls`: evaluations so far, whatever their budget.
    Calls,
    /// CARP-S's elapsed time (`calc_time` in its analysis): the start time since the run's first
    /// evaluation plus the running sum of `virtual_time` (a tabular or surrogate benchmark's
    /// recorded cost).
    Seconds,
}

impl std::fmt::Display for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Clock::Trials => "trials",
            Clock::Calls => "calls",
            Clock::Seconds => "seconds",
        })
    }
}

impl std::str::FromStr for Clock {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Clock, String> {
        match s {
            "trials" => Ok(Clock::Trials),
            "calls" => Ok(Clock::Calls),
            "seconds" => Ok(Clock::Seconds),
            _ => Err(format!(
                "'{s}': the clock is trials (n_trials), calls (n_function_calls) or seconds (CARP-S's elapsed time)"
            )),
        }
    }
}

impl Clock {
    pub fn unit(self) -> &'static str {
        match self {
            Clock::Trials => "trials",
            Clock::Calls => "function calls",
            Clock::Seconds => "seconds",
        }
    }
}

/// `import carps`'s own options (the shared ones are [`super::Common`]); every default is
/// written here once.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Request {
    /// The config key naming the policy.
    pub policy_key: String,
    /// The config key naming the task.
    pub task_key: String,
    /// The config key giving the seed.
    pub seed_key: String,
    /// What the clock counts: trials, calls or seconds.
    #[serde(deserialize_with = "crate::options::parsed")]
    pub clock: Clock,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            policy_key: "optimizer_id".into(),
            task_key: "task_id".into(),
            seed_key: "seed".into(),
            clock: Clock::Trials,
        }
    }
}

impl super::Importer for Request {
    const TOOL: &'static str = "carps";

    fn read(
        &self,
        paths: &[PathBuf],
        common: &super::Common,
    ) -> Result<(super::Import, Vec<String>)> {
        let opts = Options {
            clock: self.clock,
            task: common.task.clone(),
            task_key: self.task_key.clone(),
            policy_key: self.policy_key.clone(),
            seed_key: self.seed_key.clone(),
            prefix: common.prefix_or(Self::TOOL),
        };
        let (mut runs, files) = read(paths, &opts)?;
        let objectives = several_costs(&mut runs)?;
        let how = format!(
            "policy from '{}', task from {}, seed from '{}' (.hydra/config.yaml), clock {}",
            self.policy_key,
            common.task_source(&self.task_key),
            self.seed_key,
            self.clock.unit()
        );
        let imp = super::Import {
            tool: Self::TOOL,
            runs,
            maximize: false,
            metric: "cost".into(),
            budget_unit: self.clock.unit().into(),
            files,
            how,
            objectives,
            intermediate: false,
        };
        Ok((imp, Vec::new()))
    }
}

/// Runs whose successful trials report lists of costs: every such list of the same length (at
/// least two), each cost minimised; CARP-S's log does not name them (`--objectives` does). A
/// failed trial's values are that many NaN. Empty for runs of one cost.
fn several_costs(runs: &mut [ImportedRun]) -> Result<Vec<super::objectives::Objective>> {
    let d = runs
        .iter()
        .flat_map(|r| &r.evals)
        .map(|e| e.values.len())
        .max()
        .unwrap_or(0);
    if d < 2 {
        return Ok(Vec::new());
    }
    for r in runs.iter_mut() {
        for e in &mut r.evals {
            if e.action != "result" {
                e.values = vec![f64::NAN; d];
            } else if e.values.len() != d {
                bail!(
                    "{}: trial {} reports {} cost(s) where the runs report {d}; import runs of the same objectives together",
                    r.source,
                    e.trial,
                    e.values.len().max(1)
                );
            }
        }
    }
    Ok((0..d)
        .map(|_| super::objectives::Objective {
            name: None,
            maximize: false,
        })
        .collect())
}

/// How to read CARP-S runs (`import carps` options).
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub clock: Clock,
    /// The task of every run, or None: the config key `task_key`.
    pub task: Option<String>,
    pub task_key: String,
    pub policy_key: String,
    pub seed_key: String,
    /// Prefix of every policy's name.
    pub prefix: String,
}

/// Read every run under `paths`: the runs and the files read.
pub(crate) fn read(paths: &[PathBuf], opts: &Options) -> Result<(Vec<ImportedRun>, Vec<PathBuf>)> {
    let mut runs = Vec::new();
    let mut files = Vec::new();
    for dir in super::run_folders(
        paths,
        &["trial_logs.jsonl"],
        "CARP-S",
        "each with trial_logs.jsonl and .hydra/config.yaml; its runs/ holds them",
    )? {
        runs.push(read_run(&dir, opts)?);
        files.push(dir.join(".hydra").join("config.yaml"));
        files.push(dir.join("trial_logs.jsonl"));
    }
    Ok((runs, files))
}

/// The most YAML nodes a config may hold once its aliases are expanded.
const MAX_YAML_NODES: u64 = 1_000_000;

/// The most characters an interpolated value may reach.
const MAX_INTERPOLATED: usize = 1 << 20;

/// How many nodes the YAML `text` holds with every alias expanded (the tree `YamlLoader` would
/// build), counted from the parser's events without building it; 0 if it does not parse (the
/// loader then reports the error).
fn expanded_nodes(text: &str) -> u64 {
    use yaml_rust2::parser::{Event, EventReceiver, Parser};
    #[derive(Default)]
    struct Count {
        /// Open collections: (anchor id, nodes so far).
        open: Vec<(usize, u64)>,
        anchors: HashMap<usize, u64>,
        total: u64,
    }
    impl Count {
        fn add(&mut self, n: u64) {
            match self.open.last_mut() {
                Some((_, c)) => *c = c.saturating_add(n),
                None => self.total = self.total.saturating_add(n),
            }
        }
    }
    impl EventReceiver for Count {
        fn on_event(&mut self, ev: Event) {
            match ev {
                Event::Scalar(_, _, anchor, _) => {
                    if anchor > 0 {
                        self.anchors.insert(anchor, 1);
                    }
                    self.add(1);
                }
                Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                    self.open.push((anchor, 1));
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    if let Some((anchor, n)) = self.open.pop() {
                        if anchor > 0 {
                            self.anchors.insert(anchor, n);
                        }
                        self.add(n);
                    }
                }
                Event::Alias(id) => {
                    let n = self.anchors.get(&id).copied().unwrap_or(1);
                    self.add(n);
                }
                _ => {}
            }
        }
    }
    let mut count = Count::default();
    let mut parser = Parser::new_from_str(text);
    if parser.load(&mut count, true).is_err() {
        return 0;
    }
    count.total
}

/// Hydra's saved config: the YAML tree, for looking keys up with OmegaConf's `${a.b}`
/// interpolations resolved.
struct Config {
    path: PathBuf,
    root: Yaml,
    /// Keys already resolved, so that interpolations that fan out (each level naming the one
    /// below ten times) cost one resolution per key.
    resolved: std::cell::RefCell<HashMap<String, Option<String>>>,
}

impl Config {
    fn load(path: &Path) -> Result<Config> {
        let text = crate::files::read_text(
            path,
            "the run's Hydra config (CARP-S runs through Hydra, which saves it here)",
        )
        .with_context(|| format!("{}: the run's config", path.display()))?;
        let nodes = expanded_nodes(&text);
        if nodes > MAX_YAML_NODES {
            bail!(
                "{}: its YAML aliases expand to more than {MAX_YAML_NODES} nodes (an alias bomb?); Hydra's saved configs have a few hundred: give the run's own .hydra/config.yaml",
                path.display()
            );
        }
        let mut docs = YamlLoader::load_from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}: line {}, column {}: not valid YAML ({})",
                path.display(),
                e.marker().line(),
                e.marker().col() + 1,
                e.info()
            )
        })?;
        if docs.is_empty() || !matches!(docs[0], Yaml::Hash(_)) {
            bail!("{}: not a YAML mapping", path.display());
        }
        Ok(Config {
            path: path.to_path_buf(),
            root: docs.swap_remove(0),
            resolved: Default::default(),
        })
    }

    fn node(&self, key: &str) -> &Yaml {
        key.split('.').fold(&self.root, |n, k| &n[k])
    }

    /// The value at the dotted `key` as text, interpolations resolved; None if absent.
    fn text(&self, key: &str) -> Result<Option<String>> {
        self.resolve(key, 0)
    }

    fn resolve(&self, key: &str, depth: usize) -> Result<Option<String>> {
        if let Some(v) = self.resolved.borrow().get(key) {
            return Ok(v.clone());
        }
        let v = self.resolve_new(key, depth)?;
        self.resolved
            .borrow_mut()
            .insert(key.to_string(), v.clone());
        Ok(v)
    }

    fn resolve_new(&self, key: &str, depth: usize) -> Result<Option<String>> {
        if depth > 16 {
            bail!(
                "{}: key '{key}': interpolations nest too deep (a cycle?)",
                self.path.display()
            );
        }
        let raw = match self.node(key) {
            Yaml::String(s) | Yaml::Real(s) => s.clone(),
            Yaml::Integer(i) => i.to_string(),
            Yaml::Boolean(b) => b.to_string(),
            Yaml::BadValue | Yaml::Null => return Ok(None),
            _ => bail!("{}: key '{key}' is not a single value", self.path.display()),
        };
        // Resolve each ${a.b} (OmegaConf's node interpolation); resolvers (${name:...}) are
        // not evaluated.
        let mut out = String::new();
        let mut rest = raw.as_str();
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let Some(j) = rest[i..].find('}') else {
                bail!(
                    "{}: key '{key}': '{raw}' has an unclosed interpolation",
                    self.path.display()
                );
            };
            let inner = &rest[i + 2..i + j];
            if inner.contains(':') {
                bail!(
                    "{}: key '{key}': '{raw}' uses the resolver '{inner}', which banditbench does not evaluate; give the value with the option instead",
                    self.path.display()
                );
            }
            let v = self.resolve(inner, depth + 1)?.with_context(|| {
                format!(
                    "{}: key '{key}': '{raw}' refers to '{inner}', which the config does not have",
                    self.path.display()
                )
            })?;
            out.push_str(&v);
            if out.len() > MAX_INTERPOLATED {
                bail!(
                    "{}: key '{key}': its interpolations expand past {MAX_INTERPOLATED} characters; give the value with the option instead",
                    self.path.display()
                );
            }
            rest = &rest[i + j + 1..];
        }
        out.push_str(rest);
        Ok(Some(out))
    }
}

/// A run's policy, task and seed, from its Hydra config (or `--task`).
fn run_identity(dir: &Path, opts: &Options) -> Result<(String, Task, u64)> {
    let cfg = Config::load(&dir.join(".hydra").join("config.yaml"))?;
    let c = cfg.path.display();
    let key = |k: &str, option: &str| -> Result<String> {
        cfg.text(k)?
            .with_context(|| format!("{c}: no key '{k}'; name the key with {option}"))
    };
    let policy = key(&opts.policy_key, "--policy-key")?;
    let task = match &opts.task {
        Some(t) => Task::parse(t, "--task")?,
        None => task_of(&key(&opts.task_key, "--task-key, or give --task")?),
    };
    let seed = parse_seed(
        &key(&opts.seed_key, "--seed-key")?,
        &format!("{c}, key '{}'", opts.seed_key),
    )?;
    Ok((policy, task, seed))
}

/// One line of `trial_logs.jsonl`, and where it is (for messages).
struct LogLine<'a> {
    v: Value,
    file: &'a str,
    line: usize,
}

impl LogLine<'_> {
    fn at(&self, field: &str) -> String {
        format!("{}: line {}, field '{field}'", self.file, self.line)
    }

    fn get(&self, path: &str) -> Result<&Value> {
        path.split('.')
            .try_fold(&self.v, |n, k| n.get(k))
            .with_context(|| format!("{}: missing", self.at(path)))
    }

    fn number(&self, path: &str) -> Result<f64> {
        let n = self.get(path)?;
        n.as_f64()
            .with_context(|| format!("{}: {n} is not a number", self.at(path)))
    }
}

/// The log read so far: trials by configuration, the clock's origin and running sum, and the
/// trials still running.
#[derive(Default)]
struct TrialLog {
    arms: HashMap<String, u32>,
    first_start: Option<f64>,
    virtual_sum: f64,
    pending: u64,
}

impl TrialLog {
    /// One line's evaluation, or `None` for a trial still running.
    fn eval(&mut self, l: &LogLine<'_>, clock: Clock) -> Result<Option<Eval>> {
        let status = l.number("trial_value.status")?;
        let config = l.get("trial_info.config")?.to_string();
        let next = self.arms.len() as u32;
        let trial = *self.arms.entry(config).or_insert(next);
        let whole = status.fract() == 0.0;
        let action = match status as i64 {
            0 if whole => {
                self.pending += 1;
                return Ok(None);
            }
            1 if whole => "result",
            2..=4 if whole => "failed",
            _ => bail!(
                "{}: {status} is not a CARP-S status (0 running, 1 success, 2 crashed, 3 timeout, 4 memory out)",
                l.at("trial_value.status")
            ),
        };
        // A list of costs: a run of several objectives, each minimised (CARP-S's costs).
        let (value, values) = if action == "result" {
            match l.get("trial_value.cost")? {
                Value::Number(n) => (n.as_f64().unwrap_or(f64::NAN), Vec::new()),
                Value::Array(a) if !a.is_empty() => {
                    let v = a
                        .iter()
                        .map(|x| {
                            x.as_f64().with_context(|| {
                                format!("{}: {x} is not a number", l.at("trial_value.cost"))
                            })
                        })
                        .collect::<Result<Vec<f64>>>()?;
                    (v[0], if v.len() > 1 { v } else { Vec::new() })
                }
                other => bail!("{}: {other} is not a number", l.at("trial_value.cost")),
            }
        } else {
            (f64::NAN, Vec::new())
        };
        let time = self.time(l, clock)?;
        // A budget that is a whole number of units is the fidelity (epochs, units); a fraction
        // (a subsample) is kept out.
        let fidelity = match l.get("trial_info.budget")? {
            Value::Number(n) => n
                .as_f64()
                .filter(|b| b.fract() == 0.0 && *b >= 0.0 && *b <= f64::from(u32::MAX))
                .map(|b| b as u32),
            _ => None,
        };
        Ok(Some(Eval {
            time,
            value,
            trial,
            fidelity,
            action,
            values,
        }))
    }

    /// The line's time on `clock`: its trial count, its function calls, or the seconds since
    /// the first trial started plus the recorded (virtual) seconds summed so far.
    fn time(&mut self, l: &LogLine<'_>, clock: Clock) -> Result<f64> {
        let time = match clock {
            Clock::Trials => l.number("n_trials")?,
            Clock::Calls => l.number("n_function_calls")?,
            Clock::Seconds => {
                let start = l.number("trial_value.starttime")?;
                let seconds = l.number("trial_value.virtual_time")?;
                // Each evaluation's recorded seconds on their own: a negative one would pull the
                // running sum back while the clock still reads a valid time.
                if !(seconds.is_finite() && seconds >= 0.0) {
                    bail!(
                        "{}: {seconds} seconds; an evaluation's time must be a non-negative number",
                        l.at("trial_value.virtual_time")
                    );
                }
                self.virtual_sum += seconds;
                start - *self.first_start.get_or_insert(start) + self.virtual_sum
            }
        };
        if !(time.is_finite() && time >= 0.0) {
            bail!(
                "{}: the clock reads {time}; it must be a non-negative number",
                l.at(match clock {
                    Clock::Trials => "n_trials",
                    Clock::Calls => "n_function_calls",
                    Clock::Seconds => "trial_value.starttime",
                })
            );
        }
        Ok(time)
    }
}

fn read_run(dir: &Path, opts: &Options) -> Result<ImportedRun> {
    let (policy, task, seed) = run_identity(dir, opts)?;
    let log = dir.join("trial_logs.jsonl");
    let file = log.display().to_string();
    let text = crate::files::read_text(&log, "CARP-S's trial log (JSON lines)")?;
    let mut evals = Vec::new();
    let mut trials = TrialLog::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            anyhow::anyhow!(
                "{file}: line {}, column {}: not valid JSON ({e}); CARP-S writes one JSON object per line",
                i + 1,
                e.column()
            )
        })?;
        let l = LogLine {
            v,
            file: &file,
            line: i + 1,
        };
        if let Some(e) = trials.eval(&l, opts.clock)? {
            evals.push(e);
        }
    }
    if evals.is_empty() && trials.pending == 0 {
        bail!("{file}: no evaluation in the log");
    }
    evals.sort_by(|a, b| a.time.total_cmp(&b.time));
    Ok(ImportedRun {
        source: dir.display().to_string(),
        policy: format!("{}{policy}", opts.prefix),
        task,
        seed,
        evals,
        pending: trials.pending,
    })
}
