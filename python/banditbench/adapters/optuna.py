"""Optuna's samplers as banditbench policies in the pool world (Optuna 5.0.0, pinned by the
``optuna`` extra: ``pip install "banditbench-engine[optuna]"``).

Each cell runs one Optuna study through its ask-and-tell interface (Akiba et al. 2019, "Optuna: A
Next-generation Hyperparameter Optimization Framework", KDD): a worker that comes free asks for a
trial, the trial's suggestion is mapped to a configuration of the pool, and that configuration is
trained to unit ``to`` (all units by default) as one piece of work. Its score is told when the work
finishes on the simulated clock. With several workers the trials still running are the study's
RUNNING trials, as in Optuna's own parallel loop, so ``constant_liar`` sees them.

The open choices, each a parameter:

- ``sampler``: ``"tpe"``, ``"random"``, ``"gp"`` (needs torch), ``"cmaes"`` (needs cmaes),
  ``"qmc"``, ``"nsgaii"``, ``"nsgaiii"``, ``"bruteforce"``; every other parameter goes to its
  constructor (``multivariate = true``, ``constant_liar = false``, ``n_startup_trials = 5``). ``seed`` is always the cell's seed
  modulo 2^32. A subclass may override :meth:`OptunaSampler.make_sampler` to run any
  ``optuna.samplers.BaseSampler``, a user's own among them.
- ``ordinal``: how a dimension with ordered levels is offered: ``"index"`` (an integer 0 .. n-1,
  the levels' order kept) or ``"categorical"`` (its levels as choices, unordered).
- ``to``: the unit each trial is trained to (default: the pool's last unit, full fidelity).
- ``repeat``: what a suggestion of a configuration already evaluated does. ``"reuse"``: the
  study is told the recorded score again at once, nothing is charged, and the worker asks again.
  ``"charge"``: the configuration is trained again over the units it trained, each unit's cost
  charged again (``Retrain``; with a pruner one unit at a time, each reported and pruned as it
  comes), and the trial is told its score when that work finishes, as Optuna's own loop pays for
  a repeated evaluation. A suggestion of a configuration still running on another worker is told
  when that work finishes, and the worker waits for the next result meanwhile (in Optuna's own
  parallel loop it would train the duplicate). With one worker Optuna's own loop on the same
  table gives the same study (scripts/reference/optuna_sequential.py).
- ``max_repeats``: suggestions in a row, over all workers, that started no work (configurations
  evaluated or running) after which the study is exhausted: no worker asks again, running work
  finishes, and the cell stops. Repeats charge nothing, so without this bound a converged sampler
  would grow its study (and each ask's cost) without end.
- ``pruner``: one of Optuna's pruners by name (``"median"``, ``"percentile"``,
  ``"successive-halving"``, ``"hyperband"``, ``"wilcoxon"``, ``"threshold"``, ``"nop"``;
  ``pruner_X=v`` passes ``X=v`` to its constructor). A trial then trains its configuration one
  unit at a time, reports each unit's score (step = unit) and asks the pruner after each, as an
  objective does in Optuna's own loop; a configuration trained before replays its recorded units
  to a new trial and trains further only if the pruner lets it.
- ``snap``: on a recorded sample (a learner with numeric dimensions, such as ``sklearn-random``'s
  joint pool), which configuration a suggested point evaluates: ``"nearest"``, ``"nearest-open"``
  or ``"refuse"`` (:class:`banditbench.adapters._grid.Snap`); the study is told that
  configuration's score for its point. Grid pools never snap.
- ``hub``: an OptunaHub sampler instead of a built-in one: a local package folder in OptunaHub's
  layout (``__init__.py`` exporting the sampler; loaded by ``optunahub.load_local_module``, never
  from the network) or an installed module's name; ``hub_sampler`` names the class (default: the
  only ``BaseSampler`` the package exports). It is built as ``cls(seed=..., **options)`` when it
  takes a seed. The folder's files are part of the policy's identity (:meth:`identity_files`):
  an edit is a changed policy, not a finished one.
- ``learner``: the learner to tune when the task keeps several (default: all of them, the learner
  a categorical root, "learner", and each learner's dimensions under it as "LEARNER.DIM").
- ``objectives``: in an experiment of several objectives (``[world] objectives``), ``"all"``
  (default) makes each cell's study one of as many objectives, in their recorded directions, and
  tells every trial their recorded values (Optuna's multi-objective TPE, NSGA-II, NSGA-III,
  random and GP samplers take them; its pruners do not, so a pruner is refused);
  ``"score"`` tells the pool's score only, a single-objective baseline. The cell's archive and
  its hypervolume regret are the engine's either way.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional

from ._grid import GridSpace, Key
from ._trials import UnitByUnit, WholeTrials, prepare

VERSION = "5.0.0"

SAMPLERS = {
    "tpe": "TPESampler",
    "random": "RandomSampler",
    "gp": "GPSampler",
    "cmaes": "CmaEsSampler",
    "qmc": "QMCSampler",
    "nsgaii": "NSGAIISampler",
    "nsgaiii": "NSGAIIISampler",
    "bruteforce": "BruteForceSampler",
}

ORDINAL = ("index", "categorical")

# Every cell's study is named this (Optuna's default name is random, and HyperbandPruner hashes
# the name with the trial's number to pick its bracket).
STUDY_NAME = "banditbench"

PRUNERS = {
    "median": "MedianPruner",
    "percentile": "PercentilePruner",
    "successive-halving": "SuccessiveHalvingPruner",
    "hyperband": "HyperbandPruner",
    "wilcoxon": "WilcoxonPruner",
    "threshold": "ThresholdPruner",
    "nop": "NopPruner",
}


def _optuna():
    try:
        import optuna
    except ImportError:
        raise ImportError(
            "the Optuna adapter needs Optuna: pip install \"banditbench-engine[optuna]\" "
            f"(it pins optuna=={VERSION})"
        ) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _hub_folder(hub: str) -> Optional[str]:
    """The folder of an OptunaHub package: ``hub`` itself when it is a folder, else an installed
    module's (None when neither)."""
    import importlib.util
    import os

    if os.path.isdir(hub):
        return os.path.abspath(hub)
    try:
        spec = importlib.util.find_spec(hub)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    return os.path.dirname(spec.origin)


