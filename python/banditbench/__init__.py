"""banditbench's Python side: write a policy in Python and replay it on recorded AutoML traces.

- :class:`Policy`, :func:`serve`: a policy and the runner that speaks banditbench's JSON-lines
  policy protocol (docs/protocol.md) to the ``banditbench`` binary.
- :func:`read_runs`, :func:`read_trajectories`: a results folder into pandas or polars.
- :mod:`banditbench.smpybandits`: SMPyBandits' policies through the protocol.
"""

from .protocol import (PROTOCOL, Action, Cell, Choose, Draw, Mutate, Observation, Policy, Stop, View,
                       Wait, serve)
from .results import read_runs, read_trajectories

__all__ = [
    "PROTOCOL",
    "Action",
    "Cell",
    "Choose",
    "Draw",
    "Mutate",
    "Observation",
    "Policy",
    "Stop",
    "View",
    "Wait",
    "serve",
    "read_runs",
    "read_trajectories",
]
__version__ = "0.1.0"
