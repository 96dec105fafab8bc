"""The card's body written by hand (cards/card_body.py) equals ``templates/dataset_card.md.j2``
rendered by jinja2 as the card used to be, on real and fixture releases and on every branch of
the template (Hub, reports short and long, baselines, skipped splits, missing configs, pending
errata, harvested, "Changes since", scrubbed paths)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import Any

import jinja2
import pytest
from benchsmith.cards import card
from benchsmith.cards.card_body import card_body
from benchsmith.cards.paths import scrub
from comve_helpers import GOOD, FixtureComVE, build

from benchsmith.builder import get_builder


@functools.lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(card.TEMPLATES), keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined, finalize=scrub)
    return env.get_template("dataset_card.md.j2")


def jinja_body(context: dict[str, Any]) -> str:
    """The reference: the template, in the environment ``cards.card`` rendered it with."""
    return _template().render(**context)


def _result(i: int, status: str, **extra: Any) -> dict[str, Any]:
    return {"check": f"check_{i % 7}", "family": "integrity" if i % 2 else "", "status": status,
            "summary": f"{i} items | see /home/someone/data/raw/file{i}.csv", "config": None if i % 5 else "c", **extra}


def _report(n: int) -> dict[str, Any]:
    statuses = ("pass", "fail", "warn", "stat", "skip", "odd")
    results = [_result(i, statuses[i % len(statuses)]) for i in range(n)]
    table = [{"baseline": f"b{k}", "config": "c", "split": "test", "metric": "accuracy", "value": v,
              "variant": "zero-shot", "model": "org/m|x", "paper": [{"value": 1.5, "id": "p"}] if k else [],
              "comparable": k != 1} for k, v in enumerate([0.5, 3, None])]
    results.append({"check": "baselines", "family": "baselines", "status": "stat", "summary": "b",
                    "config": "c", "details": {"table": table}})
    return {"passed": n < 3, "results": results, "notes": ["a note", "/abs/path/note"],
            "baselines": "model" if n % 2 else None}


def variants(context: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``context`` and one variant per branch of the template."""
    yield context
    yield {**context, "hub": {"repo": "org/name", "revision": "1.0.0"}}
    for n in (3, 40):  # listed in full, and counted per check with failures and warnings listed
        report = _report(n)
        yield {**context, "v": card._validation(report), "baselines": card._baselines(report),
               "contamination": ["checked against S: 1.0% of test items"] if n > 3 else []}
    m = copy.deepcopy(context["m"])
    m.update(missing_configs=["x", "y"], release_notes="", homepage=None, license=None,
             changes_since={"version": "1.0.0", "error": "no changes recorded"},
             errata_pending=[{"id": "e1", "version": "2.0.0", "items": [1, 2], "what": "fix /tmp/x"}],
             description="Built from /home/me/raw/data.csv")
    yield {**context, "m": m, "skipped": {"c": {"train": "file missing", "test": "/abs/x missing"}},
           "first_splits": context["first_splits"][:1], "lm_eval_tasks": []}
    m2 = {**m, "errata_applied": [], "changes_since": {"version": None}}
    yield {**context, "m": m2, "harvested": True, "changes_md": "- one change\n"}
    yield {**context, "m": m2, "harvested": True, "sections": {**context["sections"], "Reproducibility": "r"}}
    yield {**context, "m": m2, "harvested": False}  # upstream as released: no erratum


def _same(context: dict[str, Any]) -> int:
    n = 0
    for variant in variants(context):
        assert card_body(**variant) == jinja_body(variant)
        n += 1
    return n


def test_fixture_card_equals_the_template(tmp_path):
    release = build(GOOD, tmp_path / "reg", "1.1.0")  # applies errata
    context = card.card_context(release, FixtureComVE("1.1.0"))
    assert _same(context) == 8
    assert card.render_card(release, FixtureComVE("1.1.0")) == (release.path / "README.md").read_text("utf-8")


def test_real_xcopa_card_equals_the_template(real_xcopa):
    _same(card.card_context(real_xcopa, get_builder("xcopa", real_xcopa.version)))


def test_real_cognition_card_equals_the_template(real_cognition):
    _same(card.card_context(real_cognition, get_builder("cognition", real_cognition.version)))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["comve", "mucow"])
def test_real_comve_and_mucow_cards_equal_the_template(name, raw, tmp_path):
    from benchsmith.release import ReleaseWriter
    from benchsmith.source import resolve_sources

    b = get_builder(name)
    release = ReleaseWriter(b, tmp_path, resolve_sources(b.sources, b.checksums(), raw)).write()
    _same(card.card_context(release, b))


def test_a_missing_value_fails_as_the_template_does():
    """A key the card needs and the manifest lacks is an error both ways, not an empty cell."""
    m = {"pretty_name": "x", "description": "d", "version": "1"}
    context = {"m": m, "hub": None}
    with pytest.raises(jinja2.UndefinedError):
        jinja_body({**context, **dict.fromkeys(("local_path", "first_config"), "x")})
    with pytest.raises(KeyError):
        card_body(**context, local_path="x", first_config="x", first_splits=["t"], split_names=[], feature_groups=[],
                  sections={}, v=None, contamination=[], baselines=None, skipped={}, source_status={},
                  lm_eval_tasks=[], lm_eval_group="g", harvested=False, changes_md=None)
