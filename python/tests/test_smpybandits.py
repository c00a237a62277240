"""SMPyBandits' policies through the protocol (needs `pip install -r
python/requirements-smpybandits.txt`; skipped without SMPyBandits unless
BANDITBENCH_REQUIRE_SMPYBANDITS=1, which .ci/run sets in the venv it makes for it)."""
import io
import json
import os
import subprocess
import sys

import pytest

if os.environ.get("BANDITBENCH_REQUIRE_SMPYBANDITS") != "1":
    pytest.importorskip("SMPyBandits")

from banditbench import serve  # noqa: E402
from banditbench.smpybandits import SMPyBanditsPolicy  # noqa: E402

from conftest import write_experiment  # noqa: E402


def play(params, rewards, seed=7, steps=60):
    """A pull-count cell driven by hand: arm i pays rewards[i] every time."""
    k = len(rewards)
    msgs = [{"type": "hello", "protocol": 1},
            {"type": "start", "cell": 0, "seed": seed, "repetition": 0, "task": "t/0", "dataset": "t",
             "world": "pull-count", "unit": "pulls", "budget": steps, "budget_abs": steps, "slice": 1.0,
             "arms": [f"a{i}" for i in range(k)], "policy": "smpy", "params": params}]
    # Replies depend on earlier ones, so the runner is fed one decision at a time through a pipe
    # of lines built as we go.
    arms = []
    pulls = [0] * k
    for step in range(steps):
        msgs.append({"type": "decide", "step": step, "used": float(step)})
        out = io.BytesIO()
        data = "".join(json.dumps(m) + "\n" for m in msgs).encode()
        serve(SMPyBanditsPolicy, stdin=io.BytesIO(data), stdout=out)
        reply = json.loads(out.getvalue().decode().splitlines()[-1])
        assert isinstance(reply, int), reply
        arms.append(reply)
        pulls[reply] += 1
        r = rewards[reply]
        msgs.append({"type": "observe", "arm": reply, "reward": r, "arm_clock": pulls[reply],
                     "exhausted": False, "revealed": [[pulls[reply], r]]})
    return arms


def test_klucb_finds_the_best_arm_and_is_deterministic():
    arms = play({"policy": "klUCB"}, [0.2, 0.9, 0.5], steps=40)
    assert arms[:3] == [0, 1, 2] or sorted(arms[:3]) == [0, 1, 2]
    assert arms[-10:].count(1) >= 8
    assert play({"policy": "klUCB"}, [0.2, 0.9, 0.5], steps=40) == arms


def test_thompson_sampling_is_seeded_by_the_cell():
    a = play({"policy": "Thompson"}, [0.4, 0.5, 0.45], seed=1, steps=30)
    assert play({"policy": "Thompson"}, [0.4, 0.5, 0.45], seed=1, steps=30) == a
    b = play({"policy": "Thompson"}, [0.4, 0.5, 0.45], seed=2, steps=30)
    assert a != b


def test_an_unknown_policy_is_named():
    out = io.BytesIO()
    msgs = [{"type": "start", "cell": 0, "seed": 1, "repetition": 0, "task": "t/0", "dataset": "t",
             "world": "pull-count", "unit": "pulls", "budget": 5, "budget_abs": 5, "slice": 1.0,
             "arms": ["a", "b"], "policy": "smpy", "params": {"policy": "NoSuchUCB"}},
            {"type": "decide", "step": 0, "used": 0.0}]
    serve(SMPyBanditsPolicy, stdin=io.BytesIO("".join(json.dumps(m) + "\n" for m in msgs).encode()), stdout=out)
    reply = json.loads(out.getvalue())
    assert "SMPyBandits has no policy 'NoSuchUCB'" in reply["message"]


def test_smpybandits_policies_run_through_the_binary(tmp_path, root, banditbench_bin):
    exp = write_experiment(tmp_path / "smpy.toml", f"""seed = 3
repetitions = 2
[world]
kind = "pull-count"
budgets = [20]
exhausted = "resample"
[[policies]]
family = "external"
name = "smpy"
command = ["{sys.executable}", "-m", "banditbench.smpybandits"]
params = {{ policy = ["klUCB", "MOSS", "UCBalpha", "Thompson"] }}
""")
    out = tmp_path / "out"
    run = subprocess.run([str(banditbench_bin), "run", str(exp), "--out", str(out), "--quiet", "--threads", "2"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    again = tmp_path / "again"
    subprocess.run([str(banditbench_bin), "run", str(exp), "--out", str(again), "--quiet", "--threads", "1"],
                   check=True)
    for f in ("runs.parquet", "trajectories.parquet"):
        assert (out / f).read_bytes() == (again / f).read_bytes(), f"{f} differs between 1 and 2 threads"
