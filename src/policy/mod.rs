//! Policies: the decision rules, behind one trait and one registry.
//!
//! A policy sees the world only through [`View`](crate::protocol::View) (before a decision) and [`Observation`](crate::protocol::Observation) (after a
//! pull); it never touches clocks, files or threads. It is built from a spec, a family name plus
//! parameters, through [`registry`], so experiment files, results and the CLI all name policies
//! the same way: `family(param=value, ...)` with every parameter, defaults included, in the
//! family's declaration order.

mod asha;
mod bestk;
mod bohb;
pub mod cash;
mod epsilon_greedy;
mod erucb;
pub mod external;
pub mod freeze_thaw;
mod hamlet;
mod hyperband;
mod mutant_ucb;
mod random;
mod round_robin;
mod softmax;
mod ttts;
mod ucb1;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::LazyLock;

use anyhow::{Result, bail};

pub use crate::protocol::{Action, CellStart, Policy, PoolStart, Rule};

mod params;
pub use params::*;
mod external_entry;
pub use external_entry::*;
mod describe;
pub(crate) mod hosted;
pub use describe::*;
mod common;
pub(crate) use common::*;

/// One concrete policy: a family with all parameters resolved (a per-dataset parameter resolves
/// when the policy is built for a task's dataset).
#[derive(Clone)]
pub struct PolicyConfig {
    pub family: &'static Family,
    pub params: Params,
    pub per_dataset: Vec<PerDataset>,
    /// Set for `family = "external"`: the process to run and its name.
    pub external: Option<std::sync::Arc<external::ExternalSpec>>,
}

impl fmt::Debug for PolicyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.id())
    }
}

impl PartialEq for PolicyConfig {
    fn eq(&self, other: &Self) -> bool {
        self.family_name() == other.family_name()
            && self.params == other.params
            && self.per_dataset == other.per_dataset
    }
}

/// Parameters a family gained after results existed, each with its default: at that default they
/// are left out of the policy's id and `params`, so the ids, seeds and results of earlier runs
/// stay what they were; set to anything else they appear.
const LATER_PARAMS: &[(&str, &str, &str)] = &[
    ("ucb1", "pending", "count"),
    ("tpe", "liar", "none"),
    ("smac", "liar", "none"),
    ("random-search", "work", "unit"),
    ("bohb", "model", "kde"),
    ("ftgp", "new_configs", "0"),
    ("mo-asha", "ranking", "epsilon-net"),
    ("mo-hyperband", "ranking", "epsilon-net"),
];

/// Parameters renamed after results existed: (family, name now, name before). A cell's seed
/// hashes the policy's identity under the names before ([`PolicyConfig::seed_id`]), so a rename
/// changes what results call the policy but not its cells' seeds; an experiment file that still
/// gives the old name is told the new one.
pub(crate) const RENAMED_PARAMS: &[(&str, &str, &str)] = &[
    // One name for "the t in ln t" across UCB1 and ER-UCB (issue #44).
    ("er-ucb", "log_t", "t_index"),
];

/// `name` of `family` is a later parameter at its default.
fn quiet(family: &str, name: &str, v: &Value) -> bool {
    LATER_PARAMS.iter().any(|&(f, n, d)| {
        f == family
            && n == name
            && match v {
                Value::Text(t) => t == d,
                Value::Int(i) => i.to_string() == d,
                _ => false,
            }
    })
}

impl PolicyConfig {
    /// Stable text naming the policy: `family(a=1, b=x)`, or `family` without parameters.
    pub fn id(&self) -> String {
        self.id_named(|n| n)
    }

    /// The identity a cell's seed hashes: [`Self::id`] with every renamed parameter under its
    /// name before the rename (`RENAMED_PARAMS`), so that renaming never changes a seed.
    pub fn seed_id(&self) -> String {
        let family = self.family.name;
        self.id_named(|n| {
            RENAMED_PARAMS
                .iter()
                .find(|&&(f, now, _)| f == family && now == n)
                .map_or(n, |&(_, _, before)| before)
        })
    }

    fn id_named<'a>(&'a self, name: impl Fn(&'a str) -> &'a str) -> String {
        let shown: Vec<&(&str, Value)> = self
            .params
            .0
            .iter()
            .filter(|(n, v)| !quiet(self.family.name, n, v))
            .collect();
        if shown.is_empty() {
            return self.family_name().to_string();
        }
        let inner: Vec<String> = shown
            .iter()
            .map(|(n, v)| format!("{}={v}", name(n)))
            .collect();
        format!("{}({})", self.family_name(), inner.join(", "))
    }

