"""Other libraries' optimizers as banditbench policies, on the exact simulator (docs in the
README, "Library optimizers").

- :class:`banditbench.adapters.optuna.OptunaSampler`: Optuna's samplers and pruners (extra
  ``optuna``).
- :class:`banditbench.adapters.syne_tune.SyneTuneScheduler`: Syne Tune's schedulers (extra
  ``syne-tune``).
- :class:`banditbench.adapters.nevergrad.NevergradOptimizer`: Nevergrad's optimizers (extra
  ``nevergrad``).

:func:`space` gives the search space a library expects for a grid pool.
"""

from __future__ import annotations

from typing import Any, Optional

from ._grid import GridSpace

LIBRARIES = ("optuna", "syne-tune", "nevergrad")


def space(pool: str, learner: Optional[str] = None, library: str = "optuna",
          ordinal: str = "index") -> Any:
    """The search space of grid pool ``pool`` (a folder, or a bundled pool's name such as
    ``"sklearn-grid"``) as ``library`` expects it: for Optuna a dict of distributions, of one
    ``learner``'s dimensions, or of every learner's under a categorical ``"learner"``; for Syne
    Tune its config-space dict (domains), for Nevergrad an ``ng.p.Dict`` (ordered levels as
    ``TransitionChoice`` for ``ordinal="index"``), the same names. Every point of it maps to exactly one
    configuration of the grid."""
    grid = GridSpace.of_pool(pool)
    learners = [grid.learner_index(learner)] if learner is not None else list(range(len(grid.learners)))
    if library == "optuna":
        from .optuna import distributions

        return distributions(grid, learners, ordinal)
    if library == "syne-tune":
        from .syne_tune import config_space

        return config_space(grid, learners, ordinal)
    if library == "nevergrad":
        from .nevergrad import parametrization

        return parametrization(grid, learners, "transition" if ordinal == "index" else ordinal)
    raise ValueError(f"library = {library!r}; the adapters so far: {', '.join(LIBRARIES)}")
