"""Mutant-UCB against the authors' code: DRAGON 1.1's own `Mutant_UCB` driven over recorded curves.

Brégère & Keisler (2024) published Mutant-UCB in DRAGON (`dragon-autodl` 1.1 on PyPI). This script
runs DRAGON's unmodified `Mutant_UCB.run()` on one learner's grid of `traces/sklearn-grid` for
some (dataset, run) pairs: its search space draws a configuration of the grid uniformly and mutates
into a uniform grid neighbour, and its evaluation function returns 1 − the recorded validation
accuracy of the configuration's next unit (a partial training is one unit). It then runs
banditbench's `mutant-ucb` with DRAGON's conventions (`finalisation = "none"`,
`on_failure = "remove"`, best single evaluation as the best model) on the same tasks and budget,
and compares, over the seeds, the best score found, the number of models tested and the partial
trainings per model, with a Mann–Whitney U and a Kolmogorov–Smirnov test for each.

What DRAGON does that the pool world does not, and so may separate the two:
- DRAGON draws its K initial models with replacement and mutates into any neighbour, tried or
  not; a repeated configuration is a new model trained from scratch, i.e. its recorded curve from
  unit 1 again. The pool world draws without replacement and mutates into untried neighbours.
- Nothing else: the index (mean loss − √(E/N)), the mutation probability N̄/N, counting a mutation
  against its parent, and the best model as the best single evaluation are the same rule.

DRAGON imports torch only for its logger (`dragon.utils.tools`); the script stubs that module so
that the CPU-days-heavy torch is not needed. Environment (Python 3.11):

    python3 -m venv .venv-dragon && . .venv-dragon/bin/activate
    pip install -r scripts/reference/requirements-dragon.txt
    pip install --no-deps dragon-autodl==1.1
    cargo build --release
    python scripts/reference/dragon_mutant_ucb.py --seeds 50 --out scripts/reference/dragon-mutant-ucb

It writes `<out>.csv` (one row per implementation, task and seed) and `<out>.md` (the comparison).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]


def stub_torch() -> None:
    """dragon.utils.tools imports torch and torch.utils.checkpoint for nothing Mutant-UCB uses."""
    torch = types.ModuleType("torch")
    utils = types.ModuleType("torch.utils")
    ckpt = types.ModuleType("torch.utils.checkpoint")
    ckpt.checkpoint = lambda *a, **k: None
    torch.utils = utils
    utils.checkpoint = ckpt
    sys.modules.setdefault("torch", torch)
    sys.modules.setdefault("torch.utils", utils)
    sys.modules.setdefault("torch.utils.checkpoint", ckpt)


def load_task(pool: Path, learner: str, dataset: str, run: int):
    """(scores[config][unit], neighbours[config]) of one learner's grid on one (dataset, run)."""
    configs = pq.read_table(pool / "configs.parquet").to_pylist()
    mine = [c for c in configs if c["learner"] == learner]
    index = {c["config_id"]: i for i, c in enumerate(mine)}
    levels = [tuple(int(x) for x in c["levels"].split(",")) for c in mine]
    curves = pq.read_table(pool / "curves" / f"{dataset}__{learner}__{run}.parquet").to_pylist()
    units = max(r["unit"] for r in curves)
    scores = np.full((len(mine), units), np.nan)
    for r in curves:
        if r["status"] == "ok":
            scores[index[r["config_id"]], r["unit"] - 1] = r["score"]
    by_level = {lv: i for i, lv in enumerate(levels)}
    neighbours = []
    for lv in levels:
        nb = []
        for d in range(len(lv)):
            for step in (-1, 1):
                other = lv[:d] + (lv[d] + step,) + lv[d + 1:]
                if other in by_level:
                    nb.append(by_level[other])
        neighbours.append(nb)
    return scores, neighbours


class GridSpace:
    """The search-space interface DRAGON's algorithms call: random(size) and neighbor(x).

    `untried = False` (DRAGON's own semantics): draws with replacement, any grid neighbour.
    `untried = True` (the pool world's): draws without replacement, untried neighbours only,
    and a fresh draw when every neighbour was tried. Either way DRAGON's algorithm is unchanged.
    """

    def __init__(self, n: int, neighbours: list[list[int]], untried: bool = False):
        self.n, self.neighbours, self.untried = n, neighbours, untried
        self.tried: set[int] = set()

    def _fresh(self) -> int:
        free = [i for i in range(self.n) if i not in self.tried]
        x = int(free[np.random.randint(0, len(free))]) if free else int(np.random.randint(0, self.n))
        self.tried.add(x)
        return x

    def random(self, size: int = 1):
        if self.untried:
            return [self._fresh() for _ in range(size)]
        return [int(i) for i in np.random.randint(0, self.n, size=size)]

    def neighbor(self, x: int) -> int:
        nb = self.neighbours[x]
        if self.untried:
            nb = [i for i in nb if i not in self.tried]
            if not nb:
                return self._fresh()
            y = int(nb[np.random.randint(0, len(nb))])
            self.tried.add(y)
            return y
        return int(nb[np.random.randint(0, len(nb))]) if nb else int(x)