    /// The family as results name it: the registry's name, or an external policy's `name`.
    pub fn family_name(&self) -> &str {
        match &self.external {
            Some(e) => &e.name,
            None => self.family.name,
        }
    }

    /// The parameters as JSON, per-dataset ones at their placeholder.
    pub fn params_json(&self) -> String {
        self.json_of(&self.params)
    }

    /// The parameters a cell on `dataset` runs with, as JSON (the results' `params`).
    pub fn params_json_for(&self, dataset: &str) -> String {
        if self.per_dataset.is_empty() {
            return self.params_json();
        }
        self.json_of(&self.params_for(dataset))
    }

    fn json_of(&self, p: &Params) -> String {
        let map: serde_json::Map<String, serde_json::Value> =
            p.0.iter()
                .filter(|(n, v)| !quiet(self.family.name, n, v))
                .map(|(n, v)| (n.to_string(), v.to_json()))
                .collect();
        serde_json::Value::Object(map).to_string()
    }

    /// The parameters resolved for `dataset` (checked by `check_datasets`; a dataset without a
    /// value or default keeps the placeholder, which a family rejects).
    pub fn params_for(&self, dataset: &str) -> Params {
        let mut p = self.params.clone();
        for pd in &self.per_dataset {
            if let Some(v) = pd.values.get(dataset).or(pd.default.as_ref())
                && let Some(slot) = p.0.iter_mut().find(|(n, _)| *n == pd.name)
            {
                slot.1 = v.clone();
            }
        }
        p
    }

    /// Every per-dataset parameter has a value (or a default) for each of `datasets` (those the
    /// experiment keeps), and names only datasets among `known` (all the data's datasets, before
    /// filters), so that a misspelt name is an error, not silently the default.
    pub fn check_datasets<'a>(
        &self,
        datasets: impl IntoIterator<Item = &'a str>,
        known: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        let datasets: Vec<&str> = datasets.into_iter().collect();
        let known: std::collections::BTreeSet<&str> = known.into_iter().collect();
        for pd in &self.per_dataset {
            if let Some(bad) = pd.values.keys().find(|d| !known.contains(d.as_str())) {
                bail!(
                    "policy '{}', parameter '{}': per_dataset names dataset '{bad}', which the data does not have (it has: {}); check the spelling",
                    self.family_name(),
                    pd.name,
                    known.iter().copied().collect::<Vec<_>>().join(", ")
                );
            }
            if pd.default.is_some() {
                continue;
            }
            let missing: Vec<&str> = datasets
                .iter()
                .copied()
                .filter(|d| !pd.values.contains_key(*d))
                .collect();
            if !missing.is_empty() {
                bail!(
                    "policy '{}', parameter '{}': per_dataset has no value for dataset(s) {}; add them, or a 'default'",
                    self.family_name(),
                    pd.name,
                    missing.join(", ")
                );
            }
        }
        Ok(())
    }

    pub fn build(&self, n_arms: usize) -> Box<dyn Policy> {
        if let Some(e) = &self.external {
            if e.in_process.is_some() {
                return hosted_policy(e, self.id(), self.params_json());
            }
            return Box::new(external::ExternalPolicy::new(
                e.clone(),
                self.id(),
                self.params_json(),
            ));
        }
        (self.family.build)(&self.params, n_arms)
    }

    /// Build the policy for the cell that `start` describes: its dataset's parameters (when
    /// they are per dataset) and its arms (learner-level worlds; none at the start of a pool
    /// world's cell, where arms are drawn).
    pub fn build_for(&self, start: &CellStart<'_>) -> Box<dyn Policy> {
        let (dataset, n_arms) = (start.dataset, start.arms.len());
        if self.per_dataset.is_empty() {
            return self.build(n_arms);
        }
        if let Some(e) = &self.external {
            if e.in_process.is_some() {
                return hosted_policy(e, self.id(), self.params_json_for(dataset));
            }
            return Box::new(external::ExternalPolicy::new(
                e.clone(),
                self.id(),
                self.params_json_for(dataset),
            ));
        }
        (self.family.build)(&self.params_for(dataset), n_arms)
    }
}

