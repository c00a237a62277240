"""botorch's exact hypervolume as a second reference beside moocore (issue #46): the 1 000 random
sets of 2 to 6 objectives that `moocore_golden.py` and `tests/pareto.rs` draw (splitmix64, the
same cases), each set's hypervolume by `botorch.utils.multi_objective.hypervolume.Hypervolume`
(the slicing algorithm of Fonseca, Paquete & Lopez-Ibanez 2006 with multilists), in float64.

botorch maximises: each set is negated with its reference point, reduced to the points strictly
better than the reference point in every objective, then to its non-dominated points
(`is_non_dominated`, as `Hypervolume.compute` expects Pareto-optimal outcomes). The first step
matters: `compute` does not drop a point that only touches the reference point, and counts
volume for it. On case 779 (six objectives on the integer grid, two points with a coordinate
equal to the reference's 7) botorch 0.18.1 returns 47 304 without it, and 12 168 with it, which
is moocore's value and the count of dominated unit cells. Output: `tests/golden/botorch.json`.
botorch is a test reference only.

Environment (Python 3.11):

    python3 -m venv .venv-botorch && . .venv-botorch/bin/activate
    pip install -r scripts/reference/requirements-botorch.txt
    python scripts/reference/botorch_golden.py
"""

import json
import sys
from importlib.metadata import version
from pathlib import Path

import torch
from botorch.utils.multi_objective.hypervolume import Hypervolume
from botorch.utils.multi_objective.pareto import is_non_dominated

ROOT = Path(__file__).resolve().parents[2]
MASK = (1 << 64) - 1


class SplitMix64:
    """Steele, Lea & Flood's splitmix64; tests/pareto.rs has the same."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * 2.0**-53


def random_points(i):
    """Case i's points and reference point, as tests/pareto.rs draws them (the reference set
    drawn after them is not needed here)."""
    rng = SplitMix64(i)
    d = 2 + i % 5
    n = 5 + rng.next() % 36
    rng.next()  # the reference set's size
    grid = i % 2 == 1

    def draw():
        u = rng.uniform()
        return float(int(u * 8.0)) if grid else u

    points = [[draw() for _ in range(d)] for _ in range(n)]
    return points, [7.0 if grid else 0.9] * d


def main():
    out = []
    for i in range(1000):
        points, reference = random_points(i)
        y = -torch.tensor(points, dtype=torch.double)
        ref = -torch.tensor(reference, dtype=torch.double)
        inside = y[(y > ref).all(dim=-1)]
        front = inside[is_non_dominated(inside)]
        out.append(float(Hypervolume(ref_point=ref).compute(front)))
    (ROOT / "tests" / "golden" / "botorch.json").write_text(json.dumps({
        "botorch": version("botorch"), "torch": version("torch"), "python": sys.version.split()[0],
        "made_by": "scripts/reference/botorch_golden.py",
        "cases": "the 1 000 random sets of tests/pareto.rs (random_case(i), i = 0..999)",
        "hypervolume": out,
    }, indent=1) + "\n")


if __name__ == "__main__":
    main()
