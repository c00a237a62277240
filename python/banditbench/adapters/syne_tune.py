"""Syne Tune's schedulers as banditbench policies in the pool world (Syne Tune 0.16.0, pinned by
the ``syne-tune`` extra: ``pip install "banditbench-engine[syne-tune]"``).

Syne Tune (Salinas et al. 2022, "Syne Tune: A Library for Large Scale Hyperparameter Tuning and
Reproducible Research", AutoML Conf) drives a scheduler through ``suggest``, ``on_trial_add``,
``on_trial_result`` (CONTINUE or STOP after each reported result), ``on_trial_complete``,
``on_trial_remove`` and ``on_trial_error``; its ``Tuner`` calls them as results come in. This
adapter calls them in the same order on the exact simulator: a worker that comes free asks the
scheduler for a trial, the trial's configuration is trained one unit (Syne Tune's ``time_attr``,
an epoch) at a time, each unit's score is a result, and the scheduler's decision is honoured:
CONTINUE trains the next unit on the same worker, STOP ends the trial (``on_trial_remove``), and a
trial that reaches unit ``to`` without being stopped completes (``on_trial_complete``). A failed
unit is ``on_trial_error``. When ``suggest`` returns None (the space is exhausted) no worker asks
again.

The open choices, each a parameter:

- ``scheduler``: one of Syne Tune's baselines by name (``SCHEDULERS``): ``"random"``, ``"tpe"``,
  ``"rea"``, ``"bore"``, ``"cqr"``, ``"botorch"`` (single fidelity: every trial trains to ``to``),
  ``"asha"``, ``"bohb"``, ``"asha-bore"``, ``"asha-cqr"`` (multi-fidelity: they stop trials at
  their rungs). Every other parameter goes to its constructor (``grace_period``,
  ``reduction_factor``, ``brackets``, ...). ``random_seed`` is the cell's seed modulo 2^32; Syne
  Tune also draws from NumPy's global generator (ASHA's bracket of a trial), so each cell keeps its
  own global state, seeded as ``np.random.seed(random_seed)`` before the scheduler is built, and
  swapped in before a call whenever another cell's is loaded (cells of in-process policies run
  one at a time; the state a run leaves in NumPy's global generator is the last cell's). A subclass may override :meth:`SyneTuneScheduler.make_scheduler`
  to run any ``TrialScheduler``.
- ``ordinal``: a dimension with ordered levels as ``"index"`` (``randint(0, n - 1)``, the order
  kept) or ``"categorical"`` (``choice`` of its levels).
- ``to``: the last unit, Syne Tune's ``max_t`` (default: the pool's last unit).
- ``repeat``: ``"reuse"``: a new trial of a configuration trained before is given its recorded
  results at once, charging nothing; ``"charge"``: it trains that configuration again from its
  first unit, each unit paid for (``Retrain``) and reported as its work ends, as Syne Tune's own
  loop trains a duplicate. Either way it trains further only if the scheduler continues it; one
  running on another worker follows when that work ends.
- ``max_repeats``: suggestions in a row, over all workers, that started no work, after which no
  worker asks again.
- ``snap``: on a recorded sample (a learner with numeric ranges, e.g. ``sklearn-random``), which
  recorded configuration a suggested point evaluates: ``"nearest"``, ``"nearest-open"`` or
  ``"refuse"`` (:class:`banditbench.adapters._grid.Snap`; README, "A continuous space on a
  recorded sample"). Grid pools never snap.
- ``learner``: the learner to tune when the task keeps several (default: all of them, a
  ``"learner"`` choice and every learner's dimensions as ``"LEARNER.DIM"``, only the chosen
  learner's read).

The scheduler sees results ``{"score": s, "epoch": u}`` (``metric = "score"`` maximised,
``time_attr = "epoch"``); with one worker the trials, their results and the decisions are those of
Syne Tune's own ``Tuner`` on the same table through its simulator backend
(scripts/reference/synetune_sequential.py).
"""

from __future__ import annotations

import datetime
from typing import Any, Dict, List, Optional, Tuple