/// An in-process policy for one cell, from the embedding program's host (checked to exist when
/// the experiment was expanded; the cell fails if it has gone since).
fn hosted_policy(
    e: &std::sync::Arc<external::ExternalSpec>,
    id: String,
    params_json: String,
) -> Box<dyn Policy> {
    match hosted::host(&e.name) {
        Ok(h) => h.build(e.clone(), id, params_json),
        Err(err) => Box::new(external::Failed(format!("{err:#}"))),
    }
}

static REGISTRY: LazyLock<Vec<Family>> = LazyLock::new(|| {
    vec![
        round_robin::family(),
        random::family(),
        epsilon_greedy::family(),
        softmax::family(),
        ucb1::family_textbook(),
        ucb1::family_btb(),
        bestk::family_rewards(),
        bestk::family_velocity(),
        erucb::family(),
        hamlet::family_eps(),
        hamlet::family_decay(),
        hamlet::family_ucb(),
        hamlet::family_pool(),
        hyperband::family_random_search(),
        hyperband::family_successive_halving(),
        hyperband::family_hyperband(),
        hyperband::family_mo_hyperband(),
        asha::family_asha(),
        asha::family_async_hyperband(),
        asha::family_mo_asha(),
        bohb::family_bohb(),
        cash::family_ex_def(),
        cash::family_grid_search(),
        cash::family_tpe(),
        cash::family_smac(),
        cash::family_parego(),
        cash::family_nsga2(),
        cash::family_mo_tpe(),
        ttts::family_ttts(),
        ttts::family_t3c(),
        ttts::family_dttts(),
        ttts::family_uniform(),
        mutant_ucb::family_inf_ucb_e(),
        mutant_ucb::family_mutant_ucb(),
        mutant_ucb::family_steady_state_ea(),
        freeze_thaw::family_dpl(),
        freeze_thaw::family_dyhpo(),
        freeze_thaw::family_ftgp(),
        freeze_thaw::family_curve_ensemble(),
    ]
});

/// Every policy family this program knows.
pub fn registry() -> &'static [Family] {
    &REGISTRY
}

/// A family's parameters at their defaults.
pub(crate) fn default_params(name: &str) -> Params {
    let fam = family(name).expect("a built-in family");
    Params(
        fam.params
            .iter()
            .map(|d| (d.name, d.default.clone()))
            .collect(),
    )
}

