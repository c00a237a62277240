"""banditbench's simulated workers against Syne Tune's simulator: ASHA and asynchronous Hyperband.

Both replay the same recorded table, one task of `traces/sklearn-grid` (a learner's 625-point grid
on one dataset and run, 27 units per curve, each unit's recorded training seconds), with 4 workers
and a budget of T simulated wall-clock seconds. The script
1. turns the task into a Syne Tune `BlackboxTabular` (hyper-parameters: the grid's level indices;
   fidelity `epoch` 1..27; objectives: the recorded validation accuracy and the cumulative recorded
   seconds, Syne Tune's `elapsed_time`) and runs Syne Tune's `ASHA` (brackets = 1) and `ASHA` with
   brackets = s_max + 1 = 4 (Syne Tune's asynchronous Hyperband; version 0.16 has no synchronous
   Hyperband any more) through `UserBlackboxBackend` + `Tuner(n_workers=4)` +
   `SimulatorCallback`, one run per seed, in three settings of Syne Tune's own clock:
   - `shipped`: Syne Tune's defaults (0.05 s delays on start, result, stop and completion; the
     tuner's 5 s tick while every worker is busy; the host's measured scheduler time added);
   - `fine`: no delays and a 0.01 s tick, the host's time still added;
   - `exact`: as `fine`, and the host's time not added (the time keeper's
     `real_time_since_last_recent_exit` patched to 0), the closest Syne Tune gets to an exact clock;
2. runs banditbench's `asha` and `async-hyperband` on the same task, 4 workers, T seconds, one
   repetition per seed;
3. compares the final incumbent (the best validation accuracy among the results in by T) per
   method: Mann–Whitney U (two-sided) and the mean difference with its Welch 95 % interval, Holm
   over the two methods within each setting; and the time per simulated evaluation (a unit of
   training: one reported result), measured in this process, as a ratio.

Environment (Python 3.11):

    python3 -m venv .venv-synetune && . .venv-synetune/bin/activate
    pip install -r scripts/reference/requirements-synetune.txt
    cargo build --release
    python scripts/reference/synetune_asha.py --seeds 30 --out scripts/reference/synetune-asha

It writes `<out>.csv` (one row per implementation, setting, method and seed) and `<out>.md`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
POOL = ROOT / "traces" / "sklearn-grid"


def load_task(dataset: str, learner: str, run: int):
    """The task's configurations (level indices), scores and cumulative seconds per unit."""
    configs = pq.read_table(POOL / "configs.parquet").to_pandas()
    configs = configs[configs.learner == learner]
    curves = pq.read_table(POOL / "curves" / f"{dataset}__{learner}__{run}.parquet").to_pandas()
    units = tomllib.loads((POOL / "pool.toml").read_text())["units"]
    curves = curves.sort_values(["config_id", "unit"])
    if (curves.status != "ok").any():
        sys.exit(f"{dataset}/{learner}/{run}: the cross-check needs a task without failed units")
    ids = sorted(curves.config_id.unique())
    levels = configs.set_index("config_id").loc[ids, "levels"]
    hp = pd.DataFrame(
        [[int(v) for v in s.split(",")] for s in levels],
        columns=[f"d{k}" for k in range(len(levels.iloc[0].split(",")))],
    )
    score = curves.pivot(index="config_id", columns="unit", values="score").loc[ids].to_numpy()
    cost = curves.pivot(index="config_id", columns="unit", values="cost_s").loc[ids].to_numpy()
    assert score.shape == (len(ids), units), score.shape
    return hp, score.astype(float), np.cumsum(cost.astype(float), axis=1), units


