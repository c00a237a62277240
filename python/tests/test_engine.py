"""The wheel's engine in-process: runs from a path or a dict, Python policies in-process (the same
trajectories as through the protocol), results and reports as DataFrames, precise errors."""
import os
import subprocess
import sys

import pytest

try:
    import banditbench._engine  # noqa: F401
except ImportError as e:
    if os.environ.get("BANDITBENCH_REQUIRE_ENGINE") == "1":
        raise
    pytest.skip(f"the engine is not built (pip install .): {e}", allow_module_level=True)

import banditbench
from banditbench import Policy, Stop

from conftest import ROOT, greedy_policy, installed_command, write_experiment

UCB1_FILE = ROOT / "python" / "examples" / "ucb1.py"


def load_ucb1():
    from banditbench._hosted import load_class

    return load_class(f"{UCB1_FILE}:UCB1")


BODY = """seed = 3
repetitions = 2
[world]
kind = "pull-count"
budgets = [15]
exhausted = "resample"
"""


def test_in_process_ucb1_gives_the_protocol_s_trajectories(tmp_path):
    exp = write_experiment(tmp_path / "both.toml", BODY + f"""
[[policies]]
family = "external"
name = "ucb"
command = ["{sys.executable}", "{UCB1_FILE}"]
env = {{ PYTHONPATH = "{ROOT / 'python'}" }}
""")
    by_process = banditbench.run(exp, out=tmp_path / "process", progress=False)
    in_process = banditbench.run(
        {"name": "both", "traces": str(ROOT / "tests/fixtures/tiny"), "seed": 3, "repetitions": 2,
         "world": {"kind": "pull-count", "budgets": [15], "exhausted": "resample"}},
        policies={"ucb": load_ucb1()}, out=tmp_path / "inproc", progress=False)
    a = by_process.trajectories
    b = in_process.trajectories
    assert len(a) == 15 * 2 * 2 and len(a) == len(b)
    for col in ["cell", "step", "arm", "reward", "incumbent", "time"]:
        assert a[col].tolist() == b[col].tolist(), col
    r = in_process.ranking
    assert list(r.columns) == ["policy", "mean_rank", "mean_score", "units"]
    assert r["policy"].tolist() == ["ucb"]


class Fails(Policy):
    def decide(self, view):
        if view.step == 3:
            raise ValueError("no arm today")
        return 0


class TooFar(Policy):
    def decide(self, view):
        return 7


class WaitsForALaterCell(Policy):
    """Cell 0's first decision waits until cell 3 has begun (60 s at most, then it fails); every
    cell plays arm 0."""

    begun = set()

    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        self.index = cell.cell
        WaitsForALaterCell.begun.add(cell.cell)

    def decide(self, view):
        if self.index == 0 and view.step == 0:
            import time

            deadline = time.monotonic() + 60
            while 3 not in WaitsForALaterCell.begun:
                if time.monotonic() > deadline:
                    raise RuntimeError("cell 3 never began while cell 0 ran")
                time.sleep(0.01)
        return 0


def test_a_long_cell_does_not_hold_the_other_threads_back(tmp_path):
    # On 2 threads, cell 0 cannot end before cell 3 begins: the other thread must go on past
    # cells 1 and 2 while cell 0 runs. Threads that replayed cells in lockstep chunks (cells 0
    # and 1, then 2 and 3) waited for cell 0, which then failed.
    WaitsForALaterCell.begun.clear()
    r = banditbench.run(
        {"name": "long-cell", "traces": str(ROOT / "tests/fixtures/tiny"), "seed": 3,
         "repetitions": 6, "world": {"kind": "pull-count", "budgets": [15],
                                     "exhausted": "resample"}},
        policies={"waits": WaitsForALaterCell}, out=tmp_path / "r", threads=2, progress=False)
    assert len(r.runs) >= 6 and r.runs["cell"].is_unique
    assert {0, 1, 2, 3} <= WaitsForALaterCell.begun


