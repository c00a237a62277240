"""OptunaHub samplers from a local package folder (OptunaHub's own layout: ``__init__.py``
exporting the sampler, as ``optunahub.load_local_module`` loads it) or an installed module, run
by the Optuna adapter (``hub``, ``hub_sampler``), with the folder's content part of the policy's
identity. The package here is written by the test: OptunaHub's registry is not reachable offline.
Skipped without optunahub unless BANDITBENCH_REQUIRE_OPTUNA=1 (.ci/run installs it with Optuna's
pins)."""
import os

import pytest

if os.environ.get("BANDITBENCH_REQUIRE_OPTUNA") != "1":
    pytest.importorskip("optunahub")

import banditbench as bb  # noqa: E402
from banditbench.adapters.optuna import OptunaSampler  # noqa: E402

from conftest import pool_experiment  # noqa: E402

# A sampler in OptunaHub's package layout: SimpleBaseSampler, one relative sample per trial.
# It proposes the lowest level of every dimension first, then walks up the first dimension
# (`step`), so its trial sequence is known in advance.
PACKAGE = '''
from __future__ import annotations

import optunahub
from optuna.distributions import CategoricalDistribution


class WalkSampler(optunahub.samplers.SimpleBaseSampler):
    """Level 0 of every dimension, then one level up the first dimension per trial."""

    def __init__(self, search_space=None, seed=None, step: int = 1):
        super().__init__(search_space, seed)
        self.step = step
        self.n = 0

    def sample_relative(self, study, trial, search_space):
        if not search_space:
            return {}
        out = {}
        for i, (name, d) in enumerate(sorted(search_space.items())):
            if isinstance(d, CategoricalDistribution):
                out[name] = d.choices[0]
            else:
                out[name] = min(d.low + (self.n * self.step if i == 0 else 0), d.high)
        self.n += 1
        return out


class NotASampler:
    pass
'''


def write_package(root, body=PACKAGE, name="walk_sampler"):
    pkg = root / name
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(
        "from ._sampler import WalkSampler, NotASampler\n\n__all__ = ['WalkSampler']\n")
    (pkg / "_sampler.py").write_text(body)
    return pkg


def experiment(name, trainings=4):
    return pool_experiment(name, "car", 27 * trainings, learners=("mlp",))


def levels_of(configs):
    """sklearn-grid's level indices of each configuration id, by dimension name."""
    import pandas as pd

    from conftest import ROOT

    table = pd.read_parquet(ROOT / "traces" / "sklearn-grid" / "configs.parquet")
    table = table.set_index("config_id")
    names = ["hidden_layer_size", "alpha", "learning_rate_init", "batch_size"]
    return [dict(zip(names, (int(x) for x in table.loc[int(c), "levels"].split(","))))
            for c in configs]


def test_a_local_optunahub_package_samples_the_cells(tmp_path):
    pkg = write_package(tmp_path / "hub")
    params = {"hub": str(pkg), "hub_sampler": "WalkSampler", "step": 2}
    r = bb.run(experiment("hub"), policies={"walk": (OptunaSampler, params)},
               out=tmp_path / "r", progress=False)
    # Optuna samples the first trial independently (nothing is known of the space yet); then
    # the walk: the first dimension by name (alpha) at levels 0 and 2, every other at level 0.
    tr = r.trajectories
    assert len(tr) == 4
    walked = levels_of(tr["config"])[1:]
    zero = dict(hidden_layer_size=0, alpha=0, learning_rate_init=0, batch_size=0)
    assert walked == [zero, dict(zero, alpha=2), dict(zero, alpha=4)]
    (stats,) = list(r.runs["policy_stats"])
    assert stats == {"suggestions": 4, "repeats": 0}


def test_the_packages_content_is_part_of_the_policys_identity(tmp_path):
    pkg = write_package(tmp_path / "hub")
    params = {"hub": str(pkg), "hub_sampler": "WalkSampler"}
    out = tmp_path / "r"
    first = bb.run(experiment("hub-id"), policies={"walk": (OptunaSampler, params)}, out=out,
                   progress=False)
    # (Results read their folder when first asked: keep what this run wrote.)
    first_runs, first_configs = first.runs.copy(), list(first.trajectories["config"])
    # Unchanged: the rerun finds every cell finished.
    again = bb.run(experiment("hub-id"), policies={"walk": (OptunaSampler, params)}, out=out,
                   progress=False)
    assert again.runs.equals(first_runs)
    # An edit inside the package is a changed policy: the finished results are not taken for it.
    write_package(tmp_path / "hub", PACKAGE.replace("self.n * self.step", "self.n * self.step * 3"))
    with pytest.raises(bb.BanditbenchError, match="changed|fingerprint|fresh"):
        bb.run(experiment("hub-id"), policies={"walk": (OptunaSampler, params)}, out=out,
               progress=False)
    edited = bb.run(experiment("hub-id"), policies={"walk": (OptunaSampler, params)}, out=out,
                    progress=False, fresh=True)
    # The edited walk steps three levels at a time: the package as it is now on disk ran, not a
    # module an earlier run imported.
    assert list(edited.trajectories["config"]) != first_configs
    assert levels_of(edited.trajectories["config"])[2]["alpha"] == 3


def test_hub_errors_name_what_to_give(tmp_path):
    pkg = write_package(tmp_path / "hub")
    cases = [
        ({"hub": str(tmp_path / "nowhere")}, "no OptunaHub package folder or installed module"),
        ({"hub": str(pkg), "hub_sampler": "Missing"}, "has no sampler 'Missing'; it exports WalkSampler"),
        ({"hub": str(pkg), "hub_sampler": "NotASampler"}, "NotASampler is not an Optuna sampler"),
        ({"hub_sampler": "WalkSampler"}, "hub_sampler given without hub"),
    ]
    for i, (params, says) in enumerate(cases):
        with pytest.raises(bb.BanditbenchError, match=says):
            bb.run(experiment(f"hub-bad-{i}"), policies={"walk": (OptunaSampler, params)},
                   out=tmp_path / f"b{i}", progress=False)
