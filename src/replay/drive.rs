//! The replay loop of every world: the order in which a decision, its overhead and its action are
//! charged, and the steps it hands to observers (the trajectory recorder is one).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use anyhow::{Result, anyhow, bail};

use super::{Overhead, World};
use crate::protocol::{Action, Observation, Pending, Policy, Revealed};
use crate::rng::Rng;

/// The kind of an action, as stored in trajectories.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ActionKind {
    #[default]
    Pull,
    Draw,
    Mutate,
    Choose,
    Retrain,
}

impl ActionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Pull => "pull",
            ActionKind::Draw => "draw",
            ActionKind::Mutate => "mutate",
            ActionKind::Choose => "choose",
            ActionKind::Retrain => "retrain",
        }
    }

    /// The kind of `action`; `None` for `Stop` and `Wait`, which are no steps.
    pub fn of(action: Action) -> Option<ActionKind> {
        match action {
            Action::Pull(_) | Action::Train(..) => Some(ActionKind::Pull),
            Action::Draw | Action::DrawTo(_) => Some(ActionKind::Draw),
            Action::Mutate(_) => Some(ActionKind::Mutate),
            Action::Choose(_) | Action::ChooseTo(..) => Some(ActionKind::Choose),
            Action::Retrain(..) => Some(ActionKind::Retrain),
            Action::Stop | Action::Wait => None,
        }
    }
}

/// One decision of a cell, in any world.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// Best score so far in the recorded orientation, NaN before any: with several workers, the
    /// best of the work finished by `finish`.
    pub incumbent: f64,
    /// The worker that ran it (0 with one worker).
    pub worker: u32,
    /// Simulated wall-clock seconds when its work started and finished.
    pub start: f64,
    pub finish: f64,
}

/// Receives every step of a replay, in order (argmin's executor hands its observers each
/// iteration the same way). With several workers, steps arrive in the order their work finishes.
pub trait Observer {
    fn step(&mut self, step: &Step);

    /// The step with the objective values its world shows for the arm
    /// (`World::arm_objectives`; several objectives only, empty otherwise): in a learner-level
    /// world `d` values per evaluation the step revealed. By default the values are ignored.
    fn step_points(&mut self, step: &Step, _points: &[f64]) {
        self.step(step);
    }
}

/// The trajectory recorder: keeps every step.
impl Observer for Vec<Step> {
    fn step(&mut self, step: &Step) {
        self.push(*step);
    }
}

/// The replay loop with one worker: [`drive_workers`] with `workers = 1`.
pub fn drive<W: World + ?Sized>(
    world: &mut W,
    policy: &mut dyn Policy,
    policy_id: &str,
    rng: &mut Rng,
    overhead: Overhead,
    observers: &mut [&mut dyn Observer],
) -> Result<()> {
    drive_workers(world, policy, policy_id, rng, overhead, 1, observers)
}

/// A finished piece of work waiting for its completion time: what the policy will observe, and
/// what its view will then show of the arm. One cache line per worker: with hundreds of workers
/// the slots are visited in completion order, so each is a miss unless it is small (its start is
/// in `Seen::pending`, its finish in the event key). An evaluation it revealed is kept inline;
/// several (a time slice) go to the worker's overflow buffer.
#[derive(Clone, Copy, Default)]
#[repr(align(64))]
struct InFlight {
    arm: u32,
    kind: ActionKind,
    has_reward: bool,
    exhausted: bool,
    /// The arm's curve ended (pool world), as the world holds it once this work is done.
    done: bool,
    /// Evaluations revealed: 0, 1 (`one_*`), or `MANY` (the overflow buffer).
    n_revealed: u8,
    one_ok: bool,
    reward: f64,
    arm_clock: f64,
    /// The arm's best reward, and in the pool world its last score, once this work is done.
    best: f64,
    last: f64,
    one_time: f64,
    one_reward: f64,
}

const _: () = assert!(std::mem::size_of::<InFlight>() == 64);

/// `InFlight::n_revealed` when the evaluations are in the overflow buffer.
const MANY: u8 = 2;

/// What the policy has seen: the arms' values from finished work only.
#[derive(Default)]
struct Seen {
    best: Vec<f64>,
    last: Vec<f64>,
    done: Vec<bool>,
    pending: Vec<Pending>,
    /// Per arm: its place in `pending` while it runs.
    at: Vec<usize>,
    busy: Vec<bool>,
    incumbent: Option<f64>,
}

impl Seen {
    /// Room for `n` arms (a new arm is seen when it is drawn).
    #[inline]
    fn grow(&mut self, n: usize) {
        if self.best.len() < n {
            self.grow_to(n);
        }
    }

