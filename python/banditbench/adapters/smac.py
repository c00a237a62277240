"""SMAC3's facades as banditbench policies in the pool world (SMAC 2.4.1 with ConfigSpace 1.2.2,
pinned by python/requirements-smac.txt; extra ``smac``).

SMAC3 (Lindauer et al. 2022, "SMAC3: A Versatile Bayesian Optimization Package for
Hyperparameter Optimization", JMLR 23(54)) proposes trials through ``ask`` and learns from
``tell``. This adapter asks once per free simulated worker; the trials SMAC asked for and has not
been told stay in its run history as running, as in its own parallel loop.

Facades (``facade``):

- ``"hpo"`` (``HyperparameterOptimizationFacade``: random forest, log EI, Sobol initial design),
  ``"blackbox"`` (``BlackBoxFacade``: Gaussian process), ``"random"`` (``RandomFacade``) and
  ``"algorithm-configuration"`` (``AlgorithmConfigurationFacade``): a trial trains its
  configuration to unit ``to`` (the last unit by default) in one piece of work and is told
  cost = −score there (:class:`~banditbench.adapters._trials.WholeTrials`).
- ``"multi-fidelity"`` (``MultiFidelityFacade``: the HPO facade's model with Hyperband) and
  ``"hyperband"`` (``HyperbandFacade``: random configurations with Hyperband): a trial's budget
  is a unit by a stated rule, unit = ceil(budget), with SMAC's ``min_budget`` and ``max_budget``
  given in units (``min_unit``, ``to``); a trial on a configuration trained before to a lower unit
  resumes from its last unit and only the new units are charged
  (:class:`~banditbench.adapters._trials.BudgetJobs`).

A configuration not recorded on the task, or a failed unit, is a crashed trial (status
``CRASHED``, cost = the scenario's ``crash_cost``), as a target function that raises is in SMAC's
own loop.

The open choices, each a parameter:

- ``facade``: one of :data:`FACADES`.
- ``n_trials``: SMAC's trial budget (default 100, SMAC's). It sizes the initial design (at most a
  quarter of it); the banditbench budget, not ``n_trials``, ends the cell.
- ``deterministic``: SMAC's ``Scenario.deterministic`` (default True: a recorded table gives one
  score per configuration, so one seed per configuration).
- ``eta``, ``min_unit``, ``to``: Hyperband's η and the budget range in units (multi-fidelity
  facades; ``to`` is the unit the other facades train to).
- ``promotion`` (multi-fidelity facades): a trial on a configuration trained before to a lower
  unit resumes from its last unit, only the new units charged (``"continue"``, default), or
  trains again from the first unit, every unit charged (``"restart"``; :class:`BudgetJobs`).
- ``repeat``, ``max_repeats``: a trial of a configuration evaluated before (``"reuse"`` tells the
  recorded score at once; ``"charge"`` trains those units again), and how many trials in a row
  told without work end the asking.
- ``snap``: on a recorded sample (a learner with numeric ranges, e.g. ``sklearn-random``), which
  recorded configuration a suggested point evaluates: ``"nearest"``, ``"nearest-open"`` or
  ``"refuse"`` (:class:`banditbench.adapters._grid.Snap`; README, "A continuous space on a
  recorded sample"). Grid pools never snap.
- ``learner``: the learner to tune; without it (and ``per_learner = false`` in the world) every
  learner on the task, as a categorical ``learner`` whose value activates that learner's
  dimensions (``LEARNER.DIM``, ConfigSpace's ``EqualsCondition``): SMAC searches the CASH space.
- ``scenario_ARG``: a further argument of SMAC's ``Scenario`` (``scenario_crash_cost = 1.0``).
- ``PART_ARG``, for PART one of ``model``, ``acquisition_function``, ``acquisition_maximizer``,
  ``initial_design``, ``random_design``, ``intensifier``, ``runhistory_encoder``,
  ``config_selector``: an argument of the facade's ``get_PART(scenario, ...)``
  (``initial_design_n_configs = 5``, ``config_selector_retrain_after = 1``). :func:`facade`, which
  builds the facade for the adapter and its reference loop, also takes a part as an object or as
  a function of the scenario.
- ``start_points``: ``"sorted"`` (default) orders the start points of SMAC's local search by
  their repr; ``"library"`` keeps SMAC's own order, that of a Python set of configurations, which
  follows string hashing: SMAC's own runs then differ between interpreters unless PYTHONHASHSEED
  is fixed (measured: the HPO facade's trial 27 of 40 on sklearn-grid).
- ``logging_level``: SMAC's (default False: SMAC leaves logging as it is; its logger is quiet
  below ERROR unless configured).

The cell's seed modulo 2^31 seeds SMAC's scenario. SMAC writes its run history to a temporary
folder that is removed with the policy (``tell`` does not save).
"""

