//! The replay loop of every world: the order in which a decision, its overhead and its action are
//! charged, and the steps it hands to observers (the trajectory recorder is one).

use std::time::Instant;

use anyhow::{Result, anyhow};

use super::{Overhead, World};
use crate::protocol::{Action, Policy};
use crate::rng::Rng;

/// The kind of an action, as stored in trajectories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    Pull,
    Draw,
    Mutate,
    Choose,
}

impl ActionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Pull => "pull",
            ActionKind::Draw => "draw",
            ActionKind::Mutate => "mutate",
            ActionKind::Choose => "choose",
        }
    }

    /// The kind of `action`; `None` for `Stop`, which is no step.
    pub fn of(action: Action) -> Option<ActionKind> {
        match action {
            Action::Pull(_) => Some(ActionKind::Pull),
            Action::Draw => Some(ActionKind::Draw),
            Action::Mutate(_) => Some(ActionKind::Mutate),
            Action::Choose(_) => Some(ActionKind::Choose),
            Action::Stop => None,
        }
    }
}

/// One decision of a cell, in any world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub action: ActionKind,
    pub arm: u32,
    /// The arm's configuration (index into the pool's configurations) in the pool world; the
    /// arm (learner) index in learner-level worlds.
    pub config: u32,
    /// The arm's pulls after this decision (pool world: the unit trained, 1-based).
    pub fidelity: u32,
    /// The action's reward in the recorded orientation (NaN if it had none).
    pub reward: f64,
    /// Budget used after the decision (seconds, pulls or units).
    pub time: f64,
    /// Best score so far in the recorded orientation, NaN before any.
    pub incumbent: f64,
}

/// Receives every step of a replay, in order (argmin's executor hands its observers each
/// iteration the same way).
pub trait Observer {
    fn step(&mut self, step: &Step);
}

/// The trajectory recorder: keeps every step.
impl Observer for Vec<Step> {
    fn step(&mut self, step: &Step) {
        self.push(*step);
    }
}

/// The replay loop: (charge a fixed overhead,) decide, (charge per-fit overhead,) act, observe,
/// (charge measured overhead,) hand the step to the observers; until the world is done or the
/// policy stops. An action the world cannot take is an error naming the policy.
pub fn drive<W: World + ?Sized>(
    world: &mut W,
    policy: &mut dyn Policy,
    policy_id: &str,
    rng: &mut Rng,
    overhead: Overhead,
    observers: &mut [&mut dyn Observer],
) -> Result<()> {
    let sign = world.sign();
    while !world.done() {
        if let Overhead::Fixed(s) = overhead {
            world.ledger_mut().clock.charge_overhead(s);
            if world.done() {
                break;
            }
        }
        let t0 = (overhead == Overhead::Measured).then(Instant::now);
        let action = policy.try_decide(&world.view(), rng)?;
        if let Overhead::PerFit(s) = overhead {
            let fits = policy.take_fits();
            if fits > 0 {
                world.ledger_mut().clock.charge_overhead(s * fits as f64);
            }
        }
        let Some(kind) = ActionKind::of(action) else {
            world.ledger_mut().clock.stop();
            break;
        };
        let mut spent = t0.map(|t| t.elapsed().as_secs_f64());
        let (arm, reward) = {
            let obs = world
                .apply(action)
                .map_err(|e| anyhow!("policy {policy_id} {e}"))?;
            let t1 = spent.is_some().then(Instant::now);
            policy.observe(&obs);
            if let (Some(s), Some(t1)) = (spent.as_mut(), t1) {
                *s += t1.elapsed().as_secs_f64();
            }
            (obs.arm, obs.reward.map_or(f64::NAN, |r| sign * r))
        };
        if let Some(s) = spent {
            world.ledger_mut().clock.charge_overhead(s);
        }
        if !observers.is_empty() {
            let l = world.ledger();
            let step = Step {
                action: kind,
                arm: arm as u32,
                config: world.config_of(arm),
                fidelity: l.pulls[arm] as u32,
                reward,
                time: l.clock.used,
                incumbent: l.incumbent.map_or(f64::NAN, |i| sign * i.reward),
            };
            for o in observers.iter_mut() {
                o.step(&step);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Observation, View};
    use crate::replay::fixtures::{arm, task};
    use crate::replay::{Exhausted, Order, PullCount, PullCountConfig};

    /// Pulls arm 1 twice, then stops.
    struct TwoThenStop;

    impl Policy for TwoThenStop {
        fn decide(&mut self, view: &View<'_>, _rng: &mut Rng) -> Action {
            if view.step < 2 {
                Action::Pull(1)
            } else {
                Action::Stop
            }
        }
        fn observe(&mut self, _obs: &Observation<'_>) {}
    }

    #[test]
    fn stop_ends_a_learner_level_cell_and_observers_see_every_step() {
        let t = task(vec![
            arm("a", &[(1.0, 0.5), (2.0, 0.6)]),
            arm("b", &[(1.0, 0.7), (2.0, 0.8)]),
        ]);
        let cfg = PullCountConfig {
            budget_pulls: 10,
            order: Order::Recorded,
            failures_consume_budget: false,
            exhausted: Exhausted::Empty,
        };
        let mut w = PullCount::new(&t, cfg, 1.0, 1);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        drive(
            &mut w,
            &mut TwoThenStop,
            "two-then-stop",
            &mut Rng::new(1),
            Overhead::None,
            &mut [&mut a, &mut b],
        )
        .unwrap();
        assert!(w.done());
        assert_eq!((w.ledger().decisions, w.ledger().clock.used), (2, 2.0));
        assert_eq!(a, b);
        let fid: Vec<(u32, u32, f64)> = a.iter().map(|s| (s.arm, s.fidelity, s.reward)).collect();
        assert_eq!(fid, vec![(1, 1, 0.7), (1, 2, 0.8)]);
        assert!(
            a.iter()
                .all(|s| s.action == ActionKind::Pull && s.config == 1)
        );
    }
}
