"""The policy side of banditbench's JSON-lines policy protocol, version 1 (docs/protocol.md).

A policy is a class with ``decide(view)`` and ``observe(obs)``; :func:`serve` runs it as the
process banditbench starts for an ``external`` policy::

    from banditbench import Policy, serve

    class FirstArm(Policy):
        def decide(self, view):
            return 0

    if __name__ == "__main__":
        serve(FirstArm)

banditbench builds a fresh instance for every cell, as ``cls(cell, **params)``, where ``params``
are the experiment file's ``params`` for this policy. Use ``self.rng`` (seeded with the cell's
seed) or ``cell.seed`` for any randomness: a policy that draws only from its cell's seed gives the
same results at any thread count and after a resume.
"""

from __future__ import annotations

import json
import os
import random
import sys
import traceback
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional, Union

PROTOCOL = 1


class Cell(SimpleNamespace):
    """What a policy is told when its cell begins.

    Attributes: ``cell`` (index), ``seed``, ``repetition``, ``task`` ("dataset/run"),
    ``dataset``, ``world`` ("time-sliced", "pull-count", "synthetic" or "pool"), ``unit``,
    ``budget`` (as the experiment gives it), ``budget_abs`` (seconds, pulls or units),
    ``slice`` (seconds in the time-sliced world, else 1), ``arms`` (names, in arm order; empty in
    the pool world), ``policy`` (the experiment's name for it), ``params`` and, in the pool
    world, ``pool`` (a dict with ``units``, ``configs``, ``learners`` and ``defaults``: per
    learner the index of its recorded default configuration, or ``None``; with several
    objectives also ``objectives``, a list of ``{"name", "direction"}`` dicts; with
    ``pool_space = true`` also ``space``, ``open``, ``open_learner`` and ``open_values``, see
    docs/protocol.md). With several objectives (``[world] objectives``, any world but the
    synthetic one) ``objectives`` is a list of ``{"name", "direction"}`` dicts; else ``None``.
    """

    cell: int
    seed: int
    repetition: int
    task: str
    dataset: str
    world: str
    unit: str
    budget: float
    budget_abs: float
    slice: float
    workers: int
    arms: List[str]
    policy: str
    params: Dict[str, Any]
    #: The pool world's part; ``None`` in learner-level worlds.
    pool: Optional[Dict[str, Any]] = None
    #: Several objectives: their names and directions; ``None`` with one.
    objectives: Optional[List[Dict[str, str]]] = None

    @property
    def n_arms(self) -> int:
        return len(self.arms)


class View(SimpleNamespace):
    """The state before a decision.

    Attributes: ``step`` (decisions so far), ``budget`` and ``used`` (in the world's unit),
    and per arm ``pulls``, ``arm_clock`` (seconds run in the time-sliced world, else pulls) and
    ``arm_best`` (best reward so far, ``None`` if none). In the pool world also ``pool``, a dict
    with ``undrawn`` and per arm ``last``, ``done`` and ``config``. With several workers (the
    cell's ``workers``): ``worker`` (the one deciding), ``now`` (simulated wall-clock seconds)
    and ``pending`` (``[arm, worker, since]`` of every piece of work still running: its result is
    not in the view yet). With one worker ``workers`` is 1, ``worker`` 0 and ``pending`` empty.
    Rewards are oriented so that higher is better.
    """

    step: int
    budget: float
    used: float
    pulls: List[int]
    arm_clock: List[float]
    arm_best: List[Optional[float]]
    pool: Optional[Dict[str, Any]]
    workers: int
    worker: int
    now: float
    pending: List[List[Any]]

    @property
    def n_arms(self) -> int:
        return len(self.pulls)

    @property
    def remaining(self) -> float:
        return max(self.budget - self.used, 0.0)


