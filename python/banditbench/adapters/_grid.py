"""A pool's space, as the engine describes it, and the map between a library's suggestion and
the pool's configurations.

On a grid pool every dimension has a finite list of levels (``pool.toml``'s ``values``), so a
suggestion maps to exactly one configuration: its learner and one level per dimension. The engine
encodes level k of an ordinal dimension of n levels as k / (n - 1) and a categorical level as its
index (``docs/protocol.md``, ``pool_space``); :meth:`GridSpace.levels` inverts that.

A learner with a numeric dimension (a recorded random sample such as ``sklearn-random``'s joint
pool) is offered to a library as ranges, and its suggestion is a point that the pool may not hold.
:class:`Snap` decides which configuration it evaluates (``snap``: ``"nearest"``,
``"nearest-open"`` or ``"refuse"``) by the distance it states.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

Key = Tuple[int, Tuple[Any, ...]]

SNAP = ("nearest", "nearest-open", "refuse")

# Distances at most this are exact hits: the engine sends encoded values as 32-bit floats.
EXACT = 1e-5


class Point(tuple):
    """A suggestion on a learner with numeric dimensions: its encoded values (numeric in [0, 1],
    log-scaled where the dimension is; ordinal k / (n - 1); categorical the level index), before
    :class:`Snap` maps it to a configuration."""


@dataclass(frozen=True)
class Dim:
    """One dimension: ``name``, ``kind`` ("ordinal", "categorical" or "numeric"), its levels'
    texts (ordinal, categorical) or its range ``low``..``high`` (numeric; ``log`` scaled,
    ``integer`` when the recorder drew whole numbers)."""

    name: str
    kind: str
    choices: Tuple[str, ...] = ()
    low: float = 0.0
    high: float = 1.0
    log: bool = False
    integer: bool = False

    @property
    def numbers(self) -> Optional[Tuple[float, ...]]:
        """The levels as numbers, when every level is one (else None)."""
        try:
            return tuple(float(c) for c in self.choices)
        except ValueError:
            return None

    @property
    def values(self) -> Tuple[Any, ...]:
        """The levels as a library offers them as choices: numbers for ordered levels that all
        are numbers, else their texts."""
        return self.numbers if self.kind == "ordinal" and self.numbers else self.choices

    def level_of(self, value: Any, by_index: bool) -> int:
        """The level a library's value names: the value itself for ordered levels offered by
        index (``by_index``), else its place among :attr:`values`."""
        if self.kind == "ordinal" and by_index:
            return int(value)
        return list(self.values).index(value)

    @property
    def int_range(self) -> Optional[Tuple[int, int]]:
        """A numeric dimension of whole numbers as (low, high), when the recorder drew whole
        numbers between whole bounds (else None: a float range)."""
        if self.kind == "numeric" and self.integer and self.low.is_integer() \
                and self.high.is_integer():
            return int(self.low), int(self.high)
        return None

    def encode(self, part: Any) -> float:
        """The engine's encoding of a level index (ordinal, categorical) or of a number in this
        dimension's range (numeric; clipped to [0, 1] as the engine clips)."""
        if self.kind == "ordinal":
            n = len(self.choices)
            return int(part) / (n - 1) if n > 1 else 0.0
        if self.kind == "categorical":
            return float(int(part))
        v = float(part)
        if self.log:
            u = (math.log(v) - math.log(self.low)) / (math.log(self.high) - math.log(self.low))
        else:
            u = (v - self.low) / (self.high - self.low)
        return min(1.0, max(0.0, u))


