"""The card's body (``templates/dataset_card.md.j2``): every branch says what the release holds
(Hub location, validation report short and long, baselines, skipped splits, missing configs,
pending errata, harvested, "Changes since"), no local path reaches it, and a value the card needs
and the manifest lacks is an error, not an empty cell."""

from __future__ import annotations

import copy
from typing import Any

import jinja2
import pytest
from comve_helpers import GOOD, FixtureComVE, build

from benchsmith.cards import card


def _result(i: int, status: str) -> dict[str, Any]:
    return {"check": f"check_{i % 7}", "family": "integrity" if i % 2 else "", "status": status,
            "summary": f"{i} items | see /home/someone/data/raw/file{i}.csv",
            "config": None if i % 5 else "c"}


def _report(n: int) -> dict[str, Any]:
    statuses = ("pass", "fail", "warn", "stat", "skip")
    results = [_result(i, statuses[i % len(statuses)]) for i in range(n)]
    table = [{"baseline": f"b{k}", "config": "c", "split": "test", "metric": "accuracy", "value": v,
              "variant": "zero-shot", "model": "org/m|x", "paper": [{"value": 1.5, "id": "p"}] if k else [],
              "comparable": k != 1} for k, v in enumerate([0.5, 3, None])]
    results.append({"check": "baselines", "family": "baselines", "status": "stat", "summary": "b",
                    "config": "c", "details": {"table": table}})
    return {"passed": n < 10, "results": results, "notes": ["a note", "/abs/path/note"], "baselines": "model"}


@pytest.fixture(scope="module")
def context(tmp_path_factory) -> dict[str, Any]:
    release = build(GOOD, tmp_path_factory.mktemp("reg"), "1.1.0")  # applies errata
    return card.card_context(release, FixtureComVE("1.1.0"))


def test_hub_location_gives_the_hub_snippet(context):
    local = card.render_body(context)
    assert "From the Hub" not in local and 'release = Path.cwd() if Path("release.json").is_file()' in local
    hub = card.render_body({**context, "hub": {"repo": "org/name", "revision": "1.0.0"}})
    assert "- **Hub:** [org/name](https://huggingface.co/datasets/org/name), revision `1.0.0`" in hub
    assert f'load_dataset("org/name", "{context["first_config"]}", revision="1.0.0")' in hub


def test_a_short_report_is_listed_in_full_and_a_long_one_by_check(context):
    short, long = (card.render_body({**context, "v": card._validation(_report(n)),
                                     "baselines": card._baselines(_report(n))}) for n in (3, 40))
    assert "Gate: **passed**. 4 results: 1 fail, 1 warn, 1 pass, 1 stat." in short
    assert "| check_0 | c | pass | 0 items \\| see …/raw/file0.csv |" in short
    assert "Gate: **failed**. 41 results" in long and "Failures (8; one row per check and summary)" in long
    assert "| **all** | |" in long and "| check_0 | c | pass |" not in long
    for body in (short, long):
        assert "| b0 | c | test | zero-shot | org/m/x | accuracy | 0.5 | — |" in body
        assert "| b1 | c | test | zero-shot | org/m/x | accuracy | 3 | 1.5 (p) |" in body
        assert "Not comparable with the paper" in body and "- …/path/note" in body
    assert "Not validated yet: run `benchsmith validate" in card.render_body({**context, "v": None})


def test_skipped_splits_missing_configs_pending_errata_and_changes(context):
    m = copy.deepcopy(context["m"])
    m.update(missing_configs=["x", "y"], release_notes="", homepage=None, license=None,
             changes_since={"version": "1.0.0", "error": "no changes recorded"},
             errata_pending=[{"id": "e1", "version": "2.0.0", "items": [1, 2], "what": "fix /tmp/x/y"}],
             description="Built from /home/me/raw/data.csv")
    skipped = {"c": {"train": "file missing", "test": "/abs/x missing"}}
    one_split = context["first_splits"][:1]
    body = card.render_body({**context, "m": m, "skipped": skipped, "first_splits": one_split})
    assert "Built from …/raw/data.csv" in body and "/home/me" not in body
    assert "- **License:** see upstream" in body and "**Homepage:**" not in body
    assert "- `c`: train (file missing); test (…/abs/x missing)" in body
    assert "Configs not built in this (partial) build: `x`, `y`." in body
    assert "- **e1** (fixed in 2.0.0, 2 items): fix …/x/y" in body
    assert "## Changes since 1.0.0\n\nno changes recorded\n" in body
    assert "holds one split" in body


def test_errata_say_whether_upstream_is_reproduced(context):
    m = {**context["m"], "errata_applied": [], "changes_since": {"version": None}}
    upstream = card.render_body({**context, "m": m})
    assert "None applied: this version reproduces upstream as released." in upstream
    harvested = card.render_body({**context, "m": m, "harvested": True, "changes_md": "- one change\n"})
    assert "None: this release was harvested" in harvested and "reproduces upstream" not in harvested
    assert "## Changes since the previous version\n\n- one change\n" in harvested
    assert "Applied in this version:" in card.render_body(context)  # 1.1.0 applies the fixture's errata


def test_a_missing_value_is_an_error_not_an_empty_cell():
    m = {"pretty_name": "x", "description": "d", "version": "1"}
    with pytest.raises(jinja2.UndefinedError):
        card.render_body({"m": m, "hub": None, "local_path": "x", "first_config": "x"})


def test_acknowledged_findings_are_listed_with_their_reasons_and_not_counted_as_warnings(context):
    ack = {"reason": "upstream numbers each split from 0", "source": "acknowledged.yaml:3"}
    results = [{"check": "unique_ids", "family": "integrity", "status": "warn", "summary": "100 ids", "config": c,
                "acknowledged": ack} for c in ("et", "ht")]
    results.append({"check": "cues", "family": "artifacts", "status": "warn", "summary": "a new cue", "config": "et"})
    body = card.render_body({**context, "v": card._validation({"passed": True, "results": results})})
    assert "3 results: 1 warn, 2 acknowledged." in body
    assert "| cues | et | warn | a new cue |" in body and "| unique_ids | et | warn (acknowledged) | 100 ids |" in body
    assert "Acknowledged findings (2; read and explained in the dataset's declarations" in body
    assert "| unique_ids | et, ht | upstream numbers each split from 0 | acknowledged.yaml |" in body