from __future__ import annotations

import inspect
import logging
import tempfile
from functools import partial
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple, Union

from ..protocol import Policy
from ._grid import GridSpace, Key
from ._grid import configspace as _configspace
from ._grid import key_of
from ._trials import BudgetJobs, WholeTrials, prepare, promotion_rule, unit_of

VERSION = "2.4.1"

# facade name -> SMAC's facade class name, and whether its trials carry a budget.
FACADES: Dict[str, Tuple[str, bool]] = {
    "hpo": ("HyperparameterOptimizationFacade", False),
    "blackbox": ("BlackBoxFacade", False),
    "random": ("RandomFacade", False),
    "algorithm-configuration": ("AlgorithmConfigurationFacade", False),
    "multi-fidelity": ("MultiFidelityFacade", True),
    "hyperband": ("HyperbandFacade", True),
}

# How the local search orders its start points: "sorted" (by the configuration's repr, the same in
# every interpreter) or "library" (SMAC's own set order, reproducible only with PYTHONHASHSEED fixed).
START_POINTS = ("sorted", "library")

PARTS = ("model", "acquisition_function", "acquisition_maximizer", "initial_design",
         "random_design", "intensifier", "runhistory_encoder", "config_selector")


def _smac():
    try:
        import smac
    except ImportError:
        raise ImportError(
            "the SMAC3 adapter needs SMAC3: pip install \"banditbench-engine[smac]\" (or -r "
            f"python/requirements-smac.txt; SMAC {VERSION} pinned)"
        ) from None
    return smac


def configspace(grid: GridSpace, learners: Union[int, Sequence[int]], seed: int = 0) -> Any:
    """ConfigSpace's space of one learner or several
    (:func:`banditbench.adapters._grid.configspace`)."""
    _smac()
    return _configspace(grid, learners, seed)


def facade(name: str, space: Any, *, seed: int, output: str, n_trials: int = 100,
           deterministic: bool = True, eta: int = 3, min_budget: Optional[float] = None,
           max_budget: Optional[float] = None, scenario: Optional[Dict[str, Any]] = None,
           target_function: Any = None, logging_level: Any = False,
           start_points: str = "sorted", **parts: Any) -> Any:
    """SMAC's facade ``name`` (one of :data:`FACADES`) on ``space``, built as the adapter and its
    reference loop (scripts/reference/smac_sequential.py) build it."""
    smac = _smac()
    if name not in FACADES:
        raise ValueError(f"facade = {name!r}; give one of {', '.join(FACADES)}")
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise ValueError(f"SMAC3: unknown part(s) {', '.join(unknown)}; the facade's parts are "
                         f"{', '.join(PARTS)}")
    cls_name, budgets = FACADES[name]
    cls = getattr(smac, cls_name)
    extra = dict(scenario or {})
    if budgets:
        extra.update(min_budget=min_budget, max_budget=max_budget)
    sc = smac.Scenario(space, deterministic=deterministic, n_trials=int(n_trials), seed=seed,
                       output_directory=Path(output), n_workers=1, **extra)
    built: Dict[str, Any] = {}
    for part in PARTS:
        spec = parts.get(part)
        if part == "intensifier" and budgets and (spec is None or isinstance(spec, dict)):
            spec = {"eta": int(eta), **(spec or {})}
        if spec is None:
            continue
        if isinstance(spec, dict):
            built[part] = getattr(cls, f"get_{part}")(sc, **spec)
        elif inspect.isfunction(spec) or inspect.ismethod(spec) or isinstance(spec, partial):
            built[part] = spec(sc)
        else:
            built[part] = spec
    if logging_level is False:
        log = logging.getLogger("smac")
        if log.level == logging.NOTSET:
            log.setLevel(logging.ERROR)
    if start_points not in START_POINTS:
        raise ValueError(f"start_points = {start_points!r}; give one of {', '.join(START_POINTS)}")
    out = cls(sc, target_function, logging_level=logging_level, overwrite=True, **built)
    if start_points == "sorted":
        _sort_start_points(out._acquisition_maximizer)
    return out


