"""NePS's optimizers as banditbench policies in the pool world (neural-pipeline-search 0.17.0,
pinned by python/requirements-neps.txt; NePS pins pandas < 3 and brings torch, so it runs in a
venv of its own).

NePS (Stoll et al., "Neural Pipeline Search (NePS)", https://github.com/automl/neps) offers its
optimizers through ``neps.AskAndTell``: ``ask()`` gives a trial (a configuration and, for a
multi-fidelity method, its fidelity), ``tell(trial, loss)`` reports it. Each cell builds one
optimizer by name from ``neps.algorithms`` on the pool's space as a ``neps.PipelineSpace``; a
worker that comes free asks for a trial, the trial's configuration is trained to its unit in one
piece of work, and its loss (the negated score; NePS minimises) is told when that work finishes
on the simulated clock. Trials still running are asked and not told, as in NePS's own parallel
workers.

The open choices, each a parameter:

- ``optimizer``: a name in ``neps.algorithms``: ``"asha"`` (default), ``"hyperband"``,
  ``"successive_halving"``, ``"async_hb"``, ``"priorband"``, ``"random_search"``,
  ``"bayesian_optimization"``, ... Every other parameter goes to it.
- ``fidelity``: the space's fidelity ``units`` (an ``IntegerFidelity`` from ``min_unit`` to
  ``to``), given to the multi-fidelity methods; a method that takes none (NePS refuses a fidelity
  for random search and Bayesian optimisation) trains every trial to ``to``. ``"auto"``
  (default): a fidelity when the method takes one; ``"none"``: never.
- A trial at a fidelity is a job (as DEHB's, ``BudgetJobs``). ``promotion`` decides a trial on a
  configuration trained before to a lower unit: ``"continue"`` (default) resumes from its last
  unit, only the new units charged, as a checkpointed objective would (NePS's ``previous_config``
  is how its own workers find the checkpoint); ``"restart"`` trains it again from its first unit,
  every unit charged (the units trained before are trained again, ``Retrain``), as an objective
  without checkpoints would. ``repeat`` decides a job at or below what is trained (``"reuse"``:
  told at once, free; ``"charge"``: trained again).
- ``ordinal``: a dimension with ordered levels as ``"index"`` (``neps.Integer`` over 0 .. n-1) or
  ``"categorical"`` (``neps.Categorical`` of its level indices).
- ``to``, ``min_unit``, ``max_repeats``, ``learner``: as for DEHB's adapter; one learner at a time
  (NePS's spaces are named by Python attributes).
- A failed or unrecorded configuration is told as a crashed trial.
- NePS takes no seed: its draws come from Python's, NumPy's and torch's global generators, which
  the adapter seeds with the cell's seed (mod 2^32) and swaps in around the cell's calls, under a
  lock, so that cells on several threads stay exact.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from ._generators import Generators
from ._grid import GridSpace, Key, key_of
from ._trials import BudgetJobs, prepare, promotion_rule

VERSION = "0.17.0"

ORDINAL = ("index", "categorical")
FIDELITY = ("auto", "none")
UNITS = "units"


def _neps():
    try:
        import neps
        import torch  # noqa: F401
    except ImportError as e:
        raise ImportError(
            "the NePS adapter needs NePS: pip install -r python/requirements-neps.txt in a venv "
            f"of its own (neural-pipeline-search {VERSION} pins pandas < 3 and brings torch) ({e})"
        ) from None
    return neps


def pipeline_space(grid: GridSpace, learner: int, ordinal: str = "index",
                   fidelity: Optional[Tuple[int, int]] = None) -> Any:
    """NePS's ``PipelineSpace`` of one learner's dimensions, by name; with ``fidelity`` (low,
    high) also an ``IntegerFidelity`` named ``units``."""
    if ordinal not in ORDINAL:
        raise ValueError(f"ordinal = {ordinal!r}; give one of {', '.join(ORDINAL)}")
    neps = _neps()
    if fidelity is not None and any(d.name == UNITS for d in grid.dims[learner]):
        raise ValueError(f"learner {grid.learners[learner]!r} has a dimension named {UNITS!r}, "
                         "the name of NePS's fidelity here: give fidelity = 'none'")
    attrs: Dict[str, Any] = {}
    for d in grid.dims[learner]:
        if d.kind == "numeric":
            whole = d.int_range
            attrs[d.name] = (neps.Integer(lower=whole[0], upper=whole[1], log=d.log)
                             if whole else neps.Float(lower=d.low, upper=d.high, log=d.log))
        elif d.kind == "ordinal" and ordinal == "index" and len(d.choices) > 1:
            attrs[d.name] = neps.Integer(lower=0, upper=len(d.choices) - 1)
        else:
            attrs[d.name] = neps.Categorical(choices=tuple(range(len(d.choices))))
    if fidelity is not None:
        attrs[UNITS] = neps.IntegerFidelity(lower=fidelity[0], upper=fidelity[1])
    return type("PoolSpace", (neps.PipelineSpace,), attrs)()


class NePSOptimizer(BudgetJobs):
    """A NePS optimizer on the pool world, one per cell (see the module's documentation)."""

    pool_space = True

    def __init__(self, cell: Any, optimizer: str = "asha", fidelity: str = "auto",
                 ordinal: str = "index", min_unit: int = 1, to: Optional[int] = None,
                 promotion: str = "continue", repeat: str = "reuse", max_repeats: int = 1000,
                 learner: Optional[str] = None, snap: str = "nearest", **options: Any):
        super().__init__(cell)
        neps = _neps()
        self.promotion = promotion_rule(promotion)
        if fidelity not in FIDELITY:
            raise ValueError(f"fidelity = {fidelity!r}; give one of {', '.join(FIDELITY)}")
        prepare(self, cell, "NePS", to=to, repeat=repeat, max_repeats=max_repeats,
                learner=learner, ordinal=ordinal, ordinals=ORDINAL, snap=snap)
        if len(self.learners) != 1:
            raise ValueError("NePS's adapter tunes one learner at a time: give learner = NAME, "
                             "or per_learner = true in the world")
        make = getattr(neps.algorithms, optimizer, None)
        if optimizer.startswith("_") or not callable(make):
            raise ValueError(f"optimizer = {optimizer!r} is not in neps.algorithms "
                             f"(NePS {VERSION}): asha, hyperband, successive_halving, async_hb, "
                             "priorband, random_search, bayesian_optimization, ...")
        if not 1 <= int(min_unit) <= self.to:
            raise ValueError(f"min_unit = {min_unit}: give 1 <= min_unit <= to = {self.to}")
        learner_index = self.learners[0]
        self.fidelity = fidelity == "auto"

        def build() -> Any:
            try:
                return make(pipeline_space(
                    self.grid, learner_index, ordinal,
                    (int(min_unit), self.to) if self.fidelity else None), **options)
            except ValueError as e:
                if not (self.fidelity and "Fidelities are not supported" in str(e)):
                    raise
            # A method without fidelities: every trial trains to `to`.
            self.fidelity = False
            return make(pipeline_space(self.grid, learner_index, ordinal, None), **options)

        self._generators = Generators(cell.seed % 2**32, python=True, numpy=True, torch=True)
        self.opt = self._generators.build(lambda: neps.AskAndTell(optimizer=build()))

    def _call(self, method: str, *args: Any) -> Any:
        """A NePS call with this cell's global generators."""
        return self._generators.call(getattr(self.opt, method), *args)

    def _ask_job(self) -> Optional[Tuple[Any, Key, int]]:
        trial = self._call("ask")
        config = dict(trial.config)
        unit = int(config.pop(UNITS, self.to)) if self.fidelity else self.to
        return trial, key_of(config, self.grid, self.learners), min(max(unit, 1), self.to)

    def _tell_job(self, job: Any, value: Optional[float], cost: int) -> None:
        if value is None:
            self._call("tell", job, ValueError("a failed or unrecorded configuration"))
        else:
            self._call("tell", job, -value)


if __name__ == "__main__":
    from ..protocol import serve

    serve(NePSOptimizer)
