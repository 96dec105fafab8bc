"""publish --hub through the CLI against a local in-memory Hub (tests/hub_server.py), then
``datasets.load_dataset`` reads the published tag back through ``HF_ENDPOINT``.

The toy releases (1.1.0 with both configs, 1.0.0 with ``short`` only) are built and
validated once for the module; publishing never writes into a release.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
from conftest import one_json, run_cli
from hub_server import GITATTRIBUTES, LocalHub, closed_port, go_online
from process_helpers import file_size_limit
from toy_builder import FIXTURES, RegisteredToyBuilder, ToyBuilder

from benchsmith import progress
from benchsmith.builder import register, unregister
from benchsmith.cli import main
from benchsmith.release import Release

TOKEN = "hf_localTestToken0123456789"
REPO = "org/toy"


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> dict[str, Release]:
    reg = tmp_path_factory.mktemp("hubreg")
    register(RegisteredToyBuilder)  # publishable: its source's checksum is registered
    progress.set_enabled(False)
    try:
        with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(io.StringIO()):
            mp.setenv("BENCHSMITH_HOME", str(tmp_path_factory.mktemp("bshome")))
            for extra in ([], ["--version", "1.0.0", "--config", "short"]):
                assert main(["-q", "build", "toy", *extra, "--sources", str(FIXTURES), "--registry", str(reg)]) == 0
            for version in ("1.1.0", "1.0.0"):
                # the toy's "sentence number 2" / "... 22" pairs are near duplicates at the default 0.8
                assert main(["-q", "validate", str(reg / "toy" / version), "--near-dup-threshold", "0.95",
                             "--baselines", "none", "--json"]) == 0
        yield {v: Release(reg / "toy" / v) for v in ("1.1.0", "1.0.0")}
    finally:
        unregister("toy")
        progress.set_enabled(None)


@pytest.fixture
def online(monkeypatch):
    """huggingface_hub may make HTTP calls, with our test token (never a real one)."""
    go_online(monkeypatch)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setenv("BENCHSMITH_HUB_RETRY_DELAYS", "0,0,0")  # transient faults retried without waiting


@pytest.fixture
def hub(online):
    with LocalHub(token=TOKEN) as h:
        yield h


def publish(capsys, release: Release, endpoint: str, *extra: str) -> tuple[int, str, str]:
    return run_cli(capsys, "publish", str(release.path), "--hub", REPO, "--endpoint", endpoint, *extra)


def files_of(release: Release, repo: str = REPO) -> dict[str, bytes]:
    """The files a Hub tag of ``release`` must hold: the release's own, with the card, Croissant
    and lm_eval/ rendered for the Hub copy (snippet and configs naming the repo and revision)."""
    from benchsmith.cards.card import render_files

    out = {p.relative_to(release.path).as_posix(): p.read_bytes()
           for p in release.path.rglob("*") if p.is_file()}
    rendered = render_files(release, ToyBuilder(release.version), hub={"repo": repo, "revision": release.version})
    out.update({rel: text.encode("utf-8") for rel, text in rendered.items()})
    return out


def published(repo, revision: str) -> dict[str, bytes]:
    """The files of a tag but its seal.json, after checking that seal.json lists exactly them
    (but .gitattributes) with their sizes and sha256."""
    import hashlib

    files = dict(repo.files(revision))
    listing = json.loads(files.pop("seal.json"))
    assert {f["path"]: (f["size"], f["sha256"]) for f in listing["files"]} == {
        p: (len(b), hashlib.sha256(b).hexdigest()) for p, b in files.items() if p != ".gitattributes"}
    return files


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def snapshot(hub: LocalHub) -> dict:
    return {rid: (dict(r.branches), dict(r.tags), len(r.commits)) for rid, r in hub.repos.items()}


# ------------------------------------------------------------------------ round trip

LOAD = """
import json, sys
import datasets
out = {}
for config, revision in json.loads(sys.argv[1]):
    d = datasets.load_dataset(sys.argv[2], config, revision=revision)
    out[config] = {"features": d[next(iter(d))].features.to_dict(), "splits": {s: d[s].to_list() for s in d}}