def run_dragon(scores, neighbours, T: int, K: int, N: int, E: float, seed: int,
               untried: bool = False) -> dict:
    from dragon.search_algorithm.mutant_ucb import Mutant_UCB

    np.random.seed(seed)
    trained: dict[int, int] = {}

    def evaluation(x, idx):
        u = trained.get(idx, 0)
        trained[idx] = u + 1
        s = scores[x, min(u, scores.shape[1] - 1)]
        return float("inf") if np.isnan(s) else float(1.0 - s)

    with tempfile.TemporaryDirectory() as tmp:
        algo = Mutant_UCB(GridSpace(scores.shape[0], neighbours, untried), T=T, K=K, N=N, E=E,
                          evaluation=evaluation, save_dir=os.path.join(tmp, "run"))
        algo.run()
    return {
        "best_score": 1.0 - float(algo.min_loss),
        "models_tested": int(algo.K),
        "trainings_per_model": float(np.mean(list(trained.values()))),
    }


def run_ours(binary: str, dataset: str, learner: str, run: int, T: int, K: int, N: int, E: float,
             seeds: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        exp = Path(tmp) / "exp.toml"
        exp.write_text(f"""name = "dragon-check"
traces = "{ROOT / 'traces' / 'sklearn-grid'}"
seed = 2024
repetitions = {seeds}
[tasks]
datasets = ["{dataset}"]
runs = [{run}]
learners = ["{learner}"]
[world]
kind = "pool"
per_learner = true
budget_unit = "units"
budgets = [{T}]
recommendation = "best-seen"
failures_consume_budget = false
[[policies]]
family = "mutant-ucb"
k = {K}
n = {N}
e = {E}
finalisation = "none"
on_failure = "remove"
""")
        out = Path(tmp) / "results"
        subprocess.run([binary, "run", str(exp), "--out", str(out), "--quiet", "--threads", "1"],
                       check=True, stdout=subprocess.DEVNULL)
        t = pq.read_table(out / "runs.parquet",
                          columns=["repetition", "best_score", "configs_drawn", "units_trained"]).to_pylist()
    return [{"seed": r["repetition"], "best_score": r["best_score"], "models_tested": r["configs_drawn"],
             "trainings_per_model": r["units_trained"] / r["configs_drawn"]} for r in t]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pool", default=str(ROOT / "traces" / "sklearn-grid"))
    ap.add_argument("--learner", default="hist-gradient-boosting")
    ap.add_argument("--tasks", default="car/0,phoneme/0,spambase/0", help="dataset/run,...")
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--T", type=int, default=1350)
    ap.add_argument("--K", type=int, default=40)
    ap.add_argument("--N", type=int, default=27)
    ap.add_argument("--E", type=float, default=0.05)
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "banditbench"))
    ap.add_argument("--out", default=str(ROOT / "scripts" / "reference" / "dragon-mutant-ucb"))
    ap.add_argument("--space", choices=["dragon", "pool-world"], default="dragon",
                    help="DRAGON's draws (with replacement, any neighbour) or the pool world's (untried only)")
    args = ap.parse_args(argv)
    stub_torch()
    logging.disable(logging.CRITICAL)
    # DRAGON's logger opens logs/dragon_<date>.log in the working directory at import: import it
    # from a scratch directory so that nothing lands in the repository.
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        try:
            import dragon.search_algorithm.mutant_ucb  # noqa: F401  (fails clearly if DRAGON is absent)
        finally:
            os.chdir(cwd)

    rows, md = [], []
    md.append("# Mutant-UCB: banditbench against DRAGON 1.1\n")
    md.append(f"`scripts/reference/dragon_mutant_ucb.py --space {args.space}`: DRAGON's search space draws "
              + ("with replacement and mutates into any grid neighbour (DRAGON's semantics). "
                 if args.space == "dragon" else
                 "without replacement and mutates into untried neighbours only (the pool world's semantics). ")
              + f"Learner `{args.learner}` of sklearn-grid, T = {args.T} units, "
              f"K = {args.K}, N = {args.N}, E = {args.E}, {args.seeds} seeds per task; banditbench with DRAGON's "
              "conventions (finalisation none, failed models removed, failures free, best single evaluation). "
              "Two-sided Mann–Whitney U and Kolmogorov–Smirnov p per measure (no correction across the "
              "3 measures × tasks; read them as a check, not a claim).\n")
    md.append("| task | measure | DRAGON mean (sd) | banditbench mean (sd) | Mann–Whitney p | KS p |")
    md.append("|---|---|---|---|---|---|")
    for task in args.tasks.split(","):
        dataset, run = task.split("/")
        scores, neighbours = load_task(Path(args.pool), args.learner, dataset, int(run))
        dragon_rows = [dict(seed=s, **run_dragon(scores, neighbours, args.T, args.K, args.N, args.E, s,
                                                 args.space == "pool-world"))
                       for s in range(args.seeds)]
        ours = run_ours(args.binary, dataset, args.learner, int(run), args.T, args.K, args.N, args.E, args.seeds)
        for impl, rs in (("dragon", dragon_rows), ("banditbench", ours)):
            for r in rs:
                rows.append({"implementation": impl, "task": task, **r})
        for m in ("best_score", "models_tested", "trainings_per_model"):
            a = np.array([r[m] for r in dragon_rows], float)
            b = np.array([r[m] for r in ours], float)
            mw = stats.mannwhitneyu(a, b, alternative="two-sided").pvalue
            ks = stats.ks_2samp(a, b).pvalue
            md.append(f"| {task} | {m} | {a.mean():.4f} ({a.std(ddof=1):.4f}) | {b.mean():.4f} ({b.std(ddof=1):.4f}) "
                      f"| {mw:.3g} | {ks:.3g} |")
        print(f"{task}: done", file=sys.stderr)
    out = Path(args.out)
    with open(out.with_suffix(".csv"), "w") as f:
        keys = ["implementation", "task", "seed", "best_score", "models_tested", "trainings_per_model"]
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join(str(r[k]) for k in keys) + "\n")
    out.with_suffix(".md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