from ._generators import Generators
from ._grid import GridSpace, Key, key_of
from ._trials import UnitByUnit, prepare

VERSION = "0.16.0"

METRIC = "score"
TIME_ATTR = "epoch"

# name -> (baselines class, multi-fidelity)
SCHEDULERS = {
    "random": ("RandomSearch", False),
    "tpe": ("TPE", False),
    "rea": ("REA", False),
    "bore": ("BORE", False),
    "cqr": ("CQR", False),
    "botorch": ("BOTorch", False),
    "asha": ("ASHA", True),
    "bohb": ("BOHB", True),
    "asha-bore": ("ASHABORE", True),
    "asha-cqr": ("ASHACQR", True),
}

ORDINAL = ("index", "categorical")

# What a scheduler imports beyond Syne Tune's core (python/requirements-syne-tune.txt leaves
# xgboost out): named when it is missing.
NEEDS = {"bore": "xgboost", "asha-bore": "xgboost", "cqr": "xgboost", "asha-cqr": "xgboost"}


# Trials carry a creation time; a fixed one keeps runs identical (schedulers do not read it).
CREATED = datetime.datetime(2000, 1, 1)


def _syne_tune():
    try:
        import syne_tune  # noqa: F401
        from syne_tune.optimizer import baselines
    except ImportError:
        raise ImportError(
            "the Syne Tune adapter needs Syne Tune: pip install \"banditbench-engine[syne-tune]\" "
            f"(it pins syne-tune=={VERSION})"
        ) from None
    import logging

    logging.getLogger("syne_tune").setLevel(logging.ERROR)
    return baselines


def config_space(grid: GridSpace, learners: List[int], ordinal: str = "index") -> Dict[str, Any]:
    """Syne Tune's configuration space of ``learners`` (indices into the grid's learners): one
    learner's dimensions by name; several under a ``"learner"`` choice, each dimension named
    ``"LEARNER.DIM"`` (Syne Tune has no conditional spaces: a trial's other learners' values are
    drawn and ignored)."""
    if ordinal not in ORDINAL:
        raise ValueError(f"ordinal = {ordinal!r}; give one of {', '.join(ORDINAL)}")
    _syne_tune()
    from syne_tune.config_space import choice, lograndint, loguniform, randint, uniform

    out: Dict[str, Any] = {}
    if len(learners) > 1:
        out["learner"] = choice([grid.learners[l] for l in learners])
    for l in learners:
        prefix = f"{grid.learners[l]}." if len(learners) > 1 else ""
        for d in grid.dims[l]:
            if d.kind == "numeric":
                whole = d.int_range
                if whole is not None:
                    out[prefix + d.name] = (lograndint if d.log else randint)(*whole)
                else:
                    out[prefix + d.name] = (loguniform if d.log else uniform)(d.low, d.high)
            elif d.kind == "ordinal" and ordinal == "index":
                out[prefix + d.name] = randint(0, len(d.choices) - 1)
            else:
                out[prefix + d.name] = choice(list(d.values))
    return out


def level_reader(ordinal: str) -> Any:
    """How a Syne Tune value names a level (:meth:`Dim.level_of`)."""
    by_index = ordinal == "index"
    return lambda d, v: d.level_of(v, by_index)