def split_options(options: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]]]:
    """The adapter's flat options as Scenario's arguments (``scenario_X``) and each facade part's
    (``PART_X``: ``initial_design_n_configs = 5`` calls ``get_initial_design(scenario,
    n_configs=5)``)."""
    scenario: Dict[str, Any] = {}
    parts: Dict[str, Dict[str, Any]] = {}
    for key, value in options.items():
        if key.startswith("scenario_"):
            scenario[key[len("scenario_"):]] = value
            continue
        part = next((p for p in PARTS if key.startswith(p + "_")), None)
        if part is None:
            raise ValueError(
                f"SMAC3 adapter: unknown option {key!r}; give scenario_ARG for SMAC's Scenario, "
                f"or PART_ARG for a facade part ({', '.join(PARTS)}), e.g. "
                "initial_design_n_configs = 5"
            )
        parts.setdefault(part, {})[key[len(part) + 1:]] = value
    return scenario, parts


def _sort_start_points(maximizer: Any) -> None:
    """SMAC 2.4.1's local search takes its start points as ``list(set(configurations))``, an order
    that follows Python's string hashing (a configuration hashes its repr), so SMAC's own runs
    differ between interpreters unless PYTHONHASHSEED is fixed. Sorted by repr, the same points
    come in one order everywhere."""
    local = getattr(maximizer, "_local_search", maximizer)
    if not hasattr(local, "_get_initial_points"):
        return
    get = local._get_initial_points

    def sorted_points(*args: Any, **kwargs: Any) -> Any:
        return sorted(get(*args, **kwargs), key=repr)

    local._get_initial_points = sorted_points


class _SMACTrials:
    """What both routes share: the facade, the map from a trial to its configuration, and the
    tells."""

    def _build(self, cell: Any, facade_name: str, n_trials: int, deterministic: bool, eta: int,
               min_unit: int, scenario: Optional[Dict[str, Any]], logging_level: Any,
               parts: Dict[str, Any]) -> None:
        from smac.runhistory import StatusType, TrialValue

        self._status, self._value = StatusType, TrialValue
        budgets = FACADES[facade_name][1]
        if budgets and not 1 <= int(min_unit) < self.to:
            raise ValueError(f"min_unit = {min_unit}, to = {self.to}: give 1 <= min_unit < to "
                             f"<= {self.units}")
        seed = cell.seed % 2**31
        self._out = tempfile.TemporaryDirectory(prefix="banditbench-smac-")
        self.smac = facade(facade_name, configspace(self.grid, self.learners, seed), seed=seed,
                           output=self._out.name, n_trials=n_trials, deterministic=deterministic,
                           eta=eta, min_budget=min_unit if budgets else None,
                           max_budget=self.to if budgets else None, scenario=scenario,
                           logging_level=logging_level, **parts)
        self.crash_cost = float(self.smac.scenario.crash_cost)

    def _key(self, info: Any) -> Key:
        return key_of(info.config, self.grid, self.learners)

    def _next(self) -> Optional[Any]:
        from smac.main.exceptions import ConfigurationSpaceExhaustedException

        try:
            return self.smac.ask()
        except (StopIteration, ConfigurationSpaceExhaustedException):
            return None

    def _tell_value(self, info: Any, value: Optional[float], cost: float) -> None:
        if value is None:
            v = self._value(cost=self.crash_cost, status=self._status.CRASHED)
        else:
            v = self._value(cost=-value)
        self.smac.tell(info, v, save=False)


