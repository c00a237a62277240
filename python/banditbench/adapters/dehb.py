"""DEHB as a banditbench policy in the pool world (DEHB 0.1.2 with ConfigSpace 1.2.2, pinned by
python/requirements-dehb.txt; DEHB pins numpy < 2, so it runs in a venv of its own).

DEHB (Awad, Mallik & Hutter 2021, "DEHB: Evolutionary Hyperband for Scalable, Robust and
Efficient Hyperparameter Optimization", IJCAI) proposes jobs through ``ask`` — a configuration
and a fidelity — and learns from ``tell``. This adapter asks once per free simulated worker and
maps a job's fidelity to the pool's units by a stated rule: unit = ceil(fidelity), with DEHB's
``min_fidelity`` and ``max_fidelity`` given in units (1 and ``to`` by default; with η = 3 and
27 units the rungs are 1, 3, 9 and 27). A configuration is trained to its job's unit in one piece
of work and the job is told ``fitness`` = −score there and ``cost`` = the units its job trained.

The open choices, each a parameter:

- ``eta``, ``min_unit``, ``to``: DEHB's η and its fidelity range in units.
- ``promotion``: a job on a configuration trained before to a lower unit. ``"continue"``
  (default): training resumes from its last unit and only the new units are charged, as a
  checkpointed objective would; ``"restart"`` is not built yet.
- ``repeat``: a job on a configuration already trained to the job's unit or beyond: ``"reuse"``
  (default) tells the recorded score at once, charging nothing; ``"charge"`` trains those units
  again (``Retrain``) and tells the score when that work finishes.
- ``max_repeats``: jobs in a row told without work, after which no worker asks again.
- ``learner``: the learner to tune (one: ConfigSpace's conditions are not mapped yet).
- Every other parameter goes to DEHB's constructor (``mutation_factor``, ``crossover_prob``,
  ``strategy``, ...). ``seed`` is the cell's seed modulo 2^32; DEHB's ``n_workers`` is 1 (more
  starts a Dask cluster): the simulated workers each ask in turn, and DEHB keeps the pending jobs.
"""

from __future__ import annotations

import math
import tempfile
from typing import Any, Dict, List, Optional

from ..protocol import Choose, Policy, Retrain, Stop, Train, Wait
from ._grid import GridSpace, Key
from ._trials import prepare

VERSION = "0.1.2"


def _dehb():
    try:
        import ConfigSpace  # noqa: F401
        from dehb import DEHB
    except ImportError:
        raise ImportError(
            "the DEHB adapter needs DEHB: pip install -r python/requirements-dehb.txt in a venv "
            f"of its own (DEHB {VERSION} pins numpy < 2)"
        ) from None
    return DEHB


def configspace(grid: GridSpace, learner: int, seed: int = 0) -> Any:
    """ConfigSpace's space of one learner: an ``OrdinalHyperparameter`` of level indices for a
    dimension with ordered levels, a ``CategoricalHyperparameter`` of level indices otherwise."""
    _dehb()
    import ConfigSpace as CS

    cs = CS.ConfigurationSpace(seed=seed)
    cs.add([
        CS.OrdinalHyperparameter(d.name, list(range(len(d.choices))))
        if d.kind == "ordinal" and len(d.choices) > 1
        else CS.CategoricalHyperparameter(d.name, list(range(len(d.choices))))
        for d in grid.dims[learner]
    ])
    return cs


