"""Every adapter on an interpreter without its library: the cell's error names the extra (or, for
DEHB, the requirements file) to install. Runs where the libraries are absent (.ci/run runs it in
the SMPyBandits venv, which has the wheel and none of them); each case is skipped where its
library is installed."""
import importlib
import importlib.util

import pytest

import banditbench as bb

from conftest import ROOT

# library module -> (adapter module, class, what the error must name)
ADAPTERS = {
    "optuna": ("optuna", "OptunaSampler", 'pip install "banditbench-engine[optuna]"'),
    "syne_tune": ("syne_tune", "SyneTuneScheduler", 'pip install "banditbench-engine[syne-tune]"'),
    "nevergrad": ("nevergrad", "NevergradOptimizer", 'pip install "banditbench-engine[nevergrad]"'),
    "smac": ("smac", "SMACFacade", 'pip install "banditbench-engine[smac]"'),
    "dehb": ("dehb", "DEHBOptimizer", "pip install -r python/requirements-dehb.txt"),
    "hebo": ("hebo", "HEBOOptimizer", "pip install -r python/requirements-hebo.txt"),
    "neps": ("neps", "NePSOptimizer", "pip install -r python/requirements-neps.txt"),
}


@pytest.mark.parametrize("lib", list(ADAPTERS))
def test_a_missing_library_names_what_to_install(tmp_path, lib):
    if importlib.util.find_spec(lib) is not None:
        pytest.skip(f"{lib} is installed here")
    module, cls_name, needs = ADAPTERS[lib]
    cls = getattr(importlib.import_module(f"banditbench.adapters.{module}"), cls_name)
    exp = {
        "name": f"missing-{lib}", "traces": str(ROOT / "traces" / "sklearn-grid"), "seed": 1,
        "repetitions": 1, "tasks": {"datasets": ["car"], "runs": [0], "learners": ["mlp"]},
        "world": {"kind": "pool", "per_learner": True, "budget_unit": "units",
                  "budgets": [27], "workers": 1},
    }
    with pytest.raises(bb.BanditbenchError) as e:
        bb.run(exp, policies={"lib": cls}, out=tmp_path / "r", progress=False)
    assert needs in str(e.value), str(e.value)[-2000:]
