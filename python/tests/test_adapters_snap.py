"""The adapters on a recorded random sample (sklearn-random's joint pool: continuous ranges, 200
draws per learner and task): each library is offered the learner's ranges, and a point it
suggests evaluates the nearest recorded configuration (``snap``). Checked against Optuna's own
loop with the nearest-configuration rule written out independently
(scripts/reference/optuna_snap_sequential.py), on workers for every installed library, through
the protocol, and the counts in runs.parquet's ``policy_stats``. Skipped without Optuna unless
BANDITBENCH_REQUIRE_OPTUNA=1."""
import json
import os
import subprocess
import sys

import pytest

if os.environ.get("BANDITBENCH_REQUIRE_OPTUNA") != "1":
    pytest.importorskip("optuna")

import optuna  # noqa: E402

import banditbench as bb  # noqa: E402
from banditbench.adapters import space  # noqa: E402
from banditbench.adapters._grid import GridSpace  # noqa: E402
from banditbench.adapters.optuna import OptunaSampler  # noqa: E402

from conftest import ROOT, both_routes, pool_experiment  # noqa: E402

SAMPLE = ROOT / "traces" / "sklearn-random"
SCRIPT = ROOT / "scripts" / "reference" / "optuna_snap_sequential.py"
LEARNER = "knn"


def experiment(name, budget=30, workers=1, repetitions=2, dataset="car"):
    return pool_experiment(name, dataset, budget, workers=workers, repetitions=repetitions,
                           learners=[LEARNER, "knn"], per_learner=False, pool=SAMPLE)


def recorded_scores(dataset="car"):
    """The learner's recorded scores on (dataset, run 0), as the engine keeps them (32-bit)."""
    import numpy as np
    import pandas as pd

    ev = pd.read_parquet(SAMPLE / "evaluations.parquet")
    ev = ev[(ev["dataset"] == dataset) & (ev["run"] == 0) & (ev["learner"] == LEARNER)]
    return {float(np.float32(s)) for s in ev["score"].dropna()}


def stats(r):
    """Each cell's policy_stats (decoded by the results reader)."""
    return list(r.runs["policy_stats"])


