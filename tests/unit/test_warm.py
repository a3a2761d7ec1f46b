"""What a warm host sends its client when a note cannot be sent as it is (run --warm against the real
engine: tests/engine/test_warm.py)."""

from __future__ import annotations

import socket
import threading

import pytest


def test_what_the_host_cannot_send_as_a_note_leaves_the_request_served(monkeypatch: pytest.MonkeyPatch) -> None:
    """A message with text that is not Unicode (a file name in another encoding) is sent escaped, and
    a client that reads nothing while its request is served makes the host drop its notes, not wait
    on them: the reply still ends its own line."""
    import logging

    from gdres.front import warm as warm_module
    from gdres.front import warm_host

    # Kept from pytest's capture, which cannot carry text that is not Unicode between its processes.
    monkeypatch.setattr(logging.getLogger("gdres"), "propagate", False)
    said: list[str] = []
    answers: list[object] = []
    host, client = socket.socketpair()
    with host, client:
        host.sendall(warm_module.TAKEN)
        with warm_host._notes_to(host) as notes:
            logging.getLogger("gdres").warning("gdres: wrote icons/r\udce9d.png.import")
            for _ in range(20_000):  # far beyond what the socket's buffer holds
                logging.getLogger("gdres").warning("gdres: importing: %s", "x" * 200)
        # The client reads again once the request is served.
        reader = threading.Thread(target=lambda: answers.append(
            warm_module._answer(client, lambda level, text: said.append(text))))
        reader.start()
        host.sendall(notes.reply_start + b'{"op": "resource_read", "result": "ok"}\n')
        host.shutdown(socket.SHUT_WR)
        reader.join(30)
    assert answers == [(True, {"op": "resource_read", "result": "ok"})]
    assert said[0] == "gdres: wrote icons/r\udce9d.png.import"
    assert 1 < len(said) < 20_001
