"""A grid pool's space, as the engine describes it, and the map between a library's suggestion and
the pool's configurations.

Every dimension of a grid pool has a finite list of levels (``pool.toml``'s ``values``), so a
suggestion maps to exactly one configuration: its learner and one level per dimension. The engine
encodes level k of an ordinal dimension of n levels as k / (n - 1) and a categorical level as its
index (``docs/protocol.md``, ``pool_space``); :meth:`GridSpace.levels` inverts that.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

Key = Tuple[int, Tuple[int, ...]]


@dataclass(frozen=True)
class Dim:
    """One dimension: ``name``, ``kind`` ("ordinal" or "categorical") and its levels' texts."""

    name: str
    kind: str
    choices: Tuple[str, ...]

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


class GridSpace:
    """A grid pool's learners and their dimensions."""

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
                    raise ValueError(
                        f"{pool or 'the pool'}: {learner}.{d['name']} is numeric; the adapters "
                        "take grid pools, whose every dimension has levels (sklearn-grid, "
                        "hpobench-mlp)"
                    )
                row.append(Dim(d["name"], d["kind"], tuple(d["choices"])))
            self.dims.append(row)

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

    def open_configs(self, cell: Any) -> Dict[Key, int]:
        """(learner, levels) -> configuration index, for the configurations open at the cell's
        start (recorded on its task, not drawn yet)."""
        p = cell.pool
        return {
            (l, self.levels(l, v)): c
            for c, l, v in zip(p["open"], p["open_learner"], p["open_values"])
        }


def configspace(grid: GridSpace, learners: Union[int, Sequence[int]], seed: int = 0) -> Any:
    """ConfigSpace's space (DEHB's and SMAC3's) of one learner, or of several under a categorical
    ``learner`` whose value activates that learner's dimensions (``EqualsCondition``), named
    ``LEARNER.DIM`` as in Syne Tune's space. A dimension with ordered levels is an
    ``OrdinalHyperparameter`` of level indices, any other a ``CategoricalHyperparameter`` of level
    indices."""
    import ConfigSpace as CS

    chosen = [learners] if isinstance(learners, int) else list(learners)

    def hp(name: str, d: Dim) -> Any:
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
    """The (learner, level indices) of a library's configuration named as :func:`configspace`,
    Syne Tune's and Nevergrad's spaces name it: one learner's dimensions by name, or several
    learners' as ``LEARNER.DIM`` beside a ``"learner"`` value. ``level`` reads a dimension's
    value as a level index (default: the value is the index)."""
    if len(learners) > 1:
        l = grid.learners.index(config["learner"])
        prefix = f"{grid.learners[l]}."
    else:
        l, prefix = learners[0], ""
    if level is None:
        return l, tuple(int(config[prefix + d.name]) for d in grid.dims[l])
    return l, tuple(level(d, config[prefix + d.name]) for d in grid.dims[l])