    #[cold]
    fn grow_to(&mut self, n: usize) {
        while self.best.len() < n {
            self.best.push(f64::NEG_INFINITY);
            self.last.push(f64::NEG_INFINITY);
            self.done.push(false);
            self.busy.push(false);
            self.at.push(0);
        }
    }
}

/// The event queue's key: completion time, then worker. A worker runs one piece of work at a
/// time, so (finish, worker) is unique and also orders by start within a worker; both pack into
/// one integer (a finish time is never negative, and the bits of non-negative floats order as
/// the floats do).
fn event_key(finish: f64, worker: usize) -> u128 {
    // `+ 0.0` turns −0.0 into +0.0.
    (u128::from((finish + 0.0).to_bits()) << 64) | worker as u128
}

fn event_finish(key: u128) -> f64 {
    f64::from_bits((key >> 64) as u64)
}

fn event_worker(key: u128) -> usize {
    key as u64 as usize
}

/// The completions to come, earliest first (ties by worker).
///
/// The standard library's binary heap, kept after measuring the alternatives on `bench --only
/// workers` (random search, 256 workers, callgrind, loop instructions per decision: this heap
/// about 170 of about 1 000): a tournament tree (its delivered worker's path is replayed in
/// full), a radix heap on the finish time's bits (events move through tens of buckets), a
/// calendar queue (Brown 1988; the recorded unit costs are too uneven for one day's width), a
/// 4-ary and a hand-written bottom-up binary heap, and the standard heap with 64-bit keys and
/// pop-then-push, each cost as many instructions or more.
///
/// A delivered completion stays at the heap's top until the next piece of work is scheduled,
/// which replaces it (one sift-down instead of a pop and a push: the steady state of
/// asynchronous work, where each completion frees a worker that starts again at once).
struct EventQueue {
    heap: BinaryHeap<Reverse<u128>>,
    /// The top was delivered but is still in the heap.
    delivered_top: bool,
}

impl EventQueue {
    fn with_capacity(k: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(k),
            delivered_top: false,
        }
    }

    /// Work on `worker` completes at `finish`.
    #[inline]
    fn schedule(&mut self, finish: f64, worker: usize) {
        let key = Reverse(event_key(finish, worker));
        if self.delivered_top {
            *self
                .heap
                .peek_mut()
                .expect("the delivered top is in the queue") = key;
            self.delivered_top = false;
        } else {
            self.heap.push(key);
        }
    }

    /// The earliest completion not yet delivered, if any.
    #[inline]
    fn next_time(&mut self) -> Option<f64> {
        if self.delivered_top {
            self.heap.pop();
            self.delivered_top = false;
        }
        self.heap.peek().map(|&Reverse(e)| event_finish(e))
    }

    /// The next completion at `t` (the time [`Self::next_time`] gave), as (worker, finish);
    /// `None` once every completion at `t` was delivered.
    #[inline]
    fn deliver_at(&mut self, t: f64) -> Option<(usize, f64)> {
        if self.delivered_top {
            // Is the next event (the earlier of the top's children) at this time too?
            let s = self.heap.as_slice();
            let next = s
                .get(1..s.len().min(3))
                .and_then(|c| c.iter().map(|e| e.0).min());
            if next.is_none_or(|n| event_finish(n) > t) {
                return None;
            }
            self.heap.pop();
        }
        let &Reverse(e) = self.heap.peek()?;
        self.delivered_top = true;
        Some((event_worker(e), event_finish(e)))
    }
}

/// The replay loop of every world, with `workers` simulated workers on an event clock.
///
/// A free worker asks the policy for a decision; the world applies it at once (the outcome of a
/// piece of work is fixed when it starts, as in Syne Tune's simulator), and the work occupies the
/// worker until it finishes: in a budget of seconds, at the world's own charge (the slice, the
/// unit's recorded cost), cut at the budget by the world's rules; in a budget of pulls or units,
/// after the work's recorded seconds (`World::work_time`). The policy observes the work when it
/// finishes, and until then its view shows the arm as pending, without its result. Completions
/// are taken in the order (finish time, worker, start order); every completion at the same time
/// is delivered before any worker decides, and free workers decide in index order. An arm runs
/// on one worker at a time. A worker may wait for the next completion; a wait holds for the rest
/// of the instant, so the other free workers wait with it (nothing new can arrive before then).
///
/// Charging order per decision: a `fixed` overhead before the decision (a worker whose decision
/// would not finish within the budget retires without deciding, charged nothing), a `per_fit`
/// charge and the `measured` decision time after it, all delaying this worker's start; the
/// `measured` time of an observation delays the next start of the worker whose result it was.
/// Overhead is time only in a budget of seconds. Every charged second is deciding time, never
/// idle: a decision to wait or to stop included (the makespan lasts until a stop was decided).
/// A result counts for the incumbent when its work completes, found at the budget used then.
///
/// With one worker this is the sequential loop: decide, act, observe, until the world is done or
/// the policy stops. An action the world cannot take is an error naming the policy.
pub fn drive_workers<W: World + ?Sized>(
    world: &mut W,
    policy: &mut dyn Policy,
    policy_id: &str,
    rng: &mut Rng,
    overhead: Overhead,
    workers: usize,
    observers: &mut [&mut dyn Observer],
) -> Result<()> {
    let mut run = Workers::new(world, policy, policy_id, rng, overhead, workers, observers);
    loop {
        // Start work on every free worker, in index order, until a worker waits or the policy
        // stops.
        while !run.stopped {
            let Some(Reverse(w)) = run.free.pop() else {
                break;
            };
            if run.start_work(w)? == Next::Pause {
                break;
            }
        }
        // Deliver every completion at the earliest finish time.
        let Some(t) = run.queue.next_time() else {
            break;
        };
        run.now = run.now.max(t);
        while let Some((worker, finish)) = run.queue.deliver_at(t) {
            run.deliver(worker, finish);
        }
    }
    run.close();
    Ok(())
}

