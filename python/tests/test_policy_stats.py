"""A policy's own counts for its cell (``stats()``) land in runs.parquet's ``policy_stats``, in
process and through the protocol, and stats that are not a JSON object fail the cell with a
message naming them (the finished cells kept)."""
import sys

import pytest

import banditbench as bb

from conftest import ROOT

pytest.importorskip("pandas")

FIXTURE = ROOT / "tests" / "fixtures" / "tiny"
SCRIPT = '''
import sys
from banditbench import Policy, serve


class Counting(Policy):
    def __init__(self, cell, answer="counts"):
        super().__init__(cell)
        self.answer, self.pulls = answer, 0

    def decide(self, view):
        self.pulls += 1
        return self.pulls % view.n_arms

    def stats(self):
        if self.answer == "raise":
            raise RuntimeError("no counts today")
        if self.answer == "number":
            return 3
        if self.answer == "none":
            return None
        return {"pulls": self.pulls, "zeta": [1, 2], "alpha": "first"}


if __name__ == "__main__":
    serve(Counting)
'''


def experiment(name, answer, route, script):
    policy = {"family": "external", "name": "counting", "params": {"answer": answer}}
    if route == "protocol":
        policy["command"] = [sys.executable, str(script)]
        policy["env"] = {"PYTHONPATH": str(ROOT / "python")}
    return {"name": name, "traces": str(FIXTURE), "seed": 1, "repetitions": 2,
            "world": {"kind": "pull-count", "budgets": [6], "exhausted": "resample"},
            "policies": [policy, {"family": "round-robin"}]}


def load(script):
    scope = {"__name__": "counting"}
    exec(compile(script.read_text(), str(script), "exec"), scope)
    return scope["Counting"]


@pytest.mark.parametrize("route", ["in-process", "protocol"])
def test_stats_land_in_runs_with_sorted_keys(tmp_path, route):
    script = tmp_path / "counting.py"
    script.write_text(SCRIPT)
    exp = experiment("stats", "counts", route, script)
    policies = None
    if route == "in-process":
        exp["policies"] = exp["policies"][1:]
        policies = {"counting": (load(script), {"answer": "counts"})}
    r = bb.run(exp, policies=policies, out=tmp_path / "r", progress=False)
    runs = r.runs
    mine = runs[runs["policy_family"] == "counting"]
    assert len(mine) == 2 * 2  # two tasks x two repetitions
    # Six pulls per cell: decide was asked six times.
    assert all(s == {"alpha": "first", "pulls": 6, "zeta": [1, 2]} for s in mine["policy_stats"])
    # Built-in policies keep none: null.
    assert runs[runs["policy_family"] == "round-robin"]["policy_stats"].isna().all()
    raw = bb.read_runs(str(tmp_path / "r"), decode_json=False)
    text = raw[raw["policy_family"] == "counting"]["policy_stats"].iloc[0]
    assert text == '{"alpha":"first","pulls":6,"zeta":[1,2]}'


@pytest.mark.parametrize("route", ["in-process", "protocol"])
@pytest.mark.parametrize("answer,says", [
    ("number", "stats must be a JSON object"),
    ("raise", "no counts today"),
])
def test_bad_stats_fail_the_cell_with_a_message(tmp_path, route, answer, says):
    script = tmp_path / "counting.py"
    script.write_text(SCRIPT)
    exp = experiment("bad-stats", answer, route, script)
    policies = None
    if route == "in-process":
        exp["policies"] = exp["policies"][1:]
        policies = {"counting": (load(script), {"answer": answer})}
    with pytest.raises(bb.BanditbenchError, match=says):
        bb.run(exp, policies=policies, out=tmp_path / "r", progress=False)
    # `None` is no stats at all.
    exp = experiment("none-stats", "none", route, script)
    if route == "in-process":
        exp["policies"] = exp["policies"][1:]
        policies = {"counting": (load(script), {"answer": "none"})}
    r = bb.run(exp, policies=policies, out=tmp_path / "n", progress=False)
    assert r.runs["policy_stats"].isna().all()
