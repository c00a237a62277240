"""Makespan of one experiment run four ways on the same cores, for `banditbench bench --only dask`.

    python dask_makespan.py --experiment EXP --processes P [--binary BANDITBENCH] --scratch DIR

1. `banditbench run EXP --threads 1`: its CPU seconds are the grid's work; the ideal makespan on P
   processes is that divided by P.
2. `banditbench run EXP --threads P`: the local route on the same cores.
3. `banditbench run EXP --shard I/P --threads 1` for I = 0..P-1 at once: static shards, finished
   when the slowest is, then `banditbench merge` (results are usable after it).
4. `banditbench.run(EXP, client=Client(LocalCluster(n_workers=P, threads_per_worker=1)))`: Dask's
   scheduler balances chunks of cells over P worker processes (the cluster is started before the
   clock; loading the data in each worker is counted).

Prints one line, `makespan key=value ...`, with the seconds of each and whether the Dask folder's
runs.parquet and trajectories.parquet equal the local run's byte for byte. Needs the wheel and
dask.distributed (pip install "distributed==2026.8.0").
"""

import argparse
import filecmp
import os
import resource
import subprocess
import sys
import time


def timed(cmds):
    """Start every command at once; (wall seconds until the last ends, children's CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for c in cmds]
    for p, c in zip(procs, cmds):
        _, err = p.communicate()
        if p.returncode != 0:
            sys.exit(f"{' '.join(c)} failed:\n{err.decode()[-2000:]}")
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--binary", help="the banditbench command [default: this Python's wheel]")
    ap.add_argument("--scratch", required=True)
    a = ap.parse_args()
    import banditbench
    from distributed import Client, LocalCluster

    p, exp = a.processes, os.path.abspath(a.experiment)
    b = [a.binary] if a.binary else [sys.executable, "-m", "banditbench._cli"]
    out = lambda name: os.path.join(a.scratch, name)  # noqa: E731
    run = b + ["run", exp, "--quiet"]
    one_s, cpu_s = timed([run + ["--threads", "1", "--out", out("one")]])
    local_s, _ = timed([run + ["--threads", str(p), "--out", out("local")]])
    shards_s, _ = timed([
        run + ["--threads", "1", "--shard", f"{i}/{p}", "--out", out(f"shard-{i}")]
        for i in range(p)
    ])
    merge_s, _ = timed([b + ["merge"] + [out(f"shard-{i}") for i in range(p)]
                        + ["--out", out("shards")]])
    shards_s += merge_s
    with LocalCluster(n_workers=p, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.wait_for_workers(p)
        t = time.perf_counter()
        banditbench.run(exp, out=out("dask"), client=client, progress=False)
        dask_s = time.perf_counter() - t
    # The trajectories byte for byte; the runs' every column but `program`, which names the
    # build of each cell (the wheel's in the workers, the binary's in the plain run).
    import pandas as pd

    runs = [pd.read_parquet(out(f"{d}/runs.parquet")).drop(columns="program") for d in ("dask", "one")]
    same = filecmp.cmp(out("dask/trajectories.parquet"), out("one/trajectories.parquet"),
                       shallow=False) and runs[0].equals(runs[1])
    cells = len(banditbench.Results(out("one")).runs)
    print(
        f"makespan cells={cells} processes={p} one_s={one_s:.3f} cpu_s={cpu_s:.3f} "
        f"local_s={local_s:.3f} shards_s={shards_s:.3f} dask_s={dask_s:.3f} "
        f"identical={'true' if same else 'false'}",
        flush=True,
    )


if __name__ == "__main__":
    main()