class GridSpace:
    """A pool's learners and their dimensions (grid, or numeric ranges on a recorded sample)."""

    def __init__(self, learners: Sequence[str], space: Sequence[Sequence[Mapping[str, Any]]],
                 pool: str = "", units: int = 0):
        self.pool = pool
        self.units = units
        self.learners = list(learners)
        self.dims: List[List[Dim]] = []
        for learner, dims in zip(self.learners, space):
            row = []
            for d in dims:
                if d["kind"] == "numeric":
                    row.append(Dim(d["name"], "numeric", (), float(d["low"]), float(d["high"]),
                                   bool(d["log"]), bool(d.get("int", False))))
                else:
                    row.append(Dim(d["name"], d["kind"], tuple(d["choices"])))
            self.dims.append(row)
        # Learners with a numeric dimension: their suggestions are points, snapped (`Snap`).
        self.numeric = [any(d.kind == "numeric" for d in dims) for dims in self.dims]

    @classmethod
    def of_pool(cls, pool: str) -> "GridSpace":
        """The space of the pool at ``pool`` (a folder, or a bundled pool's name)."""
        from .. import api

        d = json.loads(api._engine().pool_space(str(pool)))
        return cls(d["learners"], d["space"], pool=d["pool"], units=d["units"])

    @classmethod
    def of_cell(cls, cell: Any) -> "GridSpace":
        """The space a pool cell started with (the policy needs ``pool_space = True``)."""
        p = cell.pool
        if "space" not in p:
            raise ValueError(
                "this cell carries no space: the policy class needs the attribute pool_space = True"
            )
        return cls(p["learners"], p["space"], units=p["units"])

    def learner_index(self, learner: Optional[str]) -> Optional[int]:
        if learner is None:
            return None
        if learner not in self.learners:
            raise ValueError(f"no learner {learner!r} in the pool; it has {', '.join(self.learners)}")
        return self.learners.index(learner)

    def levels(self, learner: int, encoded: Sequence[Optional[float]]) -> Tuple[int, ...]:
        """A configuration's level indices from its encoded values."""
        out = []
        for d, v in zip(self.dims[learner], encoded):
            if v is None:
                out.append(-1)
            elif d.kind == "ordinal":
                n = len(d.choices)
                out.append(int(round(v * (n - 1))) if n > 1 else 0)
            else:
                out.append(int(round(v)))
        return tuple(out)

    def key(self, learner: int, parts: Sequence[Any]) -> Key:
        """The key of a library's configuration of ``learner``, one part per dimension: a level
        index (ordinal, categorical) or a number (numeric). A grid learner's key is its level
        indices; a numeric learner's is a :class:`Point`, snapped later."""
        if self.numeric[learner]:
            return learner, Point(d.encode(p) for d, p in zip(self.dims[learner], parts))
        return learner, tuple(int(p) for p in parts)

    def open_configs(self, cell: Any) -> Dict[Key, int]:
        """key -> configuration index, for the configurations open at the cell's start (recorded
        on its task, not drawn yet): (learner, levels) on a grid learner, (learner,
        (configuration,)) on a numeric one."""
        p = cell.pool
        return {
            (l, (c,) if self.numeric[l] else self.levels(l, v)): c
            for c, l, v in zip(p["open"], p["open_learner"], p["open_values"])
        }


class Snap:
    """Which configuration a point suggested on a numeric learner evaluates (``rule``), by the
    *distance*: the sum over dimensions of |a - b| for a numeric or ordinal one (each normalised
    to [0, 1], log-scaled where the dimension is log-spaced) and 1 per categorical mismatch; a
    value the space cannot place (None) is 0 from another None and 1 from any value.

    - ``"nearest"``: the configuration recorded on the task nearest to it by that distance
      (ties: the lowest configuration index), evaluated before or not (then ``repeat`` decides);
    - ``"nearest-open"``: the nearest not yet evaluated or running (the nearest of all once none
      is left), HPO-B's pool-based protocol;
    - ``"refuse"``: only an exact hit (distance at most 1e-5); any other point fails the cell,
      naming the point and the nearest configuration.

    Counts every suggestion, the snapped ones (distance above 1e-5) and their distances
    (:meth:`stats`)."""

    def __init__(self, grid: GridSpace, cell: Any, rule: str = "nearest"):
        if rule not in SNAP:
            raise ValueError(f"snap = {rule!r}; give one of {', '.join(SNAP)}")
        self.grid, self.rule = grid, rule
        p = cell.pool
        rows: Dict[int, List[Tuple[int, Sequence[Optional[float]]]]] = {}
        for c, l, v in sorted(zip(p["open"], p["open_learner"], p["open_values"])):
            if grid.numeric[l]:
                rows.setdefault(l, []).append((c, v))
        # Per numeric learner: its configurations (ascending) and their encoded values (NaN for
        # a value the space cannot place), and which dimensions are categorical. numpy computes
        # the distance to all of them at once (the same sums; 1.5 ms -> 0.14 ms a
        # suggestion on TaskSet's 1 000 x 8).
        import numpy as np

        self._np = np
        self.points: Dict[int, Tuple[Any, Any, Any]] = {}
        for l, rs in rows.items():
            ids = np.array([c for c, _ in rs], dtype=np.int64)
            x = np.array([[np.nan if v is None else float(v) for v in vs] for _, vs in rs],
                         dtype=np.float64).reshape(len(rs), len(grid.dims[l]))
            cat = np.array([d.kind == "categorical" for d in grid.dims[l]], dtype=bool)
            self.points[l] = (ids, x, cat)
        # Per numeric learner, the configurations that may still be open: a superset of the
        # open ones (open configurations only ever leave), narrowed as the rule meets them.
        self.maybe_open = {l: np.ones(len(ids), dtype=bool) for l, (ids, _, _) in self.points.items()}
        # Suggestions; those on a numeric learner (points); those snapped; their distances.
        self.suggestions = self.on_numeric = self.snapped = 0
        self.total = self.largest = 0.0

    def __call__(self, key: Key, open_: Mapping[Key, int]) -> Key:
        """The key a library's suggestion evaluates (grid keys pass unchanged)."""
        self.suggestions += 1
        l, point = key
        if not isinstance(point, Point):
            return key
        self.on_numeric += 1
        dims = self.grid.dims[l]
        if l not in self.points:
            raise ValueError(f"no configuration of {self.grid.learners[l]} is recorded on this task")
        np = self._np
        ids, x, cat = self.points[l]
        at = np.array([np.nan if v is None else float(v) for v in point], dtype=np.float64)
        # The distance to every configuration at once.
        with np.errstate(invalid="ignore"):
            each = np.where(cat, (np.rint(x) != np.rint(at)).astype(np.float64), np.abs(x - at))
        gone = np.isnan(x) | np.isnan(at)
        each = np.where(gone, np.where(np.isnan(x) & np.isnan(at), 0.0, 1.0), each)
        total = each.sum(axis=1)
        k = int(np.argmin(total))  # the first of equals: the lowest configuration id
        if self.rule == "nearest-open":
            # The nearest still open, if any is.
            maybe = self.maybe_open[l]
            while maybe.any():
                j = int(np.argmin(np.where(maybe, total, np.inf)))
                if (l, (int(ids[j]),)) in open_:
                    k = j
                    break
                maybe[j] = False
        dist, c = float(total[k]), int(ids[k])
        if dist > EXACT:
            if self.rule == "refuse":
                named = {d.name: round(x, 6) for d, x in zip(dims, point)}
                raise ValueError(
                    f"snap = \"refuse\": the library suggested {self.grid.learners[l]} at "
                    f"{named} (encoded in [0, 1]), which the pool does not record; the nearest "
                    f"recorded configuration, {c}, is at distance {dist:.4g}. Give snap = "
                    "\"nearest\" (or \"nearest-open\") to evaluate the nearest one"
                )
            self.snapped += 1
        self.total += dist
        self.largest = max(self.largest, dist)
        return l, (c,)

    def stats(self) -> Dict[str, Any]:
        """The rule, the points snapped, their share and the mean and largest distance over every
        point suggested on a numeric learner (exact hits count as 0)."""
        n = self.on_numeric
        return {"snap": self.rule, "snapped": self.snapped,
                "snapped_share": self.snapped / n if n else 0.0,
                "snap_distance_mean": self.total / n if n else 0.0,
                "snap_distance_max": self.largest}


