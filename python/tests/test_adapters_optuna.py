"""The Optuna adapter (banditbench.adapters.optuna) on the recorded sklearn-grid pool: its space,
the same trial sequence as Optuna's own loop on the same table (scripts/reference/
optuna_sequential.py), running trials on K workers, identical reruns and routes, and its errors.
Skipped without Optuna unless BANDITBENCH_REQUIRE_OPTUNA=1 (.ci/run installs
python/requirements-optuna.txt and sets it)."""
import itertools
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

from conftest import ROOT, both_routes, pool_experiment, recorded_scores  # noqa: E402

POOL = ROOT / "traces" / "sklearn-grid"
SCRIPT = ROOT / "scripts" / "reference" / "optuna_sequential.py"


def experiment(name, workers=1, budget_units=27 * 40, learners=("mlp",), repetitions=2):
    return pool_experiment(name, "car", budget_units, workers=workers,
                           repetitions=repetitions, learners=learners)


class Recorded(OptunaSampler):
    """The adapter, keeping each cell's study (keyed by the cell's seed) and, at every decision,
    how many of its trials were running."""

    studies = {}
    running_seen = []

    def __init__(self, cell, **params):
        super().__init__(cell, **params)
        Recorded.studies[cell.seed] = self.study

    def decide(self, view):
        Recorded.running_seen.append(
            len(self.study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,))))
        return super().decide(view)


def test_space_maps_every_point_to_exactly_one_configuration():
    import pandas as pd

    grid = GridSpace.of_pool(str(POOL))
    configs = pd.read_parquet(POOL / "configs.parquet")
    for learner in grid.learners:
        dist = space(str(POOL), learner=learner)
        dims = grid.dims[grid.learners.index(learner)]
        assert list(dist) == [d.name for d in dims]
        recorded = set(configs.loc[configs["learner"] == learner, "levels"])
        points = {",".join(map(str, p)) for p in itertools.product(
            *[range(len(d.choices)) if hasattr(d, "choices") else range(d.high - d.low + 1)
              for d in dist.values()])}
        # A bijection between the space's points and the learner's recorded grid.
        assert points == recorded
    joint = space(str(POOL))
    assert joint["learner"].choices == tuple(grid.learners)
    cat = space(str(POOL), learner="sgd", ordinal="categorical")
    assert cat["loss"].choices[0] == "hinge" and cat["alpha"].choices[:2] == (1e-06, 1e-05)


@pytest.mark.parametrize("sampler,options", [
    ("tpe", {}),
    ("tpe", {"multivariate": True, "n_startup_trials": 5}),
    ("random", {}),
    ("qmc", {}),
    ("cmaes", {}),
])
def test_one_worker_gives_optunas_own_trial_sequence(tmp_path, sampler, options):
    Recorded.studies.clear()
    params = {"sampler": sampler, **options}
    r = bb.run(experiment(f"optuna-{sampler}"), policies={"optuna": (Recorded, params)},
               out=tmp_path / "r", progress=False)
    assert len(r.runs) == 2
    for seed in r.runs["seed"]:
        study = Recorded.studies[int(seed)]
        told = [t for t in study.trials if t.state != optuna.trial.TrialState.RUNNING]
        assert len(told) >= 40
        out = subprocess.run(
            [sys.executable, str(SCRIPT), "--pool", str(POOL), "--dataset", "car", "--run", "0",
             "--learner", "mlp", "--sampler", sampler, "--options", json.dumps(options),
             "--seed", str(int(seed)), "--trials", str(len(told))],
            capture_output=True, text=True, check=True).stdout
        ref = [json.loads(line) for line in out.splitlines()]
        assert [(t["params"], t["value"], t["state"]) for t in ref] == \
            [(t.params, t.value, t.state.name) for t in told]
    # The trials that trained a configuration are the run's trajectory, in order.
    tr = r.trajectories
    assert (tr["action"] == "choose").all() and (tr["fidelity"] == 27).all()


