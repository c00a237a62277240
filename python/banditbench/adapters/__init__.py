"""Other libraries' optimizers as banditbench policies, on the exact simulator (docs in the
README, "Library optimizers").

- :class:`banditbench.adapters.optuna.OptunaSampler`: Optuna's samplers and pruners (extra
  ``optuna``).
- :class:`banditbench.adapters.syne_tune.SyneTuneScheduler`: Syne Tune's schedulers (extra
  ``syne-tune``).
- :class:`banditbench.adapters.nevergrad.NevergradOptimizer`: Nevergrad's optimizers (extra
  ``nevergrad``).
- :class:`banditbench.adapters.smac.SMACFacade`: SMAC3's facades (extra ``smac``).
- :class:`banditbench.adapters.dehb.DEHBOptimizer`: DEHB, in a venv of its own
  (python/requirements-dehb.txt: DEHB pins numpy < 2).
- :class:`banditbench.adapters.hebo.HEBOOptimizer`: HEBO, in a venv of its own
  (python/requirements-hebo.txt: HEBO pins numpy < 1.25 and brings torch).
- :class:`banditbench.adapters.neps.NePSOptimizer`: NePS's optimizers, in a venv of its own
  (python/requirements-neps.txt: NePS pins pandas < 3 and brings torch).

:func:`space` gives the search space a library expects for a pool (a grid, or a trace set's
recorded sample, whose ranges a suggestion is snapped from); :func:`catalog` lists every
method the adapters run, with the pinned and installed versions.
"""

from __future__ import annotations

import importlib
from typing import Any, List, Optional

from ._grid import GridSpace

LIBRARIES = ("optuna", "syne-tune", "nevergrad", "smac", "hebo", "neps")


def space(pool: str, learner: Optional[str] = None, library: str = "optuna",
          ordinal: str = "index") -> Any:
    """The search space of pool ``pool`` (a folder, or a bundled pool's name such as
    ``"sklearn-grid"``; or a trace set with recorded ranges, such as ``"sklearn-random"``, whose
    numeric dimensions are ranges, log where recorded so) as ``library`` expects it: for Optuna
    a dict of distributions, of one ``learner``'s dimensions, or of every learner's under a categorical ``"learner"``; for Syne
    Tune its config-space dict (domains), for HEBO its ``DesignSpace``, for NePS a ``PipelineSpace`` (one learner), for Nevergrad an ``ng.p.Dict`` (ordered levels as
    ``TransitionChoice`` for ``ordinal="index"``), the same names; for SMAC3 (and DEHB) a ConfigSpace
    of level indices (several learners under a categorical ``"learner"``, their dimensions
    ``LEARNER.DIM`` active under it). On a grid every point of it maps to exactly one
    configuration; on a sample the adapters' ``snap`` rule picks one."""
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
    if library == "smac":
        from .smac import configspace

        return configspace(grid, learners)
    if library == "hebo":
        from .hebo import design_space

        return design_space(grid, learners, ordinal)
    if library == "neps":
        from .neps import pipeline_space

        if len(learners) != 1:
            raise ValueError("NePS's space is one learner's: give learner = NAME")
        return pipeline_space(grid, learners[0], ordinal)
    raise ValueError(f"library = {library!r}; the adapters so far: {', '.join(LIBRARIES)}")


# library -> (adapter module, class, the parameter that names a method, the distribution name)
ADAPTERS = {
    "optuna": ("optuna", "OptunaSampler", "sampler", "optuna"),
    "syne-tune": ("syne_tune", "SyneTuneScheduler", "scheduler", "syne-tune"),
    "nevergrad": ("nevergrad", "NevergradOptimizer", "optimizer", "nevergrad"),
    "smac": ("smac", "SMACFacade", "facade", "smac"),
}


def catalog():
    """Every library optimizer the adapters run, as a DataFrame: library, the adapter class, the
    parameter that names the method (``sampler``, ``pruner``, ``scheduler``, ``optimizer``,
    ``facade``),
    the method's name, the pinned version and the installed one (None: not installed; then
    Nevergrad's registry is not listed, only that it exists)."""
    from importlib import metadata

    from ..api import _pd

    rows: List[dict] = []
    for library, (module, cls, param, dist) in ADAPTERS.items():
        m = importlib.import_module(f".{module}", __name__)
        try:
            installed: Optional[str] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            installed = None
        names: List[tuple] = []
        if library == "optuna":
            names = [("sampler", n) for n in m.SAMPLERS] + [("pruner", n) for n in m.PRUNERS]
        elif library == "syne-tune":
            names = [("scheduler", n) for n in m.SCHEDULERS]
        elif library == "smac":
            names = [("facade", n) for n in m.FACADES]
        elif installed is not None:
            names = [("optimizer", n) for n in sorted(m._ng().optimizers.registry)]
        else:
            names = [("optimizer", "(any name in Nevergrad's registry)")]
        for p, n in names:
            rows.append({"library": library, "adapter": f"banditbench.adapters.{module}.{cls}",
                         "parameter": p, "name": n, "pinned": m.VERSION,
                         "installed": installed})
    return _pd().DataFrame(rows)
