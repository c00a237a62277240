"""The installed wheels outside a clone: with the engine and the data wheel
(``banditbench-data``, scripts/wheel/build_data_wheel.py) installed, the bundled experiments and
trace sets are found from any folder, by name, through Python and the ``banditbench`` command.
Each test runs in an empty temporary folder."""
import importlib.util
import os
import subprocess
import sys

import pytest

try:
    import banditbench._engine  # noqa: F401
except ImportError as e:  # pragma: no cover - the source tree without a built engine
    if os.environ.get("BANDITBENCH_REQUIRE_ENGINE") == "1":
        raise
    pytest.skip(f"the engine is not built (pip install .): {e}", allow_module_level=True)

if importlib.util.find_spec("banditbench_data") is None:  # pragma: no cover
    if os.environ.get("BANDITBENCH_REQUIRE_DATA") == "1":
        raise RuntimeError("banditbench-data is not installed (scripts/wheel/build_data_wheel.py)")
    pytest.skip("banditbench-data is not installed", allow_module_level=True)

import banditbench as bb
from conftest import installed_command  # noqa: E402


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_data_is_the_installed_wheel_not_a_clone(elsewhere):
    import banditbench_data

    assert os.environ["BANDITBENCH_DATA"] == banditbench_data.ROOT
    assert not (elsewhere / "traces").exists()
    sets = bb.trace_sets()
    assert {"lcdb", "sklearn-grid", "hpobench-mlp"} <= set(sets["folder"]), sets


def test_run_quickstart_by_name_from_any_folder(elsewhere):
    r = bb.run("quickstart", out=elsewhere / "q", progress=False)
    assert len(r.runs) == 43560
    assert set(r.runs["trace_set"]) == {"lcdb"}
    # The same by the path it has in a clone.
    again = bb.run("experiments/quickstart.toml", out=elsewhere / "q", progress=False)
    assert again.runs.equals(r.runs)


def test_a_dict_finds_bundled_traces_and_its_errors_name_the_dict(elsewhere):
    spec = {
        "name": "anywhere",
        "seed": 1,
        "traces": "traces/lcdb",
        "tasks": {"max_tasks": 2},
        "world": {"kind": "time-sliced", "budgets": [0.05], "budget_unit": "task", "slice": 0.002},
        "policies": [{"family": "ucb1"}],
    }
    r = bb.run(spec, out=elsewhere / "d", progress=False)
    assert len(r.runs) == 2
    bad = dict(spec, world=dict(spec["world"], kind="no-such-world"))
    with pytest.raises(bb.BanditbenchError) as e:
        bb.run(bad, out=elsewhere / "bad", progress=False)
    text = str(e.value)
    assert "the experiment dict 'anywhere'" in text and "banditbench-" not in text, text


def test_the_command_finds_the_bundled_data_from_any_folder(elsewhere):
    exe = installed_command()
    if exe is None:
        if os.environ.get("BANDITBENCH_REQUIRE_DATA") == "1":
            pytest.fail("the banditbench command of the wheel is neither beside this Python nor on PATH")
        pytest.skip("the wheel's banditbench command is neither beside this Python nor on PATH")
    env = dict(os.environ)
    env.pop("BANDITBENCH_DATA", None)  # the command finds the data wheel on its own
    out = subprocess.run([exe, "traces", "list"], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert out.returncode == 0 and "lcdb" in out.stdout, out.stderr
    out = subprocess.run(
        [exe, "run", "quickstart", "--out", "q", "--quiet"], cwd=elsewhere, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert (elsewhere / "q" / "runs.parquet").is_file()
    missing = subprocess.run([exe, "run", "no-such-experiment"], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert missing.returncode == 1 and "the bundled experiments are" in missing.stderr and "quickstart" in missing.stderr


def test_one_version_string():
    # Cargo.toml's version is the crate's, the engine's and the installed wheel's.
    import re
    from pathlib import Path

    cargo = (Path(__file__).resolve().parents[2] / "Cargo.toml").read_text()
    want = re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)
    assert bb.__version__ == want
    assert bb._engine.__version__ == want