def syne_tune_runs(hp, score, elapsed, units, t_max, seeds, workers, settings):
    from syne_tune import StoppingCriterion, Tuner
    from syne_tune.backend.simulator_backend.simulator_backend import SimulatorConfig
    from syne_tune.backend.simulator_backend.simulator_callback import SimulatorCallback
    from syne_tune.backend.simulator_backend.time_keeper import SimulatedTimeKeeper
    from syne_tune.blackbox_repository.blackbox_tabular import BlackboxTabular
    from syne_tune.blackbox_repository.simulated_tabular_backend import UserBlackboxBackend
    from syne_tune.config_space import choice, randint
    from syne_tune.optimizer.baselines import ASHA

    logging.getLogger("syne_tune").setLevel(logging.ERROR)
    n_levels = {c: int(hp[c].max()) + 1 for c in hp.columns}
    config_space = {c: choice(list(range(n))) for c, n in n_levels.items()}
    evals = np.stack([score, elapsed], axis=-1)[:, None, :, :]  # (configs, 1 seed, units, 2)
    bb = BlackboxTabular(
        hyperparameters=hp,
        configuration_space=config_space,
        fidelity_space={"epoch": randint(1, units)},
        objectives_evaluations=evals,
        objectives_names=["accuracy", "elapsed_time"],
    )
    real_exit = SimulatedTimeKeeper.real_time_since_last_recent_exit
    rows = []
    for setting in settings:
        if setting == "shipped":
            sim, tick = SimulatorConfig(), 5.0
        else:
            sim, tick = SimulatorConfig(0.0, 0.0, 0.0, 0.0, 0.0), 0.01
        SimulatedTimeKeeper.real_time_since_last_recent_exit = (
            (lambda self: 0.0) if setting == "exact" else real_exit
        )
        for method, brackets in (("asha", 1), ("async-hyperband", 4)):
            for seed in seeds:
                np.random.seed(seed)  # Syne Tune draws a trial's bracket from numpy's global RNG
                backend = UserBlackboxBackend(
                    blackbox=bb,
                    elapsed_time_attr="elapsed_time",
                    simulator_config=sim,
                    tuner_sleep_time=tick,
                )
                scheduler = ASHA(
                    {**config_space, "epoch": units},
                    metric="accuracy",
                    do_minimize=False,
                    time_attr="epoch",
                    max_t=units,
                    grace_period=1,
                    reduction_factor=3,
                    brackets=brackets,
                    random_seed=seed,
                )
                with tempfile.TemporaryDirectory() as tmp:
                    os.environ["SYNETUNE_FOLDER"] = tmp
                    tuner = Tuner(
                        trial_backend=backend,
                        scheduler=scheduler,
                        stop_criterion=StoppingCriterion(max_wallclock_time=t_max),
                        n_workers=workers,
                        sleep_time=0,
                        callbacks=[SimulatorCallback()],
                        results_update_interval=1e9,
                        print_update_interval=1e9,
                        save_tuner=False,
                        tuner_name=f"bb-{method}-{seed}",
                        suffix_tuner_name=False,
                    )
                    t0 = time.process_time()
                    with contextlib.redirect_stdout(io.StringIO()):
                        tuner.run()
                    cpu = time.process_time() - t0
                    res = pd.read_csv(Path(tmp) / tuner.name / "results.csv.zip")
                in_time = res[res.st_tuner_time <= t_max]
                rows.append(
                    dict(
                        implementation="syne-tune",
                        setting=setting,
                        method=method,
                        seed=seed,
                        incumbent=float(in_time.accuracy.max()) if len(in_time) else math.nan,
                        evaluations=int(len(res)),
                        trials=int(res.trial_id.nunique()),
                        cpu_s=cpu,
                    )
                )
                print(f"syne-tune {setting} {method} seed {seed}: {rows[-1]}", file=sys.stderr)
    SimulatedTimeKeeper.real_time_since_last_recent_exit = real_exit
    return rows