def test_a_failing_python_policy_raises_with_the_cell_and_traceback(tmp_path):
    exp = write_experiment(tmp_path / "f.toml", BODY)
    with pytest.raises(banditbench.BanditbenchError) as e:
        banditbench.run(exp, policies={"fails": Fails}, out=tmp_path / "o", progress=False)
    text = str(e.value)
    assert "python policy fails failed in cell" in text, text
    assert "ValueError: no arm today" in text and "decide raised" in text, text
    with pytest.raises(banditbench.BanditbenchError, match="it chose arm 7, but the cell has 3 arms"):
        banditbench.run(exp, policies=[TooFar], out=tmp_path / "o2", progress=False)


def test_bad_input_is_a_precise_python_exception(tmp_path):
    exp = write_experiment(tmp_path / "bad.toml", BODY + '[[policies]]\nfamily = "ucb9"\n')
    with pytest.raises(banditbench.BanditbenchError, match="ucb9"):
        banditbench.run(exp, out=tmp_path / "o", progress=False)
    exp = write_experiment(tmp_path / "cls.toml", BODY + '[[policies]]\nfamily = "python"\nname = "x"\n')
    with pytest.raises(banditbench.BanditbenchError, match="no class is registered under its name"):
        banditbench.run(exp, out=tmp_path / "o3", progress=False)