def hub_sampler(hub: str, name: Optional[str], seed: int, options: Dict[str, Any]) -> Any:
    """An OptunaHub sampler: from the package folder ``hub`` (``optunahub.load_local_module``) or
    the installed module ``hub``; its class ``name`` (default: the only ``BaseSampler`` it
    exports), built with ``seed`` when its constructor takes one, and ``options``."""
    import importlib
    import inspect
    import os

    optuna = _optuna()
    if os.path.isdir(hub):
        if not os.path.isfile(os.path.join(hub, "__init__.py")):
            raise ValueError(f"hub = {hub!r}: an OptunaHub package folder holds __init__.py "
                             "exporting its sampler")
        try:
            import optunahub
        except ImportError:
            raise ImportError("hub needs optunahub to load a local package: pip install "
                              "\"banditbench-engine[optuna]\" (it pins optunahub==0.5.0)") from None
        path = os.path.abspath(hub)
        # The package's modules as they are now on disk: optunahub names them
        # optunahub_registry.package.NAME, and a submodule imported by an earlier cell (an
        # earlier edit, in a notebook) would otherwise be reused.
        import sys

        prefix = f"optunahub_registry.package.{os.path.basename(path)}"
        for m in [m for m in sys.modules if m == prefix or m.startswith(prefix + ".")]:
            del sys.modules[m]
        module = optunahub.load_local_module(package=os.path.basename(path),
                                             registry_root=os.path.dirname(path))
    elif _hub_folder(hub) is not None:
        module = importlib.import_module(hub)
    else:
        raise ValueError(f"hub = {hub!r}: no OptunaHub package folder or installed module of "
                         "that name")
    exported = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    samplers = sorted(n for n in exported if inspect.isclass(getattr(module, n, None))
                      and issubclass(getattr(module, n), optuna.samplers.BaseSampler))
    if name is None:
        if len(samplers) != 1:
            raise ValueError(f"hub = {hub!r} exports {len(samplers)} samplers "
                             f"({', '.join(samplers) or 'none'}); name one as hub_sampler")
        name = samplers[0]
    cls = getattr(module, name, None)
    if cls is None:
        raise ValueError(f"hub = {hub!r} has no sampler {name!r}; it exports "
                         f"{', '.join(samplers) or 'no sampler'}")
    if not (inspect.isclass(cls) and issubclass(cls, optuna.samplers.BaseSampler)):
        raise ValueError(f"hub = {hub!r}: {name} is not an Optuna sampler (a subclass of "
                         "optuna.samplers.BaseSampler)")
    kwargs = dict(options)
    if "seed" in inspect.signature(cls).parameters:
        kwargs["seed"] = seed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return cls(**kwargs)