def banditbench_runs(dataset, learner, run, t_max, seeds, workers, binary):
    exp = f"""
name = "synetune-crosscheck"
description = "Syne Tune cross-check: ASHA and asynchronous Hyperband, {workers} workers, {t_max} s."
traces = "{POOL}"
seed = 2026
repetitions = {len(seeds)}
trajectories = "none"

[tasks]
datasets = ["{dataset}"]
runs = [{run}]
learners = ["{learner}"]

[world]
kind = "pool"
per_learner = true
budget_unit = "seconds"
budgets = [{t_max}]
workers = {workers}
incumbent = "best-seen"
recommendation = "best-seen"

[[policies]]
family = "asha"

[[policies]]
family = "async-hyperband"
"""
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "x.toml"
        f.write_text(exp)
        r = subprocess.run(
            [binary, "run", str(f), "--out", f"{tmp}/out", "--quiet", "--threads", "1"],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            sys.exit(r.stderr)
        # The replay's own time: "ran N cells in X s" (loading the pool and writing excluded).
        m = re.search(r"ran \d+ cells in ([0-9.]+) s", r.stdout + r.stderr)
        if not m:
            sys.exit(f"no timing line in banditbench's output:\n{r.stdout}{r.stderr}")
        wall = float(m.group(1))
        runs = pq.read_table(f"{tmp}/out/runs.parquet").to_pandas()
    rows = []
    for _, x in runs.iterrows():
        rows.append(
            dict(
                implementation="banditbench",
                setting="exact",
                method=x.policy_family,
                seed=int(x.repetition),
                incumbent=float(x.best_score),
                evaluations=int(x.units_trained),
                trials=int(x.configs_drawn),
                cpu_s=math.nan,
            )
        )
    return rows, wall


def holm(ps):
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, run = [0.0] * len(ps), 0.0
    for k, i in enumerate(order):
        run = max(run, min(1.0, (len(ps) - k) * ps[i]))
        out[i] = run
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="phoneme")
    ap.add_argument("--learner", default="mlp")
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--settings", default="shipped,fine,exact")
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "banditbench"))
    ap.add_argument("--out", default=str(ROOT / "scripts" / "reference" / "synetune-asha"))
    a = ap.parse_args()
    import syne_tune

    hp, score, elapsed, units = load_task(a.dataset, a.learner, a.run)
    seeds = list(range(a.seeds))
    settings = a.settings.split(",")
    st = syne_tune_runs(hp, score, elapsed, units, a.seconds, seeds, a.workers, settings)
    bb, bb_wall = banditbench_runs(
        a.dataset, a.learner, a.run, a.seconds, seeds, a.workers, a.binary
    )
    df = pd.DataFrame(st + bb)
    df.to_csv(a.out + ".csv", index=False)

    task = f"{a.dataset}/{a.learner}/run {a.run}"
    md = [
        f"# Simulated workers: banditbench against Syne Tune {syne_tune.__version__}",
        "",
        f"Generated by `scripts/reference/synetune_asha.py` on `sklearn-grid`, task {task} "
        f"({len(hp)} configurations, {units} units, {elapsed[:, -1].mean():.2f} s of recorded "
        f"training per full curve on average), {a.workers} workers, {a.seconds:g} s of simulated "
        f"wall-clock time, {a.seeds} seeds per method. Final incumbent: the best validation accuracy "
        "among the results in by the end of the budget. Mann–Whitney U, two-sided; Δ = banditbench − "
        "Syne Tune, the mean with its Welch 95 % interval; Holm over the two methods within each "
        "setting of Syne Tune's clock (the settings are read side by side, not pooled).",
        "",
        "| Syne Tune clock | method | mean (banditbench) | mean (Syne Tune) | Δ [95 % CI] | MW p | MW p (Holm) | results per run (banditbench / Syne Tune) | trials per run (banditbench / Syne Tune) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    ours = df[df.implementation == "banditbench"]
    for setting in settings:
        theirs_all = df[(df.implementation == "syne-tune") & (df.setting == setting)]
        lines, ps = [], []
        for method in ("asha", "async-hyperband"):
            x = ours[ours.method == method].incumbent.round(6).to_numpy()
            y = theirs_all[theirs_all.method == method].incumbent.round(6).to_numpy()
            p = stats.mannwhitneyu(x, y, alternative="two-sided").pvalue
            t = stats.ttest_ind(x, y, equal_var=False)
            ci = t.confidence_interval(0.95)
            ps.append(p)
            lines.append(
                (
                    method,
                    x.mean(),
                    y.mean(),
                    x.mean() - y.mean(),
                    ci.low,
                    ci.high,
                    p,
                    ours[ours.method == method].evaluations.mean(),
                    theirs_all[theirs_all.method == method].evaluations.mean(),
                    ours[ours.method == method].trials.mean(),
                    theirs_all[theirs_all.method == method].trials.mean(),
                )
            )
        for line, ph in zip(lines, holm(ps)):
            m, mx, my, d, lo, hi, p, ex, ey, tx, ty = line
            lo_s = "nan" if math.isnan(lo) else f"{lo:+.4f}"
            hi_s = "nan" if math.isnan(hi) else f"{hi:+.4f}"
            md.append(
                f"| {setting} | {m} | {mx:.4f} | {my:.4f} | {d:+.4f} [{lo_s}, {hi_s}] | {p:.3f} | "
                f"{ph:.3f} | {ex:.0f} / {ey:.0f} | {tx:.0f} / {ty:.0f} |"
            )
    st_df = df[df.implementation == "syne-tune"]
    st_cpu = st_df.groupby("setting").apply(
        lambda g: g.cpu_s.sum() / g.evaluations.sum(), include_groups=False
    )
    bb_per = bb_wall / ours.evaluations.sum()
    md += [
        "",
        "Time per simulated evaluation (one reported unit of training), this machine, one thread, "
        "in one invocation: Syne Tune's is the process CPU time of `Tuner.run` over its results; "
        "banditbench's is the time `banditbench run --threads 1` reports for its cells (`ran N "
        "cells in X s`: the replay and the results' writing, without process start and reading the "
        "pool) over its units trained.",
        "",
        "| Syne Tune clock | Syne Tune (ms) | banditbench (ms) | ratio |",
        "|---|---|---|---|",
    ]
    for setting in settings:
        s_ms = 1000 * st_cpu[setting]
        md.append(f"| {setting} | {s_ms:.3f} | {1000 * bb_per:.4f} | {s_ms / (1000 * bb_per):.0f}x |")
    Path(a.out + ".md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
