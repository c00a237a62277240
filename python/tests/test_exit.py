"""The interpreter exits after a run whose Python policy (or a library it loads, as SMPyBandits
does) imports `threading` for the first time on an engine thread. Before banditbench imported
`threading` itself on the main thread, CPython took the engine thread for its main thread and
waited for it forever at exit."""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

REQUIRED = os.environ.get("BANDITBENCH_REQUIRE_ENGINE") == "1"

SCRIPT = textwrap.dedent(
    """
    import sys
    import banditbench as bb

    class FirstImport(bb.Policy):
        def __init__(self, cell, **kw):
            super().__init__(cell)
            import threading  # noqa: F401  (first import here, on the engine's thread)
            import queue  # noqa: F401
        def decide(self, view):
            return 0
        def observe(self, obs):
            pass

    EXP = {"name": "exit", "traces": sys.argv[1], "seed": 1, "repetitions": 2,
           "world": {"kind": "time-sliced", "budgets": [10.0], "slice": 2.0},
           "policies": [{"family": "round-robin"}]}
    bb.run(EXP, policies={"first-import": FirstImport}, out=sys.argv[2], progress=False)
    print("ran")
    """
)


def test_the_interpreter_exits_after_a_policy_imports_threading_on_an_engine_thread(tmp_path):
    try:
        import banditbench._engine  # noqa: F401
    except ImportError as e:
        if REQUIRED:
            pytest.fail(f"needs the engine: {e}")
        pytest.skip(f"needs the engine: {e}")
    script = tmp_path / "exit.py"
    script.write_text(SCRIPT)
    # A fresh interpreter: nothing has imported threading before banditbench.
    done = subprocess.run(
        [sys.executable, "-W", "ignore", str(script), str(ROOT / "tests" / "fixtures" / "tiny"), str(tmp_path / "out")],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ran"