print(json.dumps(out))
"""


def load_from_hub(hub: LocalHub, tmp: Path, wanted: list[tuple[str, str]]) -> dict:
    """``datasets.load_dataset(REPO, config, revision=...)`` in a fresh interpreter whose only
    Hub is the local one (huggingface_hub and datasets read these variables at import)."""
    env = {
        "PATH": os.environ.get("PATH", ""), "HOME": str(tmp), "HF_ENDPOINT": hub.url,
        "HF_HOME": str(tmp / "hf"), "HF_DATASETS_CACHE": str(tmp / "hf" / "datasets"),
        "HF_HUB_OFFLINE": "0", "HF_DATASETS_OFFLINE": "0", "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    }
    proc = subprocess.run([sys.executable, "-c", LOAD, json.dumps(wanted), REPO], env=env, cwd=tmp, check=False,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_publish_then_load_dataset_from_the_tag(releases, hub, capsys, tmp_path):
    release = releases["1.1.0"]
    code, out, err = publish(capsys, release, hub.url, "--json")
    assert code == 0, err
    result = one_json(out)
    assert result["published"] == f"{REPO}@1.1.0" and result["tag"] == "1.1.0"
    assert result["repo_created"] is True and result["removed"] == []
    assert TOKEN not in out + err
    repo = hub.repo(REPO)
    assert repo.tags == {"1.1.0": result["commit"]} and repo.branches["main"] == result["commit"]
    assert published(repo, "1.1.0") == {**files_of(release), ".gitattributes": GITATTRIBUTES}
    card = repo.files("1.1.0")["README.md"].decode()
    assert f'load_dataset("{REPO}"' in card and 'revision="1.1.0"' in card  # the Hub copy's snippet
    assert (release.path / "README.md").read_text() != card  # the local release is left as it was
    assert hub.unknown == []

    loaded = load_from_hub(hub, tmp_path, [(c, "1.1.0") for c in release.configs()])
    for config in release.configs():
        assert datasets.Features.from_dict(loaded[config]["features"]) == release.features(config)
        assert sorted(loaded[config]["splits"]) == sorted(release.splits(config))
        for split in release.splits(config):
            assert loaded[config]["splits"][split] == release.table(config, split).to_pylist()
    assert hub.unknown == [], "load_dataset called an endpoint the test Hub does not serve"


def _writes(requests: list[str]) -> list[str]:
    return [r for r in requests if "/preupload/" in r or "/commit/" in r or "/tag/" in r or "/_lfs/" in r]


def test_publishing_the_same_release_again_is_already_published(releases, hub, capsys):
    assert publish(capsys, releases["1.1.0"], hub.url)[0] == 0
    before, seen = snapshot(hub), len(hub.requests)
    code, out, err = publish(capsys, releases["1.1.0"], hub.url)
    assert code == 0, err
    assert out.startswith("already published toy 1.1.0 -> org/toy@1.1.0"), out
    assert snapshot(hub) == before and _writes(hub.requests[seen:]) == []


def test_already_published_is_recorded_in_a_registry_that_did_not_know_it(releases, hub, capsys, tmp_path):
    code, out, err = publish(capsys, releases["1.1.0"], hub.url, "--json")
    assert code == 0, err
    commit = one_json(out)["commit"]
    other = tmp_path / "runner-b-registry"  # another runner's registry: no marker there yet
    code, out, err = publish(capsys, releases["1.1.0"], hub.url, "--registry", str(other), "--json")
    assert code == 0, err
    assert one_json(out)["already_published"] is True and one_json(out)["commit"] == commit
    marker = json.loads((other / "toy" / ".published" / "1.1.0.json").read_text())
    assert marker["hub"] == [{"repo": REPO, "tag": "1.1.0", "commit": commit, "endpoint": hub.url}]


def test_an_existing_tag_with_other_content_is_never_moved(releases, hub, capsys):
    from benchsmith.testing.hub import File

    assert publish(capsys, releases["1.1.0"], hub.url)[0] == 0
    repo = hub.repo(REPO)
    files = repo.commits[repo.tags["1.1.0"]]
    shard = next(p for p in files if p.startswith("data/"))
    files[shard] = File(files[shard].data + b"\0", lfs=files[shard].lfs)  # the tag holds other data
    before, seen = snapshot(hub), len(hub.requests)
    code, out, err = publish(capsys, releases["1.1.0"], hub.url)
    assert code == 2 and out == ""
    line = one_line(err)
    assert f"{REPO} already has a tag 1.1.0 with other content ({shard}:" in line
    assert "never overwritten" in line and "Bump" in line
    assert snapshot(hub) == before and _writes(hub.requests[seen:]) == []


# ------------------------------------------------------------------------ retries and read-back


def test_transient_faults_are_retried_once_each_commit(releases, online, capsys):
    with LocalHub(token=TOKEN, flaky={"commit": (503, 2), "tag": (429, 1), "tree": (502, 1)}) as hub:
        code, out, err = publish(capsys, releases["1.1.0"], hub.url, "--json")
        assert code == 0, err
        repo = hub.repo(REPO)
        assert len(repo.commits) == 2  # the repo's first commit and the release's
        assert repo.tags["1.1.0"] == one_json(out)["commit"] == repo.branches["main"]
        assert sum(" 503" in r and "/commit/" in r for r in hub.requests) == 2
        assert hub.flaky == {"commit": (503, 0), "tag": (429, 0), "tree": (502, 0)}


def test_a_commit_whose_response_was_lost_is_not_made_twice(releases, online, capsys):
    with LocalHub(token=TOKEN, lose={"commit": 1, "tag": 1}) as hub:
        code, out, err = publish(capsys, releases["1.1.0"], hub.url, "--json")
        assert code == 0, err
        repo = hub.repo(REPO)
        assert len(repo.commits) == 2, "the lost commit was made again"
        assert sum("/commit/" in r for r in hub.requests) == 1 and sum("/tag/" in r for r in hub.requests) == 1
        assert repo.tags == {"1.1.0": one_json(out)["commit"]} == {"1.1.0": repo.branches["main"]}


def test_a_fault_that_does_not_clear_is_one_line_after_the_retries(releases, online, capsys):
    with LocalHub(token=TOKEN, flaky={"commit": (503, 99)}) as hub:
        code, out, err = publish(capsys, releases["1.1.0"], hub.url)
        assert code == 2 and out == ""
        assert "503" in one_line(err) and "deleted again" in err
        assert sum("/commit/" in r for r in hub.requests) == 4  # the first try and 3 retries
        assert hub.repos == {}


def test_a_file_the_hub_holds_otherwise_is_named_after_the_commit(releases, hub, capsys, monkeypatch):
    from benchsmith.testing.hub import File

    real = hub.commit

    def corrupting(repo_id, revision, ndjson, base):  # a hook or proxy that changes one upload
        out = real(repo_id, revision, ndjson, base)
        files = hub.repos[repo_id].commits[out["commitOid"]]
        files["croissant.json"] = File(files["croissant.json"].data.replace(b"{", b"{ ", 1))
        return out

    monkeypatch.setattr(hub, "commit", corrupting)
    code, out, err = publish(capsys, releases["1.1.0"], hub.url)
    assert code == 2 and out == ""
    line = one_line(err)
    assert "the Hub does not hold what was uploaded" in line and "bytes on the Hub" in line
    assert "croissant.json:" in line and "deleted again" in line


def test_the_viewer_check_runs_before_anything_is_uploaded(releases, hub, capsys, monkeypatch):
    from benchsmith import publish as pub

    real = pub._hub_rendered

    def broken(release, repo_id):  # a card whose configs: YAML names a config the release lacks
        out = dict(real(release, repo_id))
        out["README.md"] = out["README.md"].replace("config_name: short", "config_name: shortish", 1)
        return out

    monkeypatch.setattr(pub, "_hub_rendered", broken)
    code, out, err = publish(capsys, releases["1.1.0"], hub.url)
    assert code == 2 and out == ""
    line = one_line(err)
    assert "dataset viewer would not accept toy 1.1.0: README.md:" in line and "nothing was uploaded" in line
    assert hub.requests == []


# ------------------------------------------------------------------------ snapshots checked against seal.json


def test_a_snapshot_is_checked_against_its_seal_json(releases, hub, capsys, monkeypatch, tmp_path):
    from benchsmith.errors import ReleaseError
    from benchsmith.reference import resolve
    from benchsmith.testing.hub import File

    assert publish(capsys, releases["1.1.0"], hub.url)[0] == 0
    ref = f"hf://datasets/{REPO}@1.1.0"
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "a"))
    assert resolve(ref, endpoint=hub.url).seal_note is None

    repo = hub.repo(REPO)
    files = repo.commits[repo.tags["1.1.0"]]
    files["README.md"] = File(files["README.md"].data + b"\nedited\n")
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "b"))  # a new runner: downloads again
    with pytest.raises(ReleaseError, match=r"does not match its seal.json: README.md has \d+ bytes"):
        resolve(ref, endpoint=hub.url)

    del files["seal.json"]  # not published by benchsmith: accepted, with a note
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "c"))
    note = resolve(ref, endpoint=hub.url).seal_note
    assert "has no seal.json" in note and "manifest only" in note


def test_each_tag_holds_exactly_its_own_files(releases, hub, capsys):
    new, old = releases["1.1.0"], releases["1.0.0"]  # 1.0.0 was built with --config short only
    assert publish(capsys, new, hub.url)[0] == 0
    code, out, err = publish(capsys, old, hub.url, "--allow-partial", "--json")
    assert code == 0, err
    removed = one_json(out)["removed"]
    assert removed == sorted(set(files_of(new)) - set(files_of(old)))
    assert removed and all(p.startswith("data/plain/") for p in removed)
    repo = hub.repo(REPO)
    assert published(repo, "1.0.0") == {**files_of(old), ".gitattributes": GITATTRIBUTES}
    assert published(repo, "1.1.0") == {**files_of(new), ".gitattributes": GITATTRIBUTES}
    assert repo.tags["1.0.0"] == repo.branches["main"] != repo.tags["1.1.0"]


# ------------------------------------------------------------------------ failures: one line, exit 2


def test_offline_is_one_line(releases, capsys, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # as a user's HF_HUB_OFFLINE=1 sets it
    with LocalHub() as hub:
        code, out, err = publish(capsys, releases["1.1.0"], hub.url, "--json")
    assert code == 2 and out == ""
    line = one_line(err)
    assert "HF_HUB_OFFLINE is set" in line and REPO in line and "Unset HF_HUB_OFFLINE" in line
    assert hub.requests == []


def test_connection_refused_is_one_line(releases, online, capsys):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    code, out, err = publish(capsys, releases["1.1.0"], endpoint, "--json")
    assert code == 2 and out == ""
    line = one_line(err)
    assert "cannot reach the Hub" in line and "ConnectError" in line and endpoint in line and REPO in line
    assert "--endpoint" in line and TOKEN not in err


def test_a_failed_commit_deletes_the_repo_it_created(releases, online, capsys):
    with LocalHub(token=TOKEN, fail={"commit": 500}) as hub:
        code, out, err = publish(capsys, releases["1.1.0"], hub.url, "--json")
        assert code == 2 and out == ""
        line = one_line(err)
        assert "500" in line and f"the repo {REPO} it created was deleted again" in line
        assert hub.repos == {}, "an empty repo was left behind"
        assert any(r.startswith("DELETE /api/repos/delete 200") for r in hub.requests)


def test_a_failed_commit_leaves_an_existing_repo_as_it_was(releases, hub, capsys):
    assert publish(capsys, releases["1.0.0"], hub.url, "--allow-partial")[0] == 0
    before, files = snapshot(hub), hub.repo(REPO).files("main")
    hub.fail["commit"] = 500
    code, _, err = publish(capsys, releases["1.1.0"], hub.url)
    assert code == 2
    assert f"{REPO} was left as it was" in one_line(err)
    assert snapshot(hub) == before and hub.repo(REPO).files("main") == files


def test_a_failed_tag_says_to_publish_again_and_that_tags_it(releases, hub, capsys):
    assert publish(capsys, releases["1.0.0"], hub.url, "--allow-partial")[0] == 0
    hub.fail["tag"] = 500
    code, _, err = publish(capsys, releases["1.1.0"], hub.url)
    assert code == 2
    assert "has no tag" in one_line(err) and "publish the same release again" in err
    repo = hub.repo(REPO)
    head, commits = repo.branches["main"], len(repo.commits)
    assert "1.1.0" not in repo.tags
    del hub.fail["tag"]
    code, out, err = publish(capsys, releases["1.1.0"], hub.url, "--json")
    assert code == 0, err
    assert one_json(out)["commit"] == head == repo.tags["1.1.0"] and len(repo.commits) == commits


def test_a_racing_publisher_s_commit_is_never_deleted(releases, online, capsys):
    """Two first publishes of one version to a new repo: this one creates the repo, the other's
    commit lands first, this one's commit gets 412. Its cleanup must leave the repo (and the
    other's commit) alone: the race ends with the other publisher's work on the Hub."""
    with LocalHub(token=TOKEN, intrude={"commit": 1}) as hub:
        code, _, err = publish(capsys, releases["1.1.0"], hub.url)
        assert code == 2
        line = one_line(err)
        assert "412" in line and "another publisher made meanwhile, so it was left as it was" in line
        repo = hub.repo(REPO)
        assert "intruder.txt" in repo.files("main") and len(repo.history("main")) == 2


def test_a_failed_tag_on_a_new_repo_deletes_only_its_own_commit(releases, online, capsys):
    with LocalHub(token=TOKEN, fail={"tag": 500}) as hub:
        code, _, err = publish(capsys, releases["1.1.0"], hub.url)
        assert code == 2 and f"the repo {REPO} it created was deleted again" in one_line(err)
        assert hub.repos == {}


def test_publishing_with_no_token_says_none_was_found(releases, online, capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no stored token either
    monkeypatch.setattr("huggingface_hub.constants.HF_TOKEN_PATH", str(tmp_path / "hf" / "token"))
    monkeypatch.setattr("huggingface_hub.constants.HF_STORED_TOKENS_PATH", str(tmp_path / "hf" / "stored_tokens"))
    with LocalHub(token=TOKEN) as hub:
        code, _, err = publish(capsys, releases["1.1.0"], hub.url)
        line = one_line(err)
        assert code == 2 and "no Hub token was found" in line and "refused the token" not in line
        assert "HF_TOKEN" in line and "hf auth login" in line
        assert hub.repos == {}


def test_the_token_is_never_printed(releases, online, capsys, monkeypatch):
    wrong = "hf_wrongSecretToken987654321"
    monkeypatch.setenv("HF_TOKEN", wrong)
    with LocalHub(token=TOKEN) as hub:
        code, out, err = publish(capsys, releases["1.1.0"], hub.url, "--json")
        assert code == 2 and out == ""
        assert "refused the token (401" in one_line(err) and "HF_TOKEN" in err and wrong not in err
        assert hub.repos == {}
    # a Hub (or a proxy) that puts the Authorization header into its error: redacted
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with LocalHub(token=TOKEN, fail={"commit": 500}, echo_auth=True) as hub:
        code, out, err = publish(capsys, releases["1.1.0"], hub.url, "--json")
        assert code == 2 and out == ""
        assert "Bearer ***" in one_line(err) and TOKEN not in err


def test_verbose_logs_hold_no_token_and_no_traceback(releases, online, capsys, tmp_path, monkeypatch):
    """-v prints huggingface_hub's and httpcore's debug logs: a Hub that echoes the Authorization
    header, and a password in --endpoint, are masked in every line; the handled failure stays
    one error line (the last), with no traceback."""
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    password = "urlSecretPassw0rd"
    with LocalHub(token=TOKEN, fail={"commit": 500}, echo_auth=True) as hub:
        endpoint = hub.url.replace("http://", f"http://user:{password}@")
        code, out, err = run_cli(capsys, "-v", "publish", str(releases["1.1.0"].path), "--hub", REPO,
                                 "--endpoint", endpoint)
    assert code == 2 and "DEBUG" in err  # -v did add detail
    assert TOKEN not in err + out and password not in err + out
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("error: ")


def test_an_endpoint_password_is_never_recorded(releases, online, capsys, tmp_path):
    password = "urlSecretPassw0rd"
    reg = tmp_path / "reg"
    with LocalHub() as hub:
        endpoint = hub.url.replace("http://", f"http://user:{password}@")
        code, out, err = publish(capsys, releases["1.1.0"], endpoint, "--registry", str(reg), "--json")
        assert code == 0, err
        assert password not in out + err
    records = list(reg.rglob("*.json"))
    assert records and not [p for p in records if password in p.read_text(encoding="utf-8")]
    for extra in ([], ["--json"]):
        code, out, err = run_cli(capsys, "show", str(reg / "toy" / "1.1.0"), *extra)
        assert code == 0 and "user:***@" in out + err and password not in out + err


def test_a_hub_that_drips_its_answers_is_one_line_in_bounded_time(releases, hub, capsys, monkeypatch, tmp_path):
    import time

    assert publish(capsys, releases["1.1.0"], hub.url)[0] == 0
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    monkeypatch.setenv("BENCHSMITH_HUB_DEADLINE", "1")
    hub.drip = 0.05  # every answer takes ~20 s and more, one byte at a time
    start = time.monotonic()
    code, _, err = run_cli(capsys, "diff", f"hf://datasets/{REPO}@1.1.0", str(releases["1.1.0"].path),
                           "--endpoint", hub.url)
    assert time.monotonic() - start < 15
    line = one_line(err)
    assert code == 3 and f"reading the Hub repo {REPO} failed: the Hub did not answer in time" in line
    assert "BENCHSMITH_HUB_DEADLINE=1s" in line and "publish" not in line.lower()


def test_a_hub_that_drips_its_headers_is_stopped_by_the_deadline(releases, hub, capsys, tmp_path):
    """Headers sent one byte every 0.5 s: each read comes well within the 5 s of silence allowed,
    so only a deadline over the whole answer ends ``diff hf://`` (before it, it held for minutes)."""
    import time

    assert publish(capsys, releases["1.1.0"], hub.url)[0] == 0
    hub.drip_headers = 0.5  # ~80 s for the first answer's headers alone
    env = {**os.environ, "BENCHSMITH_HOME": str(tmp_path), "HF_HUB_OFFLINE": "0",
           "BENCHSMITH_HUB_TIMEOUT": "5", "BENCHSMITH_HUB_DEADLINE": "2"}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "benchsmith.cli", "diff", f"hf://datasets/{REPO}@1.1.0",
                           str(releases["1.1.0"].path), "--endpoint", hub.url],
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    took = time.monotonic() - start
    line = one_line(proc.stderr)
    assert proc.returncode == 3 and proc.stdout == "", proc.stderr
    assert f"cannot read hf://datasets/{REPO}@1.1.0 from {hub.url}: reading the Hub repo {REPO} failed" in line
    assert "took longer than 2s" in line and "BENCHSMITH_HUB_DEADLINE=2s" in line, line
    assert took < 40, took  # the interpreter's start (seconds on a busy machine) + the 2 s deadline


