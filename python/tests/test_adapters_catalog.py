"""Every method banditbench.adapters.catalog() lists runs a cell of 12 trainings on 2 workers (past
the model-based methods' start-up trials; 4 for Optuna's pruners) on the recorded pool, or fails naming what it needs: a
package the tests do not install (torch, xgboost), a required option, or one worker. Skipped without the four libraries unless
BANDITBENCH_REQUIRE_OPTUNA, _SYNE_TUNE, _NEVERGRAD and _SMAC are set (.ci/run sets them)."""
import os
import subprocess

import pytest

for lib, env in (("optuna", "OPTUNA"), ("syne_tune", "SYNE_TUNE"), ("nevergrad", "NEVERGRAD"),
                 ("smac", "SMAC")):
    if os.environ.get(f"BANDITBENCH_REQUIRE_{env}") != "1":
        pytest.importorskip(lib)

import banditbench as bb  # noqa: E402
from banditbench.adapters import catalog  # noqa: E402
from banditbench.adapters.nevergrad import NevergradOptimizer  # noqa: E402
from banditbench.adapters.optuna import OptunaSampler  # noqa: E402
from banditbench.adapters.smac import SMACFacade  # noqa: E402
from banditbench.adapters.syne_tune import SyneTuneScheduler  # noqa: E402

from conftest import ROOT, installed_command  # noqa: E402

CLASSES = {"optuna": OptunaSampler, "syne-tune": SyneTuneScheduler,
           "nevergrad": NevergradOptimizer, "smac": SMACFacade}
# What a method needs that the test venv leaves out or the cell does not give, as its error names
# it: a package, a required option, or one worker.
NEEDS = {("optuna", "gp"): "torch", ("syne-tune", "bore"): "needs xgboost",
         ("syne-tune", "asha-bore"): "needs xgboost", ("syne-tune", "botorch"): "torch",
         ("optuna", "percentile"): "needs pruner_percentile",
         ("optuna", "threshold"): "Either lower or upper must be specified",
         ("syne-tune", "cqr"): "needs xgboost", ("syne-tune", "asha-cqr"): "needs xgboost"}
ONE_WORKER = "does not run on 2 workers"


def test_the_catalog_lists_the_pinned_versions_installed():
    c = catalog()
    assert set(c["library"]) == set(CLASSES)
    counts = c.groupby("library")["name"].nunique().to_dict()
    assert counts["optuna"] == 15 and counts["syne-tune"] == 10 and counts["nevergrad"] > 500
    assert counts["smac"] == 6
    assert (c["installed"] == c["pinned"]).all(), c[c["installed"] != c["pinned"]]


def rows():
    c = catalog()
    ng = c[c["library"] == "nevergrad"]
    # Nevergrad: every 60th name of its registry (all 542 would take minutes).
    picked = list(ng.iloc[::60].itertuples())
    return [r for r in c[c["library"] != "nevergrad"].itertuples()] + picked


@pytest.mark.parametrize("row", rows(), ids=lambda r: f"{r.library}-{r.parameter}-{r.name}")
def test_every_listed_method_starts_a_cell_or_names_what_it_needs(tmp_path, row):
    exp = {
        "name": "catalog", "traces": str(ROOT / "traces" / "sklearn-grid"), "seed": 5,
        "repetitions": 1, "tasks": {"datasets": ["car"], "runs": [0], "learners": ["mlp"]},
        "world": {"kind": "pool", "per_learner": True, "budget_unit": "units",
                  "budgets": [27 * (4 if row.parameter == "pruner" else 12)], "workers": 2},
    }
    params = {row.parameter: row.name}
    need = NEEDS.get((row.library, row.name))
    try:
        r = bb.run(exp, policies={"m": (CLASSES[row.library], params)}, out=tmp_path / "r",
                   progress=False)
    except bb.BanditbenchError as e:
        if row.library == "nevergrad" and ONE_WORKER in str(e):
            return
        assert need is not None and need in str(e), str(e)[-2000:]
        return
    assert len(r.runs) == 1 and r.runs["budget_used"].iloc[0] > 0


def test_the_policies_command_lists_the_adapters():
    cmd = installed_command()
    if cmd is None:
        pytest.skip("the wheel's banditbench command is neither beside this Python nor on PATH")
    out = subprocess.run([cmd, "policies"], capture_output=True, text=True, check=True).stdout
    listing = out.split("library adapters (", 1)[1]
    for cls in (OptunaSampler, SyneTuneScheduler, NevergradOptimizer, SMACFacade):
        assert f"{cls.__module__}.{cls.__name__}" in listing
    assert "facade: hpo, blackbox, random, algorithm-configuration, multi-fidelity, hyperband" in listing
    assert "(542 in all)" in listing and "banditbench.adapters.dehb.DEHBOptimizer" in listing
    assert "banditbench.adapters.hebo.HEBOOptimizer, HEBO 0.3.6 pinned" in listing
    assert "banditbench.adapters.neps.NePSOptimizer, neural-pipeline-search 0.17.0" in listing
    # A filter keeps the methods it names; another world has no adapters.
    out = subprocess.run([cmd, "policies", "bohb"], capture_output=True, text=True,
                         check=True).stdout
    listing = out.split("library adapters (", 1)[1]
    assert "scheduler: bohb, asha-bore" not in listing and "scheduler: bohb" in listing
    assert "OptunaSampler" not in listing
    out = subprocess.run([cmd, "policies", "--world", "time-sliced"], capture_output=True,
                         text=True, check=True).stdout
    assert "library adapters" not in out
