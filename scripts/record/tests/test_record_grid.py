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

CACHE = HERE.parent / ".cache"
SAME = ["dataset", "run", "config_id", "unit", "score", "test_score", "status"]


def rec(out, *extra):
    return subprocess.run([sys.executable, str(RECORD), str(HERE.parent / "plans" / "smoke-grid.toml"), "--out",
                           str(out), "--cache", str(CACHE), "--quiet", *extra], capture_output=True, text=True)


def curves(out):
    return (pd.concat([pd.read_parquet(p) for p in sorted((out / "curves").glob("*.parquet"))])
            .sort_values(["dataset", "run", "config_id", "unit"]).reset_index(drop=True))


def banditbench(*args):
    return subprocess.run(["cargo", "run", "--quiet", "--", *args], cwd=REPO, capture_output=True, text=True)


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
    assert 'format = "banditbench-pool/1"' in manifest and "complete = true" in manifest
    assert 'neighbours = "grid"' in manifest and "units = 27" in manifest
    v = banditbench("traces", "validate", str(out))
    assert v.returncode == 0, v.stdout + v.stderr
    assert "configuration pool, 1 tasks, 12 configurations, 324 units recorded" in v.stdout
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
