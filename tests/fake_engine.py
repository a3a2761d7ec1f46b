"""A stand-in for Godot that misbehaves on purpose, for transport-fault tests only.

It speaks the worker protocol (`<15-digit length>\\n<JSON>` in, `<token> <length> <JSON>\\n` on
stderr out), answers `--version` like Godot and builds an (empty) settings pack when asked. What it does is chosen by:

- `FAKE_ENGINE_START` (environment, read at start): `ok` (default), `crash` (exit before the ready
  message), `hang` (never become ready), `deaf` (become ready, then never read stdin again).
- the request's `material_type`: `die` (print to stderr, exit 3), `hang` (sleep forever), `spawn`
  (start a child that shares its output, log its pid, then hang), `orphan` (start a grandchild whose
  parent exits at once, so it leaves the engine's tree, log its pid, then hang), `garbage` (a reply
  frame that is not JSON),
  `flood` (100 MB on stdout and on stderr, including a 10 MB line without end, then answer),
  `sleep:S` (answer after S seconds); anything else is answered at once.

`FAKE_ENGINE_LOG` names a file that gets one line per request received, to prove none is re-run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

MB = 1 << 20


def send(token: str, message: dict[str, object]) -> None:
    data = json.dumps(message).encode()
    sys.stderr.buffer.write(b"%s %d %s\n" % (token.encode(), len(data), data))
    sys.stderr.buffer.flush()


def flood() -> None:
    line = b"chatter " * 12 + b"\n"
    block = line * (MB // len(line))
    for _ in range(100):
        sys.stdout.buffer.write(block)
        sys.stderr.buffer.write(block)
    sys.stderr.buffer.write(b"y" * (10 * MB))
    sys.stderr.buffer.write(b"\n")
    sys.stdout.buffer.flush()
    sys.stderr.buffer.flush()


def record(entry: dict[str, object]) -> None:
    log = os.environ.get("FAKE_ENGINE_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(entry) + "\n")


def serve(token: str, request: dict[str, object]) -> None:
    kind = str(request.get("material_type", ""))
    if kind == "die":
        sys.stderr.write("fake engine: fatal error while serving\n")
        sys.stderr.flush()
        os._exit(3)
    if kind == "hang":
        time.sleep(3600)
    if kind == "spawn":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        record({"child": child.pid})
        time.sleep(3600)
    if kind == "orphan":
        starter = ("import subprocess, sys; print(subprocess.Popen([sys.executable, '-c', 'import time; "
                   "time.sleep(3600)'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)")
        started = subprocess.run([sys.executable, "-c", starter], capture_output=True, text=True, check=True)
        record({"child": int(started.stdout)})
        time.sleep(3600)
    if kind == "garbage":
        sys.stderr.write(f"{token} 12 {{not json at all\n")
        sys.stderr.flush()
        return
    if kind == "flood":
        flood()
    if kind.startswith("sleep:"):
        time.sleep(float(kind.split(":", 1)[1]))
    send(token, {"seq": request.get("seq"), "ok": True, "reply": {"type": kind, "pid": os.getpid()}})


def main() -> None:
    if "--version" in sys.argv:
        print("4.6.3.stable.fake")
        return
    if any(arg.endswith("make_pack.gd") for arg in sys.argv):
        # The bridge builds its settings pack with the engine first; a fake one needs no content.
        open(sys.argv[sys.argv.index("--") + 1], "wb").close()
        return
    token = sys.argv[sys.argv.index("--") + 1]
    start = os.environ.get("FAKE_ENGINE_START", "ok")
    if start == "crash":
        sys.stderr.write("fake engine: cannot open display\n")
        sys.exit(1)
    if start == "hang":
        time.sleep(3600)
    send(token, {"seq": 0, "ready": True, "version": "4.6.3.stable.fake"})
    if start == "deaf":
        time.sleep(3600)
    while header := sys.stdin.buffer.readline():
        request = json.loads(sys.stdin.buffer.read(int(header)))
        record(request)
        serve(token, request)


if __name__ == "__main__":
    main()
