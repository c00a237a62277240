"""`banditbench reproduce parallel-samplers` end to end, from the wheel's command on this
interpreter's libraries: the bundled experiment files trimmed to one dataset each (two repetitions, so that
each run's report has two units) and a small budget, without the methods whose libraries CI does not install (Optuna's GP needs
torch, Syne Tune's BORE xgboost, DEHB a venv of its own). Checks that the study runs at 1, 4 and
16 workers, answers its two questions with the families it was given (naming the methods left
out), writes its leaderboard, curves and figures, and that a second run resumes every cell and
writes the same tables."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, installed_command

LEFT_OUT = ("optuna-gp", "st-bore", "dehb")
KEPT = ("asha", "bohb", "tpe", "optuna-tpe", "optuna-tpe-no-liar", "optuna-cmaes",
        "optuna-random", "smac-hpo", "st-asha", "st-bohb")


def trimmed(text, dataset, budget):
    head, *blocks = text.split("\n[[policies]]\n")
    blocks = [b for b in blocks if not any(f'name = "{n}"' in b for n in LEFT_OUT)]
    head = re.sub(r"budgets = \[\d+\]", f"budgets = [{budget}]", head)
    if "[tasks]\n" in head:
        head = head.replace("[tasks]\n", f'[tasks]\ndatasets = ["{dataset}"]\n')
    else:
        head = head.replace("[world]\n", f'[tasks]\ndatasets = ["{dataset}"]\n\n[world]\n')
    return "\n[[policies]]\n".join([head, *blocks])


def need_libraries():
    import importlib.util

    missing = [m for m in ("optuna", "smac", "syne_tune", "cmaes")
               if importlib.util.find_spec(m) is None]
    if missing:
        if os.environ.get("BANDITBENCH_REQUIRE_SMAC") == "1":
            pytest.fail(f"not installed: {', '.join(missing)}")
        pytest.skip(f"not installed: {', '.join(missing)}")


def test_the_study_runs_answers_its_two_questions_and_resumes(tmp_path):
    need_libraries()
    cmd = installed_command()
    if cmd is None:
        pytest.skip("the wheel's banditbench command is neither beside this Python nor on PATH")
    (tmp_path / "experiments").mkdir()
    os.symlink(ROOT / "traces", tmp_path / "traces")
    for file, dataset, budget in (("parallel-samplers-sklearn-grid.toml", "car", 2),
                                  ("parallel-samplers-hpobench.toml", "vehicle", 200)):
        text = (ROOT / "experiments" / file).read_text()
        (tmp_path / "experiments" / file).write_text(trimmed(text, dataset, budget))

    def reproduce():
        p = subprocess.run([cmd, "reproduce", "parallel-samplers", "--python", sys.executable,
                            "--quiet"], cwd=tmp_path, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr[-4000:]
        return p

    reproduce()
    out = tmp_path / "results" / "parallel-samplers"
    verdicts = (out / "verdicts.md").read_text()
    assert "## 1. Does `constant_liar` help Optuna's TPE at 16 workers?" in verdicts
    assert "## 2. Does any library's model-based method beat banditbench's ASHA" in verdicts
    # Two units (one dataset per experiment): no test can decide, and the verdicts say so.
    assert verdicts.count("**cannot be decided") == 2, verdicts
    assert "absent from these results, so not in the family: optuna-gp" in verdicts
    assert "st-bore" in verdicts
    # Question 2's family is ASHA against the three model-based methods that ran.
    q2 = verdicts.split("## 2.")[1]
    rows = [l for l in q2.splitlines() if l.startswith("| ") and not l.startswith("| asha against")]
    assert sorted(l.split(" | ")[0][2:] for l in rows) == ["optuna-tpe", "smac-hpo", "st-bohb"]

    board = (out / "leaderboard.csv").read_text().splitlines()
    assert board[0] == ("workers,policy,units,mean_final_normalised_regret,ci_low,ci_high,"
                        "mean_rank")
    seen = {(int(l.split(",")[0]), l.split(",")[1]) for l in board[1:]}
    assert seen == {(k, p) for k in (1, 4, 16) for p in KEPT}
    for l in board[1:]:
        regret, rank = float(l.split(",")[3]), float(l.split(",")[6])
        assert 0.0 <= regret <= 1.0 and 1.0 <= rank <= len(KEPT)
    curves = (out / "regret.csv").read_text().splitlines()
    assert len(curves) == 1 + 3 * len(KEPT) * 20
    for k in (1, 4, 16):
        assert (out / f"anytime-k{k}.png").stat().st_size > 10_000
        run_as = (out / "experiments" / f"parallel-samplers-hpobench-k{k}.toml").read_text()
        assert f"workers = {k}" in run_as and sys.executable in run_as
    # More workers, the same wall-clock budget: at least as much training done by ASHA.
    import pandas as pd

    units = {}
    for k in (1, 16):
        runs = pd.read_parquet(tmp_path / "results" / f"parallel-samplers-sklearn-grid-k{k}"
                               / "runs.parquet")
        units[k] = runs.loc[runs["policy_family"] == "asha", "units_trained"].sum()
    assert units[16] > 4 * units[1], units

    # A second run resumes: every cell is finished, and the tables are the same.
    before = {f: (out / f).read_text() for f in ("leaderboard.csv", "regret.csv", "verdicts.md")}
    reproduce()
    assert before == {f: (out / f).read_text() for f in before}