def test_a_download_that_cannot_be_stored_is_exit_3_naming_the_cache(releases, hub, capsys, monkeypatch, tmp_path):
    assert publish(capsys, releases["1.1.0"], hub.url)[0] == 0
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    with file_size_limit(1024):  # `ulimit -f 1`: the snapshot's files do not fit
        code, _, err = run_cli(capsys, "diff", f"hf://datasets/{REPO}@1.1.0", str(releases["1.1.0"].path),
                               "--endpoint", hub.url)
    line = err.strip().splitlines()[-1]  # after huggingface_hub's own warning about its tree cache
    cache = tmp_path / "cache" / "hub" / REPO.replace("/", "--")
    assert "Traceback" not in err
    assert code == 3 and f"{cache}: cannot write: File too large (EFBIG)" in line, line
    assert [p.name for p in cache.iterdir() if ".tmp-" in p.name] == []  # no partial snapshot left


def test_a_huge_listing_is_refused_before_any_download(releases, hub, capsys, monkeypatch, tmp_path):
    from benchsmith.reference import MAX_HUB_ENTRIES

    assert publish(capsys, releases["1.1.0"], hub.url)[0] == 0
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    hub.listing_padding = MAX_HUB_ENTRIES + 1
    code, _, err = run_cli(capsys, "diff", f"hf://datasets/{REPO}@1.1.0", str(releases["1.1.0"].path),
                           "--endpoint", hub.url)
    assert code == 2 and f"lists more than {MAX_HUB_ENTRIES:,} files and folders" in one_line(err)
    assert not any("/resolve/" in r for r in hub.requests), "a file was downloaded"