def test_a_class_named_in_the_experiment_file_runs_from_the_command(tmp_path):
    exp = write_experiment(tmp_path / "cmd.toml", BODY + f"""
[[policies]]
family = "python"
name = "file-ucb"
class = "{UCB1_FILE}:UCB1"
params = {{ c = [1.0, 2.0] }}
""")
    cmd = installed_command()
    assert cmd is not None, "the wheel installs a banditbench command"
    p = subprocess.run([cmd, "run", str(exp), "--out", str(tmp_path / "out"), "--quiet"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "file-ucb(c=1)" in p.stdout and "file-ucb(c=2)" in p.stdout, p.stdout
    runs = banditbench.Results(tmp_path / "out").runs
    assert len(runs) == 2 * 2 * 2


def test_report_tables_are_dataframes_and_figures_exist(tmp_path):
    exp = write_experiment(tmp_path / "rep.toml", BODY + '[[policies]]\nfamily = "ucb1"\n'
                           '[[policies]]\nfamily = "round-robin"\n[[policies]]\nfamily = "random"\n')
    res = banditbench.run(exp, out=tmp_path / "r", progress=False)
    rep = res.report()
    assert set(rep.tables["summary"]["policy"]) == {
        "ucb1(tie_break=first, log_t=pulls)", "round-robin", "random(initial_pulls=0)"}
    assert "mean_rank" in rep.figures and os.path.isfile(rep.figures["mean_rank"])
    assert "friedman" in rep.tests
    assert "<img src='data:image/png;base64," in rep._repr_html_()


def test_policies_and_trace_sets_are_dataframes():
    p = banditbench.policies()
    assert {"ucb1", "asha", "hyperband", "tpe"} <= set(p["name"])
    ucb = p[p["name"] == "ucb1"].iloc[0]
    assert "Auer" in ucb["source"]
    # The worlds where each runs on several workers: UCB1 everywhere it runs, HAMLET nowhere.
    assert ucb["workers"] == ucb["worlds"]
    assert p[p["name"] == "hamlet-eps"].iloc[0]["workers"] == ""
    t = banditbench.trace_sets(ROOT / "traces")
    assert {"lcdb", "sklearn-grid"} <= set(t["folder"])


def test_an_interrupt_stops_the_run_keeping_finished_cells_and_a_rerun_resumes(tmp_path):
    import signal

    # Python's own Ctrl-C handler, whatever this process inherited: a shell starts background
    # jobs with SIGINT ignored, and then `interrupt_main` does nothing.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _interrupt_and_resume(tmp_path)
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupt_and_resume(tmp_path):
    import _thread
    import threading

    exp = {"name": "long", "traces": str(ROOT / "traces/lcdb"), "seed": 5, "repetitions": 60,
           "world": {"kind": "time-sliced", "budget_unit": "task", "budgets": [0.25], "slice": 0.002},
           "policies": [{"family": "ucb1"}, {"family": "round-robin"}], "trajectories": "none"}
    # Early (the interrupt lands while the engine prepares or in a Python callback such as a
    # warning, before any cell) and late (in the run loop).
    for delay in (0.05, 0.5):
        out = tmp_path / f"long-{delay}"
        timer = threading.Timer(delay, _thread.interrupt_main)
        timer.start()
        with pytest.raises(KeyboardInterrupt, match="finished cells of this run are kept"):
            banditbench.run(exp, out=out, threads=1, progress=False)
        timer.cancel()
    done_before = len(banditbench.Results(out).runs)
    assert 0 < done_before < 440 * 2 * 60
    res = banditbench.run(exp, out=out, threads=1, progress=False)
    runs = res.runs
    assert len(runs) == 440 * 2 * 60 and runs["cell"].is_unique


def test_other_tools_runs_import_and_rank_together(tmp_path):
    ex = ROOT / "examples" / "other-tools"
    st = banditbench.import_runs("syne-tune", ex / "syne-tune", tmp_path / "st", budget=60)
    op = banditbench.import_runs("optuna", [ex / "optuna" / "journal.log"], tmp_path / "op",
                                 names="{policy}.{dataset}.{seed}", clock="attr:cost_s", budget=60)
    assert set(st.runs["policy"]) == {"syne-tune:asha", "syne-tune:random-search"}
    assert len(op.runs) == 24 and (op.runs["budget_unit"] == "seconds").all()
    rep = banditbench.report([st, op], out=tmp_path / "joint")
    assert len(rep.tables["summary"]) == 4
    assert rep.tests["n_units"] == 6
    assert "anytime" in rep.figures
    with pytest.raises(ValueError, match="needs out"):
        banditbench.report([st, op])
    with pytest.raises(banditbench.BanditbenchError):
        banditbench.import_runs("optuna", [ex / "optuna" / "journal.log"], tmp_path / "x",
                                names="{algo}-{seed}")


def test_carps_runs_with_one_minus_and_a_blackbox_into_a_pool(tmp_path):
    ex = ROOT / "examples" / "other-tools" / "carps" / "runs"
    cp = banditbench.import_runs("carps", ex, tmp_path / "cp", clock="seconds", budget=60,
                                 one_minus=True)
    assert set(cp.runs["policy"]) == {"carps:Optuna-TPE", "carps:RandomSearch"}
    assert (cp.runs["direction"] == "maximize").all() and (cp.runs["best_score"] > 0.5).all()
    bb = ROOT / "tests" / "fixtures" / "import" / "blackbox" / "sklearn-grid-hgb-phoneme"
    pool = banditbench.import_runs("blackbox", bb, tmp_path / "pool", metric="score",
                                   test_metric="test_score", cost="cost_s")
    assert pool == tmp_path / "pool" and (pool / "pool.toml").is_file()
    assert len(list((pool / "curves").glob("*.parquet"))) == 1


WHOLE_FILE = ROOT / "python" / "examples" / "whole_configurations.py"


def load_whole():
    from banditbench._hosted import load_class

    return load_class(f"{WHOLE_FILE}:WholeConfigurations")


def test_training_to_a_unit_in_one_action_from_python(tmp_path):
    exp = {"name": "whole", "traces": str(ROOT / "traces/sklearn-grid"), "seed": 1, "repetitions": 2,
           "tasks": {"datasets": ["car"], "runs": [0], "learners": ["mlp"]},
           "world": {"kind": "pool", "per_learner": True, "budget_unit": "units", "budgets": [200]}}
    r = banditbench.run(exp, policies={"whole": load_whole()}, out=tmp_path / "whole",
                        progress=False)
    t = r.trajectories
    runs = r.runs
    # Every configuration reaches unit 27 in one or two steps: one Draw(to=27), or a Draw() and a
    # Train(arm, to=27); the budget cuts only each cell's last.
    assert set(t["fidelity"]) <= set(range(1, 28))
    assert (t["fidelity"] == 27).sum() >= runs["configs_drawn"].sum() - 2
    assert runs["units_trained"].tolist() == [200, 200]
    assert len(t) < 200


def test_report_and_import_failures_raise_with_their_message(tmp_path, capfd):
    # The message travels in the exception (a notebook may never show stderr), for the
    # command's own checks, clap's refusals and the importers' alike.
    missing = tmp_path / "no-such-results"
    with pytest.raises(banditbench.BanditbenchError, match=str(missing)):
        banditbench.report(missing)
    with pytest.raises(banditbench.BanditbenchError, match="unknown field `no_such_flag`"):
        banditbench.report(missing, no_such_flag=1)
    with pytest.raises(banditbench.BanditbenchError, match="metadata.json"):
        banditbench.import_runs("syne-tune", tmp_path, out=tmp_path / "imported")
    captured = capfd.readouterr()
    assert "error:" not in captured.err, captured.err


def test_in_process_actions_are_decided_by_isinstance_not_by_name(tmp_path):
    # A class of one's own that happens to be named Draw is not an action; a subclass of the
    # protocol's Draw with another name is one (as the protocol's encoder decides).
    class Draw:  # a class of its own that happens to share the name
        pass

    class FreshDraw(banditbench.Draw):
        pass

    class Named(Policy):
        def decide(self, view):
            return Draw()

    class Subclassed(Policy):
        def decide(self, view):
            return FreshDraw() if view.pool["undrawn"] > 0 else Stop()

    exp = {"name": "isinstance", "traces": str(ROOT / "traces/sklearn-grid"), "seed": 1,
           "repetitions": 1, "tasks": {"datasets": ["car"], "runs": [0], "learners": ["mlp"]},
           "world": {"kind": "pool", "per_learner": True, "budget_unit": "units", "budgets": [5]}}
    with pytest.raises(banditbench.BanditbenchError, match="decide returned .*Draw object"):
        banditbench.run(exp, policies={"named": Named}, out=tmp_path / "named", progress=False)
    r = banditbench.run(exp, policies={"sub": Subclassed}, out=tmp_path / "sub", progress=False)
    assert r.runs["configs_drawn"].tolist() == [5]


def test_training_to_a_unit_through_the_protocol_matches_in_process(tmp_path):
    # The same rule through the JSON protocol ("to" on pull and draw) and in-process.
    world = {"kind": "pool", "per_learner": True, "budget_unit": "units", "budgets": [200]}
    base = {"traces": str(ROOT / "traces/sklearn-grid"), "seed": 1, "repetitions": 2,
            "tasks": {"datasets": ["car"], "runs": [0], "learners": ["mlp"]}, "world": world}
    by_process = banditbench.run(
        dict(base, name="whole", policies=[{
            "family": "external", "name": "whole", "command": [sys.executable, str(WHOLE_FILE)],
            "env": {"PYTHONPATH": str(ROOT / "python")}}]),
        out=tmp_path / "process", progress=False)
    in_process = banditbench.run(dict(base, name="whole"), policies={"whole": load_whole()},
                                 out=tmp_path / "inproc", progress=False)
    a, b = by_process.trajectories, in_process.trajectories
    assert len(a) == len(b) and len(a) < 200
    for col in ["cell", "step", "action", "config", "fidelity", "reward", "incumbent", "time"]:
        assert a[col].tolist() == b[col].tolist(), col
    assert (a["fidelity"] == 27).sum() >= 10


def _same_folder(a, b, skip=(".pdf", ".parquet", ".lock")):
    """Every file of two folders equal byte for byte (the figures' PDFs order their objects
    differently run to run; parquet is compared as tables; the lock's timing line aside)."""
    import filecmp

    import pandas as pd

    names = lambda d: sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file())
    assert names(a) == names(b)
    for n in names(a):
        if n.endswith(".parquet"):
            pd.testing.assert_frame_equal(pd.read_parquet(a / n), pd.read_parquet(b / n))
        elif n.endswith(".toml"):
            keep = lambda p: [l for l in p.read_text().splitlines()
                              if not l.startswith(("import_seconds", "program"))]
            assert keep(a / n) == keep(b / n), n
        elif not n.endswith(skip):
            assert filecmp.cmp(a / n, b / n, shallow=False), n


def test_report_and_import_by_keyword_equal_the_command_line(tmp_path):
    # Python passes options by name to the library the command line converts its flags into;
    # both routes write the same folders.
    engine = banditbench.api._engine()
    journal = ROOT / "examples" / "other-tools" / "optuna" / "journal.log"
    kw = dict(names="{policy}.{dataset}.{seed}", clock="attr:cost_s", budget=60, prefix="o/")
    banditbench.import_runs("optuna", journal, tmp_path / "py" / "op", **kw)
    assert engine.cli(["import", "optuna", str(journal), "--out", str(tmp_path / "cli" / "op"),
                       "--names", kw["names"], "--clock", kw["clock"], "--budget", "60",
                       "--prefix", "o/"]) == 0
    _same_folder(tmp_path / "py" / "op", tmp_path / "cli" / "op")
    labels = tmp_path / "labels.toml"
    labels.write_text('"o/tpe" = "TPE (Optuna)"\n')
    folder = tmp_path / "py" / "op"
    banditbench.report(folder, out=tmp_path / "py" / "rep", pairs="all", alpha=0.1,
                       normalize="range", width="column", unit="task", labels=labels,
                       leaderboard="on", no_titles=True)
    assert engine.cli(["report", str(folder), "--out", str(tmp_path / "cli" / "rep"),
                       "--pairs", "all", "--alpha", "0.1", "--normalize", "range", "--width",
                       "column", "--unit", "task", "--labels", str(labels), "--leaderboard",
                       "on", "--no-titles"]) == 0
    _same_folder(tmp_path / "py" / "rep", tmp_path / "cli" / "rep")
    # Labels from Python may also be a mapping.
    rep = banditbench.report(folder, out=tmp_path / "map", labels={"o/tpe": "TPE (Optuna)"})
    assert "TPE (Optuna)" in set(rep.tables["labels"]["label"])


def test_report_and_import_errors_name_the_keyword(tmp_path):
    ex = ROOT / "examples" / "other-tools"
    journal = ex / "optuna" / "journal.log"
    st = banditbench.import_runs("syne-tune", ex / "syne-tune", tmp_path / "st", budget=60)
    cases = [
        (lambda: banditbench.report(st, pairs="against:nosuch"),
         "pairs=against:nosuch: no policy 'nosuch'"),
        (lambda: banditbench.report(st, alpha="0.1"), "report: alpha: invalid type: string"),
        (lambda: banditbench.report(st, ci="t99"), "report: ci: 't99' is not one of t95"),
        (lambda: banditbench.report(st, wide=True), "wide applies to a table of scores"),
        (lambda: banditbench.import_runs("optuna", journal, tmp_path / "a", nmes="x"),
         "unknown field `nmes`, expected one of `names`"),
        (lambda: banditbench.import_runs("optuna", journal, tmp_path / "b", clock="hours"),
         "clock: 'hours': use trials, seconds, or attr:NAME"),
        (lambda: banditbench.import_runs("optuna", journal, tmp_path / "c",
                                         names="{algo}-{seed}"),
         "names='{algo}-{seed}': unknown placeholder {algo}"),
        (lambda: banditbench.import_runs("comet", journal, tmp_path / "d"), "no tool 'comet'"),
        (lambda: banditbench.import_runs("blackbox", [journal, journal], tmp_path / "e"),
         "give one blackbox folder, not 2"),
    ]
    for call, wanted in cases:
        with pytest.raises(banditbench.BanditbenchError) as e:
            call()
        assert wanted in str(e.value), (wanted, str(e.value))
        assert "--" not in str(e.value).replace(" -- ", ""), str(e.value)


def test_the_type_stub_lists_exactly_the_engines_functions():
    import ast

    engine = banditbench.api._engine()
    stub = ast.parse((ROOT / "python" / "banditbench" / "_engine.pyi").read_text())
    stubbed = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    built = {n for n in dir(engine) if not n.startswith("_") and callable(getattr(engine, n))}
    assert stubbed == built


def test_the_protocols_types_declare_every_attribute_the_engine_gives(tmp_path):
    # Cell, View and Observation are typed (py.typed): their annotations are exactly the
    # attributes the engine fills, over a learner-level world, the pool world and a world of
    # several objectives.
    from banditbench.protocol import Cell, Observation, View

    seen = {"cell": set(), "view": set(), "obs": set()}

    class Record(banditbench.Policy):
        def __init__(self, cell, **params):
            super().__init__(cell, **params)
            seen["cell"] |= set(vars(cell))

        def decide(self, view):
            seen["view"] |= set(vars(view))
            if view.pool is not None:
                return banditbench.Draw() if view.pool["undrawn"] else banditbench.Stop()
            return view.step % len(view.pulls)

        def observe(self, obs):
            # In-process, the engine's own Observation (no __dict__): its public attributes.
            seen["obs"] |= {a for a in dir(obs)
                            if not a.startswith("_") and not callable(getattr(obs, a))}

    base = {"seed": 1, "repetitions": 1, "trajectories": "none"}
    lcdb = {**base, "name": "types-lcdb", "traces": str(ROOT / "traces/lcdb"),
            "tasks": {"datasets": ["6-letter"], "runs": [0]},
            "world": {"kind": "time-sliced", "budget_unit": "task", "budgets": [0.05],
                      "slice": 0.01}}
    pool = {**base, "name": "types-pool", "traces": str(ROOT / "traces/sklearn-grid"),
            "tasks": {"datasets": ["car"], "runs": [0], "learners": ["mlp"]},
            "world": {"kind": "pool", "per_learner": True, "budget_unit": "units",
                      "budgets": [20]}}
    # Several objectives add the cell's `objectives` (a trace set of format 1.1).
    several = {**base, "name": "types-objectives",
               "traces": str(ROOT / "traces/sklearn-random"),
               "tasks": {"datasets": ["car"], "learners": ["knn", "sgd"]},
               "world": {"kind": "pull-count", "budgets": [6],
                         "objectives": ["accuracy", "train_time"]}}
    for exp in (lcdb, pool, several):
        banditbench.run(exp, policies={"record": Record}, out=tmp_path / exp["name"],
                        progress=False)
    for name, cls in (("cell", Cell), ("view", View), ("obs", Observation)):
        declared = set(cls.__annotations__)
        assert seen[name] == declared, (name, sorted(seen[name] - declared),
                                        sorted(declared - seen[name]))


Greedy = greedy_policy()


class GreedyEdited(Policy):
    """The same, but ties go to the last arm: other code, so other cells."""

    def decide(self, view):
        for a in range(view.n_arms):
            if view.pulls[a] == 0:
                return a
        return max(reversed(range(view.n_arms)), key=lambda a: view.arm_best[a] or -1e300)


def _cache_counts(err):
    line = next(l for l in err.splitlines() if "came from the cell cache" in l)
    hits = int(line.split("finished; ")[1].split()[0])
    stored = int(line.split(" and ")[1].split()[0])
    return hits, stored


def test_a_cell_cache_serves_python_policies_by_their_code(tmp_path, capfd):
    spec = {"name": "cached", "traces": str(ROOT / "tests/fixtures/tiny"), "seed": 3,
            "repetitions": 2,
            "world": {"kind": "pull-count", "budgets": [15], "exhausted": "resample"},
            "policies": [{"family": "ucb1"}]}
    cache = tmp_path / "cache"
    first = banditbench.run(spec, policies={"g": Greedy}, out=tmp_path / "a", cache=cache,
                            cache_min_s=0)
    assert _cache_counts(capfd.readouterr().err) == (0, 8)
    again = banditbench.run(spec, policies={"g": Greedy}, out=tmp_path / "b", cache=cache,
                            cache_min_s=0)
    assert _cache_counts(capfd.readouterr().err) == (8, 0)
    for name in ["runs.parquet", "trajectories.parquet"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert first.trajectories.equals(again.trajectories)
    # Another class under the same name: its cells are replayed, ucb1's are reused.
    banditbench.run(spec, policies={"g": GreedyEdited}, out=tmp_path / "c", cache=cache,
                    cache_min_s=0)
    assert _cache_counts(capfd.readouterr().err) == (4, 4)
    with pytest.raises(banditbench.BanditbenchError, match="cache"):
        banditbench.run(spec, out=tmp_path / "d", cache=cache, cache_min_s=-1, progress=False)
