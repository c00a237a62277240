"""`banditbench reproduce mo-tpe --python PY` end to end, from the wheel's command with this
interpreter's Optuna: the four bundled experiment files trimmed to 20 evaluations and 2
repetitions. Checks that Optuna's MO-TPE and NSGA-II run beside banditbench's, that their
family of two hypotheses is written with both rows, that their rows join final.csv on all 7
datasets, that the claim's family stays banditbench's four policies, and that without --python
the same command runs banditbench's policies alone and says how to add Optuna's."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT, installed_command

FILES = ("mo-tpe-nasbench201.toml", "mo-tpe-fcnet.toml",
         "mo-tpe-nasbench201-optuna.toml", "mo-tpe-fcnet-optuna.toml")


def trimmed(text):
    text = re.sub(r"budgets = \[\d+\]", "budgets = [20]", text)
    return re.sub(r"repetitions = \d+", "repetitions = 2", text)


def reproduce(cwd, *extra):
    cmd = installed_command()
    if cmd is None:
        pytest.skip("the wheel's banditbench command is neither beside this Python nor on PATH")
    p = subprocess.run([cmd, "reproduce", "mo-tpe", "--quiet", *extra], cwd=cwd,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-4000:]
    return cwd / "results" / "mo-tpe"


def setup(tmp_path):
    (tmp_path / "experiments").mkdir()
    os.symlink(ROOT / "traces", tmp_path / "traces")
    for f in FILES:
        (tmp_path / "experiments" / f).write_text(trimmed((ROOT / "experiments" / f).read_text()))


def test_optunas_mo_tpe_and_nsga2_run_beside_ours_with_python(tmp_path):
    if importlib.util.find_spec("optuna") is None:
        pytest.skip("optuna is not installed (python/requirements-optuna.txt)")
    setup(tmp_path)
    out = reproduce(tmp_path, "--python", sys.executable)
    beside = (out / "beside-optuna.md").read_text()
    rows = [l for l in beside.splitlines() if l.startswith("| MO-TPE |") or
            l.startswith("| NSGA-II |")]
    assert len(rows) == 2, beside
    assert "over the 7 datasets" in beside
    final = (out / "final.csv").read_text().splitlines()
    for policy in ("optuna-mo-tpe", "optuna-nsga2", "mo-tpe", "nsga2", "parego",
                   "random-search"):
        assert sum(f",{policy}," in l for l in final) == 7, (policy, final)
    claim = (out / "claim.md").read_text()
    assert "optuna" not in claim.lower()
    assert "banditbench's implementations beside Optuna 5.0.0's" in (out / "README.md").read_text()


def test_without_python_only_banditbenchs_policies_run(tmp_path):
    setup(tmp_path)
    out = reproduce(tmp_path)
    assert not (out / "beside-optuna.md").exists()
    assert "give `--python PY`" in (out / "README.md").read_text()
    assert not any("optuna" in l for l in (out / "final.csv").read_text().splitlines())
