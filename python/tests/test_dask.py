"""`banditbench.run(..., client=...)` on a real dask.distributed LocalCluster of worker processes:
the folder equals a local run's byte for byte (a pool world with simulated workers, a
learner-level world, in-process Python policies), a rerun resumes, a worker killed mid-run has its
chunk run again and no cell twice, and a failing cell stops the run naming it, keeping the rest.
Skipped without dask.distributed unless BANDITBENCH_REQUIRE_DASK=1."""
import os
import signal
import sys
import threading
import time

import pytest

if os.environ.get("BANDITBENCH_REQUIRE_DASK") != "1":
    pytest.importorskip("distributed")

import cloudpickle  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

import banditbench as bb  # noqa: E402
from banditbench import Policy  # noqa: E402

from conftest import ROOT, greedy_policy, installed_command, write_experiment  # noqa: E402

FILES = ["runs.parquet", "trajectories.parquet", "experiment.lock.toml"]

# The classes below travel to the workers by value, as a notebook's do.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        c.wait_for_workers(2)
        yield c


def same(a, b):
    for f in FILES:
        x, y = (a / f).read_text() if f.endswith(".toml") else (a / f).read_bytes(), None
        y = (b / f).read_text() if f.endswith(".toml") else (b / f).read_bytes()
        if f.endswith(".toml"):
            # A dict experiment runs from a temporary file, whose name the lock file records.
            x, y = ([l for l in t.splitlines() if not l.startswith("experiment_file")]
                    for t in (x, y))
        assert x == y, f


def pool_experiment(tmp_path, repetitions=3):
    path = tmp_path / "pool.toml"
    path.write_text(f"""name = "pool"
traces = "{ROOT / 'traces' / 'sklearn-grid'}"
seed = 4
repetitions = {repetitions}
[tasks]
datasets = ["car", "phoneme"]
runs = [0]
learners = ["mlp"]
[world]
kind = "pool"
per_learner = true
budget_unit = "units"
budgets = [60]
workers = 2
[[policies]]
family = "asha"
[[policies]]
family = "random-search"
[[policies]]
family = "hyperband"
""")
    return path


def test_a_dask_run_equals_a_local_run_and_a_rerun_resumes(tmp_path, client, capfd):
    exp = pool_experiment(tmp_path)
    bb.run(exp, out=tmp_path / "local", progress=False)
    r = bb.run(exp, out=tmp_path / "dask", client=client, chunk_cells=5)
    same(tmp_path / "local", tmp_path / "dask")
    assert len(r.runs) == 2 * 3 * 3
    assert "ran 18 cells" in capfd.readouterr().err
    bb.run(exp, out=tmp_path / "dask", client=client)
    err = capfd.readouterr().err
    assert "ran 0 cells" in err and "18 were already finished" in err, err
    same(tmp_path / "local", tmp_path / "dask")


def test_options_that_do_not_apply_to_a_client_are_refused_before_anything_runs(tmp_path, client):
    exp = pool_experiment(tmp_path)
    with pytest.raises(ValueError, match="batch_size does not apply"):
        bb.run(exp, out=tmp_path / "a", client=client, batch_size=4)
    with pytest.raises(ValueError, match="chunk_cells is 0"):
        bb.run(exp, out=tmp_path / "b", client=client, chunk_cells=0)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_learner_level_world_and_a_cache_through_dask(tmp_path, client, capfd):
    exp = write_experiment(tmp_path / "ll.toml", """seed = 3
repetitions = 4
[world]
kind = "pull-count"
budgets = [20, 40]
exhausted = "resample"
[[policies]]
family = "ucb1"
[[policies]]
family = "epsilon-greedy"
epsilon = [0.1, 0.3]
""")
    bb.run(exp, out=tmp_path / "local", progress=False)
    cache = tmp_path / "cache"
    bb.run(exp, out=tmp_path / "d1", client=client, chunk_cells=7, cache=cache, cache_min_s=0)
    assert "0 came from the cell cache and 48 were stored" in capfd.readouterr().err
    bb.run(exp, out=tmp_path / "d2", client=client, chunk_cells=7, cache=cache, cache_min_s=0)
    assert "48 came from the cell cache and 0 were stored" in capfd.readouterr().err
    same(tmp_path / "local", tmp_path / "d1")
    same(tmp_path / "local", tmp_path / "d2")


Greedy = greedy_policy()


class FailsOnSecondTask(Policy):
    def decide(self, view):
        if self.cell.dataset == "d2" and view.step == 2:
            raise ValueError("no arm for d2")
        return view.step % view.n_arms


