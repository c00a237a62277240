"""Issue #45's third exactness check in CI: Optuna's TPE with constant_liar on 4 workers through
banditbench's adapter against OptunaHub's AsyncOptBenchmarkSimulator, whose trials (made by
scripts/reference/optunahub_async_check.py from the registry's module, its sampling time set to
zero) are kept in scripts/reference/optunahub-async-trials.json, since the registry is not on
PyPI. The adapter's cells are run again here and compared seed by seed with the simulator's
trials in ask order: the common prefix and the rule that parts them must be those the script
recorded (scripts/reference/optunahub-async.csv), and never an unexplained one.
Skipped without Optuna unless BANDITBENCH_REQUIRE_OPTUNA=1."""
import importlib.util
import json
import os

import pytest

if os.environ.get("BANDITBENCH_REQUIRE_OPTUNA") != "1":
    pytest.importorskip("optuna")

import pandas as pd  # noqa: E402

from conftest import ROOT  # noqa: E402

REF = ROOT / "scripts" / "reference"


def check_module():
    import sys

    if str(REF) not in sys.path:  # the script imports its neighbour recorded_task.py
        sys.path.insert(0, str(REF))
    spec = importlib.util.spec_from_file_location(
        "optunahub_async_check", REF / "optunahub_async_check.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_adapter_on_4_workers_asks_what_optunahubs_simulator_asks():
    m = check_module()
    fixture = json.loads((REF / "optunahub-async-trials.json").read_text())
    meta, theirs = fixture["meta"], fixture["trials"]
    recorded = pd.read_csv(REF / "optunahub-async.csv")
    assert meta["optuna"] == "5.0.0" and meta["workers"] == 4
    assert meta["options"] == {"constant_liar": True}
    ours, _ = m.adapter_trials(str(ROOT / meta["pool"]), meta["dataset"], meta["learner"],
                               meta["run"], meta["to"], meta["workers"], meta["budget"],
                               len(theirs), meta["options"], meta["experiment_seed"])
    assert sorted(str(s) for s in ours) == sorted(theirs)
    rows = []
    for seed, trials in ours.items():
        n, why = m.compare(trials, theirs[str(seed)], meta["budget"])
        rows.append({"seed": seed, "common_prefix": n, "parting": why})
        assert why != "unexplained", (seed, n, trials[n], theirs[str(seed)][n])
    got = pd.DataFrame(rows).sort_values("seed").reset_index(drop=True)
    want = recorded[["seed", "common_prefix", "parting"]].sort_values("seed")
    pd.testing.assert_frame_equal(got, want.reset_index(drop=True), check_dtype=False)
    # The check has teeth: some seeds agree on every trial up to the budget, and those that part
    # agree on many trials first.
    assert got["parting"].isin(["identical", "budget"]).sum() >= 2
    assert got["common_prefix"].min() >= 50


def test_compare_names_the_rule_that_parts_two_sequences():
    m = check_module()
    t = [{"number": i, "params": {"x": i}, "value": 0.1 * i, "ask": float(i), "finish": i + 4.0}
         for i in range(6)]
    assert m.compare(t, t, 10.0) == (6, "identical")
    assert m.compare(t[:4], t, 10.0) == (4, "budget")
    # Trials finishing after the budget (5.0 here: trials 1 .. 5) are untold on our side.
    cut = [dict(x, value=None) if x["finish"] > 5.0 else x for x in t]
    assert m.compare(cut, t, 5.0) == (6, "identical")
    assert m.compare(t, t, 5.0)[1] == "unexplained"
    # ... unless a trial repeats a configuration told before the budget: then told its score.
    rep = [dict(x) for x in t]
    rep[5] = dict(rep[5], params={"x": 0}, value=0.0)
    ours = [dict(x, value=None) if x["finish"] > 5.0 else x for x in rep]
    ours[5] = dict(ours[5], value=0.0)
    assert m.compare(ours, rep, 5.0) == (6, "identical")
    # A tie: two trials finished at 4.0 before trial 5's ask.
    tied = [dict(x) for x in t]
    tied[1]["finish"] = 4.0
    tied[0]["finish"] = 4.0
    other = [dict(x) for x in tied]
    other[5] = dict(other[5], params={"x": 0})
    assert m.compare(other, tied, 10.0) == (5, "tie")
    # A duplicate: trial 3 asks for trial 2's configuration while it runs.
    dup = [dict(x) for x in t]
    dup[3] = dict(dup[3], params={"x": 2})
    assert m.compare(t, dup, 10.0) == (3, "duplicate")
    # Otherwise unexplained.
    odd = [dict(x) for x in t]
    odd[2] = dict(odd[2], value=9.0)
    assert m.compare(t, odd, 10.0) == (2, "unexplained")