def distributions(grid: GridSpace, learners: List[int], ordinal: str = "index") -> Dict[str, Any]:
    """Optuna distributions of ``learners`` (indices into the grid's learners): one learner's
    dimensions by name; several under a categorical ``"learner"``, each dimension named
    ``"LEARNER.DIM"`` (active only under its learner)."""
    if ordinal not in ORDINAL:
        raise ValueError(f"ordinal = {ordinal!r}; give one of {', '.join(ORDINAL)}")
    od = _optuna().distributions
    out: Dict[str, Any] = {}
    if len(learners) > 1:
        out["learner"] = od.CategoricalDistribution([grid.learners[l] for l in learners])
    for l in learners:
        prefix = f"{grid.learners[l]}." if len(learners) > 1 else ""
        for d in grid.dims[l]:
            if d.kind == "numeric":
                whole = d.int_range
                out[prefix + d.name] = (od.IntDistribution(whole[0], whole[1], log=d.log)
                                        if whole else od.FloatDistribution(d.low, d.high, log=d.log))
            elif d.kind == "ordinal" and ordinal == "index":
                out[prefix + d.name] = od.IntDistribution(0, len(d.choices) - 1)
            else:
                out[prefix + d.name] = od.CategoricalDistribution(list(d.values))
    return out


def suggest(trial: Any, grid: GridSpace, learners: List[int], ordinal: str = "index") -> Key:
    """Ask ``trial`` for a configuration of the pool, define-by-run: the learner (when several),
    then its dimensions. Returns its key (:meth:`GridSpace.key`: level indices on a grid, a point
    on a numeric learner)."""
    dist = distributions(grid, learners, ordinal)
    if len(learners) > 1:
        name = trial.suggest_categorical("learner", dist["learner"].choices)
        l = grid.learners.index(name)
        prefix = f"{name}."
    else:
        l, prefix = learners[0], ""
    parts: List[Any] = []
    for d in grid.dims[l]:
        name, dd = prefix + d.name, dist[prefix + d.name]
        if d.kind == "numeric":
            if isinstance(dd, _optuna().distributions.IntDistribution):
                parts.append(trial.suggest_int(name, dd.low, dd.high, log=dd.log))
            else:
                parts.append(trial.suggest_float(name, dd.low, dd.high, log=dd.log))
            continue
        if hasattr(dd, "choices"):
            v = trial.suggest_categorical(name, dd.choices)
        else:
            v = trial.suggest_int(name, dd.low, dd.high)
        parts.append(d.level_of(v, ordinal == "index"))
    return grid.key(l, parts)


