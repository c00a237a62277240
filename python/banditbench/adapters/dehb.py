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
  checkpointed objective would; ``"restart"``: training starts over from the first unit and every
  unit up to the job's is charged (the units trained before are trained again, their recorded
  scores revealed again), as an objective without checkpoints would; the job's ``cost`` counts
  them all.
- ``repeat``: a job on a configuration already trained to the job's unit or beyond: ``"reuse"``
  (default) tells the recorded score at once, charging nothing; ``"charge"`` trains those units
  again (``Retrain``) and tells the score when that work finishes.
- ``max_repeats``: jobs in a row told without work, after which no worker asks again.
- ``snap``: on a recorded sample (a learner with numeric ranges, e.g. ``sklearn-random``), which
  recorded configuration a suggested point evaluates: ``"nearest"``, ``"nearest-open"`` or
  ``"refuse"`` (:class:`banditbench.adapters._grid.Snap`; README, "A continuous space on a
  recorded sample"). Grid pools never snap.
- ``learner``: the learner to tune; without it (and ``per_learner = false`` in the world) every
  learner on the task, under a categorical ``learner`` that activates that learner's dimensions
  (``LEARNER.DIM``, ConfigSpace's ``EqualsCondition``; DEHB handles the conditions itself).
- Every other parameter goes to DEHB's constructor (``mutation_factor``, ``crossover_prob``,
  ``strategy``, ...). ``seed`` is the cell's seed modulo 2^32; DEHB's ``n_workers`` is 1 (more
  starts a Dask cluster): the simulated workers each ask in turn, and DEHB keeps the pending jobs.
"""

from __future__ import annotations

import math
import tempfile
from typing import Any, Optional, Sequence, Tuple, Union

from ._grid import GridSpace, Key, key_of
from ._grid import configspace as _configspace
from ._trials import BudgetJobs, prepare, promotion_rule, unit_of

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


def configspace(grid: GridSpace, learners: Union[int, Sequence[int]], seed: int = 0) -> Any:
    """ConfigSpace's space of one learner or several
    (:func:`banditbench.adapters._grid.configspace`)."""
    _dehb()
    return _configspace(grid, learners, seed)


class DEHBOptimizer(BudgetJobs):
    """DEHB on the pool world, one optimizer per cell (see the module's documentation)."""

    pool_space = True

    def __init__(self, cell: Any, eta: int = 3, min_unit: int = 1, to: Optional[int] = None,
                 promotion: str = "continue", repeat: str = "reuse", max_repeats: int = 1000,
                 learner: Optional[str] = None, snap: str = "nearest", **options: Any):
        super().__init__(cell)
        DEHB = _dehb()
        self.promotion = promotion_rule(promotion)
        prepare(self, cell, "DEHB", to=to, repeat=repeat, max_repeats=max_repeats,
                learner=learner, snap=snap)
        if not 1 <= int(min_unit) < self.to:
            raise ValueError(f"min_unit = {min_unit}, to = {to}: give 1 <= min_unit < to <= "
                             f"{self.units}")
        seed = cell.seed % 2**32
        self._out = tempfile.TemporaryDirectory(prefix="banditbench-dehb-")
        self.dehb = DEHB(cs=configspace(self.grid, self.learners, seed), min_fidelity=min_unit,
                         max_fidelity=self.to, eta=eta, n_workers=1, seed=seed,
                         output_path=self._out.name, save_freq="end", log_level="ERROR",
                         **options)

    def _key(self, job: Any) -> Key:
        return key_of(job["config"], self.grid, self.learners)

    def _unit(self, job: Any) -> int:
        return unit_of(job["fidelity"], self.to)

    def _ask_job(self) -> Tuple[Any, Key, int]:
        job = self.dehb.ask()
        return job, self._key(job), self._unit(job)

    def _tell_job(self, job: Any, value: Optional[float], cost: int) -> None:
        self.dehb.tell(job, {"fitness": math.inf if value is None else -value, "cost": cost})


if __name__ == "__main__":
    from ..protocol import serve

    serve(DEHBOptimizer)