LIMITED_FDS = """
import resource, sys
sys.path.insert(0, sys.argv[1])
resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))  # ulimit -n 1024
from toy_builder import RegisteredToyBuilder
from benchsmith.builder import register
from benchsmith.cli import main
register(RegisteredToyBuilder)
sys.exit(main(["-q", "publish", *sys.argv[2:]]))
"""


def test_a_release_of_1100_files_publishes_under_ulimit_n_1024(releases, online, capsys, tmp_path, monkeypatch):
    """Publishing holds a bounded number of descriptors, not one per file (locally and to the Hub)."""
    import shutil

    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "home"))
    big = tmp_path / "r" / "toy" / "1.1.0"
    shutil.copytree(releases["1.1.0"].path, big)
    (big / "extra").mkdir()
    for i in range(1100):
        (big / "extra" / f"note-{i:04d}.txt").write_text(f"note {i}\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "-q", "validate", str(big), "--near-dup-threshold", "0.95", "--baselines", "none",
                           "--json")
    assert code == 0, err
    env = {**os.environ, "HF_HUB_OFFLINE": "0"}
    tests = str(Path(__file__).parent)
    local = subprocess.run([sys.executable, "-c", LIMITED_FDS, tests, str(big), "--registry", str(tmp_path / "reg")],
                           capture_output=True, text=True, env=env, timeout=300, check=False)
    assert local.returncode == 0, local.stderr[-2000:]
    assert len(list((tmp_path / "reg" / "toy" / "1.1.0" / "extra").iterdir())) == 1100
    with LocalHub(token=TOKEN, max_requests=5000) as hub:
        remote = subprocess.run([sys.executable, "-c", LIMITED_FDS, tests, str(big), "--hub", REPO, "--endpoint",
                                 hub.url, "--registry", str(tmp_path / "reg3")],
                                capture_output=True, text=True, env=env, timeout=300, check=False)
        assert remote.returncode == 0, remote.stderr[-2000:]
        tagged = hub.repo(REPO).files("1.1.0")
        assert sum(p.startswith("extra/") for p in tagged) == 1100 and tagged["extra/note-1099.txt"] == b"note 1099\n"
    left = [p.name for p in (tmp_path / "reg3" / "toy").iterdir() if p.name.startswith(".")]
    assert set(left) <= {".published", ".locks"}, f"staging left behind: {left}"