@pytest.mark.parametrize("sampler", ["tpe", "random"])
def test_charged_repeats_make_optunas_own_loop_under_a_budget_of_trainings(tmp_path, sampler):
    # repeat = "charge": every trial, a repeat too, trains its configuration (a repeat again over
    # its units, `Retrain`) and costs 27 units, so a budget of 40 trainings is exactly Optuna's
    # own loop with n_trials = 40: the same trials, and one trajectory row per trial.
    Recorded.studies.clear()
    r = bb.run(experiment(f"optuna-charge-{sampler}"),
               policies={"optuna": (Recorded, {"sampler": sampler, "repeat": "charge"})},
               out=tmp_path / "r", progress=False)
    tr = r.trajectories
    for seed, cell in zip(r.runs["seed"], r.runs["cell"]):
        study = Recorded.studies[int(seed)]
        told = [t for t in study.trials if t.state != optuna.trial.TrialState.RUNNING]
        assert len(told) == 40
        out = subprocess.run(
            [sys.executable, str(SCRIPT), "--pool", str(POOL), "--dataset", "car", "--run", "0",
             "--learner", "mlp", "--sampler", sampler, "--seed", str(int(seed)),
             "--trials", "40"],
            capture_output=True, text=True, check=True).stdout
        ref = [json.loads(line) for line in out.splitlines()]
        assert [(t["params"], t["value"], t["state"]) for t in ref] == \
            [(t.params, t.value, t.state.name) for t in told]
        rows = tr[tr["cell"] == cell]
        assert len(rows) == 40 and set(rows["action"]) <= {"choose", "retrain"}
        assert (rows["fidelity"] == 27).all()
    # TPE repeats configurations on this grid: some trials were paid again.
    if sampler == "tpe":
        assert (tr["action"] == "retrain").any()
    assert (r.runs["budget_used"] == 27 * 40).all()


@pytest.mark.parametrize("sampler,pruner,options,configs", [
    ("tpe", "median", {}, 25),
    ("random", "successive-halving", {}, 25),
    ("tpe", "hyperband", {"pruner_min_resource": 1, "pruner_max_resource": 27,
                          "pruner_reduction_factor": 3}, 25),
    ("random", "wilcoxon", {}, 4),
])
def test_with_a_pruner_one_worker_gives_optunas_own_trial_sequence(tmp_path, sampler, pruner,
                                                                    options, configs):
    # Unit by unit: every trial reports each unit's score and asks the pruner, as an objective
    # in Optuna's own loop does; a repeated configuration replays its recorded units for free.
    Recorded.studies.clear()
    r = bb.run(experiment(f"prune-{pruner}", budget_units=27 * configs),
               policies={"optuna": (Recorded, {"sampler": sampler, "pruner": pruner, **options})},
               out=tmp_path / "r", progress=False)
    pruner_options = {k[len("pruner_"):]: v for k, v in options.items()}
    for seed in r.runs["seed"]:
        study = Recorded.studies[int(seed)]
        told = [t for t in study.trials if t.state != optuna.trial.TrialState.RUNNING]
        states = {t.state.name for t in told}
        assert "PRUNED" in states and "COMPLETE" in states, states
        out = subprocess.run(
            [sys.executable, str(SCRIPT), "--pool", str(POOL), "--dataset", "car", "--run", "0",
             "--learner", "mlp", "--sampler", sampler, "--pruner", pruner,
             "--pruner-options", json.dumps(pruner_options),
             "--seed", str(int(seed)), "--trials", str(len(told))],
            capture_output=True, text=True, check=True).stdout
        ref = [json.loads(line) for line in out.splitlines()]
        assert [(t["params"], t["value"], t["state"]) for t in ref] == \
            [(t.params, t.value, t.state.name) for t in told]
    tr = r.trajectories
    # One unit a decision: a new configuration's first, then its trial's next ones.
    assert set(tr["action"]) == {"choose", "pull"}


@pytest.mark.parametrize("sampler,pruner", [("tpe", "median"), ("random", "successive-halving")])
def test_charged_repeats_with_a_pruner_make_optunas_own_loop(tmp_path, sampler, pruner):
    # repeat = "charge" with a pruner: a repeated configuration trains again from its first unit,
    # each unit paid for (Retrain) and reported and pruned as it comes, so the study is Optuna's
    # own loop, trial for trial, and every unit of the budget was paid.
    Recorded.studies.clear()
    r = bb.run(experiment(f"charge-{pruner}", budget_units=27 * 25),
               policies={"optuna": (Recorded, {"sampler": sampler, "pruner": pruner,
                                               "repeat": "charge"})},
               out=tmp_path / "r", progress=False)
    for seed in r.runs["seed"]:
        study = Recorded.studies[int(seed)]
        told = [t for t in study.trials if t.state != optuna.trial.TrialState.RUNNING]
        out = subprocess.run(
            [sys.executable, str(SCRIPT), "--pool", str(POOL), "--dataset", "car", "--run", "0",
             "--learner", "mlp", "--sampler", sampler, "--pruner", pruner,
             "--seed", str(int(seed)), "--trials", str(len(told))],
            capture_output=True, text=True, check=True).stdout
        ref = [json.loads(line) for line in out.splitlines()]
        assert [(t["params"], t["value"], t["state"]) for t in ref] == \
            [(t.params, t.value, t.state.name) for t in told]
        # Every reported unit was paid: the units reported equal the budget used, less the
        # units of trials still running when it ran out.
        reported = sum(len(t.intermediate_values) for t in study.trials)
        assert reported >= 27 * 25 - 27
    assert (r.trajectories["action"] == "retrain").any() or sampler == "random"
    assert (r.runs["budget_used"] == 27 * 25).all()


