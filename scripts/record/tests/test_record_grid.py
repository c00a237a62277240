"""Tests of the pool recorder (record_grid.py): the smoke plan writes a pool that banditbench
validates, and an interrupted recording resumed later equals an uninterrupted one (CPU times
aside)."""

import subprocess
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
RECORD = HERE.parent / "record_grid.py"
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))

import grids  # noqa: E402
from bb_command import banditbench  # noqa: E402

CACHE = HERE.parent / ".cache"
SAME = ["dataset", "run", "config_id", "unit", "score", "test_score", "status"]


def rec(out, *extra):
    return subprocess.run([sys.executable, str(RECORD), str(HERE.parent / "plans" / "smoke-grid.toml"), "--out",
                           str(out), "--cache", str(CACHE), "--quiet", *extra], capture_output=True, text=True)


def curves(out):
    return (pd.concat([pd.read_parquet(p) for p in sorted((out / "curves").glob("*.parquet"))])
            .sort_values(["dataset", "run", "config_id", "unit"]).reset_index(drop=True))




def test_smoke_grid_writes_a_valid_complete_pool(tmp_path):
    out = tmp_path / "pool"
    r = rec(out)
    assert r.returncode == 0, r.stderr
    df = curves(out)
    # 2 learners x 6 configurations x 27 units, one task (glass, run 0); nothing failed.
    assert len(df) == 2 * 6 * grids.UNITS
    assert df.groupby("config_id").unit.max().eq(grids.UNITS).all()
    assert df.score.between(0, 1).all() and (df.cost_s > 0).all()
    manifest = (out / "pool.toml").read_text()
    assert 'format = "banditbench-pool/1.1"' in manifest and "complete = true" in manifest
    # The plan's two objectives, accuracy and the training seconds summed over the units.
    assert 'name = "train_time"' in manifest and "cumulative = true" in manifest
    assert 'neighbours = "grid"' in manifest and "units = 27" in manifest
    v = banditbench("traces", "validate", str(out))
    assert v.returncode == 0, v.stdout + v.stderr
    assert "configuration pool, 1 tasks, 12 configurations, 324 units recorded" in v.stdout
    # --defaults adds each learner's scikit-learn defaults as one more curve (Ex-Def).
    r = rec(out, "--defaults")
    assert r.returncode == 0, r.stderr
    d = pd.read_parquet(out / "defaults.parquet")
    assert sorted(d.learner.unique()) == ["random-forest", "sgd"] and len(d) == 2 * grids.UNITS
    assert d[d.learner == "random-forest"].config.iloc[0] == (
        '{"max_depth": null, "max_features": "sqrt", "max_samples": null, "min_samples_leaf": 1}')
    v = banditbench("traces", "validate", str(out))
    assert v.returncode == 0, v.stdout + v.stderr
    assert "12 configurations (+ 2 learners' defaults), 378 units recorded" in v.stdout
    i = banditbench("traces", "inspect", str(out))
    assert i.returncode == 0, i.stdout + i.stderr
    assert "train_time        minimize   cost_s, summed" in i.stdout, i.stdout
    assert not list((out / ".journal").glob("*.jsonl")), "finished journals are removed"


def test_grid_resume_after_interruption_equals_an_uninterrupted_run(tmp_path):
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert rec(whole).returncode == 0
    r = rec(cut, "--stop-after", "4")
    assert r.returncode == 3, r.stderr
    journals = list((cut / ".journal").glob("*.jsonl"))
    assert journals, "an interrupted part leaves its journal"
    with open(journals[0], "a") as f:
        f.write('{"config_id": 99, "units": [')  # a line cut by a crash is ignored
    assert rec(cut).returncode == 0
    a, b = curves(whole), curves(cut)
    assert len(a) == len(b)
    pd.testing.assert_frame_equal(a[SAME], b[SAME])


def slurm_up():
    try:
        r = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 and "UP" in r.stdout


def test_the_recorder_runs_as_a_slurm_array(tmp_path):
    """scripts/record/record.sbatch on a real Slurm (scripts/ci/slurm.sh up): a 2-task array
    records the smoke plan's two parts into one pool, which banditbench validates as complete."""
    import os
    import time

    import pytest

    if not slurm_up():
        assert not os.environ.get("BANDITBENCH_REQUIRE_SLURM"), "Slurm required but not running"
        pytest.skip("no Slurm cluster (scripts/ci/slurm.sh up starts one)")
    out = tmp_path / "pool"
    r = subprocess.run(
        ["sbatch", "--parsable", "--array=0-1", f"--output={tmp_path}/rec-%a.out",
         str(HERE.parent / "record.sbatch"), str(HERE.parent / "plans" / "smoke-grid.toml"),
         str(out), sys.executable, "--cache", str(CACHE), "--quiet"],
        cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip().split(";")[0]
    t0 = time.time()
    while subprocess.run(["squeue", "-h", "-j", job], capture_output=True, text=True).stdout.strip():
        assert time.time() - t0 < 600, "array still queued after 600 s"
        time.sleep(0.5)
    logs = "".join(p.read_text() for p in sorted(tmp_path.glob("rec-*.out")))
    # Exit codes can lie on a container without cgroups: check the outputs themselves.
    assert len(list((out / "curves").glob("*.parquet"))) == 2, logs
    assert len(curves(out)) == 2 * 6 * grids.UNITS, logs
    assert "complete = true" in (out / "pool.toml").read_text(), logs
    v = banditbench("traces", "validate", str(out))
    assert v.returncode == 0, v.stdout + v.stderr