class OptunaSampler(UnitByUnit, WholeTrials):
    """An Optuna sampler on the pool world, one study per cell (see the module's documentation):
    whole trials (`WholeTrials`) without a pruner, unit by unit (`UnitByUnit`) with one."""

    pool_space = True

    def __init__(self, cell: Any, sampler: str = "tpe", ordinal: str = "index",
                 to: Optional[int] = None, repeat: str = "reuse", max_repeats: int = 1000,
                 learner: Optional[str] = None, pruner: Optional[str] = None,
                 snap: str = "nearest", hub: Optional[str] = None,
                 hub_sampler: Optional[str] = None, objectives: str = "all", **options: Any):
        super().__init__(cell)
        optuna = _optuna()
        prepare(self, cell, "Optuna", to=to, repeat=repeat, max_repeats=max_repeats,
                learner=learner, ordinal=ordinal, ordinals=ORDINAL, snap=snap)
        self.ordinal = ordinal
        self.sampler_name = sampler
        self.pruner_options = {k[len("pruner_"):]: v for k, v in options.items()
                               if k.startswith("pruner_")}
        self.options = {k: v for k, v in options.items() if not k.startswith("pruner_")}
        self.pruner_name = pruner
        if hub is None and hub_sampler is not None:
            raise ValueError("hub_sampler given without hub (an OptunaHub package folder or an "
                             "installed module)")
        self.hub, self.hub_sampler = hub, hub_sampler
        if pruner is None and self.pruner_options:
            raise ValueError(f"{', '.join('pruner_' + k for k in self.pruner_options)} given "
                             "without a pruner")
        # Several objectives ([world] objectives): a study of as many, in their recorded
        # directions, told each trial's values; objectives = "score" tells the pool's score only.
        if objectives not in ("all", "score"):
            raise ValueError(f"objectives = {objectives!r}; give 'all' (every objective the "
                             "experiment names) or 'score' (the pool's score only)")
        named = (cell.pool or {}).get("objectives") or []
        self.multi_objective = bool(named) and objectives == "all"
        if self.multi_objective and pruner is not None:
            raise ValueError(
                f"pruner = {pruner!r} with {len(named)} objectives: Optuna's pruners take one "
                "objective; remove the pruner, or give objectives = 'score'"
            )
        how = ({"directions": [o["direction"] for o in named]} if self.multi_objective
               else {"direction": "maximize"})
        # A fixed study name: HyperbandPruner assigns trials to brackets by hashing it.
        self.study = optuna.create_study(study_name=STUDY_NAME, **how,
                                         sampler=self.make_sampler(cell.seed % 2**32),
                                         pruner=self.make_pruner())
        self._state = optuna.trial.TrialState

    def make_pruner(self) -> Any:
        """The cell's pruner (None: none, every trial trained to ``to`` in one piece of work)."""
        if self.pruner_name is None:
            return None
        optuna = _optuna()
        if self.pruner_name not in PRUNERS:
            raise ValueError(
                f"pruner = {self.pruner_name!r}; Optuna's are {', '.join(PRUNERS)}"
            )
        cls = getattr(optuna.pruners, PRUNERS[self.pruner_name])
        import inspect

        required = [n for n, p in inspect.signature(cls).parameters.items()
                    if p.default is inspect.Parameter.empty and n not in self.pruner_options
                    and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        if required:
            raise ValueError(
                f"pruner = {self.pruner_name!r} needs "
                + ", ".join(f"pruner_{n}" for n in required)
                + f" (Optuna's {PRUNERS[self.pruner_name]}({', '.join(required)}, ...))"
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            try:
                return cls(**self.pruner_options)
            except TypeError as e:
                raise ValueError(
                    f"pruner = {self.pruner_name!r}: Optuna's {PRUNERS[self.pruner_name]} says "
                    f"\"{e}\"; pass its options as pruner_NAME = value"
                ) from e

    @classmethod
    def identity_files(cls, params: Dict[str, Any]) -> List[str]:
        """The OptunaHub package folders the parameters name (``hub``; a list when it expands):
        their files join the policy's identity."""
        given = params.get("hub")
        return [p for p in (given if isinstance(given, list) else [given])
                if isinstance(p, str) and _hub_folder(p) is not None]

    def make_sampler(self, seed: int) -> Any:
        """The cell's sampler, seeded with ``seed``; override to run any Optuna sampler."""
        optuna = _optuna()
        if self.hub is not None:
            return hub_sampler(self.hub, self.hub_sampler, seed, self.options)
        if self.sampler_name not in SAMPLERS:
            raise ValueError(
                f"sampler = {self.sampler_name!r}; Optuna's are {', '.join(SAMPLERS)} (or "
                "subclass OptunaSampler and override make_sampler)"
            )
        cls = getattr(optuna.samplers, SAMPLERS[self.sampler_name])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return cls(seed=seed, **self.options)

    def decide(self, view: Any) -> Any:
        if self.pruner_name is not None:
            return UnitByUnit.decide(self, view)
        return WholeTrials.decide(self, view)

    def observe(self, obs: Any) -> None:
        if self.pruner_name is not None:
            return UnitByUnit.observe(self, obs)
        return WholeTrials.observe(self, obs)

    # With a pruner, unit by unit (`UnitByUnit`): each unit's score is an intermediate value
    # (step = unit) and the pruner is asked after each, as an objective does in Optuna's loop.

    def _ask(self) -> Any:
        trial = self.study.ask()
        return trial, suggest(trial, self.grid, self.learners, self.ordinal)

    def _trial_id(self, trial: Any) -> int:
        return trial.number

    def _report(self, trial: Any, unit: int, value: float) -> bool:
        trial.report(value, unit)
        if trial.should_prune():
            self.study.tell(trial, state=self._state.PRUNED)
            return True
        return False

    def _complete(self, trial: Any, value: float) -> None:
        self.study.tell(trial, value)

    def _fail(self, trial: Any) -> None:
        self.study.tell(trial, state=self._state.FAIL)


if __name__ == "__main__":
    # Through the protocol: command = ["python", "-m", "banditbench.adapters.optuna"] with
    # pool_space = true and the parameters as params.
    from ..protocol import serve

    serve(OptunaSampler)
