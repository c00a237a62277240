"""Nevergrad's optimizers as banditbench policies in the pool world (Nevergrad 1.0.12, pinned by the
``nevergrad`` extra: ``pip install "banditbench-engine[nevergrad]"``).

Nevergrad (Rapin & Teytaud 2018, "Nevergrad - A gradient-free optimization platform",
https://github.com/facebookresearch/nevergrad) optimises through ``ask`` and ``tell``: each cell
builds one optimizer from Nevergrad's registry by name, on the pool's space as a ``ng.p.Dict``; a
worker that comes free asks for a candidate, the candidate's configuration is trained to unit
``to`` in one piece of work, and its loss (the negated score: Nevergrad minimises) is told when
that work finishes on the simulated clock. Candidates still running are asked and not told, as
in Nevergrad's own parallel loop (``num_workers`` is the cell's number of workers, which the
optimizers read).

The open choices, each a parameter:

- ``optimizer``: any name in ``ng.optimizers.registry`` (542 in 1.0.12): ``"NGOpt"`` (default,
  Nevergrad's own choice of an algorithm for the space, budget and workers), ``"TwoPointsDE"``,
  ``"PortfolioDiscreteOnePlusOne"``, ``"CMA"``, ``"RandomSearch"``, ...
- ``budget``: the number of candidates the optimizer is told to expect (its ``budget``, which
  several optimizers use to plan). Default: the cell's budget over ``to`` when the budget counts
  units, else None (no budget given).
- ``ordinal``: a dimension with ordered levels as ``"transition"`` (``ng.p.TransitionChoice``,
  its order kept: mutations move to neighbouring levels) or ``"categorical"`` (``ng.p.Choice``).
- ``to``, ``repeat``, ``max_repeats``, ``learner``, ``snap``: as for Optuna's adapter (on a
  recorded sample a numeric range is ``ng.p.Log`` or ``ng.p.Scalar``, cast to whole numbers where
  the recorder drew them). A suggestion of a
  configuration evaluated before is told its recorded loss at once, charging nothing
  (``"reuse"``), or after training it again, charged (``"charge"``); a failed or unrecorded
  configuration is told a loss of +inf.

The random state is the parametrization's ``np.random.RandomState(seed)``, ``seed`` the cell's
seed modulo 2^32, set before the optimizer is built; with one worker the candidates are those of
Nevergrad's own ``minimize`` loop on the same table (scripts/reference/nevergrad_sequential.py).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ._grid import GridSpace, Key, key_of
from ._trials import WholeTrials, prepare

VERSION = "1.0.12"

ORDINAL = ("transition", "categorical")


def _ng():
    try:
        import nevergrad as ng
    except ImportError:
        raise ImportError(
            "the Nevergrad adapter needs Nevergrad: pip install \"banditbench-engine[nevergrad]\" "
            f"(it pins nevergrad=={VERSION})"
        ) from None
    return ng


def parametrization(grid: GridSpace, learners: List[int], ordinal: str = "transition") -> Any:
    """Nevergrad's ``ng.p.Dict`` of ``learners`` (indices into the grid's learners): one learner's
    dimensions by name; several under a ``"learner"`` choice, each dimension named
    ``"LEARNER.DIM"`` (Nevergrad has no conditional spaces: the other learners' values are drawn
    and ignored). Each dimension's values are its level indices."""
    if ordinal not in ORDINAL:
        raise ValueError(f"ordinal = {ordinal!r}; give one of {', '.join(ORDINAL)}")
    ng = _ng()
    out: Dict[str, Any] = {}
    if len(learners) > 1:
        out["learner"] = ng.p.Choice([grid.learners[l] for l in learners])
    for l in learners:
        prefix = f"{grid.learners[l]}." if len(learners) > 1 else ""
        for d in grid.dims[l]:
            if d.kind == "numeric":
                p = (ng.p.Log if d.log else ng.p.Scalar)(lower=d.low, upper=d.high)
                out[prefix + d.name] = p.set_integer_casting() if d.int_range else p
                continue
            levels = list(range(len(d.choices)))
            if d.kind == "ordinal" and ordinal == "transition":
                out[prefix + d.name] = ng.p.TransitionChoice(levels)
            else:
                out[prefix + d.name] = ng.p.Choice(levels)
    return ng.p.Dict(**out)


class NevergradOptimizer(WholeTrials):
    """A Nevergrad optimizer on the pool world, one per cell (see the module's documentation)."""

    pool_space = True

    def __init__(self, cell: Any, optimizer: str = "NGOpt", budget: Optional[int] = None,
                 ordinal: str = "transition", to: Optional[int] = None, repeat: str = "reuse",
                 max_repeats: int = 1000, learner: Optional[str] = None, snap: str = "nearest",
                 **options: Any):
        super().__init__(cell)
        import numpy as np

        ng = _ng()
        prepare(self, cell, "Nevergrad", to=to, repeat=repeat, max_repeats=max_repeats,
                learner=learner, ordinal=ordinal, ordinals=ORDINAL, snap=snap)
        if optimizer not in ng.optimizers.registry:
            close = sorted(n for n in ng.optimizers.registry if n.lower() == optimizer.lower()
                           or optimizer.lower() in n.lower())[:8]
            raise ValueError(
                f"optimizer = {optimizer!r} is not in Nevergrad {VERSION}'s registry"
                + (f"; close: {', '.join(close)}" if close else "")
            )
        if budget is None and cell.unit == "units":
            budget = int(cell.budget_abs // self.to)
        self.budget = budget
        self.workers = int(getattr(cell, "workers", 1) or 1)
        self.param = parametrization(self.grid, self.learners, ordinal)
        self.param.random_state = np.random.RandomState(cell.seed % 2**32)
        try:
            self.optimizer = ng.optimizers.registry[optimizer](
                parametrization=self.param, budget=self.budget, num_workers=self.workers,
                **options)
        except ValueError as e:
            if "parallel" not in str(e):
                raise
            raise ValueError(
                f"optimizer = {optimizer!r} does not run on {self.workers} workers (Nevergrad: "
                f"{e}); run it with workers = 1"
            ) from e

    def _ask(self) -> Optional[Tuple[Any, Key]]:
        candidate = self.optimizer.ask()
        return candidate, key_of(candidate.value, self.grid, self.learners)

    def _complete(self, trial: Any, value: float) -> None:
        self.optimizer.tell(trial, -value)

    def _fail(self, trial: Any) -> None:
        self.optimizer.tell(trial, float("inf"))


if __name__ == "__main__":
    # Through the protocol: command = ["python", "-m", "banditbench.adapters.nevergrad"] with
    # pool_space = true and the parameters as params.
    from ..protocol import serve

    serve(NevergradOptimizer)