def test_in_process_python_policies_run_on_the_workers(tmp_path, client):
    spec = {"name": "py", "traces": str(ROOT / "tests/fixtures/tiny"), "seed": 3,
            "repetitions": 3,
            "world": {"kind": "pull-count", "budgets": [15], "exhausted": "resample"},
            "policies": [{"family": "ucb1"}]}
    bb.run(spec, policies={"g": Greedy}, out=tmp_path / "local", progress=False)
    bb.run(spec, policies={"g": Greedy}, out=tmp_path / "dask", client=client, chunk_cells=2,
           progress=False)
    same(tmp_path / "local", tmp_path / "dask")


def test_a_failing_cell_stops_the_run_naming_it_and_keeps_the_rest(tmp_path, client):
    spec = {"name": "fails", "traces": str(ROOT / "tests/fixtures/tiny"), "seed": 3,
            "repetitions": 2,
            "world": {"kind": "pull-count", "budgets": [15], "exhausted": "resample"}}
    with pytest.raises(bb.BanditbenchError) as e:
        bb.run(spec, policies={"f": FailsOnSecondTask}, out=tmp_path / "dask", client=client,
               chunk_cells=1, progress=False)
    text = str(e.value)
    assert "no arm for d2" in text and "the run stopped" in text and "kept in" in text, text
    # The cells of d1 that finished are kept, and a rerun of the same command fails again on d2.
    kept = bb.Results(tmp_path / "dask").runs
    assert set(kept["dataset"]) <= {"d1"}


def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(tmp_path):
    # D-TTTS cells (about 5 ms each) in chunks of 20: the run lasts seconds, and one of the two
    # worker processes is killed once the first chunk is in. Its nanny starts another; Dask runs
    # the lost chunk again; each chunk is taken once.
    exp = tmp_path / "slow.toml"
    exp.write_text(f"""name = "slow"
traces = "{ROOT / 'traces' / 'sklearn-grid'}"
seed = 5
repetitions = 10
[tasks]
datasets = ["car", "phoneme", "chess"]
runs = [0]
learners = ["mlp"]
[world]
kind = "pool"
per_learner = true
budget_unit = "evaluations"
budgets = [30]
[[policies]]
family = "d-ttts"
[[policies]]
family = "random-search"
""")
    bb.run(exp, out=tmp_path / "local", progress=False)
    out = tmp_path / "dask"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        c.wait_for_workers(2)
        pids = list(c.run(os.getpid).values())
        killed = []

        def kill_when_a_part_is_in():
            deadline = time.time() + 60
            while time.time() < deadline:
                parts = out / "parts"
                if parts.is_dir() and any(p.name.startswith("runs-") for p in parts.iterdir()):
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])
                    return
                time.sleep(0.01)

        t = threading.Thread(target=kill_when_a_part_is_in)
        t.start()
        bb.run(exp, out=out, client=c, chunk_cells=20, progress=False)
        t.join()
    assert killed, "no part was published before the run ended"
    same(tmp_path / "local", out)


def test_bench_dask_measures_the_four_ways(tmp_path):
    import shutil
    import subprocess

    cmd = installed_command()
    if cmd is None:
        pytest.skip("the wheel's banditbench command is neither beside this Python nor on PATH")
    exp = pool_experiment(tmp_path, repetitions=2)
    p = subprocess.run([cmd, "bench", "--only", "dask", "--dask-python", sys.executable,
                        "--dask-experiment", str(exp)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    line = next(l for l in p.stdout.splitlines() if l.startswith("dask: "))
    assert "(12 cells," in line and "Dask LocalCluster" in line and "static shards" in line, line
    assert line.endswith("the Dask folder equals the local run's: yes"), line


def test_a_slurm_cluster_through_dask_jobqueue(tmp_path):
    # dask-jobqueue's SLURMCluster on the real one-node Slurm CI starts (scripts/ci/slurm.sh up):
    # two batch jobs, each a Dask worker, replay the chunks; the folder equals a local run's.
    import shutil
    import subprocess

    up = shutil.which("sbatch") and subprocess.run(
        ["scontrol", "ping"], capture_output=True).returncode == 0
    if not up:
        assert not os.environ.get("BANDITBENCH_REQUIRE_SLURM"), "Slurm required but not running"
        pytest.skip("no Slurm controller answers (scripts/ci/slurm.sh up starts one)")
    if os.environ.get("BANDITBENCH_REQUIRE_SLURM") != "1":
        pytest.importorskip("dask_jobqueue")
    from dask_jobqueue import SLURMCluster

    exp = pool_experiment(tmp_path)
    bb.run(exp, out=tmp_path / "local", progress=False)
    with SLURMCluster(cores=1, processes=1, memory="1GB", walltime="00:10:00",
                      python=sys.executable, log_directory=str(tmp_path / "logs"),
                      scheduler_options={"dashboard_address": None}) as cluster, \
            Client(cluster) as c:
        cluster.scale(jobs=2)
        c.wait_for_workers(2, timeout=120)
        bb.run(exp, out=tmp_path / "slurm", client=c, chunk_cells=3, progress=False)
    same(tmp_path / "local", tmp_path / "slurm")
