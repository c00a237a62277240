"""Shared fixtures: the repository, and the banditbench binary (built by `cargo test` or
`cargo build`; BANDITBENCH_BIN overrides)."""
import os
import pathlib
import shutil
import sysconfig

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def banditbench_bin():
    given = os.environ.get("BANDITBENCH_BIN")
    candidates = [pathlib.Path(given)] if given else [
        ROOT / "target" / "release" / "banditbench",
        ROOT / "target" / "debug" / "banditbench",
    ]
    for c in candidates:
        if c.is_file():
            return c
    if os.environ.get("BANDITBENCH_REQUIRE_BIN") == "1":
        pytest.fail(f"no banditbench binary at {', '.join(map(str, candidates))}")
    pytest.skip("no banditbench binary: run `cargo build` first")


def installed_command():
    """The wheel's `banditbench` command: in the running interpreter's scripts folder, where pip
    puts it (so a venv's Python finds its own command without the venv being activated), else on
    PATH; None when neither has it."""
    path = os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")])
    return shutil.which("banditbench", path=path)


def write_experiment(path, body):
    """An experiment on the repository's tiny hand-written test fixture."""
    fixture = ROOT / "tests" / "fixtures" / "tiny"
    path.write_text(f'name = "{path.stem}"\ntraces = "{fixture}"\n{body}')
    return path


def recorded_scores(dataset, learner="mlp", run=0, unit=None, pool=None):
    """A task's recorded scores, read from the pool's own files (the bundled sklearn-grid by
    default): level indices -> score at ``unit``, or (level indices, unit) -> score for every
    unit when ``unit`` is None. Failed units are left out."""
    import pandas as pd

    pool = ROOT / "traces" / "sklearn-grid" if pool is None else pool
    configs = pd.read_parquet(pool / "configs.parquet").set_index("config_id")["levels"]
    curves = pd.read_parquet(pool / "curves" / f"{dataset}__{learner}__{run}.parquet")
    ok = curves[curves["status"] == "ok"]
    if unit is not None:
        ok = ok[ok["unit"] == unit]
    levels = (tuple(int(v) for v in configs[c].split(",")) for c in ok["config_id"])
    if unit is not None:
        return {lv: float(x) for lv, x in zip(levels, ok["score"])}
    return {(lv, int(u)): float(x) for lv, u, x in zip(levels, ok["unit"], ok["score"])}


def pool_experiment(name, dataset, budget_units, *, workers=1, repetitions=1,
                    learners=("mlp",), per_learner=True, seed=11, pool=None):
    """An experiment dict on one task (run 0) of a grid pool (the bundled sklearn-grid by
    default): the pool world, a budget in units, best-seen incumbent and recommendation."""
    pool = ROOT / "traces" / "sklearn-grid" if pool is None else pool
    return {
        "name": name, "traces": str(pool), "seed": seed, "repetitions": repetitions,
        "tasks": {"datasets": [dataset], "runs": [0], "learners": list(learners)},
        "world": {"kind": "pool", "per_learner": per_learner, "budget_unit": "units",
                  "budgets": [budget_units], "incumbent": "best-seen",
                  "recommendation": "best-seen", "workers": workers},
    }


# What two routes of one policy must agree on, decision for decision.
ROUTE_COLUMNS = ["cell", "step", "action", "config", "fidelity", "reward", "worker", "start",
                 "finish"]


def both_routes(exp, name, policy, params, module, tmp_path):
    """Run ``policy`` with ``params`` on the experiment dict ``exp`` in-process and through the
    protocol (``python -m banditbench.adapters.MODULE`` with ``pool_space = true``); assert that
    the two give the same decisions (:data:`ROUTE_COLUMNS`) and the same ``policy_stats``, and
    return both results."""
    import sys

    import banditbench as bb

    a = bb.run(exp, policies={name: (policy, params)}, out=tmp_path / "a", progress=False)
    entry = {"family": "external", "name": name, "pool_space": True,
             "command": [sys.executable, "-m", f"banditbench.adapters.{module}"]}
    if params:
        entry["params"] = params
    b = bb.run(dict(exp, policies=[entry]), out=tmp_path / "b", progress=False)
    assert len(a.trajectories) > 0
    assert a.trajectories[ROUTE_COLUMNS].equals(b.trajectories[ROUTE_COLUMNS])
    assert list(a.runs["policy_stats"]) == list(b.runs["policy_stats"])
    return a, b


def greedy_policy():
    """A Python policy for tests: each arm once, then the arm with the best reward so far."""
    from banditbench import Policy

    class Greedy(Policy):
        def decide(self, view):
            for a in range(view.n_arms):
                if view.pulls[a] == 0:
                    return a
            return max(range(view.n_arms), key=lambda a: view.arm_best[a] or -1e300)

    return Greedy