class _Whole(WholeTrials, _SMACTrials):
    """A facade without budgets: whole trials."""

    def __init__(self, cell: Any, facade: str, n_trials: int, deterministic: bool,
                 to: Optional[int], repeat: str, max_repeats: int, learner: Optional[str],
                 scenario: Optional[Dict[str, Any]], logging_level: Any, parts: Dict[str, Any],
                 snap: str):
        super().__init__(cell)
        prepare(self, cell, "SMAC3", to=to, repeat=repeat, max_repeats=max_repeats,
                learner=learner, snap=snap)
        self._build(cell, facade, n_trials, deterministic, 3, 1, scenario, logging_level, parts)

    def _ask(self) -> Optional[Tuple[Any, Key]]:
        info = self._next()
        return None if info is None else (info, self._key(info))

    def _complete(self, trial: Any, value: float) -> None:
        self._tell_value(trial, value, self.to)

    def _fail(self, trial: Any) -> None:
        self._tell_value(trial, None, 0)


class _Budgets(BudgetJobs, _SMACTrials):
    """A multi-fidelity facade: jobs with a budget in units."""

    def __init__(self, cell: Any, facade: str, n_trials: int, deterministic: bool, eta: int,
                 min_unit: int, to: Optional[int], repeat: str, max_repeats: int,
                 learner: Optional[str], scenario: Optional[Dict[str, Any]], logging_level: Any,
                 parts: Dict[str, Any], snap: str, promotion: str):
        super().__init__(cell)
        self.promotion = promotion
        prepare(self, cell, "SMAC3", to=to, repeat=repeat, max_repeats=max_repeats,
                learner=learner, snap=snap)
        self._build(cell, facade, n_trials, deterministic, eta, min_unit, scenario,
                    logging_level, parts)

    def _unit(self, info: Any) -> int:
        return unit_of(info.budget, self.to)

    def _ask_job(self) -> Optional[Tuple[Any, Key, int]]:
        info = self._next()
        return None if info is None else (info, self._key(info), self._unit(info))

    def _tell_job(self, job: Any, value: Optional[float], cost: int) -> None:
        self._tell_value(job, value, cost)


class SMACFacade(Policy):
    """A SMAC3 facade on the pool world, one per cell (see the module's documentation)."""

    pool_space = True

    def __init__(self, cell: Any, facade: str = "hpo", n_trials: int = 100,
                 deterministic: bool = True, eta: Optional[int] = None,
                 min_unit: Optional[int] = None, to: Optional[int] = None,
                 promotion: str = "continue", repeat: str = "reuse", max_repeats: int = 1000,
                 learner: Optional[str] = None, logging_level: Any = False,
                 start_points: str = "sorted", snap: str = "nearest", **options: Any):
        super().__init__(cell)
        _smac()
        scenario, split = split_options(options)
        parts: Dict[str, Any] = dict(split, start_points=start_points)
        if facade not in FACADES:
            raise ValueError(f"facade = {facade!r}; give one of {', '.join(FACADES)}")
        self.facade = facade
        if FACADES[facade][1]:
            self.impl: Any = _Budgets(cell, facade, n_trials, deterministic,
                                      3 if eta is None else eta,
                                      1 if min_unit is None else min_unit, to, repeat,
                                      max_repeats, learner, scenario, logging_level, parts,
                                      snap, promotion_rule(promotion))
        else:
            for p, v in (("eta", eta), ("min_unit", min_unit),
                         ("promotion", None if promotion == "continue" else promotion)):
                if v is not None:
                    raise ValueError(f"{p} is for the multi-fidelity facades (multi-fidelity, "
                                     f"hyperband), not facade = {facade!r}")
            self.impl = _Whole(cell, facade, n_trials, deterministic, to, repeat, max_repeats,
                               learner, scenario, logging_level, parts, snap)
        self.smac = self.impl.smac

    def key(self, info: Any) -> Key:
        """The key of SMAC's trial ``info`` (:meth:`GridSpace.key`: learner and level indices on
        a grid, a point on a numeric learner)."""
        return self.impl._key(info)

    def stats(self) -> Dict[str, Any]:
        return self.impl.stats()

    def unit(self, info: Any) -> int:
        """The unit a trial trains to: its budget's (multi-fidelity facades), else ``to``."""
        return self.impl._unit(info) if FACADES[self.facade][1] else self.impl.to

    def decide(self, view: Any) -> Any:
        return self.impl.decide(view)

    def observe(self, obs: Any) -> None:
        self.impl.observe(obs)


if __name__ == "__main__":
    from ..protocol import serve

    serve(SMACFacade)
