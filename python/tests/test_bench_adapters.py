"""`banditbench bench --only adapters` from the wheel's command, on this interpreter: one line per
adapter method, with the library's time per decision and banditbench's share, or a note that the
method's library is not installed here."""
import importlib.util
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def test_bench_adapters_measures_each_installed_library():
    cmd = shutil.which("banditbench")
    if cmd is None:
        pytest.skip("the wheel's banditbench command is not on PATH")
    p = subprocess.run(
        [cmd, "bench", "--only", "adapters", "--adapters-python", sys.executable,
         "--adapter-trainings", "2", "--pool", str(ROOT / "traces" / "sklearn-grid")],
        capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    lines = [l for l in p.stdout.splitlines() if l.startswith("adapters: ")]
    assert len(lines) == 8, p.stdout
    for prefix, lib in (("optuna-", "optuna"), ("syne-tune-", "syne_tune"),
                        ("nevergrad-", "nevergrad"), ("smac-", "smac")):
        mine = [l for l in lines if l.startswith(f"adapters: {prefix}")]
        assert mine, p.stdout
        if importlib.util.find_spec(lib) is None:
            assert all("skipped (its library is not installed)" in l for l in mine), mine
        else:
            assert all("% of the library's time" in l for l in mine), mine