def test_with_a_pruner_on_workers_every_trial_sees_its_configurations_curve(tmp_path):
    Recorded.studies.clear()
    grid = GridSpace.of_pool(str(POOL))
    mlp = grid.learner_index("mlp")
    curves = {u: recorded_scores("car", unit=u) for u in (1, 2, 3, 27)}
    r = bb.run(experiment("prune-k8", workers=8, budget_units=27 * 20),
               policies={"optuna": (Recorded, {"pruner": "successive-halving"})},
               out=tmp_path / "r", progress=False)
    for seed in r.runs["seed"]:
        trials = Recorded.studies[int(seed)].trials
        assert sum(t.state == optuna.trial.TrialState.RUNNING for t in trials) <= 2 * 8
        for t in trials:
            levels = tuple(t.params[d.name] for d in grid.dims[mlp])
            for u in (1, 2, 3):
                if u in t.intermediate_values:
                    assert t.intermediate_values[u] == curves[u][levels]
            if t.state == optuna.trial.TrialState.COMPLETE:
                assert t.value == curves[27][levels]
            assert t.state != optuna.trial.TrialState.FAIL




@pytest.mark.parametrize("options", [{}, {"constant_liar": False}, {"sampler": "random"}])
def test_every_trial_asked_on_workers_is_told_its_configurations_score(tmp_path, options):
    # Whatever the sampler suggests (fresh, evaluated, or running on another worker), each trial
    # ends told the recorded score of the configuration it names, and only trials whose work the
    # budget cut are left running. Without constant_liar TPE suggests running configurations
    # again and again: the class of defect this checks.
    Recorded.studies.clear()
    scores = recorded_scores("car", unit=27)
    grid = GridSpace.of_pool(str(POOL))
    mlp = grid.learner_index("mlp")
    r = bb.run(experiment("told", workers=8), policies={"optuna": (Recorded, options)},
               out=tmp_path / "r", progress=False)
    for seed in r.runs["seed"]:
        trials = Recorded.studies[int(seed)].trials
        running = [t for t in trials if t.state == optuna.trial.TrialState.RUNNING]
        # At most one piece of work per worker was cut, and one trial per worker waits on one.
        assert len(running) <= 2 * 8
        for t in trials:
            if t.state == optuna.trial.TrialState.RUNNING:
                continue
            assert t.state == optuna.trial.TrialState.COMPLETE, t
            levels = tuple(t.params[d.name] for d in grid.dims[mlp])
            assert t.value == scores[levels]


def test_workers_see_running_trials_and_runs_repeat_exactly(tmp_path):
    Recorded.running_seen.clear()
    exp = experiment("optuna-k4", workers=4)
    a = bb.run(exp, policies={"optuna": Recorded}, out=tmp_path / "a", progress=False)
    # With four workers up to three other trials are running when one asks (constant_liar's
    # input in Optuna's own parallel loop).
    assert max(Recorded.running_seen) == 3
    # Identical again with the two cells on two threads.
    b = bb.run(exp, policies={"optuna": Recorded}, out=tmp_path / "b", progress=False,
               threads=2)
    cols = ["cell", "step", "config", "reward", "worker", "start", "finish"]
    assert a.trajectories[cols].equals(b.trajectories[cols])
    assert a.runs["best_score"].tolist() == b.runs["best_score"].tolist()
    assert (a.trajectories["worker"].nunique()) == 4