pub fn family(name: &str) -> Result<&'static Family> {
    match registry().iter().find(|f| f.name == name) {
        Some(f) => Ok(f),
        None => bail!(
            "unknown policy '{name}'{}; known policies: {} (see `banditbench policies`)",
            did_you_mean(name, registry().iter().map(|f| f.name)),
            registry()
                .iter()
                .map(|f| f.name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A policy with every parameter at its default.
pub fn default_config(family_name: &str) -> Result<PolicyConfig> {
    Ok(expand(family_name, &BTreeMap::new())?.remove(0))
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::protocol::{Observation, Revealed, View, WorldKind};

    /// A view with the given pull counts, for decision tests.
    pub fn view<'a>(pulls: &'a [u64], zeros: &'a [f64]) -> View<'a> {
        View {
            n_arms: pulls.len(),
            step: pulls.iter().sum(),
            pulls,
            arm_clock: zeros,
            arm_best: zeros,
            budget: 100.0,
            used: pulls.iter().sum::<u64>() as f64,
            slice: 1.0,
            kind: WorldKind::PullCount,
            pool: None,
            workers: 1,
            worker: 0,
            now: 0.0,
            pending: &[],
            busy: &[],
        }
    }

    pub fn obs(arm: usize, reward: Option<f64>) -> Observation<'static> {
        static NONE: [Revealed; 0] = [];
        Observation {
            arm,
            reward,
            revealed: &NONE,
            arm_clock: 0.0,
            exhausted: false,
            objectives: &[],
        }
    }

    /// Feed a history of (arm, reward) into a policy.
    pub fn feed(p: &mut dyn Policy, history: &[(usize, Option<f64>)]) -> Vec<u64> {
        let n = history.iter().map(|h| h.0).max().map_or(0, |m| m + 1);
        let mut pulls = vec![0u64; n];
        for &(a, r) in history {
            p.observe(&obs(a, r));
            pulls[a] += 1;
        }
        pulls
    }

    pub fn build(family: &str, params: &[(&str, toml::Value)], n_arms: usize) -> Box<dyn Policy> {
        let given: BTreeMap<String, toml::Value> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        expand(family, &given).unwrap().remove(0).build(n_arms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_expand_in_declaration_order() {
        let mut given = BTreeMap::new();
        given.insert(
            "epsilon".to_string(),
            toml::Value::Array(vec![toml::Value::Float(0.05), toml::Value::Float(0.1)]),
        );
        let cfgs = expand("epsilon-greedy", &given).unwrap();
        let ids: Vec<String> = cfgs.iter().map(PolicyConfig::id).collect();
        assert_eq!(
            ids,
            vec![
                "epsilon-greedy(epsilon=0.05, initial_pulls=0)",
                "epsilon-greedy(epsilon=0.1, initial_pulls=0)"
            ]
        );
        assert_eq!(
            cfgs[0].params_json(),
            r#"{"epsilon":0.05,"initial_pulls":0}"#
        );
    }

    #[test]
    fn unknown_policy_lists_the_registry() {
        let err = expand("ucb2", &BTreeMap::new()).unwrap_err().to_string();
        assert!(err.contains("unknown policy 'ucb2'"), "{err}");
        assert!(
            err.contains("ucb1-btb") && err.contains("round-robin"),
            "{err}"
        );
    }

    #[test]
    fn unknown_parameter_lists_the_policy_parameters() {
        let mut given = BTreeMap::new();
        given.insert("eps".to_string(), toml::Value::Float(0.1));
        let err = expand("epsilon-greedy", &given).unwrap_err().to_string();
        assert!(err.contains("no parameter 'eps'"), "{err}");
        assert!(err.contains("epsilon, initial_pulls"), "{err}");
    }

    #[test]
    fn out_of_range_values_are_rejected_with_the_range() {
        let mut given = BTreeMap::new();
        given.insert("epsilon".to_string(), toml::Value::Float(1.5));
        let err = expand("epsilon-greedy", &given).unwrap_err().to_string();
        assert!(err.contains("number in [0, 1]"), "{err}");
        let mut given = BTreeMap::new();
        given.insert("tie_break".to_string(), toml::Value::String("last".into()));
        let err = expand("ucb1", &given).unwrap_err().to_string();
        assert!(err.contains("one of first, random"), "{err}");
    }

    fn external(text: &str) -> Result<Vec<PolicyConfig>> {
        let t: toml::Table = text.parse().unwrap();
        expand_external(&t.into_iter().collect())
    }

    #[test]
    fn a_python_policy_is_refused_without_the_python_package_and_bad_keys_are_named() {
        let t: toml::Table = "name = \"my\"\nclass = \"p.py:P\"".parse().unwrap();
        // p.py does not exist: named before anything else.
        let e = format!(
            "{:#}",
            expand_in_process(&t.into_iter().collect()).unwrap_err()
        );
        assert!(e.contains("'class' names p.py, which is not a file"), "{e}");
        let t: toml::Table = "name = \"my\"\nclass = \"banditbench.x:P\""
            .parse()
            .unwrap();
        let e = format!(
            "{:#}",
            expand_in_process(&t.into_iter().collect()).unwrap_err()
        );
        assert!(
            e.contains("runs only from the Python package") && e.contains("family = \"external\""),
            "{e}"
        );
        let t: toml::Table = "name = \"my\"\ncommand = [\"x\"]".parse().unwrap();
        let e = format!(
            "{:#}",
            expand_in_process(&t.into_iter().collect()).unwrap_err()
        );
        assert!(e.contains("has no key 'command'"), "{e}");
        let t: toml::Table = "name = \"ucb1\"\nclass = \"m:P\"".parse().unwrap();
        let e = format!(
            "{:#}",
            expand_in_process(&t.into_iter().collect()).unwrap_err()
        );
        assert!(e.contains("the name is a built-in policy's"), "{e}");
    }

    #[test]
    fn external_policies_expand_their_params_and_name_bad_keys() {
        let cfgs = external(
            "name = \"py\"\ncommand = [\"python3\", \"p.py\"]\nparams = { c = [1.0, 2], greedy = true, kind = \"x\" }",
        )
        .unwrap();
        let ids: Vec<String> = cfgs.iter().map(PolicyConfig::id).collect();
        assert_eq!(
            ids,
            vec![
                "py(c=1, greedy=true, kind=x)",
                "py(c=2, greedy=true, kind=x)"
            ]
        );
        assert_eq!(cfgs[1].params_json(), r#"{"c":2,"greedy":true,"kind":"x"}"#);
        assert_eq!(cfgs[0].family_name(), "py");
        let e = |t: &str| external(t).unwrap_err().to_string();
        assert!(e("command = [\"x\"]").contains("needs 'name'"));
        assert!(e("name = \"py\"").contains("needs 'command'"));
        assert!(e("name = \"py\"\ncommand = \"python3 p.py\"").contains("as a list"));
        assert!(e("name = \"py\"\ncommand = [\"x\"]\nc = 2").contains("has no key 'c'"));
        assert!(e("name = \"ucb1\"\ncommand = [\"x\"]").contains("built-in policy's"));
        assert!(e("name = \"a(b)\"\ncommand = [\"x\"]").contains("letters, digits"));
        assert!(e("name = \"../../x\"\ncommand = [\"x\"]").contains("letters, digits"));
        assert!(
            e("name = \"py\"\ncommand = [\"x\"]\non_failure = \"retry\"")
                .contains("allowed: \"stop\", \"restart\"")
        );
        assert!(e("name = \"py\"\ncommand = [\"x\"]\ntimeout_s = 0").contains("positive"));
        assert!(e("name = \"py\"\ncommand = [\"x\"]\nparams = { c = [] }").contains("empty list"));
    }

    #[test]
    fn every_family_builds_and_names_its_source() {
        for f in registry() {
            assert!(f.source.len() > 10, "{} cites its source", f.name);
            let cfg = default_config(f.name).unwrap();
            let _ = cfg.build(3);
        }
    }
}

/// Every family has its row in the README's table of policies (a new family without one fails).
#[cfg(test)]
#[test]
fn every_family_has_a_row_in_the_readmes_table() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let missing: Vec<&str> = registry()
        .iter()
        .map(|f| f.name)
        .filter(|n| !readme.contains(&format!("\n| `{n}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "README's policies table lacks: {missing:?}"
    );
}

/// Every family's identity at its defaults (`tests/golden/policy_ids.json`): the id names the
/// policy in results and seeds every cell it runs, so a family that gains a parameter changes
/// every seed of its cells unless the parameter is one of `LATER_PARAMS` at its default (and a
/// renamed parameter keeps its seeds only through `RENAMED_PARAMS`). This test fails on any such
/// change, in any family, so it is made deliberately.
#[cfg(test)]
mod identity_golden {
    use super::*;

    /// A renamed parameter shows its new name in the id and results, and keeps its old name in
    /// the identity that seeds the cells: ER-UCB's seeds are those from before `t_index` became
    /// `log_t`.
    #[test]
    fn a_renamed_parameter_keeps_its_cells_seeds_and_the_old_name_is_told_the_new() {
        let p = default_config("er-ucb").unwrap();
        assert_eq!(
            p.id(),
            "er-ucb(theta=0.01, gamma=20, beta=0, log_t=round, tie_break=first)"
        );
        assert_eq!(
            p.seed_id(),
            "er-ucb(theta=0.01, gamma=20, beta=0, t_index=round, tie_break=first)"
        );
        let ucb = default_config("ucb1").unwrap();
        assert_eq!(ucb.seed_id(), ucb.id());
        let old: BTreeMap<String, toml::Value> =
            [("t_index".to_string(), toml::Value::String("pulls".into()))].into();
        let e = params::expand("er-ucb", &old).unwrap_err().to_string();
        assert!(e.contains("it is now 'log_t'"), "{e}");
        // Every rename names a parameter its family has, under its new name only.
        for &(f, now, before) in RENAMED_PARAMS {
            let fam = family(f).unwrap();
            assert!(fam.params.iter().any(|d| d.name == now), "{f}.{now}");
            assert!(!fam.params.iter().any(|d| d.name == before), "{f}.{before}");
        }
    }

    #[test]
    fn every_familys_default_id_and_params_are_recorded() {
        let mut now = serde_json::Map::new();
        for f in registry() {
            let entry = match default_config(f.name) {
                Ok(p) => serde_json::json!([p.id(), p.params_json()]),
                Err(e) => serde_json::json!(format!("no default: {e}")),
            };
            now.insert(f.name.to_string(), entry);
        }
        let now = serde_json::Value::Object(now);
        let recorded: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/golden/policy_ids.json")).unwrap();
        assert!(
            recorded["ids"] == now,
            "a family's default id or params changed (or a family was added): that changes the \
             seeds of its cells. Keep old ids with LATER_PARAMS, or record the new ones \
             deliberately (with a results-format bump if existing ids changed; a renamed parameter goes in \
             RENAMED_PARAMS so that seeds stay). Now:\n{}",
            serde_json::to_string_pretty(&serde_json::json!({ "ids": now })).unwrap()
        );
    }
}