/// After a worker's turn: decide on the next free worker, or pause until the next completion
/// (a wait, or a stop).
#[derive(PartialEq, Eq)]
enum Next {
    Worker,
    Pause,
}

/// The event loop's state: the workers, the completions to come, and what the policy has seen.
struct Workers<'a, 'o, W: World + ?Sized> {
    world: &'a mut W,
    policy: &'a mut dyn Policy,
    policy_id: &'a str,
    rng: &'a mut Rng,
    overhead: Overhead,
    observers: &'a mut [&'o mut dyn Observer],
    k: usize,
    sign: f64,
    /// The simulated instant: the latest completion delivered.
    now: f64,
    /// When each worker can next start (later than `now` after a measured observation).
    ready: Vec<f64>,
    /// Idle workers (free, or waiting for the next completion), lowest index first.
    free: BinaryHeap<Reverse<usize>>,
    stopped: bool,
    stopped_at: f64,
    queue: EventQueue,
    /// Work in flight, per worker (a worker runs one piece at a time; its buffers are reused).
    slots: Vec<InFlight>,
    overflow: Vec<Vec<Revealed>>,
    seen: Seen,
    /// Worker-seconds spent deciding and working.
    busy_s: f64,
}

impl<'a, 'o, W: World + ?Sized> Workers<'a, 'o, W> {
    fn new(
        world: &'a mut W,
        policy: &'a mut dyn Policy,
        policy_id: &'a str,
        rng: &'a mut Rng,
        overhead: Overhead,
        workers: usize,
        observers: &'a mut [&'o mut dyn Observer],
    ) -> Self {
        let k = workers.max(1);
        // Results count for the incumbent when their work completes.
        world.ledger_mut().defer = true;
        let sign = world.sign();
        let now = world.ledger().clock.used;
        Workers {
            world,
            policy,
            policy_id,
            rng,
            overhead,
            observers,
            k,
            sign,
            now,
            ready: vec![now; k],
            free: (0..k).map(Reverse).collect(),
            stopped: false,
            stopped_at: now,
            queue: EventQueue::with_capacity(k),
            slots: vec![InFlight::default(); if k == 1 { 0 } else { k }],
            overflow: Vec::new(),
            seen: Seen::default(),
            busy_s: 0.0,
        }
    }

    /// Worker `w` decides and starts its work (with one worker, the work is also delivered at
    /// once: the sequential loop). A worker that cannot start before the budget ends retires:
    /// it is not put back.
    fn start_work(&mut self, w: usize) -> Result<Next> {
        let k = self.k;
        let decided_at = self.ready[w].max(self.now);
        let mut start = decided_at;
        if self.starts_too_late(start) {
            return Ok(Next::Worker);
        }
        if let Overhead::Fixed(s) = self.overhead {
            // A decision that would not finish within the budget is not taken: the worker
            // retires at once, and nothing is charged (its time counts as idle).
            if self.starts_too_late(start + s) {
                self.world.ledger_mut().clock.set_instant(start);
                return Ok(Next::Worker);
            }
            start += self.world.ledger_mut().clock.add_overhead(s);
        }
        let t0 = (self.overhead == Overhead::Measured).then(Instant::now);
        let action = {
            let mut v = self.world.view();
            if k > 1 {
                // What the policy has seen, not what the world holds.
                let seen = &mut self.seen;
                let n = v.n_arms;
                seen.grow(n);
                v.arm_best = &seen.best[..n];
                if let Some(p) = &mut v.pool {
                    (p.last, p.done) = (&seen.last[..n], &seen.done[..n]);
                }
                (v.workers, v.worker, v.now) = (k, w, self.now);
                (v.pending, v.busy) = (&seen.pending, &seen.busy[..n]);
            }
            self.policy.try_decide(&v, self.rng)?
        };
        if let Overhead::PerFit(s) = self.overhead {
            let fits = self.policy.take_fits();
            if fits > 0 {
                start += self.world.ledger_mut().clock.add_overhead(s * fits as f64);
            }
        }
        if let Some(t) = t0 {
            start += self
                .world
                .ledger_mut()
                .clock
                .add_overhead(t.elapsed().as_secs_f64());
        }
        let Some(kind) = self.kind_of(action, w, decided_at, start)? else {
            return Ok(Next::Pause);
        };
        // The arm's recorded seconds before the work (a new arm has none).
        let time_before = match action {
            Action::Pull(a) | Action::Train(a, _) | Action::Retrain(a, ..)
                if a < self.world.n_arms() =>
            {
                self.world.ledger().arm_time_s[a]
            }
            _ => 0.0,
        };
        self.world.ledger_mut().clock.set_instant(start);
        let (arm, reward, observe_s) = {
            let policy_id = self.policy_id;
            let obs = self
                .world
                .apply(action)
                .map_err(|e| anyhow!("policy {policy_id} {e}"))?;
            let (arm, reward) = (obs.arm, obs.reward);
            if k == 1 {
                let t1 = (self.overhead == Overhead::Measured).then(Instant::now);
                self.policy.observe(&obs);
                (arm, reward, t1.map(|t| t.elapsed().as_secs_f64()))
            } else {
                let f = &mut self.slots[w];
                match obs.revealed {
                    [] => f.n_revealed = 0,
                    [r] => {
                        (f.n_revealed, f.one_time, f.one_reward, f.one_ok) =
                            (1, r.time, r.reward, r.ok);
                    }
                    many => {
                        f.n_revealed = MANY;
                        if self.overflow.len() < k {
                            self.overflow.resize_with(k, Vec::new);
                        }
                        self.overflow[w].clear();
                        self.overflow[w].extend_from_slice(many);
                    }
                }
                (f.arm, f.kind, f.arm_clock, f.exhausted) =
                    (arm as u32, kind, obs.arm_clock, obs.exhausted);
                (f.has_reward, f.reward) = (reward.is_some(), reward.unwrap_or(f64::NAN));
                (arm, reward, None)
            }
        };
        let finish = if self.world.ledger().clock.is_timed() {
            self.world.ledger().clock.used
        } else {
            start + self.world.work_time(arm, time_before)
        };
        self.busy_s += finish - decided_at;
        if k == 1 {
            self.deliver_now(arm, reward, kind, start, finish, observe_s);
            return Ok(Next::Worker);
        }
        {
            let f = &mut self.slots[w];
            (f.best, f.last, f.done) = self.world.arm_state(arm);
        }
        self.world.ledger_mut().clock.set_instant(self.now);
        let seen = &mut self.seen;
        seen.grow(arm + 1);
        seen.at[arm] = seen.pending.len();
        seen.pending.push(Pending {
            arm,
            worker: w,
            since: start,
        });
        seen.busy[arm] = true;
        self.queue.schedule(finish, w);
        Ok(Next::Worker)
    }

    /// In a budget of seconds, the clock moves to `start`; is the world then done?
    #[inline]
    fn starts_too_late(&mut self, start: f64) -> bool {
        self.world.ledger_mut().clock.set_instant(start);
        self.world.done()
    }

    /// The kind of work `action` starts on worker `w`, or `None` for a stop or a wait (each
    /// charged as deciding time); an error for a wait with nothing in flight or a pull of a
    /// running arm.
    fn kind_of(
        &mut self,
        action: Action,
        w: usize,
        decided_at: f64,
        start: f64,
    ) -> Result<Option<ActionKind>> {
        let (k, policy_id) = (self.k, self.policy_id);
        Ok(Some(match action {
            Action::Stop => {
                // The decision to stop took its overhead too: deciding time, and the makespan
                // lasts until it was taken.
                self.stopped = true;
                self.busy_s += start - decided_at;
                self.stopped_at = start;
                self.world.ledger_mut().clock.stop();
                return Ok(None);
            }
            Action::Wait => {
                if k == 1 || self.seen.pending.is_empty() {
                    bail!(
                        "policy {policy_id} waited with no work in flight: a policy waits only for a running piece of work to finish (with {k} worker{})",
                        if k == 1 { "" } else { "s" }
                    );
                }
                // Nothing new can arrive before the next completion: every free worker waits
                // for it (a wait holds for the rest of this instant). The decision to wait took
                // its overhead: the worker was deciding, not idle, and decides again no earlier
                // than it finished deciding.
                self.busy_s += start - decided_at;
                self.ready[w] = start;
                self.free.push(Reverse(w));
                return Ok(None);
            }
            Action::Pull(a) | Action::Train(a, _) | Action::Retrain(a, ..) => {
                if self.seen.busy.get(a).is_some_and(|&b| b) {
                    let p = self.seen.pending[self.seen.at[a]];
                    bail!(
                        "policy {policy_id} pulled arm {a}, which is still running on worker {} (since {:.6} s): an arm runs on one worker at a time; pull another arm, draw, or wait",
                        p.worker,
                        p.since
                    );
                }
                ActionKind::of(action).unwrap_or_default()
            }
            Action::Draw | Action::DrawTo(_) => ActionKind::Draw,
            Action::Mutate(_) => ActionKind::Mutate,
            Action::Choose(_) | Action::ChooseTo(..) => ActionKind::Choose,
        }))
    }

    /// The sequential loop's delivery: the work just applied completes at once (the policy has
    /// observed it already; `observe_s` is the measured time it took).
    fn deliver_now(
        &mut self,
        arm: usize,
        reward: Option<f64>,
        kind: ActionKind,
        start: f64,
        finish: f64,
        observe_s: Option<f64>,
    ) {
        let clock = &mut self.world.ledger_mut().clock;
        let charged = observe_s.map_or(0.0, |s| clock.add_overhead(s));
        self.busy_s += charged;
        self.now = finish + charged;
        self.ready[0] = self.now;
        clock.set_instant(self.now);
        self.world.completed(arm);
        let reward = reward.map_or(f64::NAN, |r| self.sign * r);
        emit(
            &*self.world,
            self.observers,
            self.sign,
            kind,
            arm,
            reward,
            0,
            start,
            finish,
            None,
        );
        self.free.push(Reverse(0));
    }

    /// The work on `worker` completes at `finish` (= `now`): the policy observes it, its view
    /// shows the arm's new values, and the worker is free.
    fn deliver(&mut self, worker: usize, finish: f64) {
        let now = self.now;
        let f = &self.slots[worker];
        let seen = &mut self.seen;
        let arm = f.arm as usize;
        seen.best[arm] = f.best;
        seen.last[arm] = f.last;
        seen.done[arm] = f.done;
        let i = seen.at[arm];
        let start = seen.pending.swap_remove(i).since;
        if let Some(moved) = seen.pending.get(i) {
            seen.at[moved.arm] = i;
        }
        seen.busy[arm] = false;
        self.world.ledger_mut().clock.set_instant(now);
        self.world.completed(arm);
        let one;
        let revealed: &[Revealed] = match f.n_revealed {
            0 => &[],
            1 => {
                one = [Revealed {
                    time: f.one_time,
                    reward: f.one_reward,
                    ok: f.one_ok,
                }];
                &one
            }
            _ => &self.overflow[worker],
        };
        for r in revealed.iter().filter(|r| r.ok) {
            if seen.incumbent.is_none_or(|b| r.reward > b) {
                seen.incumbent = Some(r.reward);
            }
        }
        let reward = f.has_reward.then_some(f.reward);
        let t1 = (self.overhead == Overhead::Measured).then(Instant::now);
        self.policy.observe(&Observation {
            arm,
            reward,
            revealed,
            arm_clock: f.arm_clock,
            exhausted: f.exhausted,
            objectives: self.world.arm_objectives(arm),
        });
        self.free.push(Reverse(worker));
        self.ready[worker] = now;
        if let Some(t) = t1 {
            let s = self
                .world
                .ledger_mut()
                .clock
                .add_overhead(t.elapsed().as_secs_f64());
            self.ready[worker] += s;
            self.busy_s += s;
        }
        self.world.ledger_mut().clock.set_instant(now);
        emit(
            &*self.world,
            self.observers,
            self.sign,
            f.kind,
            arm,
            reward.map_or(f64::NAN, |r| self.sign * r),
            worker,
            start,
            finish,
            Some(seen.incumbent),
        );
    }

    /// The clock's account of the cell: workers, makespan, busy worker-seconds.
    fn close(self) {
        let c = &mut self.world.ledger_mut().clock;
        c.workers = self.k;
        c.wall = self.now.max(self.stopped_at);
        c.busy = self.busy_s;
    }
}

