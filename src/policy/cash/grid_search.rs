//! Grid search over the pool's grid in a fixed order (Auto-WEKA's grid search).

use super::ex_def::walk;
use super::{Evaluator, ParamDef, Proposal, Proposer, WORLDS};
use crate::policy::{Family, Params};
use crate::protocol::PoolView;
use crate::rng::Rng;
use crate::space::Scale;
use anyhow::{Result, bail};

// ---------------------------------------------------------------------------------------------
// Grid search

pub fn family_grid_search() -> Family {
    Family {
        name: "grid-search",
        summary: "evaluate the pool's grid configuration by configuration in a fixed order (then stop)",
        source: "Thornton, Hutter, Hoos & Leyton-Brown 2013, 'Auto-WEKA', KDD, §5 (grid search over every learner's grid)",
        worlds: WORLDS,
        parallel: WORLDS,
        params: vec![ParamDef::choice(
            "order",
            &["interleaved", "sequential"],
            "interleaved",
            "interleaved: the learners take turns, each walking its grid in mixed-radix order (last dimension fastest); sequential: one learner's whole grid after another's",
        )],
        build: |p: &Params, _| {
            Box::new(Evaluator::new(GridSearch {
                interleaved: p.text("order") == "interleaved",
                order: None,
                next: 0,
            }))
        },
    }
}

pub struct GridSearch {
    pub(super) interleaved: bool,
    pub(super) order: Option<Vec<u32>>,
    pub(super) next: usize,
}

impl Proposer for GridSearch {
    fn propose(&mut self, p: &PoolView<'_>, _rng: &mut Rng) -> Result<Proposal> {
        if self.order.is_none() {
            let s = p.space;
            if s.learners
                .iter()
                .flatten()
                .any(|d| matches!(d.scale, Scale::Numeric { .. }))
            {
                bail!(
                    "grid-search needs a grid pool (ordinal and categorical dimensions, such as traces/sklearn-grid); this pool's configurations are random draws from continuous ranges"
                );
            }
            let mut rank = vec![0usize; s.learners.len()];
            let mut keyed: Vec<((usize, usize), u32)> = Vec::new();
            for c in 0..s.len() {
                let l = s.learner(c);
                let r = rank[l];
                rank[l] += 1;
                if p.open[c] {
                    keyed.push((if self.interleaved { (r, l) } else { (l, r) }, c as u32));
                }
            }
            keyed.sort_unstable();
            self.order = Some(keyed.into_iter().map(|(_, c)| c).collect());
        }
        let order = self.order.as_ref().expect("set above");
        Ok(walk(order, &mut self.next, |c| p.open[c as usize]))
    }

    fn tell(&mut self, _config: u32, _budget: u32, _score: Option<f64>) {}
}
