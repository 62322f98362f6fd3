"""`python -m pypto.scale.child FILE ARGS`: `pypto-sim FILE ARGS` as a supervised child.

The corpus runner starts each file this way. Besides running the file exactly as
`pypto-sim` does, the child watches the process that started it (PYPTO_SIM_PARENT):
when that Dask worker dies - killed, out of memory - the child ends too, instead of
simulating on as an orphan while the scheduler hands its file to another worker.
"""
from __future__ import annotations

import os
import threading
import time


def _watch_parent(pid: int, every: float = 0.5) -> None:
    def watch() -> None:
        while os.getppid() == pid:
            time.sleep(every)
        os._exit(137)  # the supervisor is gone: nobody will read our result

    threading.Thread(target=watch, name="pypto-sim-parent-watch", daemon=True).start()


def main() -> int:
    import sys

    from pypto.cli import main as cli_main

    parent = os.environ.pop("PYPTO_SIM_PARENT", "")
    if parent.isdigit():
        _watch_parent(int(parent))
    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
