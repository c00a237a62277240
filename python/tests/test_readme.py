"""The README's Python snippet ("From Python"), extracted from README.md and run as written from
a clone's root, twice: the second run reuses every result (a notebook's "Run all" again)."""
import os
import re

import pytest

from conftest import ROOT

try:
    import banditbench._engine  # noqa: F401
except ImportError as e:  # pragma: no cover
    if os.environ.get("BANDITBENCH_REQUIRE_ENGINE") == "1":
        raise
    pytest.skip(f"the engine is not built (pip install .): {e}", allow_module_level=True)


def snippet(heading: str = "From Python", index: int = 0) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) > index, f"README.md: no ```python block {index} under '{heading}'"
    return blocks[index]


def test_the_readme_snippet_runs_as_written_twice(tmp_path, monkeypatch):
    # A clone's root whose results/ is this test's own: the clone's data, linked.
    for name in ("traces", "experiments", "examples", "scripts", "Cargo.toml"):
        os.symlink(ROOT / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    code = snippet()
    for attempt in (1, 2):
        scope = {"__name__": f"readme_{attempt}"}
        exec(compile(code, "README.md (From Python)", "exec"), scope)
    bb = scope["bb"]
    assert (tmp_path / "results" / "quickstart+greedy" / "runs.parquet").is_file()
    greedy = bb.Results(tmp_path / "results" / "quickstart+greedy").runs
    assert "greedy" in set(greedy["policy"])
    assert (tmp_path / "results" / "joint").is_dir()
    rep = scope["rep"]
    assert "ucb1(tie_break=first, log_t=pulls)" in str(rep.tests)


def test_import_runs_reruns_keep_the_same_folder_and_fresh_replaces_it(tmp_path):
    import banditbench as bb

    src = ROOT / "examples" / "other-tools" / "syne-tune"
    out = tmp_path / "st"
    first = bb.import_runs("syne-tune", src, out, budget=60)
    stamp = (out / "runs.parquet").stat().st_mtime_ns
    again = bb.import_runs("syne-tune", src, out, budget=60)
    assert again.runs.equals(first.runs)
    assert (out / "runs.parquet").stat().st_mtime_ns == stamp  # the folder was kept, not rewritten
    with pytest.raises(bb.BanditbenchError, match="already holds an import of other runs or other options"):
        bb.import_runs("syne-tune", src, out, budget=30)
    assert (out / "runs.parquet").stat().st_mtime_ns == stamp
    cut = bb.import_runs("syne-tune", src, out, budget=30, fresh=True)
    assert set(cut.runs["budget_abs"]) == {30.0}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".banditbench-import-")]
    # A folder that is not an import is never replaced.
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(bb.BanditbenchError, match="not a folder banditbench imported"):
        bb.import_runs("syne-tune", src, other, budget=60, fresh=True)
    assert (other / "notes.txt").read_text() == "mine"


# The experiment each ```python block under "Library optimizers" names, and so the block a test
# below runs (a block is found by its experiment's name, not by its place in the section).
LIBRARY_SNIPPETS = ("mlp-16-workers", "syne-tune-4-workers", "nevergrad-8-workers", "smac-demo",
                    "mlp-hebo", "neps-demo", "snap-demo")


def library_blocks():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Library optimizers\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_every_library_snippet_is_run_by_a_test():
    named = [re.findall(r'"name": "([^"]+)"', b) for b in library_blocks()]
    assert all(len(n) >= 1 for n in named), "a ```python block under Library optimizers names " \
        "no experiment: give it one, and a test here that runs it"
    assert sorted(n[0] for n in named) == sorted(LIBRARY_SNIPPETS)


