"""`gdres doctor` (what Godot is used, whether the project and the wall are usable) and `gdres import`
(every asset of a project imported ahead of the requests)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from gdres import serving
from gdres.errors import BridgeError
from gdres.front import command, progress
from gdres.front.command import EXIT_ERROR, EXIT_OK
from gdres.requests import paths


def doctor(godot: str | None, project: str | None, as_json: bool) -> int:
    """Say which Godot is used (and every one found), whether `project` is one, and whether the
    wall is up; make the binary tokens of the bridge's scripts for that Godot; print the report,
    as JSON with `as_json`."""
    progress.log_to_stderr()
    report: dict[str, Any] = {"op": "doctor"}
    ok = True
    survey = serving.survey(godot)
    candidates = [finding.to_json() for finding in survey.findings]
    if survey.engine is not None:
        source = next(finding.source for finding in survey.findings if finding.chosen)
        report["godot"] = {"path": survey.engine.path, "version": survey.engine.version, "supported": True,
                           "source": source, "candidates": candidates}
    else:
        assert survey.error is not None
        report["godot"] = {"supported": False, "error": survey.error.to_wire(), "candidates": candidates}
        ok = False
    if project is None and os.path.isfile("project.godot"):
        project = "."  # run in a project, as `doctor .`
    held = False  # the project holds the cache folder: nothing is made there
    if project is not None:
        try:
            root = paths.project_root(project, os.getcwd())
            try:
                paths.cache_outside(root)
            except BridgeError:
                held = True
                raise
            imported = os.path.isdir(os.path.join(root, ".godot", "imported"))
            report["project"] = {"path": root, "valid": True, "imported": imported}
        except BridgeError as exc:
            report["project"] = {"path": project, "valid": False, "error": exc.to_wire()}
            ok = False
    if survey.engine is not None and not held:
        try:
            report["scripts"] = {"binary_tokens": True, "path": str(serving.compile_scripts(survey.engine))}
        except BridgeError as exc:
            # Not a fault: workers then compile the scripts from their sources, as before.
            report["scripts"] = {"binary_tokens": False, "error": exc.to_wire()}
    up, detail = serving.wall_status()
    report["wall"] = {"up": up, "detail": detail}
    report["result"] = "ok" if ok else "error"
    if as_json:
        command.print_json(report)
    else:
        sys.stdout.write(_doctor_text(report))
        sys.stdout.flush()  # here, where a reader gone is seen (cli.main()), as command.print_json() does
    return EXIT_OK if ok else EXIT_ERROR


def import_assets(args: argparse.Namespace) -> int:
    """Import every asset of a project not imported yet (gdres/serving/imports.py), with a
    progress bar; print one reply."""
    from pathlib import Path  # not at the top: a warm run's own process loads no pathlib

    progress.log_to_stderr()
    reply: dict[str, Any] = {"op": "import", "project_path": args.project}
    try:
        root = Path(paths.project_root(args.project, os.getcwd()))
        shown = progress.ImportBar(root) if progress.bar_wanted(args.progress) else serving.LoggedImport(root)
        outcome = serving.import_everything(args.godot, root, args.timeout, shown)
    except BridgeError as exc:
        command.print_json({**reply, "result": "error", "error": exc.to_wire()})
        return EXIT_ERROR
    reply.update(imported=len(outcome.imported), refused=outcome.refused)
    why = outcome.why_not()
    if why is None:
        command.print_json({**reply, "result": "ok"})
        return EXIT_OK
    command.print_json({**reply, "result": "error", "error": {"code": "not_imported", "message": why}})
    return EXIT_ERROR


def _doctor_text(report: dict[str, Any]) -> str:
    """The doctor's report for people: one line per thing checked, and what to do about a problem."""
    godot = report["godot"]
    if godot["supported"]:
        lines = [f"Godot:   {godot['path']} (version {godot['version']}): supported, found by {godot['source']}"]
    else:
        lines = [f"Godot:   not usable: {godot['error']['message']}"]
    if not godot["candidates"]:
        lines.append("Found:   no Godot on PATH or where its installers put it")
    else:
        used = "* marks the one used" if godot["supported"] else "none is used"
        lines.append(f"Found:   in search order; {used}")
    for candidate in godot["candidates"]:
        version = candidate["version"] if candidate["version"] is not None else "version unknown"
        lines.append(f"  {'*' if candidate['chosen'] else ' '} {candidate['source']}: {candidate['path']}")
        lines.append(f"      {version or 'no version printed'}: {candidate['reason']}")
    project = report.get("project")
    if project is not None and project["valid"]:
        state = ("imported" if project["imported"] else
                 "not imported yet (a request imports the assets it needs; `gdres import` imports all)")
        lines.append(f"Project: {project['path']}: a Godot project, {state}")
    elif project is not None:
        lines.append(f"Project: not usable: {project['error']['message']}")
    scripts = report.get("scripts")
    if scripts is not None and scripts["binary_tokens"]:
        lines.append(f"Scripts: compiled to this Godot's binary tokens, so engines start sooner ({scripts['path']})")
    elif scripts is not None:
        lines.append(f"Scripts: engines compile them from source (no binary tokens: {scripts['error']['message']})")
    lines.append(f"Wall:    {report['wall']['detail']}")
    lines.append("Ready." if report["result"] == "ok" else "Not ready: see above.")
    return "\n".join(lines) + "\n"