def configspace(grid: GridSpace, learners: Union[int, Sequence[int]], seed: int = 0) -> Any:
    """ConfigSpace's space (DEHB's and SMAC3's) of one learner, or of several under a categorical
    ``learner`` whose value activates that learner's dimensions (``EqualsCondition``), named
    ``LEARNER.DIM`` as in Syne Tune's space. A dimension with ordered levels is an
    ``OrdinalHyperparameter`` of level indices, a numeric one a ``UniformIntegerHyperparameter``
    (whole numbers) or ``UniformFloatHyperparameter`` over its range (log where it is log-scaled),
    any other a ``CategoricalHyperparameter`` of level indices."""
    import ConfigSpace as CS

    chosen = [learners] if isinstance(learners, int) else list(learners)

    def hp(name: str, d: Dim) -> Any:
        if d.kind == "numeric":
            whole = d.int_range
            if whole is not None:
                return CS.UniformIntegerHyperparameter(name, whole[0], whole[1], log=d.log)
            return CS.UniformFloatHyperparameter(name, d.low, d.high, log=d.log)
        if d.kind == "ordinal" and len(d.choices) > 1:
            return CS.OrdinalHyperparameter(name, list(range(len(d.choices))))
        return CS.CategoricalHyperparameter(name, list(range(len(d.choices))))

    cs = CS.ConfigurationSpace(seed=seed)
    if len(chosen) == 1:
        cs.add([hp(d.name, d) for d in grid.dims[chosen[0]]])
        return cs
    root = CS.CategoricalHyperparameter("learner", [grid.learners[l] for l in chosen])
    cs.add(root)
    for l in chosen:
        name = grid.learners[l]
        hps = [hp(f"{name}.{d.name}", d) for d in grid.dims[l]]
        cs.add(hps)
        cs.add([CS.EqualsCondition(h, root, name) for h in hps])
    return cs


def key_of(config: Mapping[str, Any], grid: GridSpace, learners: Sequence[int],
           level: Optional[Callable[[Dim, Any], int]] = None) -> Key:
    """The key (:meth:`GridSpace.key`) of a library's configuration named as :func:`configspace`,
    Syne Tune's and Nevergrad's spaces name it: one learner's dimensions by name, or several
    learners' as ``LEARNER.DIM`` beside a ``"learner"`` value. ``level`` reads a dimension's
    value as a level index (default: the value is the index); a numeric dimension's value is
    its number."""
    if len(learners) > 1:
        l = grid.learners.index(config["learner"])
        prefix = f"{grid.learners[l]}."
    else:
        l, prefix = learners[0], ""
    read = level or (lambda d, v: int(v))
    return grid.key(l, [config[prefix + d.name] if d.kind == "numeric"
                        else read(d, config[prefix + d.name]) for d in grid.dims[l]])