class Observation(SimpleNamespace):
    """What one pull revealed.

    Attributes: ``arm``, ``reward`` (``None`` when the pull has none, e.g. a failed
    evaluation), ``arm_clock``, ``exhausted`` (the arm's trace had nothing left), ``revealed``
    (every evaluation the pull revealed, as ``[time, reward or None]`` pairs) and
    ``objectives``: with several objectives (``[world] objectives``), recorded orientation, in
    the order of the cell's ``objectives`` (``None`` where infeasible or failed); ``None`` with
    one objective. The pool world: the arm's value of each at its last trained unit; the
    time-sliced and pull-count worlds: the values of every evaluation in ``revealed``, one after
    the other (``len(revealed) * len(cell.objectives)`` numbers).
    """

    arm: int
    reward: Optional[float]
    arm_clock: float
    exhausted: bool
    revealed: List[List[Optional[float]]]
    objectives: Optional[List[Optional[float]]]


@dataclass(frozen=True, repr=False)
class Draw:
    """Pool world: add a fresh configuration and train its first unit, or with ``to`` train it up
    to unit ``to`` in one piece of work (``Draw(to=27)``: a full-fidelity evaluation when the pool
    has 27 units)."""

    to: Optional[int] = None

    def __repr__(self) -> str:
        return "Draw()" if self.to is None else f"Draw(to={self.to})"


@dataclass(frozen=True, repr=False)
class Train:
    """Pool world: train ``arm`` up to its unit ``to`` in one piece of work (at least one more
    unit): one decision, every unit revealed together when the work finishes."""

    arm: int
    to: int

    def __repr__(self) -> str:
        return f"Train({self.arm}, to={self.to})"


@dataclass(frozen=True, repr=False)
class Retrain:
    """Pool world: train ``arm`` again over its units ``start`` .. ``to`` (units it has trained
    already) in one piece of work: each unit's cost is charged again and its recorded score
    revealed again (an optimiser's repeated evaluation, paid as its own loop would pay it)."""

    arm: int
    to: int
    start: int = 1

    def __repr__(self) -> str:
        return f"Retrain({self.arm}, to={self.to}, start={self.start})"


@dataclass(frozen=True, repr=False)
class Mutate:
    """Pool world: add an untried grid neighbour of ``arm`` and train its first unit."""

    arm: int

    def __repr__(self) -> str:
        return f"Mutate({self.arm})"


@dataclass(frozen=True, repr=False)
class Choose:
    """Pool world: add configuration ``config`` (an index into the pool's configurations, e.g. a
    learner's default from ``cell.pool["defaults"]``) and train its first unit, or with ``to``
    train it up to unit ``to`` in one piece of work (an optimiser's trial at a fidelity)."""

    config: int
    to: Optional[int] = None

    def __repr__(self) -> str:
        return f"Choose({self.config})" if self.to is None else f"Choose({self.config}, to={self.to})"


@dataclass(frozen=True, repr=False)
class Stop:
    """Pool world: end the cell; the rest of its budget goes unused."""

    def __repr__(self) -> str:
        return "Stop()"


@dataclass(frozen=True, repr=False)
class Wait:
    """Several workers: this worker idles until the next running piece of work finishes."""

    def __repr__(self) -> str:
        return "Wait()"


Action = Union[int, Draw, Train, Retrain, Mutate, Choose, Stop, Wait]


class Policy:
    """Base class of a policy: override ``decide`` (and usually ``observe``).

    ``decide`` returns an arm index (pull that arm) or, in the pool world, ``Draw()``,
    ``Draw(to=unit)``, ``Train(arm, to=unit)``, ``Mutate(arm)``, ``Choose(config)``,
    ``Choose(config, to=unit)`` or
    ``Stop()``; with several workers also ``Wait()``.
    """

    def __init__(self, cell: Cell, **params: Any):
        if params:
            names = ", ".join(sorted(params))
            raise TypeError(
                f"{type(self).__name__} takes no parameters, but the experiment gives: {names}"
            )
        self.cell = cell
        self.rng = random.Random(cell.seed)

    def decide(self, view: View) -> Action:
        raise NotImplementedError(f"{type(self).__name__}.decide")

    def observe(self, obs: Observation) -> None:
        pass

    @classmethod
    def identity_files(cls, params: Dict[str, Any]) -> List[str]:
        """Files or folders, named by the experiment's ``params``, whose content decides what
        the policy does (a library adapter's plug-in folder): ``bb.run`` hashes them into the
        policy's identity, so an edit there is a changed policy. None by default."""
        return []

    def stats(self) -> Optional[Dict[str, Any]]:
        """The policy's own counts for its cell, asked once after its last observation: a dict
        of JSON values, written to runs.parquet's ``policy_stats`` (None: nothing to record).
        The library adapters record their suggestions, repeats and snapped points here."""
        return None


