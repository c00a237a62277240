"""How the recorder tests run banditbench: $BANDITBENCH_BIN when set, else the `banditbench`
command of the installed wheel, beside the running Python or on PATH (CI runs these tests in a
venv without cargo), else the binary `cargo test` or `cargo build` left, else `cargo run`."""
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def command():
    given = os.environ.get("BANDITBENCH_BIN")
    if given:
        return [given]
    scripts = os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")])
    installed = shutil.which("banditbench", path=scripts)
    if installed:
        return [installed]
    for profile in ("release", "debug"):
        built = REPO / "target" / profile / "banditbench"
        if built.is_file():
            return [str(built)]
    return ["cargo", "run", "--quiet", "--"]


def banditbench(*args):
    return subprocess.run([*command(), *args], cwd=REPO, capture_output=True, text=True)