@pytest.mark.parametrize("pruner", [None, "median"])
def test_a_sampler_that_only_repeats_ends_its_cell_after_max_repeats(tmp_path, pruner):
    # A sampler fixed on one configuration: its first trial trains it, every later one is a
    # repeat, and after max_repeats of them in a row the study is exhausted and the cell ends with
    # its budget unused, instead of asking for ever.
    grid = GridSpace.of_pool(str(POOL))
    mlp = grid.learner_index("mlp")

    class Fixed(OptunaSampler):
        def make_sampler(self, seed):
            return optuna.samplers.PartialFixedSampler(
                {d.name: 0 for d in grid.dims[mlp]}, optuna.samplers.RandomSampler(seed=seed))

    studies = {}

    class Kept(Fixed):
        def __init__(self, cell, **params):
            super().__init__(cell, **params)
            studies[cell.seed] = self.study

    params = {"max_repeats": 7, **({"pruner": pruner} if pruner else {})}
    r = bb.run(experiment(f"repeats-{pruner}", workers=2), policies={"optuna": (Kept, params)},
               out=tmp_path / "r", progress=False)
    for study in studies.values():
        assert len(study.trials) == 1 + 7
        assert len({tuple(sorted(t.params.items())) for t in study.trials}) == 1
    # 27 units of the 27 × 40 budgeted.
    assert (r.runs["budget_used"] == 27).all(), r.runs["budget_used"].tolist()
    tr = r.trajectories
    for _, cell in tr.groupby("cell"):
        # One configuration, trained once (unit by unit with a pruner), then nothing more.
        assert cell["config"].nunique() == 1
        assert cell["fidelity"].max() == 27


@pytest.mark.parametrize("params", [{}, {"pruner": "successive-halving"}, {"repeat": "charge"}])
def test_the_protocol_route_gives_the_in_process_results(tmp_path, params):
    # A budget of 12 full trainings: with a pruner TPE's study grows by its free repeats (each
    # ask costs more as it grows), and both routes pay for it.
    exp = experiment("optuna-routes", workers=4,
                     budget_units=27 * (40 if params.get("repeat") == "charge" else 12))
    a, _ = both_routes(exp, "optuna", OptunaSampler, params, "optuna", tmp_path)
    if params.get("repeat") == "charge":
        # TPE on 4 workers repeats configurations here, and each repeat was paid again.
        assert (a.trajectories["action"] == "retrain").any()


def test_bad_input_is_named(tmp_path):
    with pytest.raises(bb.BanditbenchError, match="sampler = 'tp'; Optuna's are tpe"):
        bb.run(experiment("bad-sampler", repetitions=1),
               policies={"optuna": (OptunaSampler, {"sampler": "tp"})},
               out=tmp_path / "a", progress=False)
    with pytest.raises(bb.BanditbenchError, match="ordinal = 'rank'"):
        bb.run(experiment("bad-ordinal", repetitions=1),
               policies={"optuna": (OptunaSampler, {"ordinal": "rank"})},
               out=tmp_path / "b", progress=False)
    with pytest.raises(bb.BanditbenchError, match="pruner = 'asha'; Optuna's are median"):
        bb.run(experiment("bad-pruner", repetitions=1),
               policies={"optuna": (OptunaSampler, {"pruner": "asha"})},
               out=tmp_path / "c", progress=False)
    with pytest.raises(bb.BanditbenchError, match="repeat = 'pay'; give one of reuse, charge"):
        bb.run(experiment("bad-repeat", repetitions=1),
               policies={"optuna": (OptunaSampler, {"repeat": "pay"})},
               out=tmp_path / "f", progress=False)
    with pytest.raises(bb.BanditbenchError, match="pruner_n_startup_trials given without a pruner"):
        bb.run(experiment("pruner-options-alone", repetitions=1),
               policies={"optuna": (OptunaSampler, {"pruner_n_startup_trials": 3})},
               out=tmp_path / "d", progress=False)
    with pytest.raises(bb.BanditbenchError, match="missing column 'config', which the joint \\(CASH\\) pool needs"):
        space(str(ROOT / "traces" / "lcdb"))
    with pytest.raises(ValueError, match="no learner 'svm'"):
        space(str(POOL), learner="svm")


def test_a_sampler_raising_mid_run_fails_its_cell_and_keeps_finished_ones(tmp_path):
    class Breaks(OptunaSampler):
        def decide(self, view):
            if self.cell.repetition == 1 and view.step == 5:
                raise RuntimeError("the sampler broke")
            return super().decide(view)

    with pytest.raises(bb.BanditbenchError, match="the sampler broke"):
        bb.run(experiment("breaks"), policies={"optuna": Breaks}, out=tmp_path / "r",
               progress=False, threads=1)
    kept = bb.Results(tmp_path / "r").runs
    assert kept["repetition"].tolist() == [0]


