"""Hostile-Hub fuzzer (issue 43, the probe's Hub class): against a local Hub that, in random
combinations, drips its answers, redirects (to itself in a loop, or to another host), lists a
huge tree, answers garbage JSON or a 5xx to a kind of read, and echoes the ``Authorization``
header into an error, ``diff hf://...`` and ``publish --hub`` end within a bound with a typed
exit (0, or a last line ``error: ...`` and no traceback, ``-v`` included), no token or endpoint
password appears in any output, log or record, the other host never receives a credential, and
nothing is written outside the cache, the registry and huggingface_hub's home.

Each case is a seeded draw (one test id per case); a ``diff`` case first publishes the toy to a
well-behaved Hub, then turns it hostile.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from conftest import run_cli
from hub_server import LocalHub, go_online
from test_core_publish_hub import releases  # noqa: F401 - fixture

from benchsmith.reference import MAX_HUB_ENTRIES

CASES = 16
SEED = 4310
TOKEN = "hf_hostileHubToken0123456789"
PASSWORD = "urlPasswordHostile42"
REPO = "org/toy"
KINDS = ("info", "refs", "tree", "paths-info", "resolve", "commits")
#: a 5xx read costs ~23 s of huggingface_hub's backoff (BOUND_S): one behaviour in six, to keep the slow run short
BEHAVIOURS = ("garbage", "garbage", "loop", "away", "away", "503")
#: the longest a case's command may take: a few requests at BENCHSMITH_HUB_DEADLINE=1s each, and
#: huggingface_hub's own backoff on a 5xx read (1+2+4+8+8 s, BENCHSMITH_HUB_RETRY_DELAYS does not apply)
BOUND_S = 150


def draw(case: int) -> dict:
    rng = random.Random(SEED * 1000 + case)
    kinds = rng.sample(KINDS, rng.randint(0 if case % 4 else 1, 3))
    return {
        "command": "diff" if case % 2 else "publish",
        "verbose": rng.random() < 0.5,
        "password": rng.random() < 0.4,  # an endpoint http://user:PASSWORD@host
        "hostile": {k: rng.choice(BEHAVIOURS) for k in kinds},
        "drip": rng.choice([0.0, 0.0, 0.0, 0.01]),
        "padding": MAX_HUB_ENTRIES + 1 if rng.random() < 0.2 else 0,
        "echo": rng.random() < 0.4,  # a failing commit whose error holds the Authorization header
    }


def files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow
@pytest.mark.fuzz("hostile-hub")
@pytest.mark.parametrize("case", range(CASES))
def test_a_hostile_hub_ends_in_bounded_time_typed_and_leaks_no_secret(case, releases, tmp_path, capsys,  # noqa: F811
                                                                       monkeypatch):
    d = draw(case)
    go_online(monkeypatch)
    home, hf, reg, cwd = tmp_path / "home", tmp_path / "hf", tmp_path / "reg", tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setenv("BENCHSMITH_HOME", str(home))
    monkeypatch.setenv("HF_HOME", str(hf))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("BENCHSMITH_HUB_RETRY_DELAYS", "0,0,0")
    monkeypatch.setenv("BENCHSMITH_HUB_TIMEOUT", "2")
    monkeypatch.setenv("BENCHSMITH_HUB_DEADLINE", "1")
    monkeypatch.chdir(cwd)
    release = releases["1.1.0"]
    with LocalHub() as away, LocalHub(token=TOKEN, redirect_to=away.url) as hub:
        endpoint = hub.url.replace("http://", f"http://user:{PASSWORD}@") if d["password"] else hub.url
        if d["command"] == "diff":
            code, _, err = run_cli(capsys, "-q", "publish", str(release.path), "--hub", REPO, "--endpoint", hub.url)
            assert code == 0, err
            argv = ["diff", f"hf://datasets/{REPO}@1.1.0", str(release.path), "--endpoint", endpoint]
        else:
            argv = ["publish", str(release.path), "--hub", REPO, "--endpoint", endpoint, "--registry", str(reg)]
        before = files_under(tmp_path)
        hub.hostile, hub.drip, hub.listing_padding = d["hostile"], d["drip"], d["padding"]
        if d["echo"]:
            hub.fail["commit"], hub.echo_auth = 500, True
        start = time.monotonic()
        code, out, err = run_cli(capsys, *(["-v"] if d["verbose"] else []), *argv)
        took = time.monotonic() - start
        received, reached = list(away.authorizations), len(away.requests)
    label = f"{d} -> {code} in {took:.1f} s: {err.strip().splitlines()[-1:] if err.strip() else ''}"
    assert took < BOUND_S, label
    assert code in (0, 1, 2, 3), label
    assert "Traceback" not in out + err, label
    if code != 0:
        assert err.strip().splitlines()[-1].startswith("error: "), label
    # without -v, lines before the error are huggingface_hub's retry warnings at most
    logs = ("WARNING ",) if not d["verbose"] else ("WARNING ", "DEBUG ", "INFO ")
    assert all(line.startswith(logs) for line in err.strip().splitlines()[:-1]), label
    for secret in (TOKEN, PASSWORD):
        assert secret not in out + err, (secret, label)
        for path in (home, reg, hf, cwd):
            for f in (p for p in path.rglob("*") if p.is_file()):
                assert secret.encode() not in f.read_bytes(), (secret, f, label)
    assert received == [], f"the other host received {received}: {label}"
    new = files_under(tmp_path) - before
    allowed = ("home/", "hf/", "reg/")
    assert all(p.startswith(allowed) for p in new), (sorted(p for p in new if not p.startswith(allowed)), label)
    assert list(cwd.iterdir()) == [], label
    print(f"case {case}: exit {code} in {took:.1f} s; the other host answered {reached} requests")
