"""banditbench's Python side: write a policy in Python and replay it on recorded AutoML traces.

- :class:`Policy`, :func:`serve`: a policy and the runner that speaks banditbench's JSON-lines
  policy protocol (docs/protocol.md) to the ``banditbench`` binary.
- :func:`read_runs`, :func:`read_trajectories`: a results folder into pandas or polars.
- :mod:`banditbench.smpybandits`: SMPyBandits' policies through the protocol.
- :func:`run`, :class:`Results`, :func:`report`, :class:`Report`, :func:`policies`,
  :func:`trace_sets`, :func:`import_runs`: the engine in this process (the wheel), for
  notebooks; Python policies passed to :func:`run` execute in-process; other tools' runs are
  imported and ranked beside them. Errors are :class:`BanditbenchError`.
"""

# `threading` is imported here, on the main thread, before the engine can run Python code on a
# thread of its own (rayon's). CPython's threading module takes the thread that first imports it
# for the main thread; imported first on an engine thread (a policy or a library it loads, such
# as SMPyBandits, importing it), the interpreter's exit then waits forever for that thread's
# lock: the hang at exit seen with in-process SMPyBandits policies. python/tests/test_exit.py
# checks it.
import threading  # noqa: F401


def _bundled_data() -> None:
    """Name the bundled trace sets and experiments (the ``banditbench-data`` wheel) in
    ``BANDITBENCH_DATA``, unless it is set, so that ``run("quickstart")``, ``trace_sets()`` and
    the ``banditbench`` command find them from any folder."""
    import importlib.util
    import os

    if os.environ.get("BANDITBENCH_DATA"):
        return
    spec = importlib.util.find_spec("banditbench_data")
    if spec is not None and spec.submodule_search_locations:
        os.environ["BANDITBENCH_DATA"] = list(spec.submodule_search_locations)[0]


_bundled_data()

from .protocol import (PROTOCOL, Action, Cell, Choose, Draw, Mutate, Observation, Policy, Retrain,
                       Stop, Train, View, Wait, serve)
from .results import read_runs, read_trajectories
from .api import Report, Results, import_runs, policies, report, run, trace_sets


def __getattr__(name):
    if name == "BanditbenchError":
        from ._engine import BanditbenchError

        return BanditbenchError
    raise AttributeError(f"module 'banditbench' has no attribute {name!r}")


__all__ = [
    "PROTOCOL",
    "Action",
    "Cell",
    "Choose",
    "Draw",
    "Mutate",
    "Observation",
    "Policy",
    "Retrain",
    "Stop",
    "Train",
    "View",
    "Wait",
    "serve",
    "read_runs",
    "read_trajectories",
    "run",
    "Results",
    "report",
    "Report",
    "policies",
    "trace_sets",
    "import_runs",
    "BanditbenchError",
]
def _version() -> str:
    """The installed distribution's version, which maturin takes from Cargo.toml (one version
    string); a source tree that is not installed has none."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("banditbench-engine")
    except (ImportError, PackageNotFoundError):
        return "unknown (not installed)"


__version__ = _version()