# ------------------------------------------------------------------------ xet


@pytest.fixture
def xet_env_unset(monkeypatch):
    """The user's shell: HF_HUB_DISABLE_XET not exported (tests/conftest.py exports it)."""
    from huggingface_hub import constants

    monkeypatch.delenv("HF_HUB_DISABLE_XET", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
    return constants


@pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")  # huggingface_hub's LFS PUT
def test_xet_is_off_for_a_hub_without_it(releases, online, xet_env_unset, capsys):
    pytest.importorskip("hf_xet")
    with LocalHub(token=TOKEN, lfs_suffixes=(".parquet",)) as hub:
        code, _, err = publish(capsys, releases["1.1.0"], hub.url)
        assert code == 0, err
        assert any("/info/lfs/objects/batch" in r for r in hub.requests)
        assert not any("xet" in r for r in hub.requests)
        repo = hub.repo(REPO)
        lfs = {p for p, f in repo.commits[repo.tags["1.1.0"]].items() if f.lfs}
        assert lfs == {p for p in files_of(releases["1.1.0"]) if p.endswith(".parquet")}
    assert xet_env_unset.HF_HUB_DISABLE_XET is False, "the library setting must be restored"


def test_an_explicit_xet_choice_is_kept_and_its_failure_is_one_line(releases, online, xet_env_unset, capsys,
                                                                     monkeypatch):
    pytest.importorskip("hf_xet")
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "0")
    with LocalHub(token=TOKEN, lfs_suffixes=(".parquet",)) as hub:
        code, out, err = publish(capsys, releases["1.1.0"], hub.url)
        assert code == 2 and out == ""
        line = one_line(err)
        assert "the xet upload failed" in line and "HF_HUB_DISABLE_XET=1" in line
        assert f"the repo {REPO} it created was deleted again" in line
        assert any("xet-write-token" in r for r in hub.requests)
        assert hub.repos == {}


