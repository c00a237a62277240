"""What the engine calls to run a Python policy in-process (``family = "python"``): load its class
and set up each cell's policy and view. The view's lists are then updated in place by the
engine before every decision (``src/python.rs``)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import sys
from typing import Any, Dict, Optional

from .protocol import Cell, View

_loaded: Dict[str, Any] = {}


def load_class(spec: str) -> Any:
    """The class named by ``path/to/file.py:Class`` or ``module:Class`` (loaded once)."""
    if spec in _loaded:
        return _loaded[spec]
    module, _, name = spec.rpartition(":")
    if module.endswith(".py"):
        path = os.path.abspath(module)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{module} does not exist (relative to {os.getcwd()})")
        modname = "banditbench_policy_" + hashlib.sha1(path.encode()).hexdigest()[:12]
        found = importlib.util.spec_from_file_location(modname, path)
        mod = importlib.util.module_from_spec(found)
        sys.modules[modname] = mod
        found.loader.exec_module(mod)
    else:
        mod = importlib.import_module(module)
    obj: Any = mod
    for part in name.split("."):
        if not hasattr(obj, part):
            raise AttributeError(f"{module} has no {name!r}")
        obj = getattr(obj, part)
    _loaded[spec] = obj
    return obj


def start(factory: Any, kw: Dict[str, Any], params_json: str, space_json: Optional[str] = None):
    """Build one cell's policy as ``factory(cell, **params)`` and its view; returns (policy, view,
    pulls, arm_clock, arm_best, pool), the lists the engine keeps up to date. ``space_json``
    (with ``pool_space``) holds the pool's space and open configurations, as the protocol's
    ``start`` carries them."""
    params = json.loads(params_json)
    if space_json is not None:
        kw["pool"].update(json.loads(space_json))
    cell = Cell(params=params, **kw)
    policy = factory(cell, **params)
    n = len(cell.arms)
    pulls, clock, best = [0] * n, [0.0] * n, [None] * n
    pool = None
    if cell.world == "pool":
        pool = {"undrawn": cell.pool["configs"], "last": [], "done": [], "config": []}
    view = View(step=0, used=0.0, budget=cell.budget_abs, pulls=pulls, arm_clock=clock,
                arm_best=best, pool=pool, workers=cell.workers, worker=0, now=0.0, pending=[])
    return policy, view, pulls, clock, best, pool
