//! Ex-Def: every learner at its default hyper-parameters (Auto-WEKA's baseline).

use super::{Evaluator, Proposal, Proposer, WORLDS};
use crate::policy::{Family, Params};
use crate::protocol::PoolView;
use crate::rng::Rng;
use anyhow::{Result, bail};

// ---------------------------------------------------------------------------------------------
// Ex-Def

pub fn family_ex_def() -> Family {
    Family {
        name: "ex-def",
        summary: "evaluate every learner at its default hyper-parameters and keep the best (then stop)",
        source: "Thornton, Hutter, Hoos & Leyton-Brown 2013, 'Auto-WEKA: Combined Selection and Hyperparameter Optimization of Classification Algorithms', KDD, §5 (Ex-Def)",
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![],
        build: |_: &Params, _| Box::new(Evaluator::new(ExDef { next: 0 })),
    }
}

pub struct ExDef {
    pub(super) next: usize,
}

impl Proposer for ExDef {
    fn propose(&mut self, p: &PoolView<'_>, _rng: &mut Rng) -> Result<Proposal> {
        if p.defaults.iter().all(Option::is_none) {
            bail!(
                "ex-def needs each learner's default configuration, and this pool records none on this task (record them with scripts/record/record_defaults.py)"
            );
        }
        let defaults: Vec<u32> = p.defaults.iter().flatten().copied().collect();
        Ok(walk(&defaults, &mut self.next, |_| true))
    }

    fn tell(&mut self, _config: u32, _budget: u32, _score: Option<f64>) {}
}

/// The next configuration of `list` from position `next` that `ok` accepts, or Stop at its end.
pub(super) fn walk(list: &[u32], next: &mut usize, ok: impl Fn(u32) -> bool) -> Proposal {
    while *next < list.len() {
        let c = list[*next];
        *next += 1;
        if ok(c) {
            return Proposal::Choose(c);
        }
    }
    Proposal::Stop
}
