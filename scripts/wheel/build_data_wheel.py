#!/usr/bin/env python3
"""Build ``banditbench-data``, the companion wheel that carries the bundled trace sets and
experiments (``traces/`` and ``experiments/`` of this clone) to machines that install
banditbench from wheels.

The engine wheel (``maturin build``) is built once per platform; this data is the same
everywhere, so it ships once, as a pure-Python wheel (``py3-none-any``). Installed beside the
engine, ``import banditbench`` finds it and names its folder in ``BANDITBENCH_DATA``, so
``bb.run("quickstart")``, ``banditbench run quickstart`` and ``banditbench traces list`` work
from any folder.

The wheel is written as PEP 427 describes it (a zip with ``*.dist-info/{METADATA,WHEEL,
RECORD}``, each file's sha256 in RECORD), with fixed timestamps and sorted entries, so the same
clone gives the same bytes.

    python3 scripts/wheel/build_data_wheel.py --out dist
"""

import argparse
import base64
import hashlib
import os
import sys
import zipfile

NAME = "banditbench_data"
DIST = "banditbench-data"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

INIT = '''"""The bundled trace sets and experiments of banditbench (``traces/``, ``experiments/``)."""

import os

#: The folder holding ``traces/`` and ``experiments/``.
ROOT = os.path.dirname(os.path.abspath(__file__))
'''


def version() -> str:
    with open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("version"):
                return line.split("=", 1)[1].strip().strip('"')
    sys.exit("Cargo.toml: no version")


def files():
    """(path in the wheel, bytes) of every bundled file, sorted."""
    out = [(f"{NAME}/__init__.py", INIT.encode())]
    for top in ("traces", "experiments"):
        base = os.path.join(ROOT, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for fn in sorted(filenames):
                p = os.path.join(dirpath, fn)
                rel = os.path.relpath(p, ROOT).replace(os.sep, "/")
                with open(p, "rb") as f:
                    out.append((f"{NAME}/{rel}", f.read()))
    return sorted(out)


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build(out_dir: str) -> str:
    v = version()
    info = f"{NAME}-{v}.dist-info"
    metadata = (
        "Metadata-Version: 2.1\n"
        f"Name: {DIST}\n"
        f"Version: {v}\n"
        "Summary: The trace sets and experiments bundled with banditbench (recorded AutoML tuning traces)\n"
        "License: see traces/README.md: each trace set's licence is in its traceset.toml or pool.toml\n"
        "Requires-Python: >=3.9\n"
    ).encode()
    wheel = (
        "Wheel-Version: 1.0\n"
        "Generator: banditbench scripts/wheel/build_data_wheel.py\n"
        "Root-Is-Purelib: true\n"
        "Tag: py3-none-any\n"
    ).encode()
    entries = files() + [(f"{info}/METADATA", metadata), (f"{info}/WHEEL", wheel)]
    record = "".join(f"{p},{digest(b)},{len(b)}\n" for p, b in entries) + f"{info}/RECORD,,\n"
    entries.append((f"{info}/RECORD", record.encode()))
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{NAME}-{v}-py3-none-any.whl")
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for p, b in entries:
            zi = zipfile.ZipInfo(p, date_time=(1980, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, b)
    os.replace(tmp, path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="dist", help="folder to write the wheel to (default: dist)")
    args = ap.parse_args()
    path = build(args.out)
    n = len(zipfile.ZipFile(path).namelist())
    print(f"wrote {path}: {os.path.getsize(path) / 1e6:.1f} MB, {n} files")


if __name__ == "__main__":
    main()