def library_snippet(tmp_path, monkeypatch, module, experiment):
    """Run the README's ```python block under "Library optimizers" whose experiment is named
    ``experiment`` in a clone's root of this test's own; skipped without the library ``module``
    unless BANDITBENCH_REQUIRE_<MODULE>=1 (.ci/run installs it). Returns the snippet's names."""
    assert experiment in LIBRARY_SNIPPETS
    if os.environ.get(f"BANDITBENCH_REQUIRE_{module.upper()}") != "1":
        pytest.importorskip(module)
    for folder in ("traces", "experiments", "Cargo.toml"):
        os.symlink(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    (code,) = [b for b in library_blocks() if f'"name": "{experiment}"' in b]
    scope = {"__name__": f"readme_{module}"}
    exec(compile(code, f"README.md (Library optimizers, {experiment})", "exec"), scope)
    return scope


def test_the_library_optimizers_snippet_runs_as_written(tmp_path, monkeypatch):
    scope = library_snippet(tmp_path, monkeypatch, "optuna", "mlp-16-workers")
    runs = scope["results"].runs
    assert set(runs["policy"]) == {"optuna-tpe", "optuna-tpe-no-liar(constant_liar=false)",
                                    "optuna-random(sampler=random)", "mine"}
    # 4 policies x car's 3 runs x 2 repetitions.
    assert (runs["workers"] == 16).all() and len(runs) == 24
    # Sixteen workers did run at once: every cell's trajectory used them all.
    tr = scope["results"].trajectories
    assert (tr.groupby("cell")["worker"].nunique() == 16).all()


def test_the_syne_tune_snippet_runs_as_written(tmp_path, monkeypatch):
    scope = library_snippet(tmp_path, monkeypatch, "syne_tune", "syne-tune-4-workers")
    runs = scope["results"].runs
    policies = set(runs["policy"])
    assert {"st-asha", "st-hyperband(brackets=4)", "st-random(scheduler=random)"} < policies
    assert len(policies) == 4 and any(p.startswith("asha(") for p in policies), policies
    # 4 policies x one task x 2 repetitions, 4 workers each.
    assert (runs["workers"] == 4).all() and len(runs) == 8
    # Syne Tune's ASHA stops most configurations before the last unit; its random search trains
    # every configuration to the end.
    tr = scope["results"].trajectories
    cells = runs.set_index("cell")["policy"]
    trained = tr.groupby(["cell", "config"])["fidelity"].max().reset_index()
    trained["policy"] = trained["cell"].map(cells)
    asha = trained[trained["policy"] == "st-asha"]["fidelity"]
    assert (asha < 27).mean() > 0.5, asha.value_counts()
    rs = trained[trained["policy"] == "st-random(scheduler=random)"]
    assert (rs.groupby("cell")["fidelity"].apply(lambda f: (f == 27).sum() >= len(f) - 4)).all()


def test_the_nevergrad_snippet_runs_as_written(tmp_path, monkeypatch):
    scope = library_snippet(tmp_path, monkeypatch, "nevergrad", "nevergrad-8-workers")
    runs = scope["results"].runs
    assert set(runs["policy"]) == {"ng-ngopt", "ng-de(optimizer=TwoPointsDE)",
                                    "ng-portfolio(optimizer=PortfolioDiscreteOnePlusOne)"}
    assert (runs["workers"] == 8).all() and len(runs) == 6
    tr = scope["results"].trajectories
    assert (tr.groupby("cell")["worker"].nunique() == 8).all()
    # Each cell trains 40 configurations to the end: the budget, in full trainings.
    assert (tr.groupby("cell")["config"].nunique() == 40).all()


def test_the_smac_snippet_runs_as_written(tmp_path, monkeypatch):
    scope = library_snippet(tmp_path, monkeypatch, "smac", "smac-demo")
    r = scope["r"]
    runs = r.runs
    assert sorted(p.split("(")[0] for p in runs["policy"]) == ["smac-hpo"] * 2 + ["smac-mf"] * 2
    assert (runs["workers"] == 4).all() and (runs["budget_used"] > 0).all()
    tr = r.trajectories
    cells = dict(zip(runs["cell"], runs["policy"]))
    fid = tr.assign(policy=tr["cell"].map(cells))
    # The multi-fidelity facade trains on Hyperband's rungs; the HPO facade only full trainings.
    hpo = fid[fid["policy"].str.startswith("smac-hpo")]["fidelity"]
    mf = fid[fid["policy"].str.startswith("smac-mf")]["fidelity"]
    assert set(hpo) == {27} and {1, 3, 9} <= set(mf)


def test_the_snap_snippet_runs_as_written(tmp_path, monkeypatch, capsys):
    scope = library_snippet(tmp_path, monkeypatch, "optuna", "snap-demo")
    runs = scope["r"].runs
    stats = {p: list(g["policy_stats"]) for p, g in runs.groupby("policy")}
    nearest = stats["tpe-nearest(learner=kernel-svm)"]
    opened = stats["tpe-open(learner=kernel-svm, snap=nearest-open)"]
    assert len(nearest) == len(opened) == 2
    # What the README says it shows.
    for s in nearest + opened:
        assert s["snapped_share"] == 1.0 and 0.05 < s["snap_distance_mean"] < 0.2
        assert s["suggestions"] == 30 + s["repeats"]
    assert all(s["repeats"] > 0 for s in nearest) and all(s["repeats"] == 0 for s in opened)
    assert "tpe-open" in capsys.readouterr().out


def test_the_several_objectives_snippet_runs_as_written(tmp_path, monkeypatch):
    if os.environ.get("BANDITBENCH_REQUIRE_OPTUNA") != "1":
        pytest.importorskip("optuna")
    for folder in ("traces", "experiments", "Cargo.toml"):
        os.symlink(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    code = snippet("Several objectives", index=0)
    scope = {"__name__": "readme_several_objectives"}
    exec(compile(code, "README.md (Several objectives)", "exec"), scope)
    runs = scope["results"].runs
    assert set(runs["policy"]) == {"random-search", "optuna-nsga2(population_size=10, sampler=nsgaii)",
                                   "optuna-motpe", "optuna-tpe-val-acc(objectives=score)"}
    # 4 policies x 3 tasks x 3 repetitions, each ranked by its archive's hypervolume regret.
    assert len(runs) == 36 and runs["hv_regret"].between(0, 1).all()
    # The ranking's mean score is the mean hypervolume regret (3 datasets, the same cells each).
    ranking = scope["results"].ranking.set_index("policy")["mean_score"]
    mean = runs.groupby("policy")["hv_regret"].mean()
    assert ((ranking - mean.loc[ranking.index]).abs() < 1e-12).all()
    # The EAF difference as a DataFrame: regions on each of the 3 tasks, each with a share
    # difference in [-1, 1] that is not 0, drawn between the two policies' attainment.
    regions = scope["regions"]
    assert regions["panel"].nunique() == 3, regions["panel"].unique()
    assert regions["value"].between(-1, 1).all() and (regions["value"] != 0).all()
    assert set(scope["report"].tables["eaf_diff"]["series"].dropna()) >= {"optuna-motpe",
                                                                          "random-search"}


def test_the_optuna_studies_of_several_objectives_snippet_runs_as_written(tmp_path, monkeypatch):
    # Optuna's studies of two objectives imported on the pool they were made on, ranked beside
    # banditbench's own multi-objective policies by hypervolume regret.
    for folder in ("traces", "experiments", "examples", "Cargo.toml"):
        os.symlink(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    code = snippet("Several objectives", index=1)
    assert "import_runs(\"optuna\"" in code
    for attempt in (1, 2):  # "Run all" twice: the import and the run are kept, not redone
        scope = {"__name__": f"readme_optuna_mo_{attempt}"}
        exec(compile(code, "README.md (Several objectives, Optuna's studies)", "exec"), scope)
    theirs = scope["theirs"].runs
    assert len(theirs) == 18 and set(theirs["policy"]) == {"optuna:motpe", "optuna:nsga2",
                                                            "optuna:random"}
    import json
    expected = json.loads((ROOT / "examples/other-tools/optuna-mo/expected.json").read_text())
    for _, r in theirs.iterrows():
        e = expected[f"{r['policy'].split(':')[1]}.{r['dataset']}.{r['seed']}"]
        assert abs(r["hv_regret"] - e["hv_regret"]) <= 1e-12 * e["hv_regret"]
        assert r["front_size"] == e["distinct_front"]
    summary = scope["joint"].tables["summary"].set_index("policy")
    # Seven policies, each scored by its mean hypervolume regret over the three datasets.
    assert len(summary) == 7
    mean = theirs.groupby("policy")["hv_regret"].mean()
    for p, m in mean.items():
        assert abs(summary.loc[p, "mean_score"] - m) < 1e-12


def test_the_hebo_snippet_runs_as_written(tmp_path, monkeypatch):
    # In the venv of python/requirements-hebo.txt (not made by .ci/run): about 2.6 minutes.
    scope = library_snippet(tmp_path, monkeypatch, "hebo", "mlp-hebo")
    runs = scope["results"].runs
    assert list(runs["policy"]) == ["hebo(repeat=charge)"] * 2
    assert (runs["workers"] == 4).all() and (runs["budget_used"] == 27 * 12).all()


def test_the_neps_snippet_runs_as_written(tmp_path, monkeypatch):
    # In the venv of python/requirements-neps.txt (not made by .ci/run).
    scope = library_snippet(tmp_path, monkeypatch, "neps", "neps-demo")
    runs = scope["results"].runs
    assert set(runs["policy"]) == {"neps-asha(optimizer=asha)",
                                   "neps-hyperband(optimizer=hyperband)",
                                   "neps-random(optimizer=random_search)"}
    assert len(runs) == 6 and (runs["workers"] == 4).all()
    tr = scope["results"].trajectories
    asha = tr[tr["policy"].str.startswith("neps-asha")] if "policy" in tr else tr
    assert {1, 3, 9, 27} <= set(asha["fidelity"])