/// Hand one step to the observers; `incumbent` is the best finished work's reward with several
/// workers (`None`: the world's incumbent).
#[allow(clippy::too_many_arguments)]
fn emit<W: World + ?Sized>(
    world: &W,
    observers: &mut [&mut dyn Observer],
    sign: f64,
    kind: ActionKind,
    arm: usize,
    reward: f64,
    worker: usize,
    start: f64,
    finish: f64,
    incumbent: Option<Option<f64>>,
) {
    if observers.is_empty() {
        return;
    }
    let l = world.ledger();
    let inc = match incumbent {
        Some(best) => best,
        None => l.incumbent.map(|i| i.reward),
    };
    let step = Step {
        action: kind,
        arm: arm as u32,
        config: world.config_of(arm),
        fidelity: l.pulls[arm] as u32,
        reward,
        time: l.clock.used,
        incumbent: inc.map_or(f64::NAN, |i| sign * i),
        worker: worker as u32,
        start,
        finish,
    };
    let points = world.arm_objectives(arm);
    for o in observers.iter_mut() {
        o.step_points(&step, points);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Observation, View};
    use crate::replay::fixtures::{arm, task};
    use crate::replay::{
        Exhausted, Order, PullCount, PullCountConfig, TimeSliced, TimeSlicedConfig,
    };

    /// Pulls arm 1 twice, then stops.
    struct TwoThenStop;

    impl crate::protocol::Rule for TwoThenStop {
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
    fn the_event_queue_delivers_by_finish_then_worker_and_reuses_the_delivered_top() {
        let mut q = EventQueue::with_capacity(3);
        q.schedule(2.0, 1);
        q.schedule(1.0, 0);
        q.schedule(2.0, 2);
        assert_eq!(q.next_time(), Some(1.0));
        assert_eq!(q.deliver_at(1.0), Some((0, 1.0)));
        assert_eq!(q.deliver_at(1.0), None);
        // Worker 0 starts again: its work takes the delivered top's place.
        q.schedule(2.0, 0);
        assert_eq!(q.heap.len(), 3);
        assert_eq!(q.next_time(), Some(2.0));
        // Three completions at 2.0: worker order, all before anyone decides.
        let at_two: Vec<_> = std::iter::from_fn(|| q.deliver_at(2.0)).collect();
        assert_eq!(at_two, vec![(0, 2.0), (1, 2.0), (2, 2.0)]);
        // The last delivered is still at the top until the queue moves on; then it is empty.
        assert_eq!(q.heap.len(), 1);
        assert_eq!(q.next_time(), None);
        // −0.0 and 0.0 are one instant.
        q.schedule(-0.0, 1);
        q.schedule(0.0, 0);
        assert_eq!(q.next_time(), Some(0.0));
        assert_eq!(q.deliver_at(0.0), Some((0, 0.0)));
        assert_eq!(q.deliver_at(0.0), Some((1, 0.0)));
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

    /// Pulls the lowest-index arm that is not running and has evaluations left, else waits;
    /// records what it saw at each decision: (worker, now, pending arms, arm_best).
    struct Lowest {
        left: Vec<usize>,
        seen: Vec<(usize, f64, Vec<usize>, Vec<f64>)>,
    }

    impl crate::protocol::Rule for Lowest {
        fn decide(&mut self, view: &View<'_>, _rng: &mut Rng) -> Action {
            self.seen.push((
                view.worker,
                view.now,
                view.pending.iter().map(|p| p.arm).collect(),
                view.arm_best.to_vec(),
            ));
            match (0..view.n_arms).find(|&a| self.left[a] > 0 && !view.is_busy(a)) {
                Some(a) => {
                    self.left[a] -= 1;
                    Action::Pull(a)
                }
                None => Action::Wait,
            }
        }
        fn observe(&mut self, _obs: &Observation<'_>) {}
    }

    fn schedule(steps: &[Step]) -> Vec<(u32, u32, f64, f64)> {
        steps
            .iter()
            .map(|s| (s.arm, s.worker, s.start, s.finish))
            .collect()
    }

    #[test]
    fn three_workers_replay_recorded_evaluation_times_in_completion_order_with_ties_by_worker() {
        // Evaluation costs: a 2, 2; b 1, 3; c 3 (seconds). Budget 5 pulls, 3 workers.
        // t = 0: w0 a (to 2), w1 b (to 1), w2 c (to 3). t = 1: b done; w1 b again (to 4).
        // t = 2: a done; w0 a again (to 4): 5 pulls, the budget is spent. t = 3: c done; w2
        // retires. t = 4: a (w0) and b (w1) tie: worker 0 first.
        let t = task(vec![
            arm("a", &[(2.0, 0.5), (4.0, 0.9)]),
            arm("b", &[(1.0, 0.6), (4.0, 0.7)]),
            arm("c", &[(3.0, 0.8)]),
        ]);
        let cfg = PullCountConfig {
            budget_pulls: 5,
            order: Order::Recorded,
            failures_consume_budget: false,
            exhausted: Exhausted::Empty,
        };
        let mut w = PullCount::new(&t, cfg, 1.0, 1);
        let mut p = Lowest {
            left: vec![2, 2, 1],
            seen: Vec::new(),
        };
        let mut steps = Vec::new();
        drive_workers(
            &mut w,
            &mut p,
            "lowest",
            &mut Rng::new(1),
            Overhead::None,
            3,
            &mut [&mut steps],
        )
        .unwrap();
        assert_eq!(
            schedule(&steps),
            vec![
                (1, 1, 0.0, 1.0),
                (0, 0, 0.0, 2.0),
                (2, 2, 0.0, 3.0),
                (0, 0, 2.0, 4.0),
                (1, 1, 1.0, 4.0),
            ]
        );
        // The anytime incumbent counts finished work only: 0.6, 0.6, 0.8, 0.9, 0.9.
        let inc: Vec<f64> = steps.iter().map(|s| s.incumbent).collect();
        assert_eq!(inc, vec![0.6, 0.6, 0.8, 0.9, 0.9]);
        // At t = 1, worker 1 sees b's result but not a's or c's, which are still running.
        let (worker, now, pending, best) = &p.seen[3];
        assert_eq!((*worker, *now), (1, 1.0));
        assert_eq!(pending, &vec![0, 2]);
        assert_eq!(best, &vec![f64::NEG_INFINITY, 0.6, f64::NEG_INFINITY]);
        let c = &w.ledger().clock;
        assert_eq!((c.workers, c.wall, c.busy), (3, 4.0, 11.0));
        assert_eq!(c.idle(), 1.0);
        assert_eq!(w.ledger().clock.used, 5.0);
    }

    #[test]
    fn two_workers_share_a_budget_of_seconds_and_the_last_slices_are_cut_at_it() {
        let t = task(vec![
            arm("a", &[(0.5, 0.5), (2.2, 0.9)]),
            arm("b", &[(1.5, 0.6), (2.4, 0.95)]),
        ]);
        let mut w = TimeSliced::new(
            &t,
            TimeSlicedConfig {
                budget_s: 2.5,
                slice_s: 1.0,
            },
            1.0,
        );
        let mut p = Lowest {
            left: vec![9, 9],
            seen: Vec::new(),
        };
        let mut steps = Vec::new();
        drive_workers(
            &mut w,
            &mut p,
            "lowest",
            &mut Rng::new(1),
            Overhead::None,
            2,
            &mut [&mut steps],
        )
        .unwrap();
        // Slices of 1 s on each worker at 0 and 1; at 2 both slices are cut to the 0.5 s left.
        assert_eq!(
            schedule(&steps),
            vec![
                (0, 0, 0.0, 1.0),
                (1, 1, 0.0, 1.0),
                (0, 0, 1.0, 2.0),
                (1, 1, 1.0, 2.0),
                (0, 0, 2.0, 2.5),
                (1, 1, 2.0, 2.5),
            ]
        );
        // Each arm ran 2.5 s of its own trace: both second evaluations are revealed, and the
        // best (b's 0.95, at 2.4 s of its trace) is found at the end.
        let inc: Vec<f64> = steps.iter().map(|s| s.incumbent).collect();
        assert_eq!(inc, vec![0.5, 0.5, 0.5, 0.6, 0.9, 0.95]);
        let c = &w.ledger().clock;
        assert_eq!((c.wall, c.busy, c.idle()), (2.5, 5.0, 0.0));
    }

    #[test]
    fn two_workers_on_synthetic_arms_take_the_named_work_time_per_pull() {
        use crate::replay::{ArmDist, Synthetic};
        // Budget 5 pulls of 0.5 s on 2 workers: pulls at 0, 0, 0.5, 0.5 and 1.0 (worker 0);
        // worker 1 retires at 1.0 with the budget spent. Makespan 1.5, busy 2.5, idle 0.5.
        let arms = vec![ArmDist::Bernoulli { p: 0.5 }; 3];
        let mut w = Synthetic::new(arms, 5, 3).with_work_seconds(0.5);
        let mut p = Lowest {
            left: vec![9, 9, 9],
            seen: Vec::new(),
        };
        let mut steps = Vec::new();
        drive_workers(
            &mut w,
            &mut p,
            "lowest",
            &mut Rng::new(1),
            Overhead::None,
            2,
            &mut [&mut steps],
        )
        .unwrap();
        assert_eq!(
            schedule(&steps),
            vec![
                (0, 0, 0.0, 0.5),
                (1, 1, 0.0, 0.5),
                (0, 0, 0.5, 1.0),
                (1, 1, 0.5, 1.0),
                (0, 0, 1.0, 1.5),
            ]
        );
        let c = &w.ledger().clock;
        assert_eq!((c.wall, c.busy, c.idle(), c.used), (1.5, 2.5, 0.5, 5.0));
    }

    #[test]
    fn waiting_with_nothing_in_flight_and_pulling_a_running_arm_are_errors_naming_the_policy() {
        struct Always(Action);
        impl crate::protocol::Rule for Always {
            fn decide(&mut self, _view: &View<'_>, _rng: &mut Rng) -> Action {
                self.0
            }
            fn observe(&mut self, _obs: &Observation<'_>) {}
        }
        let t = task(vec![arm("a", &[(1.0, 0.5), (2.0, 0.6)])]);
        let cfg = PullCountConfig {
            budget_pulls: 5,
            order: Order::Recorded,
            failures_consume_budget: false,
            exhausted: Exhausted::Empty,
        };
        let run = |action: Action, workers: usize| {
            let mut w = PullCount::new(&t, cfg, 1.0, 1);
            drive_workers(
                &mut w,
                &mut Always(action),
                "always",
                &mut Rng::new(1),
                Overhead::None,
                workers,
                &mut [],
            )
            .unwrap_err()
            .to_string()
        };
        let e = run(Action::Wait, 2);
        assert!(
            e.contains("policy always waited with no work in flight"),
            "{e}"
        );
        let e = run(Action::Pull(0), 2);
        assert!(
            e.contains("policy always pulled arm 0, which is still running on worker 0"),
            "{e}"
        );
    }

    #[test]
    fn a_fixed_overhead_delays_the_deciding_workers_start() {
        let t = task(vec![arm("a", &[(5.0, 0.5)]), arm("b", &[(5.0, 0.6)])]);
        let mut w = TimeSliced::new(
            &t,
            TimeSlicedConfig {
                budget_s: 2.0,
                slice_s: 1.0,
            },
            1.0,
        );
        let mut p = Lowest {
            left: vec![9, 9],
            seen: Vec::new(),
        };
        let mut steps = Vec::new();
        drive_workers(
            &mut w,
            &mut p,
            "lowest",
            &mut Rng::new(1),
            Overhead::Fixed(0.25),
            2,
            &mut [&mut steps],
        )
        .unwrap();
        // Each decision costs its worker 0.25 s: slices run 0.25-1.25 and 1.5-2 (cut).
        assert_eq!(
            schedule(&steps),
            vec![
                (0, 0, 0.25, 1.25),
                (1, 1, 0.25, 1.25),
                (0, 0, 1.5, 2.0),
                (1, 1, 1.5, 2.0),
            ]
        );
        let c = &w.ledger().clock;
        assert_eq!((c.overhead, c.wall, c.busy), (1.0, 2.0, 4.0));
    }
    #[test]
    fn a_decision_the_budget_cuts_off_is_not_taken_and_every_charged_second_is_deciding() {
        let t = task(vec![arm("a", &[(5.0, 0.5)]), arm("b", &[(5.0, 0.6)])]);
        let world = |budget_s| {
            TimeSliced::new(
                &t,
                TimeSlicedConfig {
                    budget_s,
                    slice_s: 1.0,
                },
                1.0,
            )
        };
        // One worker, 0.6 s a decision: decide 0-0.6, slice 0.6-1.6; the next decision would
        // end at 2.2, past the budget of 2: it is not taken and not charged.
        let mut w = world(2.0);
        let mut p = Lowest {
            left: vec![9, 9],
            seen: Vec::new(),
        };
        let mut steps = Vec::new();
        drive(
            &mut w,
            &mut p,
            "lowest",
            &mut Rng::new(1),
            Overhead::Fixed(0.6),
            &mut [&mut steps],
        )
        .unwrap();
        assert_eq!(p.seen.len(), 1);
        let c = &w.ledger().clock;
        assert_eq!((c.overhead, c.used, c.wall, c.busy), (0.6, 1.6, 1.6, 1.6));
        assert_eq!(c.idle(), 0.0);

        /// Pulls arm 0 once, then waits while anything runs, then stops.
        struct OnceThenWait(bool);
        impl crate::protocol::Rule for OnceThenWait {
            fn decide(&mut self, view: &View<'_>, _rng: &mut Rng) -> Action {
                if !self.0 {
                    self.0 = true;
                    Action::Pull(0)
                } else if view.pending.is_empty() {
                    Action::Stop
                } else {
                    Action::Wait
                }
            }
            fn observe(&mut self, _obs: &Observation<'_>) {}
        }
        // Two workers, 0.25 s a decision: worker 0 decides and pulls (0.25-1.25), worker 1
        // decides to wait (0-0.25, deciding, not idle); at 1.25 worker 0 decides to stop
        // (1.25-1.5, deciding; the makespan lasts until then). Busy 1.25 + 0.25 + 0.25.
        let mut w = world(10.0);
        drive_workers(
            &mut w,
            &mut OnceThenWait(false),
            "once-then-wait",
            &mut Rng::new(1),
            Overhead::Fixed(0.25),
            2,
            &mut [],
        )
        .unwrap();
        let c = &w.ledger().clock;
        assert_eq!((c.overhead, c.wall, c.busy), (0.75, 1.5, 1.75));
        assert_eq!(c.idle(), 2.0 * 1.5 - 1.75);
    }
}
