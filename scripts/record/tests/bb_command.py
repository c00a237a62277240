"""How the recorder tests run banditbench: the `banditbench` command of the installed wheel when
there is one (CI runs these tests in a venv without cargo), else $BANDITBENCH_BIN, else the
binary `cargo test` or `cargo build` left, else `cargo run`."""
import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def command():
    given = os.environ.get("BANDITBENCH_BIN")
    if given:
        return [given]
    installed = shutil.which("banditbench")
    if installed:
        return [installed]
    for profile in ("release", "debug"):
        built = REPO / "target" / profile / "banditbench"
        if built.is_file():
            return [str(built)]
    return ["cargo", "run", "--quiet", "--"]


def banditbench(*args):
    return subprocess.run([*command(), *args], cwd=REPO, capture_output=True, text=True)