class SyneTuneScheduler(UnitByUnit):
    """A Syne Tune scheduler on the pool world, one per cell (see the module's documentation)."""

    pool_space = True

    def __init__(self, cell: Any, scheduler: str = "asha", ordinal: str = "index",
                 to: Optional[int] = None, repeat: str = "reuse", max_repeats: int = 1000,
                 learner: Optional[str] = None, snap: str = "nearest", **options: Any):
        super().__init__(cell)
        _syne_tune()
        from syne_tune.backend.trial_status import Trial
        from syne_tune.optimizer.scheduler import SchedulerDecision

        prepare(self, cell, "Syne Tune", to=to, repeat=repeat, max_repeats=max_repeats,
                learner=learner, ordinal=ordinal, ordinals=ORDINAL, snap=snap)
        self.ordinal = ordinal
        self._level = level_reader(ordinal)
        self.scheduler_name = scheduler
        self.options = dict(options)
        self.space = config_space(self.grid, self.learners, ordinal)
        self._Trial = Trial
        self._stop, self._pause = SchedulerDecision.STOP, SchedulerDecision.PAUSE
        seed = cell.seed % 2**32
        # NumPy's global generator, which Syne Tune's searchers draw from, seeded per cell and
        # swapped in around the cell's calls (each swap copies the 624-word Mersenne Twister
        # state both ways, about 0.1 ms: it happens only when another cell's state is loaded).
        self._generators = Generators(seed, numpy=True)
        self.scheduler = self._generators.build(lambda: self.make_scheduler(seed))
        self.trials = 0

    def make_scheduler(self, seed: int) -> Any:
        """The cell's scheduler, seeded with ``seed``; override to run any ``TrialScheduler``
        (its results carry ``METRIC``, maximised, and ``TIME_ATTR`` up to ``self.to``)."""
        baselines = _syne_tune()
        if self.scheduler_name not in SCHEDULERS:
            raise ValueError(
                f"scheduler = {self.scheduler_name!r}; Syne Tune's are {', '.join(SCHEDULERS)} "
                "(or subclass SyneTuneScheduler and override make_scheduler)"
            )
        cls, multi = SCHEDULERS[self.scheduler_name]
        kwargs: Dict[str, Any] = dict(config_space=self.space, do_minimize=False,
                                      random_seed=seed)
        if cls in ("RandomSearch",):
            kwargs["metrics"] = [METRIC]
        else:
            kwargs["metric"] = METRIC
        if multi:
            kwargs.update(time_attr=TIME_ATTR, max_t=self.to)
        try:
            return getattr(baselines, cls)(**kwargs, **self.options)
        except ImportError as e:
            need = NEEDS.get(self.scheduler_name)
            if need is None:
                raise
            raise ImportError(
                f"scheduler = {self.scheduler_name!r} needs {need}, which is not installed ({e}): "
                f"pip install {need}, or Syne Tune with its own dependencies "
                f"(pip install syne-tune=={VERSION})"
            ) from e

    def _call(self, method: str, *args: Any) -> Any:
        """A scheduler call with this cell's NumPy global state (``_generators.Generators``:
        cells on several threads, ``bb.run(threads=N)``, interleave their calls)."""
        return self._generators.call(getattr(self.scheduler, method), *args)

    def _ask(self) -> Optional[Tuple[Any, Key]]:
        suggestion = self._call("suggest")
        if suggestion is None:
            return None
        if not suggestion.spawn_new_trial_id or suggestion.checkpoint_trial_id is not None:
            raise ValueError(
                f"scheduler {self.scheduler_name!r} asked to resume or to start from a "
                "checkpoint (a pausing scheduler): the adapter honours CONTINUE and STOP only"
            )
        trial = self._Trial(trial_id=self.trials, config=dict(suggestion.config),
                            creation_time=CREATED)
        self.trials += 1
        self._call("on_trial_add", trial)
        return trial, key_of(trial.config, self.grid, self.learners, self._level)

    def _trial_id(self, trial: Any) -> int:
        return trial.trial_id

    def _report(self, trial: Any, unit: int, value: float) -> bool:
        decision = self._call("on_trial_result", trial, {METRIC: value, TIME_ATTR: unit})
        if decision == self._stop:
            self._call("on_trial_remove", trial)
            return True
        if decision == self._pause:
            raise ValueError(
                f"scheduler {self.scheduler_name!r} paused trial {trial.trial_id}: the adapter "
                "honours CONTINUE and STOP only"
            )
        return False

    def _complete(self, trial: Any, value: float) -> None:
        self._call("on_trial_complete", trial, {METRIC: value, TIME_ATTR: self.to})

    def _fail(self, trial: Any) -> None:
        self._call("on_trial_error", trial)


if __name__ == "__main__":
    # Through the protocol: command = ["python", "-m", "banditbench.adapters.syne_tune"] with
    # pool_space = true and the parameters as params.
    from ..protocol import serve

    serve(SyneTuneScheduler)
