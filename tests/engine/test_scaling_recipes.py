"""docs/scaling.md's recipes, run as written: the GitHub Actions matrix, the Kubernetes Indexed Job and GNU
parallel each share examples/shards/requests.jsonl over three shards, and the merged result is one batch's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, mask_drawn, snapshot

pytestmark = [pytest.mark.engine, pytest.mark.timeout(600),
              pytest.mark.skipif(os.name == "nt", reason="the recipes are POSIX shell (bash, sort, GNU parallel)")]

_SHARDS = REPO / "examples" / "shards"


@pytest.fixture
def repository(tmp_path: Path, godot_bin: str) -> Path:
    """A git repository holding examples/ as this one does, committed: what each runner checks out."""
    origin = tmp_path / "origin"
    shutil.copytree(REPO / "examples", origin / "examples")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=origin, check=True)
    return origin


def _env(godot_bin: str, **extra: str) -> dict[str, str]:
    """A runner's environment: GODOT_BIN set, and `gdres` on PATH, as the install step leaves them."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return {**os.environ, "GODOT_BIN": godot_bin, "PATH": path, **extra}


def _clone(origin: Path, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(origin), str(target)], check=True)
    return target


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _one_batch(origin: Path, tmp_path: Path, godot_bin: str) -> tuple[dict[str, str], str]:
    """The project and replies after one `gdres batch` of the whole requests file."""
    whole = _clone(origin, tmp_path / "whole")
    done = _bash("cd examples/project && gdres batch --no-progress ../shards/requests.jsonl", whole, _env(godot_bin))
    assert done.returncode == 0, done.stderr
    return _project(whole), mask_drawn(done.stdout)


def _project(clone: Path) -> dict[str, str]:
    root = clone / "examples" / "project"
    return {path: mask_drawn((root / path).read_text(encoding="utf-8", errors="replace")) for path in snapshot(root)
            if not path.startswith(".godot/")}



def _merged(merge: Path, outs: list[str], godot_bin: str) -> tuple[dict[str, str], str]:
    done = _bash(f"bash examples/shards/merge.sh {' '.join(outs)}", merge, _env(godot_bin))
    assert done.returncode == 0, done.stderr
    replies = (merge / "replies.jsonl").read_text()
    assert [json.loads(line)["line"] for line in replies.splitlines()] == list(range(1, 27))
    return _project(merge), mask_drawn(replies)


def test_the_github_actions_matrix_merges_into_one_batch(repository: Path, tmp_path: Path, godot_bin: str) -> None:
    workflow = yaml.safe_load((_SHARDS / "github-actions.yml").read_text())
    shard_job, merge_job = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    assert shard_job["strategy"]["matrix"]["shard"] == [1, 2, 3] and merge_job["needs"] == "shard"
    step = next(s for s in shard_job["steps"] if "serve.sh" in s.get("run", ""))
    merge_step = next(s for s in merge_job["steps"] if "merge.sh" in s.get("run", ""))
    merge = _clone(repository, tmp_path / "merge")
    for shard in (1, 2, 3):
        runner = _clone(repository, tmp_path / f"runner-{shard}")
        done = _bash(step["run"].replace("${{ matrix.shard }}", str(shard)), runner,
                     _env(godot_bin, **workflow["env"]))
        assert done.returncode == 0, done.stderr
        # upload-artifact, then download-artifact with a pattern: a folder per artifact, by its name
        shutil.copytree(runner / f"shard-{shard}", merge / f"shard-{shard}")
    done = _bash(merge_step["run"], merge, _env(godot_bin))
    assert done.returncode == 0, done.stderr
    assert (_project(merge), mask_drawn((merge / "replies.jsonl").read_text())) == _one_batch(repository, tmp_path,
                                                                                           godot_bin)


def test_the_kubernetes_indexed_job_merges_into_one_batch(repository: Path, tmp_path: Path, godot_bin: str) -> None:
    job = yaml.safe_load((_SHARDS / "kubernetes-job.yaml").read_text())
    spec = job["spec"]
    assert (job["kind"], spec["completionMode"], spec["completions"]) == ("Job", "Indexed", 3)
    container = spec["template"]["spec"]["containers"][0]
    assert container["workingDir"] == "/game" and container["command"] == ["bash", "-c"]
    out = tmp_path / "out"
    for index in range(3):
        pod = _clone(repository, tmp_path / f"pod-{index}")
        script = container["args"][0].replace("/out/", f"{out}/")
        done = _bash(script, pod, _env(godot_bin, JOB_COMPLETION_INDEX=str(index)))
        assert done.returncode == 0, done.stderr
    merge = _clone(repository, tmp_path / "merge")
    assert _merged(merge, [str(out / f"shard-{i}") for i in range(3)], godot_bin) == _one_batch(repository, tmp_path,
                                                                                             godot_bin)


def test_the_gnu_parallel_recipe_on_one_machine_merges_into_one_batch(repository: Path, tmp_path: Path,
                                                                     godot_bin: str) -> None:
    page = (REPO / "docs" / "scaling.md").read_text()
    recipe = page.split("The same on one machine")[1].split("```sh\n")[1].split("```")[0]
    here = _clone(repository, tmp_path / "checkout")
    done = _bash(recipe, here, _env(godot_bin))
    assert done.returncode == 0, done.stderr
    replies = mask_drawn((here / "replies.jsonl").read_text())
    assert (_project(here), replies) == _one_batch(repository, tmp_path, godot_bin)


def test_the_merge_says_when_a_shards_output_is_missing(repository: Path, tmp_path: Path, godot_bin: str) -> None:
    here = _clone(repository, tmp_path / "checkout")
    for shard, lines in (("shard-1", (1, 3)), ("shard-2", (2,))):
        (here / shard).mkdir()
        (here / shard / "changes.patch").write_text("")
        (here / shard / "replies.jsonl").write_text("".join(f'{{"line":{n},"result":"ok"}}\n' for n in lines))
    assert _bash("bash examples/shards/merge.sh shard-1 shard-2", here, _env(godot_bin)).returncode == 0
    left_out = _bash("bash examples/shards/merge.sh shard-1", here, _env(godot_bin))
    assert left_out.returncode == 1 and "2 replies for lines 1 to 3" in left_out.stderr