NASBENCH = ROOT / "traces" / "nasbench201"


@pytest.mark.parametrize("sampler", ["nsgaii", "tpe", "random"])
def test_several_objectives_give_optunas_own_multi_objective_study(tmp_path, sampler):
    # [world] objectives: each cell's study has the pool's two objectives in their recorded
    # directions, and with one worker its trials are those of Optuna's own loop on the same table
    # (values read from the pool's parquet files by scripts/reference/optuna_sequential.py). The
    # engine measures each cell's archive: hv_regret is in [0, 1] and never grows over a cell.
    Recorded.studies.clear()
    exp = {"name": f"optuna-mo-{sampler}", "traces": str(NASBENCH), "seed": 3,
           "repetitions": 2, "tasks": {"datasets": ["cifar10"], "runs": [0]},
           "world": {"kind": "pool", "budget_unit": "evaluations", "budgets": [30],
                     "objectives": ["val_acc", "latency"]},
           "policies": [{"family": "random-search"}]}
    r = bb.run(exp, policies={"optuna": (Recorded, {"sampler": sampler})},
               out=tmp_path / "r", progress=False)
    runs = r.runs
    assert runs["hv_regret"].between(0, 1).all() and runs["hypervolume"].notna().all()
    mine = runs[runs["policy_family"] == "optuna"]
    assert len(mine) == 2
    for seed in mine["seed"]:
        study = Recorded.studies[int(seed)]
        assert [d.name for d in study.directions] == ["MAXIMIZE", "MINIMIZE"]
        told = [t for t in study.trials if t.state != optuna.trial.TrialState.RUNNING]
        assert len(told) >= 30
        out = subprocess.run(
            [sys.executable, str(SCRIPT), "--pool", str(NASBENCH), "--dataset", "cifar10",
             "--run", "0", "--learner", "nas-bench-201-cell", "--sampler", sampler,
             "--seed", str(int(seed)), "--trials", str(len(told)),
             "--objectives", "val_acc,latency"],
            capture_output=True, text=True, check=True).stdout
        ref = [json.loads(line) for line in out.splitlines()]
        assert [(t["params"], t["values"], t["state"]) for t in ref] == \
            [(t.params, t.values, t.state.name) for t in told]
    tr = r.trajectories
    for cell in runs["cell"]:
        h = tr[tr["cell"] == cell]["hv_regret"].to_numpy()
        assert (h[1:] <= h[:-1] + 1e-15).all()


def test_several_objectives_refuse_a_pruner_and_score_only_is_single_objective(tmp_path):
    exp = {"name": "optuna-mo-bad", "traces": str(NASBENCH), "seed": 3, "repetitions": 1,
           "tasks": {"datasets": ["cifar10"], "runs": [0]},
           "world": {"kind": "pool", "budget_unit": "evaluations", "budgets": [10],
                     "objectives": ["val_acc", "latency"]}}
    with pytest.raises(bb.BanditbenchError, match="Optuna's pruners take one objective"):
        bb.run(exp, policies={"optuna": (OptunaSampler, {"pruner": "median"})},
               out=tmp_path / "a", progress=False)
    Recorded.studies.clear()
    r = bb.run(exp, policies={"optuna": (Recorded, {"objectives": "score"})},
               out=tmp_path / "b", progress=False)
    (study,) = Recorded.studies.values()
    assert [d.name for d in study.directions] == ["MAXIMIZE"]
    assert r.runs["hv_regret"].notna().all()


def test_several_objectives_travel_the_protocol_as_they_come_in_process(tmp_path):
    # The observation's objectives and the start's names and directions reach a policy through
    # the protocol as they do in-process: NSGA-II makes the same decisions on 3 workers.
    exp = {"name": "optuna-mo-routes", "traces": str(NASBENCH), "seed": 5, "repetitions": 2,
           "tasks": {"datasets": ["cifar100"], "runs": [1]},
           "world": {"kind": "pool", "budget_unit": "evaluations", "budgets": [25], "workers": 3,
                     "objectives": ["val_acc", "train_time", "model_size"]}}
    a, b = both_routes(exp, "optuna", OptunaSampler,
                       {"sampler": "nsgaii", "population_size": 8}, "optuna", tmp_path)
    assert a.runs["hv_regret"].equals(b.runs["hv_regret"])
    assert a.trajectories["hv_regret"].equals(b.trajectories["hv_regret"])