class DEHBOptimizer(Policy):
    """DEHB on the pool world, one optimizer per cell (see the module's documentation)."""

    pool_space = True

    def __init__(self, cell: Any, eta: int = 3, min_unit: int = 1, to: Optional[int] = None,
                 promotion: str = "continue", repeat: str = "reuse", max_repeats: int = 1000,
                 learner: Optional[str] = None, **options: Any):
        super().__init__(cell)
        DEHB = _dehb()
        if promotion != "continue":
            raise ValueError(f"promotion = {promotion!r}; the rule so far is 'continue'")
        prepare(self, cell, "DEHB", to=to, repeat=repeat, max_repeats=max_repeats,
                learner=learner)
        if len(self.learners) != 1:
            raise ValueError(
                f"the DEHB adapter tunes one learner; this cell keeps {len(self.learners)}: give "
                "learner = NAME, or per_learner = true in the world"
            )
        self.learner = self.learners[0]
        if not 1 <= int(min_unit) < self.to:
            raise ValueError(f"min_unit = {min_unit}, to = {to}: give 1 <= min_unit < to <= "
                             f"{self.units}")
        seed = cell.seed % 2**32
        self._out = tempfile.TemporaryDirectory(prefix="banditbench-dehb-")
        self.dehb = DEHB(cs=configspace(self.grid, self.learner, seed), min_fidelity=min_unit,
                         max_fidelity=self.to, eta=eta, n_workers=1, seed=seed,
                         output_path=self._out.name, save_freq="end", log_level="ERROR",
                         **options)
        # Per configuration: its arm, its revealed scores; per arm: the job training it.
        self.arm_of: Dict[Key, int] = {}
        self.arm_key: List[Key] = []
        self.curve: Dict[Key, List[Optional[float]]] = {}
        self.job_of: Dict[int, Any] = {}
        self.waiting: Dict[Key, List[Any]] = {}
        self.ready: List[Any] = []
        self.repeats = 0

    def _key(self, job: Any) -> Key:
        c = job["config"]
        return self.learner, tuple(int(c[d.name]) for d in self.grid.dims[self.learner])

    def _unit(self, job: Any) -> int:
        return min(self.to, max(1, math.ceil(float(job["fidelity"]) - 1e-9)))

    def _tell(self, job: Any, key: Key, cost: int) -> None:
        curve, u = self.curve[key], self._unit(job)
        v = curve[u - 1] if u <= len(curve) else None
        self.dehb.tell(job, {"fitness": math.inf if v is None else -v, "cost": cost})

    def decide(self, view: Any) -> Any:
        while self.ready or self.repeats < self.max_repeats:
            # Jobs that waited for their configuration's work first, then new ones.
            job = self.ready.pop(0) if self.ready else self.dehb.ask()
            key, u = self._key(job), self._unit(job)
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
                self.dehb.tell(job, {"fitness": math.inf, "cost": 0})
                continue
            arm = self.arm_of[key]
            if arm in self.job_of:
                # Running: this job is told when that work finishes; the worker waits.
                self.waiting.setdefault(key, []).append(job)
                return Wait()
            trained = len(self.curve[key])
            done = trained and (self.curve[key][-1] is None or trained >= self.units)
            if u > trained and not done:
                self.job_of[arm] = (job, u)
                self.repeats = 0
                return Train(arm, to=u)
            if self.repeat == "charge" and trained:
                self.job_of[arm] = (job, u)
                self.repeats = 0
                return Retrain(arm, to=min(u, trained))
            self.repeats += 1
            self._tell(job, key, 0)
        return Wait() if self.job_of else Stop()

    def observe(self, obs: Any) -> None:
        key = self.arm_key[obs.arm]
        job, u = self.job_of.pop(obs.arm)
        curve = self.curve[key]
        new = int(obs.arm_clock) - len(curve)
        for _, r in obs.revealed[len(obs.revealed) - new:] if new > 0 else []:
            curve.append(None if r is None else float(r))
        cut = u > len(curve) and (not curve or curve[-1] is not None) and len(curve) < self.units
        if not cut:
            # (Work the budget cut short never finished: its job is not told.)
            self._tell(job, key, len(obs.revealed))
        # Jobs that waited: the next decisions tell them, or train further for them.
        self.ready.extend(self.waiting.pop(key, []))


if __name__ == "__main__":
    from ..protocol import serve

    serve(DEHBOptimizer)
