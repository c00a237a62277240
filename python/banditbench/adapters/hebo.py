"""HEBO as a banditbench policy in the pool world (HEBO 0.3.6, pinned by
python/requirements-hebo.txt; HEBO pins numpy < 1.25 and brings torch, so it runs in a venv of its
own, as DEHB does).

HEBO (Cowen-Rivers, Lyu, Tutunov, Wang, Grosnit, Griffiths, Maraval, Jianye, Wang, Peters &
Bou Ammar 2022, "HEBO: Pushing The Limits of Sample-Efficient Hyper-parameter Optimisation",
JAIR 74; the winner of the NeurIPS 2020 black-box optimisation challenge) suggests through
``suggest`` and learns through ``observe``, minimising: a quasi-random Sobol design for its first
``rand_sample`` points, then a GP on power-transformed losses and the MACE acquisition optimised
by NSGA-II. Each cell builds one ``HEBO``; a worker that comes free asks for one suggestion, its
configuration is trained to unit ``to`` in one piece of work, and its loss (the negated score) is
observed when that work finishes on the simulated clock.

The open choices, each a parameter:

- ``ordinal``: a dimension with ordered levels as ``"index"`` (HEBO's ``int`` over 0 .. n-1, the
  levels' order kept) or ``"categorical"`` (its ``cat``, unordered). A categorical dimension is a
  ``cat`` of level indices; on a recorded sample a numeric one is ``num``, ``int``, ``pow`` (log)
  or ``pow_int`` (log, whole numbers).
- ``pending``: HEBO has no notion of a running suggestion (its parallel mode is a batch,
  ``suggest(n_suggestions=K)``), so with several workers each free worker asks alone and HEBO's
  model sees only finished work (``"ignore"``, the one rule so far); its Sobol design advances
  with every suggestion, so start-up points do not repeat.
- ``to``, ``repeat``, ``max_repeats``, ``learner``, ``snap``: as for Optuna's adapter. With several
  learners the space is a ``learner`` category beside every learner's dimensions, named
  ``LEARNER.DIM`` (HEBO has no conditional spaces: the other learners' values are ignored).
- A failed or unrecorded configuration is observed as a loss of +inf, which HEBO drops (its
  ``observe`` keeps finite losses only).
- Every other parameter goes to ``HEBO(...)``: ``model_name`` (``"gp"``), ``rand_sample``,
  ``es`` (``"nsga2"``), ``model_config``. ``scramble_seed`` (its Sobol design) is the cell's seed
  modulo 2^32, and so are NumPy's and torch's global generators, which HEBO draws from: each cell
  keeps its own and swaps them in around its calls (``_generators.Generators``), so that cells on
  several threads stay exact. With one worker the suggestions are those of
  HEBO's own loop on the same table (scripts/reference/hebo_sequential.py).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ._generators import Generators
from ._grid import GridSpace, Key, key_of
from ._trials import WholeTrials, prepare

VERSION = "0.3.6"

ORDINAL = ("index", "categorical")
PENDING = ("ignore",)


def _hebo():
    try:
        import torch  # noqa: F401
        from hebo.design_space.design_space import DesignSpace
        from hebo.optimizers.hebo import HEBO
    except ImportError as e:
        raise ImportError(
            "the HEBO adapter needs HEBO: pip install -r python/requirements-hebo.txt in a venv "
            f"of its own (HEBO {VERSION} pins numpy < 1.25 and brings torch) ({e})"
        ) from None
    return DesignSpace, HEBO


def design_space(grid: GridSpace, learners: List[int], ordinal: str = "index") -> Any:
    """HEBO's ``DesignSpace`` of ``learners`` (indices into the grid's learners): one learner's
    dimensions by name; several beside a ``"learner"`` category, each named ``"LEARNER.DIM"``."""
    if ordinal not in ORDINAL:
        raise ValueError(f"ordinal = {ordinal!r}; give one of {', '.join(ORDINAL)}")
    DesignSpace, _ = _hebo()
    return DesignSpace().parse(space_list(grid, learners, ordinal))


def space_list(grid: GridSpace, learners: List[int], ordinal: str = "index") -> List[Dict]:
    """The parameter list ``DesignSpace().parse`` takes (see :func:`design_space`)."""
    out: List[Dict[str, Any]] = []
    if len(learners) > 1:
        out.append({"name": "learner", "type": "cat",
                    "categories": [grid.learners[l] for l in learners]})
    for l in learners:
        prefix = f"{grid.learners[l]}." if len(learners) > 1 else ""
        for d in grid.dims[l]:
            name = prefix + d.name
            if d.kind == "numeric":
                whole = d.int_range
                if whole is not None:
                    kind = "pow_int" if d.log else "int"
                    out.append({"name": name, "type": kind, "lb": whole[0], "ub": whole[1]})
                else:
                    out.append({"name": name, "type": "pow" if d.log else "num",
                                "lb": d.low, "ub": d.high})
            elif d.kind == "ordinal" and ordinal == "index" and len(d.choices) > 1:
                out.append({"name": name, "type": "int", "lb": 0, "ub": len(d.choices) - 1})
            else:
                out.append({"name": name, "type": "cat",
                            "categories": [str(i) for i in range(len(d.choices))]})
    return out


class HEBOOptimizer(WholeTrials):
    """HEBO on the pool world, one optimizer per cell (see the module's documentation)."""

    pool_space = True

    def __init__(self, cell: Any, ordinal: str = "index", pending: str = "ignore",
                 to: Optional[int] = None, repeat: str = "reuse", max_repeats: int = 1000,
                 learner: Optional[str] = None, snap: str = "nearest", **options: Any):
        super().__init__(cell)
        _, HEBO = _hebo()  # first: a missing HEBO (or torch) is named as such
        if pending not in PENDING:
            raise ValueError(f"pending = {pending!r}; the rule so far is 'ignore' (HEBO has no "
                             "running suggestions)")
        prepare(self, cell, "HEBO", to=to, repeat=repeat, max_repeats=max_repeats,
                learner=learner, ordinal=ordinal, ordinals=ORDINAL, snap=snap)
        if "scramble_seed" in options:
            raise ValueError("scramble_seed is the cell's seed; leave it out")
        import numpy as np

        self._np = np
        self.space = design_space(self.grid, self.learners, ordinal)
        seed = cell.seed % 2**32
        self._generators = Generators(seed, numpy=True, torch=True)
        self.hebo = self._generators.build(
            lambda: HEBO(self.space, scramble_seed=seed, **options))

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """A HEBO call with this cell's global generators."""
        return self._generators.call(getattr(self.hebo, method), *args, **kwargs)

    def _ask(self) -> Optional[Tuple[Any, Key]]:
        rec = self._call("suggest", n_suggestions=1)
        values = rec.iloc[0].to_dict()
        # (An int, or a category's level index as a string: key_of reads both with int.)
        return rec, key_of(values, self.grid, self.learners)

    def _complete(self, trial: Any, value: float) -> None:
        self._call("observe", trial, self._np.array([[-value]]))

    def _fail(self, trial: Any) -> None:
        self._call("observe", trial, self._np.array([[float("inf")]]))

    def stats(self) -> Optional[Dict[str, Any]]:
        out = super().stats() or {}
        out["observed"] = int(self.hebo.X.shape[0])
        return out


if __name__ == "__main__":
    # Through the protocol: command = ["python", "-m", "banditbench.adapters.hebo"] with
    # pool_space = true and the parameters as params.
    from ..protocol import serve

    serve(HEBOOptimizer)
