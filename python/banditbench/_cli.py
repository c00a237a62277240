"""The ``banditbench`` command of the Python package: the engine's command line, in-process."""

import signal
import sys


def main() -> None:
    from . import _engine

    # Ctrl-C ends the command at once, as it ends the binary (finished cells are on disk).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_engine.cli(sys.argv[1:]))


if __name__ == "__main__":
    main()
