"""`banditbench bench --only adapters` from the wheel's command, on this interpreter: one line per
adapter method, with the library's time per decision and banditbench's share, or a note that the
method's library is not installed here."""
import importlib.util
import subprocess
import sys

import pytest

from conftest import ROOT, installed_command


def test_bench_adapters_measures_each_installed_library():
    cmd = installed_command()
    if cmd is None:
        pytest.skip("the wheel's banditbench command is neither beside this Python nor on PATH")
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


def test_bench_adapters_beside_optunahubs_simulator():
    # OptunaHub's simulator is not on PyPI: this runs where its module file is given
    # (BANDITBENCH_OPTUNAHUB_SIMULATOR, the file scripts/reference/optunahub_async_check.py
    # says how to take from the registry), as `bench --only adapters --optunahub-simulator`.
    import os

    simulator = os.environ.get("BANDITBENCH_OPTUNAHUB_SIMULATOR")
    cmd = installed_command()
    if simulator is None or cmd is None or importlib.util.find_spec("optuna") is None:
        pytest.skip("needs BANDITBENCH_OPTUNAHUB_SIMULATOR, the banditbench command and Optuna")
    p = subprocess.run(
        [cmd, "bench", "--only", "adapters", "--adapters-python", sys.executable,
         "--adapter-trainings", "2", "--pool", str(ROOT / "traces" / "sklearn-grid"),
         "--optunahub-simulator", simulator, "--optunahub-trials", "300"],
        capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    line = [l for l in p.stdout.splitlines() if "AsyncOptBenchmarkSimulator" in l]
    assert len(line) == 1, p.stdout
    assert "300 random-search trials" in line[0] and "(300 trials)" in line[0], line[0]
    # A file that is not the pinned module is refused, naming it.
    bad = subprocess.run(
        [cmd, "bench", "--only", "adapters", "--adapters-python", sys.executable,
         "--adapter-trainings", "2", "--pool", str(ROOT / "traces" / "sklearn-grid"),
         "--optunahub-simulator", __file__,
         "--optunahub-trials", "10"], capture_output=True, text=True)
    assert bad.returncode != 0 and "is not the pinned module's" in bad.stderr, bad.stderr[-2000:]
