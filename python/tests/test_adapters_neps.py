"""The NePS adapter (banditbench.adapters.neps) on the recorded sklearn-grid pool: with one worker
the trials of NePS's own ask-and-tell loop on the same table (seeded as the adapter seeds it),
two workers by both routes, identical reruns, and its errors. Runs in the venv of
python/requirements-neps.txt (NePS pins pandas < 3 and brings torch); skipped elsewhere unless
BANDITBENCH_REQUIRE_NEPS=1."""
import os

import pytest

if os.environ.get("BANDITBENCH_REQUIRE_NEPS") != "1":
    pytest.importorskip("neps")

import banditbench as bb  # noqa: E402
from banditbench.adapters._grid import GridSpace  # noqa: E402
from banditbench.adapters.neps import NePSOptimizer, pipeline_space  # noqa: E402

from conftest import ROOT, both_routes, pool_experiment, recorded_scores  # noqa: E402

POOL = ROOT / "traces" / "sklearn-grid"


class Kept(NePSOptimizer):
    """The adapter, keeping each cell's trials in ask order and each tell's (trial, unit, cost),
    keyed by the cell's seed."""

    asked = {}
    told = {}

    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        self.seed = cell.seed
        Kept.asked[cell.seed] = []
        Kept.told[cell.seed] = []

    def _ask_job(self):
        job = super()._ask_job()
        Kept.asked[self.seed].append((job[0].metadata.id, dict(job[0].config)))
        return job

    def _tell_job(self, job, value, cost):
        config = dict(job.config)
        unit = int(config.pop("units"))
        Kept.told[self.seed].append((tuple(sorted(config.items())), unit, cost))
        return super()._tell_job(job, value, cost)


def own_loop(seed, optimizer, n):
    """NePS's own ask-and-tell loop on car's MLP table (run 0), seeded as the adapter seeds a
    cell: each trial told the negated recorded score at its unit."""
    import random

    import neps
    import numpy as np
    import pandas as pd
    import torch

    grid = GridSpace.of_pool(str(POOL))
    learner = grid.learner_index("mlp")
    configs = pd.read_parquet(POOL / "configs.parquet")
    configs = configs[configs["learner"] == "mlp"]
    config_of = {tuple(int(x) for x in lv.split(",")): int(c)
                 for c, lv in zip(configs["config_id"], configs["levels"])}
    curves = pd.read_parquet(POOL / "curves" / "car__mlp__0.parquet")
    score = {(int(c), int(u)): float(s) for c, u, s, st in
             zip(curves["config_id"], curves["unit"], curves["score"], curves["status"])
             if st == "ok"}
    s = seed % 2**32
    random.seed(s)
    np.random.seed(s)
    torch.manual_seed(s)
    opt = neps.AskAndTell(optimizer=getattr(neps.algorithms, optimizer)(
        pipeline_space(grid, learner, "index", (1, grid.units))))
    out = []
    for _ in range(n):
        t = opt.ask()
        config = dict(t.config)
        unit = int(config.pop("units"))
        c = config_of[tuple(int(config[d.name]) for d in grid.dims[learner])]
        out.append((t.metadata.id, dict(t.config)))
        v = score.get((c, unit))
        opt.tell(t, -v if v is not None else ValueError("failed"))
    return out


@pytest.mark.parametrize("optimizer", ["asha", "hyperband"])
def test_one_worker_asks_what_nepss_own_loop_asks(tmp_path, optimizer):
    Kept.asked.clear()
    exp = pool_experiment(f"neps-{optimizer}", "car", 27 * 8, workers=1, repetitions=2)
    r = bb.run(exp, policies={"neps": (Kept, {"optimizer": optimizer})}, out=tmp_path / "r",
               progress=False)
    assert len(r.runs) == 2
    for seed in r.runs["seed"]:
        ours = Kept.asked[int(seed)]
        assert len(ours) >= 20
        assert own_loop(int(seed), optimizer, len(ours)) == ours
    # Every revealed score is the table's, and promotions reached the last unit.
    tr = r.trajectories
    assert set(tr["reward"].dropna().astype(float)) <= set(recorded_scores("car").values())
    assert tr["fidelity"].max() == 27


