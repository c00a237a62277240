"""A library's trials on the pool world: the bookkeeping the adapters share.

:class:`WholeTrials`: a trial trains its configuration to unit ``to`` in one piece of work and is
told its score there when the work finishes (Optuna's samplers, Nevergrad's optimizers). A
suggestion of a configuration evaluated before follows ``repeat``: ``"reuse"`` tells it the score
at once, charging nothing; ``"charge"`` trains the configuration again over the units it trained
(``Retrain``: each unit's cost charged again, the same scores revealed) and tells the score when
that work finishes, as the library's own loop would pay for it. A suggestion of a configuration
running on another worker is told when that work finishes, and the worker waits meanwhile; one of
a configuration not recorded on the task fails.

:class:`UnitByUnit`: for libraries that decide after each unit (Optuna's pruners, Syne Tune's
schedulers). A trial trains its configuration unit by unit. After each unit the library sees the score
(``_report``) and may end the trial (pruned, stopped); a trial that reaches unit ``to`` completes
with its score there (``_complete``); a failed unit fails it (``_fail``). A new suggestion of a
configuration trained before replays its recorded units to the new trial at once, charging
nothing (``repeat = "reuse"``), or trains them again one at a time, each paid for (``Retrain``)
and reported when its work ends (``repeat = "charge"``); either way it trains further only if the
library lets it. A suggestion of a
configuration running on another worker follows when that work ends, and the worker waits. After
``max_repeats`` suggestions in a row, over all workers, that started no work, nobody asks again.

:class:`BudgetJobs`: for libraries whose jobs name a configuration and a budget (DEHB, SMAC3's
multi-fidelity facades), the budget mapped to a unit by the adapter. A job trains its
configuration to its unit in one piece of work and is told the score there and the units its work
trained. A job on a configuration trained before to a lower unit resumes from its last unit, only
the new units charged (``promotion = "continue"``), or trains it again from its first unit, every
unit charged (``promotion = "restart"``: the units trained before are trained again, ``Retrain``,
then the new ones, ``Train``, and the job is told the units of both); one on a configuration trained to the job's
unit or beyond follows ``repeat`` (``"reuse"``: told at once, charging nothing; ``"charge"``: those
units trained again, ``Retrain``). A job on a configuration running on another worker follows when
that work ends. A job the budget cut short is not told.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

from ..protocol import Choose, Policy, Retrain, Stop, Train, Wait
from ._grid import GridSpace, Key, Snap

REPEAT = ("reuse", "charge")
PROMOTION = ("continue", "restart")


def promotion_rule(promotion: str) -> str:
    """``promotion`` checked against the named rules (:class:`BudgetJobs`)."""
    if promotion not in PROMOTION:
        raise ValueError(f"promotion = {promotion!r}; give one of {', '.join(PROMOTION)}")
    return promotion


def prepare(policy: Any, cell: Any, library: str, *, to: Optional[int], repeat: str,
            max_repeats: int, learner: Optional[str], ordinal: Optional[str] = None,
            ordinals: Tuple[str, ...] = (), snap: str = "nearest") -> None:
    """What every adapter checks and keeps at a cell's start: the pool world, the named
    ``repeat``, ``ordinal`` and ``snap`` rules, the space, the configurations open on the task
    (of ``learner``'s alone when given), the learners on the task and the last unit ``to``. Sets
    ``grid``, ``open``, ``snap``, ``learners``, ``units``, ``to``, ``repeat`` and
    ``max_repeats``."""
    if cell.world != "pool":
        raise ValueError(f"the {library} adapter runs in the pool world, not {cell.world!r}")
    if repeat not in REPEAT:
        raise ValueError(f"repeat = {repeat!r}; give one of {', '.join(REPEAT)}")
    if ordinals and ordinal not in ordinals:
        raise ValueError(f"ordinal = {ordinal!r}; give one of {', '.join(ordinals)}")
    grid = GridSpace.of_cell(cell)
    open_ = grid.open_configs(cell)
    chosen = grid.learner_index(learner)
    on_task = sorted({l for l, _ in open_})
    if chosen is not None:
        open_ = {k: c for k, c in open_.items() if k[0] == chosen}
        on_task = [chosen]
    if not on_task:
        raise ValueError(f"task {cell.task}: no configuration of the pool is open")
    units = int(cell.pool["units"])
    last = units if to is None else int(to)
    if not 1 <= last <= units:
        raise ValueError(f"to = {to}; give a unit from 1 to {units}")
    policy.grid, policy.open, policy.learners = grid, open_, on_task
    policy.snap = Snap(grid, cell, snap)
    policy.units, policy.to, policy.repeat = units, last, repeat
    policy.max_repeats = int(max_repeats)


def unit_of(budget: Any, to: int) -> int:
    """The unit a library's budget names: ceil(budget), within 1 and ``to``."""
    return min(to, max(1, math.ceil(float(budget) - 1e-9)))


class Counted(Policy):
    """The counts every adapter records in runs.parquet's ``policy_stats``: ``suggestions`` (the
    library's configurations asked for), ``repeats`` (those that started no work: evaluated
    before, running elsewhere or not recorded) and, when the space has a numeric learner, the
    ``snap`` rule's counts (:meth:`Snap.stats`)."""

    snap: Snap
    learners: List[int]
    grid: GridSpace
    # Suggestions in a row that started no work (reset by work; `max_repeats` bounds it), and
    # over the whole cell.
    repeats = 0
    idle = 0

    def _no_work(self) -> None:
        """A suggestion that started no work."""
        self.repeats += 1
        self.idle += 1

    def stats(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"suggestions": self.snap.suggestions, "repeats": self.idle}
        if any(self.grid.numeric[l] for l in self.learners):
            out.update(self.snap.stats())
        return out


class LibraryTrials(Counted):
    """What a library implements for :class:`WholeTrials` and :class:`UnitByUnit`."""

    open: Dict[Key, int]
    to: int
    max_repeats: int
    repeat: str = "reuse"

    def _ask(self) -> Optional[Tuple[Any, Key]]:
        """A new trial and the configuration it suggests; None when the library has no more."""
        raise NotImplementedError

    def _complete(self, trial: Any, value: float) -> None:
        raise NotImplementedError

    def _fail(self, trial: Any) -> None:
        raise NotImplementedError


class WholeTrials(LibraryTrials):
    """The shared part; a subclass sets ``open`` (key -> configuration), ``to`` and
    ``max_repeats`` (``prepare``) and implements ``_ask``, ``_complete`` and ``_fail``."""

    #: True for an adapter whose library takes several objectives: in an experiment of several
    #: objectives (``[world] objectives``) its trials are told their values, a list in the order
    #: of the cell's ``pool["objectives"]`` and their recorded orientation, rather than the score.
    multi_objective = False

    def _value_of(self, obs: Any) -> Any:
        """What a finished trial is told: its score, or the list of its objectives' values;
        None for a failed evaluation or an infeasible one (an objective without a value)."""
        if obs.reward is None:
            return None
        objectives = getattr(obs, "objectives", None)
        if self.multi_objective and objectives is not None:
            if any(v is None for v in objectives):
                return None
            return [float(v) for v in objectives]
        return float(obs.reward)

    def __init__(self, cell: Any):
        super().__init__(cell)
        # Each arm's trial and configuration, each evaluated configuration's score (None:
        # failed), its arm and units trained, the trials retraining an arm (repeat = "charge"),
        # the trials waiting for a configuration that runs, and how many run.
        self.arm_trial: List[Any] = []
        self.arm_key: List[Key] = []
        self.arm_of: Dict[Key, int] = {}
        self.trained: Dict[int, int] = {}
        self.retraining: Dict[int, Any] = {}
        self.value: Dict[Key, Optional[float]] = {}
        self.waiting: Dict[Key, List[Any]] = {}
        self.running = 0
        # Suggestions in a row that started no work, over all workers' decisions.
        self.repeats = 0

    def _tell(self, trial: Any, value: Optional[float]) -> None:
        if value is None:
            self._fail(trial)
        else:
            self._complete(trial, value)

    def decide(self, view: Any) -> Any:
        while self.repeats < self.max_repeats:
            asked = self._ask()
            if asked is None:
                break
            trial, key = asked
            key = self.snap(key, self.open)
            config = self.open.pop(key, None)
            if config is not None:
                self.arm_of[key] = len(self.arm_key)
                self.arm_trial.append(trial)
                self.arm_key.append(key)
                self.waiting[key] = []
                self.running += 1
                self.repeats = 0
                return Choose(config, to=self.to)
            if key in self.value and self.repeat == "charge" and self.trained.get(
                    self.arm_of.get(key, -1), 0) > 0:
                arm = self.arm_of[key]
                if arm in self.retraining:
                    # Being paid again on another worker: told when that work finishes.
                    self._no_work()
                    self.waiting[key].append(trial)
                    return Wait()
                # Paid again, as the library's own loop would: new work.
                self.retraining[arm] = trial
                self.waiting[key] = []
                self.running += 1
                self.repeats = 0
                return Retrain(arm, to=self.trained[arm])
            self._no_work()
            if key in self.value:
                self._tell(trial, self.value[key])
            elif key in self.waiting:
                # Running on another worker: this trial is told its score when that work
                # finishes, and this worker waits for the next result (in the library's own
                # parallel loop it would train the duplicate).
                self.waiting[key].append(trial)
                return Wait()
            else:
                # On the grid but not recorded on this task: a failed evaluation, as a crashed
                # objective is in the library's own loop.
                self.value[key] = None
                self._tell(trial, None)
        return Wait() if self.running else Stop()

    def observe(self, obs: Any) -> None:
        key = self.arm_key[obs.arm]
        self.running -= 1
        if obs.arm in self.retraining:
            # A charged repeat: told the configuration's score (the retrained units revealed the
            # same; a budget that ran out within them leaves the trial told what was recorded).
            trial, value = self.retraining.pop(obs.arm), self.value[key]
        else:
            trial = self.arm_trial[obs.arm]
            value = self._value_of(obs)
            self.value[key] = value
            self.trained[obs.arm] = int(obs.arm_clock)
        self._tell(trial, value)
        for t in self.waiting.pop(key, []):
            self._tell(t, value)


class UnitByUnit(LibraryTrials):
    """The shared part; a subclass sets ``open`` (key -> configuration), ``to`` and
    ``max_repeats`` (``prepare``) and implements ``_ask``, ``_trial_id``, ``_report``,
    ``_complete`` and ``_fail``."""

    def __init__(self, cell: Any):
        super().__init__(cell)
        # Under repeat = "charge", per trial of a configuration trained before: the recorded units
        # it has paid for so far (it sees no further), and per busy configuration whether its
        # work is a retraining.
        self.paid: Dict[int, int] = {}
        self.retrain_of: Dict[Key, bool] = {}
        # Each configuration's revealed scores (None: a failed unit), its arm, the trial training
        # it now, trials waiting for that work, and the trials ready to train their
        # configuration's next unit: (trial, key, whether a suggestion put it there rather than
        # its own last unit).
        self.curve: Dict[Key, List[Optional[float]]] = {}
        self.arm_of: Dict[Key, int] = {}
        self.arm_key: List[Key] = []
        self.busy: Dict[Key, Any] = {}
        self.waiting: Dict[Key, List[Any]] = {}
        self.ready: List[Tuple[Any, Key, bool]] = []
        self.seen: Dict[int, int] = {}
        # Suggestions in a row that started no work, over all workers' decisions.
        self.repeats = 0
        self.exhausted = False

    # What a library implements beyond `LibraryTrials`.

    def _trial_id(self, trial: Any) -> int:
        raise NotImplementedError

    def _report(self, trial: Any, unit: int, value: float) -> bool:
        """The trial's score at ``unit``; True when the library ends the trial there."""
        raise NotImplementedError

    def _started(self, trial: Any, key: Key) -> None:
        """A trial's configuration starts training for the first time (a hook)."""

    # The shared part.

    def _advance(self, trial: Any, key: Key) -> bool:
        """Give ``trial`` the units of ``key`` it has not seen; True when the trial ended (by the
        library, a failed unit or unit ``to``), False when it needs the next unit trained."""
        curve = self.curve[key]
        tid = self._trial_id(trial)
        known = min(len(curve), self.paid.get(tid, len(curve)))
        for u in range(self.seen.get(tid, 0), min(known, self.to)):
            v = curve[u]
            if v is None:
                self._fail(trial)
                return True
            self.seen[tid] = u + 1
            if self._report(trial, u + 1, v):
                return True
        if known >= self.to:
            self._complete(trial, curve[self.to - 1])
            return True
        return False

    def decide(self, view: Any) -> Any:
        while True:
            while self.ready:
                trial, key, suggested = self.ready.pop(0)
                if key in self.busy:
                    # Another trial trains it now: this one follows when that work ends.
                    self.waiting.setdefault(key, []).append(trial)
                    continue
                self.busy[key] = trial
                if suggested:
                    # A suggestion of a configuration trained before that the library lets go
                    # further (or, charged, pays for): new work, so the repeats in a row end.
                    self.repeats = 0
                paid = self.paid.get(self._trial_id(trial))
                if paid is not None and paid < len(self.curve[key]):
                    # Charged: its next recorded unit, paid for again.
                    self.retrain_of[key] = True
                    return Retrain(self.arm_of[key], to=paid + 1, start=paid + 1)
                self.retrain_of[key] = False
                return Train(self.arm_of[key], to=len(self.curve[key]) + 1)
            if self.exhausted or self.repeats >= self.max_repeats:
                break
            asked = self._ask()
            if asked is None:
                self.exhausted = True
                break
            trial, key = asked
            key = self.snap(key, self.open)
            config = self.open.pop(key, None)
            if config is not None:
                self.arm_of[key] = len(self.arm_key)
                self.arm_key.append(key)
                self.curve[key] = []
                self.busy[key] = trial
                self.repeats = 0
                self._started(trial, key)
                return Choose(config)
            self._no_work()
            if key in self.busy:
                # Running on another worker: this trial replays its scores when that work
                # ends, and this worker waits for the next result meanwhile.
                self.waiting.setdefault(key, []).append(trial)
                return Wait()
            if key not in self.curve:
                # On the grid but not recorded on this task: a failed evaluation.
                self._fail(trial)
                continue
            if self.repeat == "charge":
                # Trained before, paid for again: unit by unit from its first, each unit's
                # score reported as the work ends, as the library's own loop trains it.
                self.paid[self._trial_id(trial)] = 0
                self.ready.append((trial, key, True))
                continue
            # Trained before (ended or complete): its recorded scores are replayed for free,
            # and training resumes from its last unit if the library lets it go further.
            if not self._advance(trial, key):
                self.ready.append((trial, key, True))
        return Wait() if self.busy else Stop()

    def observe(self, obs: Any) -> None:
        key = self.arm_key[obs.arm]
        trial = self.busy.pop(key)
        curve = self.curve[key]
        tid = self._trial_id(trial)
        if self.retrain_of.pop(key, False):
            self.paid[tid] += len(obs.revealed)
        else:
            new = int(obs.arm_clock) - len(curve)
            for _, r in obs.revealed[len(obs.revealed) - new:] if new > 0 else []:
                curve.append(None if r is None else float(r))
            if tid in self.paid:
                self.paid[tid] = len(curve)
        if not self._advance(trial, key):
            # The same trial goes on first, as its training loop would.
            self.ready.insert(0, (trial, key, False))
            return
        for t in self.waiting.pop(key, []):
            if not self._advance(t, key):
                self.ready.append((t, key, True))


class BudgetJobs(Counted):
    """The shared part; a subclass sets ``open``, ``units``, ``to``, ``repeat`` and
    ``max_repeats`` (``prepare``) and ``promotion`` (:func:`promotion_rule`), and implements
    ``_ask_job`` and ``_tell_job``."""

    open: Dict[Key, int]
    units: int
    to: int
    max_repeats: int
    repeat: str = "reuse"
    promotion: str = "continue"

    def __init__(self, cell: Any):
        super().__init__(cell)
        # Per configuration: its arm, its revealed scores (None: a failed unit); per arm: the job
        # training it and its unit; per configuration running, the jobs waiting for its work;
        # jobs ready to be decided again.
        self.arm_of: Dict[Key, int] = {}
        self.arm_key: List[Key] = []
        self.curve: Dict[Key, List[Optional[float]]] = {}
        self.job_of: Dict[int, Tuple[Any, int]] = {}
        self.waiting: Dict[Key, List[Tuple[Any, Key, int]]] = {}
        self.ready: List[Tuple[Any, Key, int]] = []
        # Jobs in a row told without work, over all workers' decisions.
        self.repeats = 0
        # promotion = "restart": per arm whose units are being trained again, those units; per
        # arm whose new units follow, the units its job already paid for again.
        self.restarting: Dict[int, int] = {}
        self.restarted: Dict[int, int] = {}

    def _ask_job(self) -> Optional[Tuple[Any, Key, int]]:
        """A new job, its configuration and its unit (from 1 to ``to``); None when the library
        has no more."""
        raise NotImplementedError

    def _tell_job(self, job: Any, value: Optional[float], cost: int) -> None:
        """A job's score at its unit (None: failed or not recorded) and the units its work
        trained (0: told without work)."""
        raise NotImplementedError

    def _told(self, job: Any, key: Key, unit: int, cost: int) -> None:
        curve = self.curve[key]
        self._tell_job(job, curve[unit - 1] if unit <= len(curve) else None, cost)

    def decide(self, view: Any) -> Any:
        while self.ready or self.repeats < self.max_repeats:
            # Jobs that waited for their configuration's work first, then new ones.
            if self.ready:
                asked = self.ready.pop(0)
            else:
                asked = self._ask_job()
                if asked is None:
                    break
                asked = (asked[0], self.snap(asked[1], self.open), asked[2])
            job, key, u = asked
            config = self.open.pop(key, None)
            if config is not None:
                arm = len(self.arm_key)
                self.arm_of[key] = arm
                self.arm_key.append(key)
                self.curve[key] = []
                self.job_of[arm] = (job, u)
                self.repeats = 0
                return Choose(config, to=u)
            if key not in self.arm_of:
                # On the grid but not recorded on this task: a failed evaluation.
                self.idle += 1
                self._tell_job(job, None, 0)
                continue
            arm = self.arm_of[key]
            if arm in self.job_of:
                # Running: this job is decided again when that work finishes; the worker waits.
                self.waiting.setdefault(key, []).append(asked)
                return Wait()
            curve = self.curve[key]
            trained = len(curve)
            done = trained and (curve[-1] is None or trained >= self.units)
            if u > trained and not done:
                self.job_of[arm] = (job, u)
                self.repeats = 0
                if self.promotion == "restart" and trained and arm not in self.restarted:
                    # Training starts over: the units trained before first, paid again.
                    self.restarting[arm] = trained
                    return Retrain(arm, to=trained)
                return Train(arm, to=u)
            if self.repeat == "charge" and trained:
                self.job_of[arm] = (job, u)
                self.repeats = 0
                return Retrain(arm, to=min(u, trained))
            self._no_work()
            self._told(job, key, u, 0)
        return Wait() if self.job_of else Stop()

    def observe(self, obs: Any) -> None:
        key = self.arm_key[obs.arm]
        job, u = self.job_of.pop(obs.arm)
        again = self.restarting.pop(obs.arm, None)
        if again is not None:
            # The first part of a restarted job: its new units are the next decision's, unless
            # the budget cut this part short (then, as any cut work, the job is never told).
            if len(obs.revealed) == again:
                self.restarted[obs.arm] = again
                self.ready.insert(0, (job, key, u))
            return
        paid = self.restarted.pop(obs.arm, 0)
        curve = self.curve[key]
        new = int(obs.arm_clock) - len(curve)
        for _, r in obs.revealed[len(obs.revealed) - new:] if new > 0 else []:
            curve.append(None if r is None else float(r))
        cut = u > len(curve) and (not curve or curve[-1] is not None) and len(curve) < self.units
        if not cut:
            # (Work the budget cut short never finished: its job is not told.)
            self._told(job, key, u, paid + len(obs.revealed))
        # Jobs that waited: the next decisions tell them, or train further for them.
        self.ready.extend(self.waiting.pop(key, []))
