"""A library that raises mid-run, for every adapter whose library is installed: the cell fails with
the library's traceback in the error, the cell that finished before it is kept, and a rerun into
the same folder runs only the failed cell. (DEHB's adapter shares the bookkeeping of SMAC3's
multi-fidelity facades and runs in a venv of its own.)"""
import importlib.util
import os

import pytest

import banditbench as bb

from conftest import ROOT

POOL = ROOT / "traces" / "sklearn-grid"

# library module -> (adapter module, class, params, the library object's attribute, its method
# asked for each new trial)
ADAPTERS = {
    "optuna": ("optuna", "OptunaSampler", {}, "study", "ask"),
    "syne_tune": ("syne_tune", "SyneTuneScheduler", {"scheduler": "asha"}, "scheduler", "suggest"),
    "nevergrad": ("nevergrad", "NevergradOptimizer", {}, "optimizer", "ask"),
    "smac": ("smac", "SMACFacade", {"facade": "multi-fidelity", "n_trials": 40}, "smac", "ask"),
}
# The cells built, per run. Whether the library breaks is read from the environment: what the
# class's code reads (its attributes, the globals it uses) is part of its identity, and a changed
# class is refused by a rerun into its folder.
CELLS = []
REQUIRE = {"optuna": "OPTUNA", "syne_tune": "SYNE_TUNE", "nevergrad": "NEVERGRAD",
           "smac": "SMAC"}


def installed(lib):
    if os.environ.get(f"BANDITBENCH_REQUIRE_{REQUIRE[lib]}") == "1":
        return True
    return importlib.util.find_spec(lib) is not None


@pytest.mark.parametrize("lib", [l for l in ADAPTERS if installed(l)] or
                         [pytest.param("none", marks=pytest.mark.skip("no library installed"))])
def test_a_library_that_raises_fails_its_cell_and_keeps_the_finished_ones(tmp_path, monkeypatch,
                                                                          lib):
    module, cls_name, params, attr, method = ADAPTERS[lib]
    base = getattr(importlib.import_module(f"banditbench.adapters.{module}"), cls_name)

    class Breaks(base):
        """The adapter, whose library raises at its 4th new trial in repetition 1 while
        BANDITBENCH_TEST_BREAK is set."""

        def __init__(self, cell, **kw):
            super().__init__(cell, **kw)
            CELLS.append(cell.repetition)
            obj = getattr(self, attr)
            f = getattr(obj, method)
            calls = [0]

            def ask(*a, **k):
                calls[0] += 1
                if os.environ.get("BANDITBENCH_TEST_BREAK") and cell.repetition == 1 and calls[0] == 4:
                    raise RuntimeError(f"{lib} broke at its 4th trial")
                return f(*a, **k)

            setattr(obj, method, ask)

    exp = {
        "name": f"breaks-{lib}", "traces": str(POOL), "seed": 2, "repetitions": 2,
        "tasks": {"datasets": ["car"], "runs": [0], "learners": ["mlp"]},
        "world": {"kind": "pool", "per_learner": True, "budget_unit": "units",
                  "budgets": [27 * 8], "workers": 2},
    }
    out = tmp_path / "r"
    monkeypatch.setenv("BANDITBENCH_TEST_BREAK", "1")
    CELLS.clear()
    with pytest.raises(bb.BanditbenchError) as e:
        bb.run(exp, policies={"lib": (Breaks, params)}, out=out, progress=False, threads=1)
    text = str(e.value)
    assert f"RuntimeError: {lib} broke at its 4th trial" in text, text[-3000:]
    assert "Traceback" in text, text[-3000:]
    assert sorted(CELLS) == [0, 1]
    # Fixed, the rerun into the same folder runs the failed cell only.
    monkeypatch.delenv("BANDITBENCH_TEST_BREAK")
    CELLS.clear()
    r = bb.run(exp, policies={"lib": (Breaks, params)}, out=out, progress=False, threads=1)
    assert CELLS == [1]
    assert sorted(r.runs["repetition"]) == [0, 1] and (r.runs["budget_used"] > 0).all()