def stats_json(policy: Any) -> Optional[str]:
    """A policy's own counts for its cell as JSON text (runs.parquet's ``policy_stats``): what its
    ``stats()`` returns (a dict), or None when it has no ``stats`` or returns None. Both routes use
    it: :func:`serve`'s ``end`` answer and the in-process runtime."""
    stats = getattr(policy, "stats", None)
    value = stats() if callable(stats) else None
    return None if value is None else json.dumps(value, allow_nan=False)


def _encode(action: Any) -> bytes:
    if type(action) is int:
        return b"%d\n" % action
    if isinstance(action, Draw):
        if action.to is None:
            return b'{"action":"draw"}\n'
        return b'{"action":"draw","to":%d}\n' % int(action.to)
    if isinstance(action, Train):
        return b'{"action":"pull","arm":%d,"to":%d}\n' % (int(action.arm), int(action.to))
    if isinstance(action, Mutate):
        return b'{"action":"mutate","arm":%d}\n' % int(action.arm)
    if isinstance(action, Retrain):
        return b'{"action":"retrain","arm":%d,"from":%d,"to":%d}\n' % (
            int(action.arm), int(action.start), int(action.to))
    if isinstance(action, Choose):
        if action.to is None:
            return b'{"action":"choose","config":%d}\n' % int(action.config)
        return b'{"action":"choose","config":%d,"to":%d}\n' % (int(action.config), int(action.to))
    if isinstance(action, Stop):
        return b'{"action":"stop"}\n'
    if isinstance(action, Wait):
        return b'{"action":"wait"}\n'
    # numpy integers and the like
    if hasattr(action, "__index__") and not isinstance(action, bool):
        return b"%d\n" % action.__index__()
    raise TypeError(
        f"decide returned {action!r}; return an arm index (int), Draw(), Train(arm, to), Mutate(arm), Choose(config[, to]) or Stop()"
    )


def _error(write, flush, message: str) -> None:
    write(json.dumps({"type": "error", "message": message}).encode() + b"\n")
    flush()


