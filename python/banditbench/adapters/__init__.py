"""Other libraries' optimizers as banditbench policies, on the exact simulator (docs in the
README, "Library optimizers").

- :class:`banditbench.adapters.optuna.OptunaSampler`: Optuna's samplers (extra ``optuna``).

:func:`space` gives the search space a library expects for a grid pool.
"""

from __future__ import annotations

from typing import Any, Optional

from ._grid import GridSpace

LIBRARIES = ("optuna",)


def space(pool: str, learner: Optional[str] = None, library: str = "optuna",
          ordinal: str = "index") -> Any:
    """The search space of grid pool ``pool`` (a folder, or a bundled pool's name such as
    ``"sklearn-grid"``) as ``library`` expects it: for Optuna a dict of distributions, of one
    ``learner``'s dimensions, or of every learner's under a categorical ``"learner"``. Every
    point of it maps to exactly one configuration of the grid."""
    grid = GridSpace.of_pool(pool)
    learners = [grid.learner_index(learner)] if learner is not None else list(range(len(grid.learners)))
    if library == "optuna":
        from .optuna import distributions

        return distributions(grid, learners, ordinal)
    raise ValueError(f"library = {library!r}; the adapters so far: {', '.join(LIBRARIES)}")
