"""The package against the real binary: a Python policy replayed, its results read back."""
import subprocess
import sys

import pytest

from banditbench import read_runs, read_trajectories

from conftest import write_experiment


def readme_columns(root, after):
    """The column names of the README's results table that follows the text ``after``."""
    text = (root / "README.md").read_text(encoding="utf-8")
    lines = text[text.index(after):].splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("| column"))
    names = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        names += [n.strip().strip("`") for n in line.split("|")[1].split(",")]
    return names


def test_a_python_policy_runs_and_its_results_read_back(tmp_path, root, banditbench_bin):
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    exp = write_experiment(tmp_path / "py.toml", f"""seed = 3
repetitions = 2
[world]
kind = "pull-count"
budgets = [15]
exhausted = "resample"
[[policies]]
family = "external"
name = "py-ucb1"
command = ["{sys.executable}", "{root / 'python/examples/ucb1.py'}"]
env = {{ PYTHONPATH = "{root / 'python'}" }}
params = {{ c = [1.0, 2.0] }}
[[policies]]
family = "ucb1"
""")
    out = tmp_path / "out"
    subprocess.run([str(banditbench_bin), "run", str(exp), "--out", str(out), "--quiet"], check=True)
    runs = read_runs(str(out))
    assert len(runs) == 2 * 3 * 2  # tasks x policies x repetitions
    py = runs[runs["policy_family"] == "py-ucb1"]
    assert sorted(p["c"] for p in py["params"]) == [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]
    assert all(sum(p.values()) == 15 for p in runs["pulls"])
    assert set(runs["pulls"].iloc[0]) == {"a", "b", "c"}
    traj = read_trajectories(str(out))
    assert len(traj) == 15 * len(runs)
    # The columns the README's results table lists (which tests/schema checks against the
    # schema), so a column added there is expected here too.
    assert list(traj.columns) == readme_columns(root, "`trajectories.parquet` holds the decisions")
    assert (traj["worker"] == 0).all() and (traj["finish"] >= traj["start"]).all()
    assert set(traj["action"]) == {"pull"} and set(traj["learner"]) <= {"a", "b", "c"}
    assert traj["config"].isna().all()
    raw = read_runs(str(out), decode_json=False)
    assert isinstance(raw["params"].iloc[0], str)


def test_a_missing_folder_is_explained(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a banditbench results folder"):
        read_runs(str(tmp_path))


def test_polars_reader_decodes_the_same_columns(tmp_path, root, banditbench_bin):
    pl = pytest.importorskip("polars")
    exp = write_experiment(tmp_path / "pl.toml", """seed = 1
[world]
kind = "pull-count"
budgets = [6]
exhausted = "resample"
[[policies]]
family = "epsilon-greedy"
epsilon = [0.1, 0.2]
""")
    out = tmp_path / "out"
    subprocess.run([str(banditbench_bin), "run", str(exp), "--out", str(out), "--quiet"], check=True)
    runs = read_runs(str(out), backend="polars")
    assert isinstance(runs, pl.DataFrame) and runs.height == 4
    assert sorted(p["epsilon"] for p in runs["params"].to_list()) == [0.1, 0.1, 0.2, 0.2]
