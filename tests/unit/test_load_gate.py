"""The wall (gdres/engine/wall.py) without an engine: behind it, no abstract socket or signal reaches out
(the load gate's cases, each run under strace: tests/engine/test_load_gate.py)."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from gdres.engine import wall

SCOPE_PROBE = """
import os, socket, sys
report = {}
try:
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect("\\0" + sys.argv[1])
    report["abstract_socket"] = True
except OSError:
    report["abstract_socket"] = False
try:
    os.kill(int(sys.argv[2]), 0)
    report["signal_out"] = True
except OSError:
    report["signal_out"] = False
print(report)
"""


@pytest.mark.unit
@pytest.mark.skipif(wall.abi() < 6, reason="Landlock scopes sockets and signals from ABI 6 (Linux 6.12) on")
def test_behind_the_wall_no_abstract_socket_or_signal_reaches_out(tmp_path: Path) -> None:
    # A fourth red-team read: walled code reached an abstract Unix socket outside its domain (a session
    # bus, an agent) and could signal the bridge.
    import os
    import sys

    name = f"gdres-test-{os.getpid()}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(f"\0{name}")
    listener.listen(1)
    reads = [*map(Path, wall.SYSTEM_READ), Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent]
    argv = wall.argv([sys.executable, "-I", "-S", "-c", SCOPE_PROBE, name, str(os.getpid())], read=reads,
                     write=[tmp_path])
    with listener:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "{'abstract_socket': False, 'signal_out': False}", done.stdout + done.stderr