def serve(factory: Callable[..., Policy], stdin=None, stdout=None) -> None:
    """Answer banditbench's messages until it closes our stdin.

    ``factory(cell, **params)`` builds the policy for each cell (a :class:`Policy` subclass).
    While serving, ``print`` and anything else written to stdout goes to stderr, which
    banditbench shows when the policy fails.

    The view's per-arm lists are kept here from each ``decide`` message's ``update`` (the pulled
    arm's new entries), so a decision costs a few dozen bytes whatever the number of arms. With
    the environment variable ``BANDITBENCH_CHECK_VIEW=1`` the runner asks for the full view with
    every decision and checks that the lists it keeps agree with it.
    """
    if stdout is None:
        # The protocol owns the real stdout; fd 1 becomes stderr so that stray prints, including
        # those of C extensions, cannot corrupt it.
        sys.stdout.flush()
        out = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)
    else:
        out = stdout
    inp = stdin if stdin is not None else sys.stdin.buffer
    check = os.environ.get("BANDITBENCH_CHECK_VIEW") == "1"
    write, flush, loads = out.write, out.flush, json.loads
    policy = None
    cell = None
    pending_error = None
    workers = 1
    pulls: list = []
    clock: list = []
    best: list = []
    pool = None

    def fail(where: str) -> str:
        msg = f"{where}: {traceback.format_exc()}"
        sys.stderr.write(msg)
        sys.stderr.flush()
        return msg

    for line in inp:
        try:
            msg = loads(line)
            kind = msg["type"]
        except (ValueError, KeyError, TypeError):
            _error(write, flush, f"cannot parse the message {line[:200]!r}")
            return
        if kind == "observe":
            if pending_error is None:
                try:
                    msg.setdefault("objectives", None)
                    policy.observe(Observation(**msg))
                except Exception:
                    pending_error = fail("observe")
            continue
        if kind == "decide":
            if pending_error is None:
                u = msg.get("update")
                if u is not None:
                    a = u[0]
                    if a == len(pulls):  # pool world: a new arm
                        pulls.append(0)
                        clock.append(0.0)
                        best.append(None)
                        if pool is not None:
                            pool["last"].append(None)
                            pool["done"].append(False)
                            pool["config"].append(0)
                    pulls[a], clock[a], best[a] = u[1], u[2], u[3]
                    if pool is not None:
                        pool["last"][a], pool["done"][a], pool["config"][a] = u[4], u[5], u[6]
                if pool is not None:
                    pool["undrawn"] = msg["undrawn"]
                if workers > 1:
                    # Several workers: the whole view travels with every decide.
                    pulls[:], clock[:], best[:] = msg["pulls"], msg["arm_clock"], msg["arm_best"]
                    if pool is not None:
                        for k in ("last", "done", "config"):
                            pool[k][:] = msg[k]
                elif check and "pulls" in msg:
                    kept = {"pulls": pulls, "arm_clock": clock, "arm_best": best}
                    if pool is not None:
                        kept.update({k: pool[k] for k in ("last", "done", "config")})
                    for k, v in kept.items():
                        if msg[k] != v:
                            _error(write, flush, f"view check: {k} kept as {v}, sent as {msg[k]}")
                            return
                try:
                    reply = _encode(policy.decide(
                        View(step=msg["step"], used=msg["used"], budget=cell.budget_abs,
                             pulls=pulls, arm_clock=clock, arm_best=best, pool=pool,
                             workers=workers, worker=msg.get("worker", 0),
                             now=msg.get("now", msg["used"]), pending=msg.get("pending", []))))
                except Exception:
                    pending_error = fail("decide")
            if pending_error is not None:
                _error(write, flush, pending_error)
                return
            write(reply)
            flush()
            continue
        if kind == "start":
            params = msg.pop("params")
            del msg["type"]
            msg.setdefault("workers", 1)
            cell = Cell(params=params, **msg)
            workers = cell.workers
            n = len(cell.arms)
            pulls, clock, best = [0] * n, [0.0] * n, [None] * n
            pool = None
            if cell.world == "pool":
                pool = {"undrawn": cell.pool["configs"], "last": [], "done": [], "config": []}
            try:
                policy = factory(cell, **params)
            except Exception:
                pending_error = fail("start")
            continue
        if kind == "end":
            stats = None
            if pending_error is None:
                try:
                    stats = stats_json(policy)
                except Exception:
                    pending_error = fail("stats")
            if pending_error is not None:
                _error(write, flush, pending_error)
                return
            policy = None
            if stats is None:
                write(b'{"type":"end"}\n')
            else:
                write(b'{"type":"end","stats":%s}\n' % stats.encode())
            flush()
            continue
        if kind == "hello":
            if msg.get("protocol") != PROTOCOL:
                sys.stderr.write(
                    f"banditbench speaks protocol {msg.get('protocol')}; this package speaks {PROTOCOL}\n"
                )
            view = b',"view":"full"' if check else b""
            write(b'{"type":"hello","protocol":%d%s}\n' % (PROTOCOL, view))
            flush()
            continue
        _error(write, flush, f"unknown message type {kind!r}")
        return