def test_restart_promotion_pays_every_unit_again(tmp_path):
    # ASHA asks the same trials under either rule (the rule changes what a trial costs, not what
    # NePS asks); a promoted trial trains its configuration again from the first unit: its cost
    # is its unit, where under "continue" it is only the new units, and the units trained before
    # are retrained (their recorded scores revealed again).
    told = {}
    for promotion in ("continue", "restart"):
        Kept.asked.clear()
        Kept.told.clear()
        exp = pool_experiment(f"neps-{promotion}", "car", 27 * 8, workers=1, repetitions=1)
        r = bb.run(exp, policies={"neps": (Kept, {"optimizer": "asha", "promotion": promotion})},
                   out=tmp_path / promotion, progress=False)
        (seed,) = r.runs["seed"]
        ours = Kept.asked[int(seed)]
        assert own_loop(int(seed), "asha", len(ours)) == ours
        seen, promoted = {}, []
        for key, unit, cost in Kept.told[int(seed)]:
            before = seen.get(key, 0)
            if before < unit:
                assert cost == (unit if promotion == "restart" else unit - before), (key, unit)
                if before:
                    promoted.append(unit - before)
                seen[key] = unit
            else:
                assert cost == 0, (key, unit, cost)
        assert promoted, "some trial is a promotion"
        told[promotion] = len(Kept.told[int(seed)])
        retrained = (r.trajectories["action"] == "retrain").sum()
        # (The budget may cut the last promotion short: never told, but its units retrained.)
        if promotion == "restart":
            assert len(promoted) <= retrained <= len(promoted) + 1, (retrained, promoted)
        else:
            assert retrained == 0
    # The same budget buys fewer trials when promotions pay every unit again.
    assert told["restart"] < told["continue"]


def test_two_workers_by_both_routes_and_reruns_identical(tmp_path):
    exp = pool_experiment("neps-two", "car", 27 * 6, workers=2, repetitions=2)
    a, _ = both_routes(exp, "neps", NePSOptimizer, {"optimizer": "asha"}, "neps", tmp_path)
    tr = a.trajectories
    assert set(tr["worker"]) == {0, 1}
    again = bb.run(exp, policies={"neps": (NePSOptimizer, {"optimizer": "asha"})},
                   out=tmp_path / "again", progress=False)
    cols = ["cell", "step", "config", "fidelity", "reward", "worker", "start", "finish"]
    assert again.trajectories[cols].equals(tr[cols])


def test_a_method_without_fidelities_trains_every_trial_to_the_last_unit(tmp_path):
    exp = pool_experiment("neps-rs", "car", 27 * 6, workers=2, repetitions=1)
    r = bb.run(exp, policies={"neps-rs": (NePSOptimizer, {"optimizer": "random_search"})},
               out=tmp_path / "r", progress=False)
    assert (r.trajectories["fidelity"] == 27).all() and len(r.trajectories) == 6


@pytest.mark.parametrize("params,message", [
    ({"optimizer": "nope"}, "optimizer = 'nope' is not in neps.algorithms"),
    ({"fidelity": "some"}, "fidelity = 'some'"),
    ({"min_unit": 40}, "min_unit = 40"),
    ({"promotion": "resume"}, "promotion = 'resume'; give one of continue, restart"),
])
def test_bad_options_are_named(tmp_path, params, message):
    exp = pool_experiment("neps-bad", "car", 27, workers=1)
    with pytest.raises(bb.BanditbenchError) as e:
        bb.run(exp, policies={"neps": (NePSOptimizer, params)}, out=tmp_path / "r",
               progress=False)
    assert message in str(e.value), str(e.value)[-2000:]
