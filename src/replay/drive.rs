//! The replay loop of the learner-level worlds: the order in which a decision, its overhead and its
//! pull are charged.

use std::time::Instant;

use anyhow::{Result, bail};

use super::{Overhead, World};
use crate::protocol::{Action, Policy};
use crate::rng::Rng;

/// One decision of a cell, for the trajectory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub arm: u32,
    /// The pull's reward in the trace set's orientation (NaN if it had none).
    pub reward: f64,
    /// Budget used after the pull (seconds or pulls).
    pub time: f64,
    /// Best score so far in the trace set's orientation, NaN before any.
    pub incumbent: f64,
}

/// The replay loop: decide, charge overhead, pull, observe, until the budget is spent.
pub fn drive<W: World>(
    world: &mut W,
    policy: &mut dyn Policy,
    policy_id: &str,
    rng: &mut Rng,
    overhead: Overhead,
    sign: f64,
    mut steps: Option<&mut Vec<Step>>,
) -> Result<()> {
    let n = world.n_arms();
    if n == 0 {
        bail!(
            "task {}/{} has no arms: nothing to replay (check the experiment's [tasks] learners filter)",
            world.task().dataset,
            world.task().run
        );
    }
    while !world.done() {
        if let Overhead::Fixed(s) = overhead {
            world.charge_overhead(s);
            if world.done() {
                break;
            }
        }
        let t0 = (overhead == Overhead::Measured).then(Instant::now);
        let arm = match policy.try_decide(&world.view(), rng)? {
            Action::Pull(arm) => arm,
            other => bail!(
                "policy {} asked for {other:?}, which the {} world does not offer (drawing and mutating configurations needs the pool world)",
                policy_id,
                world.kind().as_str()
            ),
        };
        if let Overhead::PerFit(s) = overhead {
            let fits = policy.take_fits();
            if fits > 0 {
                world.charge_overhead(s * fits as f64);
            }
        }
        if arm >= n {
            bail!(
                "policy {} chose arm {arm}, but the task has {n} arms (a bug in the policy)",
                policy_id
            );
        }
        let mut spent = t0.map(|t| t.elapsed().as_secs_f64());
        let reward = {
            let obs = world.pull(arm);
            let t1 = spent.is_some().then(Instant::now);
            policy.observe(&obs);
            if let (Some(s), Some(t1)) = (spent.as_mut(), t1) {
                *s += t1.elapsed().as_secs_f64();
            }
            obs.reward.map_or(f64::NAN, |r| sign * r)
        };
        if let Some(s) = spent {
            world.charge_overhead(s);
        }
        if let Some(steps) = steps.as_deref_mut() {
            let l = world.ledger();
            steps.push(Step {
                arm: arm as u32,
                reward,
                time: l.used,
                incumbent: l.incumbent.map_or(f64::NAN, |i| sign * i.reward),
            });
        }
    }
    Ok(())
}
