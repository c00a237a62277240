//! What several rules share: the `start` phase that tries every arm once, and per-arm means.

use super::*;
use crate::protocol::{Action, CellStart, Policy};
use crate::protocol::{Observation, View};
use crate::rng::Rng;
use anyhow::Result;

/// The `start` parameter of families whose rule does not itself try every arm first.
pub(crate) fn start_param(default: &'static str) -> ParamDef {
    ParamDef {
        name: "start",
        kind: Kind::Choice(&["none", "each-arm-once"]),
        default: Value::Text(default.into()),
        doc: "none: the rule decides from the first pull (BTB's semantics; some arms may never be tried); each-arm-once: pull every arm once, in index order, before the rule takes over (as UCB1, round-robin and HAMLET's variants do)",
    }
}

/// Wraps a policy with the `start = "each-arm-once"` phase: while some arm has never been pulled,
/// pull the first such arm; the inner policy observes every pull.
pub(crate) struct EachArmOnce(pub Box<dyn Policy>);

impl Policy for EachArmOnce {
    fn observe(&mut self, obs: &Observation<'_>) {
        self.0.observe(obs);
    }

    fn take_fits(&mut self) -> u64 {
        self.0.take_fits()
    }

    fn begin(&mut self, cell: &CellStart<'_>) -> Result<()> {
        self.0.begin(cell)
    }

    fn try_decide(&mut self, view: &View<'_>, rng: &mut Rng) -> Result<Action> {
        match view.pulls.iter().position(|&p| p == 0) {
            Some(a) => Ok(Action::Pull(a)),
            None => self.0.try_decide(view, rng),
        }
    }

    fn finish(&mut self) -> Result<Option<String>> {
        self.0.finish()
    }
}

/// `policy`, behind the start phase its `start` parameter names.
pub(crate) fn with_start(p: &Params, policy: Box<dyn Policy>) -> Box<dyn Policy> {
    if p.text("start") == "each-arm-once" {
        Box::new(EachArmOnce(policy))
    } else {
        policy
    }
}

/// Per-arm running means of the rewards observed so far; `None` rewards count as pulls only.
#[derive(Clone, Debug)]
pub(crate) struct Means {
    pub pulls: Vec<u64>,
    pub sum: Vec<f64>,
    pub known: Vec<u64>,
}

impl Means {
    pub fn new(n: usize) -> Self {
        Means {
            pulls: vec![0; n],
            sum: vec![0.0; n],
            known: vec![0; n],
        }
    }

    pub fn observe(&mut self, obs: &Observation<'_>) {
        self.pulls[obs.arm] += 1;
        if let Some(r) = obs.reward {
            self.sum[obs.arm] += r;
            self.known[obs.arm] += 1;
        }
    }

    /// Mean reward of an arm, 0 when it has none (the convention of ER-UCB's and BTB's code).
    pub fn mean(&self, arm: usize) -> f64 {
        if self.known[arm] == 0 {
            0.0
        } else {
            self.sum[arm] / self.known[arm] as f64
        }
    }

    /// The first arm (index order) pulled fewer than `n` times.
    pub fn first_below(&self, n: u64) -> Option<usize> {
        self.pulls.iter().position(|&p| p < n)
    }

    /// The start phase of `n` pulls per arm, in index order, on several workers: the first arm
    /// below `n` observed pulls that is not running; a wait while every such arm is running;
    /// `None` once every arm has its `n` results.
    pub fn start_phase(&self, n: u64, view: &View<'_>) -> Option<Action> {
        let mut running = false;
        for (a, &p) in self.pulls.iter().enumerate() {
            if p < n {
                if !view.is_busy(a) {
                    return Some(Action::Pull(a));
                }
                running = true;
            }
        }
        running.then_some(Action::Wait)
    }
}

/// A uniformly random arm among those not running on another worker (with one worker, or none
/// running, `rng.below(n_arms)` itself); a wait when every arm is running.
pub(crate) fn random_free_arm(view: &View<'_>, rng: &mut Rng) -> Action {
    let n = view.n_arms;
    if !view.busy.iter().any(|&b| b) {
        return Action::Pull(rng.below(n));
    }
    let free = (0..n).filter(|&a| !view.is_busy(a)).count();
    if free == 0 {
        return Action::Wait;
    }
    let k = rng.below(free);
    Action::Pull((0..n).filter(|&a| !view.is_busy(a)).nth(k).unwrap_or(0))
}
