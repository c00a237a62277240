"""Would ordering cells by a known cost shorten a Dask run? Each chunk `banditbench.run(...,
client=...)` would send out, replayed one after another in this process (the data loaded first),
then the makespan on P workers of greedy list scheduling in submission order (what Dask does
with equal workers) against longest-first (what known costs would allow) and the ideal.

    python chunk_costs.py --experiment EXP [--processes 2] [--chunk-cells N]

Needs the wheel. Prints one line per quantity.
"""
import argparse
import shutil
import tempfile
import time


def makespan(costs, m):
    loads = [0.0] * m
    for c in costs:
        i = loads.index(min(loads))
        loads[i] += c
    return max(loads)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--chunk-cells", type=int)
    a = ap.parse_args()
    from banditbench import api

    engine = api._engine()
    out = tempfile.mkdtemp(prefix="banditbench-chunk-costs-")
    try:
        todo = engine.RunSession(a.experiment, out=out, fresh=True).todo()
        engine.run_chunk(a.experiment, todo[:1])
        costs = []
        for chunk in api._chunks(todo, a.processes, a.chunk_cells):
            t = time.perf_counter()
            engine.run_chunk(a.experiment, chunk)
            costs.append(time.perf_counter() - t)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    total, p = sum(costs), a.processes
    print(f"chunks {len(costs)}, {total:.2f} s in all, from {min(costs):.3f} s to {max(costs):.3f} s each")
    print(f"ideal on {p} workers {total / p:.3f} s; in submission order {makespan(costs, p):.3f} s; "
          f"longest first {makespan(sorted(costs, reverse=True), p):.3f} s")


if __name__ == "__main__":
    main()
