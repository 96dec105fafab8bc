"""Hub publish race fuzzer (issue 43, row 3's class): N concurrent first publishes of one version to
a new repo on the local Hub, each from its own copy of the sealed toy release (N machines), with
random start offsets and LFS or regular uploads. Whatever the interleaving: the repo is there at
the end with exactly one tag, holding the release's files; every publisher exits 0 or with one
typed line; every commit a publisher reports is the tagged one and on main, and the repo was never
deleted while it held another publisher's commit (a publisher that says it deleted the repo it
created did so before any commit landed: the tag's commit is the first after the Hub's own).

Each trial is a seeded draw, one test id per trial; the publishers are real ``benchsmith publish``
processes.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time

import pytest
from conftest import one_json, run_cli
from hub_server import LocalHub
from test_core_publish_hub import TOKEN as HUB_TOKEN
from test_core_publish_hub import online, releases  # noqa: F401 - fixtures
from test_core_seal import CLI, copy_sealed, sealed  # noqa: F401 - fixture

TRIALS = 5
SEED = 4330
TOKEN = "hf_raceToken0123456789abc"
REPO = "org/toy"


@pytest.mark.slow
@pytest.mark.fuzz("hub-publish-races")
@pytest.mark.parametrize("trial", range(TRIALS))
def test_concurrent_first_publishes_end_with_one_tag_and_true_messages(trial, sealed, tmp_path):  # noqa: F811
    rng = random.Random(SEED * 1000 + trial)
    n, lfs = rng.choice([2, 2, 3]), rng.random() < 0.5
    offsets = sorted(rng.uniform(0.0, 0.4) for _ in range(n))
    env = {**os.environ, "HF_HUB_OFFLINE": "0", "HF_TOKEN": TOKEN, "BENCHSMITH_HUB_RETRY_DELAYS": "0,0,0",
           "HF_HUB_DISABLE_XET": "1"}
    with LocalHub(token=TOKEN, lfs_suffixes=(".parquet",) if lfs else ()) as hub:
        procs = []
        start = time.monotonic()
        for i, offset in enumerate(offsets):
            time.sleep(max(0.0, start + offset - time.monotonic()))
            reg = tmp_path / f"machine{i}"
            target = copy_sealed(sealed, reg)
            env_i = {**env, "BENCHSMITH_HOME": str(tmp_path / f"home{i}")}
            procs.append(subprocess.Popen([sys.executable, "-c", CLI, "-q", "publish", str(target),
                                           "--hub", REPO, "--endpoint", hub.url, "--registry", str(reg), "--json"],
                                          env=env_i, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        results = []
        for p in procs:
            out, err = p.communicate(timeout=300)
            results.append((p.returncode, out, err))
        label = f"trial {trial}: {n} publishers, lfs={lfs}, offsets={[round(o, 2) for o in offsets]}: " + \
            "; ".join(f"{c} {err.strip()[-300:]}" for c, _, err in results)
        assert REPO in hub.repos, f"no repo at the end: {label}"
        repo = hub.repo(REPO)
        assert list(repo.tags) == ["1.1.0"], label
        tagged = repo.tags["1.1.0"]
        history = repo.history("main")
        assert tagged in history, label
        files = repo.files("1.1.0")
        sealed_files = {p.relative_to(sealed).as_posix() for p in sealed.rglob("*") if p.is_file()}
        assert sealed_files - {"README.md", "croissant.json"} <= set(files) - {".gitattributes", "seal.json"}, label
        # the tag's commit is the only publisher commit: nothing of another publisher was deleted or lost
        assert history.index(tagged) == len(history) - 2, label
    winners = 0
    for code, out, err in results:
        assert code in (0, 2), label
        assert "Traceback" not in err, label
        if code == 0:
            winners += 1
            assert json.loads(out.strip().splitlines()[-1])["commit"] == tagged, label
        else:
            lines = err.strip().splitlines()
            assert lines[-1].startswith("error: "), label
            assert "deleted again" not in lines[0] or len(history) == 2, label
    assert winners >= 1, label


def test_a_publisher_whose_tag_a_racer_of_the_same_release_made_first_is_already_published(releases, online,  # noqa: F811
                                                                                           capsys):
    """The fuzzer's trials 4 and 6: both publishers committed the same files (the second commit
    empty, skipped), the other tagged first, this one's tag got 409. It said "commit ... has no
    tag: publish the same release again", while the tag was there, on its files."""
    with LocalHub(token=HUB_TOKEN, intrude={"tag": 1}) as hub:
        code, out, err = run_cli(capsys, "publish", str(releases["1.1.0"].path), "--hub", REPO, "--endpoint",
                                 hub.url, "--json")
        assert code == 0, err
        got = one_json(out)
        assert got["already_published"] is True and got["commit"] == hub.repo(REPO).tags["1.1.0"]