def reference():
    """scripts/reference/optuna_snap_sequential.py as a module (its own encoding and rule)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("optuna_snap_sequential", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Start(bb.Policy):
    """Keeps the cell it starts (with the pool's space) and stops."""

    pool_space = True
    cells = []

    def __init__(self, cell):
        super().__init__(cell)
        Start.cells.append(cell)

    def decide(self, view):
        return bb.Stop()


class Recorded(OptunaSampler):
    """The adapter, keeping each cell's study (keyed by the cell's seed)."""

    studies = {}

    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        Recorded.studies[cell.seed] = self.study


def test_a_recorded_sample_offers_its_ranges_to_each_library():
    grid = GridSpace.of_pool(str(SAMPLE))
    knn = {d.name: d for d in grid.dims[grid.learners.index("knn")]}
    # From traceset.toml: "n_neighbors int log [1, 50]; weights in {uniform, distance}; ..."
    n = knn["n_neighbors"]
    assert (n.kind, n.low, n.high, n.log, n.int_range) == ("numeric", 1.0, 50.0, True, (1, 50))
    assert knn["weights"].choices == ("uniform", "distance")
    assert all(grid.numeric)
    dist = space(str(SAMPLE), learner="kernel-svm")
    assert isinstance(dist["C"], optuna.distributions.FloatDistribution)
    assert (dist["C"].low, dist["C"].high, dist["C"].log) == (0.01, 1000.0, True)
    assert dist["kernel"].choices == ("rbf", "poly", "sigmoid")
    joint = space(str(SAMPLE))
    assert isinstance(joint["knn.n_neighbors"], optuna.distributions.IntDistribution)
    pytest.importorskip("ConfigSpace")
    cs = space(str(SAMPLE), learner="kernel-svm", library="smac")
    assert cs["gamma"].log and (cs["gamma"].lower, cs["gamma"].upper) == (0.0001, 10.0)


def test_the_rule_picks_the_references_configuration_for_every_learner(tmp_path):
    """Every learner of the sample (13: numeric, whole-number, log and categorical dimensions),
    points drawn at random and points one categorical level away from a recorded configuration:
    the adapters' rule and the reference's independent one pick the same configuration at the
    same distance, for nearest and for nearest-open. (Exact ties, which the rule breaks by the
    lower configuration id, do not occur on this sample's continuous values.)"""
    import random

    from banditbench.adapters._grid import Point, Snap

    ref = reference()
    Start.cells.clear()
    learners = GridSpace.of_pool(str(SAMPLE)).learners
    bb.run(pool_experiment("snap-rule", "car", 1, learners=learners, per_learner=False,
                           pool=SAMPLE),
           policies={"start": Start}, out=tmp_path / "r", progress=False)
    (cell,) = Start.cells
    grid = GridSpace.of_cell(cell)
    rng = random.Random(5)
    checked = 0
    for l, learner in enumerate(grid.learners):
        dims, candidates = ref.recorded(str(SAMPLE), "car", 0, learner)
        # The engine's configurations of the learner open on the task, in id order, are the
        # reference's, one for one.
        ids = sorted(c for c, cl in zip(cell.pool["open"], cell.pool["open_learner"]) if cl == l)
        assert len(ids) == len(candidates) > 50, learner
        rdims = grid.dims[l]
        for rule in ("nearest", "nearest-open"):
            snap = Snap(grid, cell, rule)
            total = 0.0
            open_ = {(l, (c,)): c for c in ids}
            evaluated = set()
            for k in range(60):
                if k % 2:
                    base = list(rng.choice(candidates)[1])
                    cats = [j for j, d in enumerate(rdims) if d.kind == "categorical"]
                    if cats:
                        j = rng.choice(cats)
                        n = len(rdims[j].choices)
                        base[j] = float((int(base[j]) + rng.randrange(1, n)) % n)
                    point = base
                else:
                    point = [float(rng.randrange(len(d.choices))) if d.kind == "categorical"
                             else d.encode(rng.randint(*d.int_range)) if d.int_range
                             else rng.random() for d in rdims]
                want_d, at = ref.nearest(dims, point, candidates, evaluated, rule)
                got = snap((l, Point(point)), open_)
                assert got == (l, (ids[at],)), (learner, rule, point)
                assert snap.total == pytest.approx(total + want_d, abs=1e-5)
                total = snap.total
                open_.pop(got, None)
                evaluated.add(at)
                checked += 1
    assert checked == 13 * 2 * 60


@pytest.mark.parametrize("sampler,snap", [("tpe", "nearest"), ("tpe", "nearest-open"),
                                          ("random", "nearest")])
def test_one_worker_snaps_as_optunas_own_loop_on_the_table(tmp_path, sampler, snap):
    Recorded.studies.clear()
    r = bb.run(experiment(f"snap-{sampler}-{snap}"),
               policies={"optuna": (Recorded, {"sampler": sampler, "learner": LEARNER,
                                               "snap": snap})},
               out=tmp_path / "r", progress=False)
    assert len(r.runs) == 2
    for seed, got, drawn in zip(r.runs["seed"], stats(r), r.runs["configs_drawn"]):
        study = Recorded.studies[int(seed)]
        told = [t for t in study.trials if t.state != optuna.trial.TrialState.RUNNING]
        assert len(told) >= 30
        out = subprocess.run(
            [sys.executable, str(SCRIPT), "--traces", str(SAMPLE), "--dataset", "car",
             "--run", "0", "--learner", LEARNER, "--sampler", sampler, "--seed", str(int(seed)),
             "--trials", str(len(told)), "--snap", snap],
            capture_output=True, text=True, check=True).stdout
        ref = [json.loads(line) for line in out.splitlines()]
        # The same points suggested, the same configurations' scores told, trial by trial.
        assert [(t["params"], t["value"], t["state"]) for t in ref] == \
            [(t.params, t.value, t.state.name) for t in told]
        # The counts in runs.parquet are the reference's.
        far = [t["distance"] for t in ref]
        assert got["snap"] == snap and got["suggestions"] == len(told)
        assert got["repeats"] == len(told) - drawn
        assert got["snapped"] == sum(d > 1e-5 for d in far)
        assert got["snapped_share"] == pytest.approx(got["snapped"] / len(told))
        assert got["snap_distance_mean"] == pytest.approx(sum(far) / len(far), abs=1e-5)
        assert got["snap_distance_max"] == pytest.approx(max(far), abs=1e-5)
        if snap == "nearest-open":
            assert got["repeats"] == 0


LIBRARIES = {
    "optuna": ("banditbench.adapters.optuna", "OptunaSampler", "optuna", {"sampler": "tpe"}),
    "nevergrad": ("banditbench.adapters.nevergrad", "NevergradOptimizer", "nevergrad",
                  {"optimizer": "NGOpt"}),
    "syne-tune": ("banditbench.adapters.syne_tune", "SyneTuneScheduler", "syne_tune",
                  {"scheduler": "random"}),
    "smac": ("banditbench.adapters.smac", "SMACFacade", "smac", {"facade": "hpo"}),
    # In the venv of python/requirements-hebo.txt only (not made by .ci/run).
    "hebo": ("banditbench.adapters.hebo", "HEBOOptimizer", "hebo", {}),
}


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_every_library_snaps_on_workers_and_reruns_exactly(tmp_path, library):
    import importlib

    module, cls, dist, params = LIBRARIES[library]
    if os.environ.get(f"BANDITBENCH_REQUIRE_{dist.upper()}") != "1":
        pytest.importorskip(dist)
    policy = getattr(importlib.import_module(module), cls)
    params = dict(params, learner=LEARNER)
    runs = []
    for k in "ab":
        runs.append(bb.run(experiment(f"snap-{library}", budget=20, workers=4, repetitions=1),
                           policies={library + "-adapter": (policy, params)}, out=tmp_path / k,
                           progress=False))
    a, b = runs
    # Every evaluation revealed a score the learner recorded on the task.
    scores = recorded_scores()
    chosen = a.trajectories[a.trajectories["action"] == "choose"]
    assert len(chosen) == 20
    assert set(chosen["reward"].dropna().astype(float)) <= scores
    (got,) = stats(a)
    assert got["snap"] == "nearest" and got["suggestions"] >= 20
    assert got["suggestions"] == 20 + got["repeats"]
    assert 0 < got["snapped"] <= got["suggestions"] and got["snap_distance_max"] > 0
    assert 0 < got["snap_distance_mean"] <= got["snap_distance_max"]
    # Deterministic: a second run gives the same decisions and counts.
    cols = ["cell", "step", "action", "config", "reward", "worker", "start", "finish"]
    assert a.trajectories[cols].equals(b.trajectories[cols])
    assert stats(a) == stats(b)


def test_the_protocol_route_records_the_same_counts(tmp_path):
    params = {"sampler": "tpe", "learner": LEARNER, "snap": "nearest-open"}
    a, _ = both_routes(experiment("snap-routes", budget=20, workers=2), "optuna", OptunaSampler,
                       params, "optuna", tmp_path)
    assert all(s["suggestions"] >= 20 for s in stats(a))


def test_refuse_fails_the_cell_naming_the_point_and_a_grid_never_snaps(tmp_path):
    with pytest.raises(bb.BanditbenchError) as e:
        bb.run(experiment("snap-refuse", repetitions=1),
               policies={"optuna": (OptunaSampler, {"learner": LEARNER, "snap": "refuse"})},
               out=tmp_path / "r", progress=False)
    msg = str(e.value)
    assert 'snap = "refuse"' in msg and "the nearest recorded configuration" in msg
    assert "Give snap = \"nearest\"" in msg
    with pytest.raises(bb.BanditbenchError, match="snap = 'closest'; give one of nearest"):
        bb.run(experiment("snap-bad", repetitions=1),
               policies={"optuna": (OptunaSampler, {"learner": LEARNER, "snap": "closest"})},
               out=tmp_path / "b", progress=False)
    # On a grid every suggestion is a configuration: refuse never fires, no snap counts.
    grid = pool_experiment("grid-refuse", "car", 27 * 10)
    r = bb.run(grid, policies={"optuna": (OptunaSampler, {"snap": "refuse"})},
               out=tmp_path / "g", progress=False)
    (got,) = stats(r)
    assert set(got) == {"suggestions", "repeats"} and got["suggestions"] >= 10


TASKSET = ROOT / "traces" / "taskset"
GRU = "FixedTextRNNClassification_imdb_patch32_GRU128_bs128"


@pytest.mark.parametrize("library,params", [
    ("optuna", {"sampler": "tpe"}),
    ("syne-tune", {"scheduler": "asha"}),
])
def test_taskset_sample_runs_whole_and_unit_by_unit_and_reveals_its_recorded_losses(
        tmp_path, library, params):
    """TaskSet's 1 000 configurations sampled from 8 ranges: Optuna trains whole curves, Syne
    Tune's ASHA unit by unit, both on 4 workers, each point snapped; every loss revealed is the
    table's at that configuration and unit (read here from the pool's parquet)."""
    import importlib

    import pandas as pd

    module, cls, dist, _ = LIBRARIES[library]
    if os.environ.get(f"BANDITBENCH_REQUIRE_{dist.upper()}") != "1":
        pytest.importorskip(dist)
    policy = getattr(importlib.import_module(module), cls)
    exp = pool_experiment(f"taskset-{library}", GRU, 51 * 20, workers=4, learners=["adam8p"],
                          pool=TASKSET)
    r = bb.run(exp, policies={library + "-adapter": (policy, params)}, out=tmp_path / "r",
               progress=False)
    curves = pd.read_parquet(TASKSET / "curves" / f"{GRU}.parquet")
    recorded = {(int(c), int(u)): float(s)
                for c, u, s in zip(curves["config_id"], curves["unit"], curves["score"])}
    tr = r.trajectories
    revealed = tr[tr["reward"].notna()]
    assert len(revealed) > 0
    for c, u, x in zip(revealed["config"], revealed["fidelity"], revealed["reward"]):
        assert recorded[(int(c), int(u))] == pytest.approx(float(x), abs=0)
    (got,) = stats(r)
    assert got["snap"] == "nearest" and got["snapped_share"] == 1.0
    # Eight ranges and 1 000 points: the nearest recorded configuration is far.
    assert 0.5 < got["snap_distance_mean"] < 3.0
    if library == "syne-tune":
        # ASHA stops most configurations before the last unit.
        assert (tr.groupby("config")["fidelity"].max() < 51).mean() > 0.5
    else:
        assert (tr["fidelity"] == 51).all()