def test_retry_delays_and_what_is_transient(monkeypatch):
    import httpx
    from huggingface_hub.errors import HfHubHTTPError

    from benchsmith import publish as pub
    from benchsmith.errors import PublishError

    monkeypatch.delenv("BENCHSMITH_HUB_RETRY_DELAYS", raising=False)
    assert pub.retry_delays() == pub.RETRY_DELAYS
    monkeypatch.setenv("BENCHSMITH_HUB_RETRY_DELAYS", "1, 2.5")
    assert pub.retry_delays() == (1.0, 2.5)
    monkeypatch.setenv("BENCHSMITH_HUB_RETRY_DELAYS", "")
    assert pub.retry_delays() == ()
    for bad in ("soon", "1,-2"):
        monkeypatch.setenv("BENCHSMITH_HUB_RETRY_DELAYS", bad)
        with pytest.raises(PublishError, match="is not a list of seconds"):
            pub.retry_delays()

    def http(status: int) -> HfHubHTTPError:
        return HfHubHTTPError("x", response=httpx.Response(status, request=httpx.Request("GET", "http://hub")))

    assert [pub.transient(http(s)) for s in (429, 500, 503, 400, 401, 404, 409, 412)] == [True] * 3 + [False] * 5
    assert pub.transient(httpx.ConnectError("refused")) and pub.transient(httpx.ReadTimeout("slow"))
    assert pub.transient(TimeoutError()) and not pub.transient(ValueError("bad"))
