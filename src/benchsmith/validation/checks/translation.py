"""Translation checks: a translated config says in its policy which config it translates.

* ``untranslated``: every translated field (``policy.translated_fields``) of a config with
  ``policy.translation_of`` is compared with the aligned field of its source example (same
  split, same ``id_field`` value). A field equal to its source after normalising (Unicode
  NFKC, case-folded, punctuation and spacing collapsed) was left in the source language: it
  fails the gate (``policy.untranslated = "warn"``: a warning), naming each item. An item that
  an erratum of a later version fixes (the release's ``errata_pending``: 1.0.0 reproduces
  upstream as released) is a known defect of this version: a warning naming the erratum and
  its version, never a failure, so a release that reproduces upstream stays publishable while
  saying which version to use instead.

Equality after normalisation, not a similarity threshold: a faithful translation of a short
sentence can share most of its characters with the source (names, numbers, cognates), and a
threshold loose enough to catch a half-translated sentence fails those; an untranslated field
is copied whole. A config whose source is not in the release is skipped, saying so.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Any

from benchsmith.validation.check import Check, CheckResult, Status, register_check
from benchsmith.validation.dataview import ConfigView, configs

if TYPE_CHECKING:
    from benchsmith.release import Release

_SHOW = 20  # offending items listed in details
_NON_WORD = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """``text`` as the check compares it: NFKC, case-folded, punctuation and spacing collapsed."""
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def field_pairs(view: ConfigView) -> list[tuple[str, str]]:
    """``(field, source_field)`` for every declared translated field (default: the text fields)."""
    declared = view.policy.translated_fields or tuple(view.text_fields)
    return [(f, f) if isinstance(f, str) else (f[0], f[1]) for f in declared]


def _rows(view: ConfigView, split: str, id_field: str, names: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for batch in view.batches(split, [id_field, *names]):
        cols = batch.to_pydict()
        for i, key in enumerate(cols[id_field]):
            out[str(key)] = {n: cols[n][i] for n in names}
    return out


def _same(value: Any, source: Any) -> bool:
    if isinstance(value, str) and isinstance(source, str):
        n = normalise(value)
        return bool(n) and n == normalise(source)
    if isinstance(value, list) and isinstance(source, list):
        return any(_same(v, s) for v, s in zip(value, source))
    return False


@register_check
class UntranslatedCheck(Check):
    name = "untranslated"
    family = "consistency"
    topic = 'translated fields equal their source'
    why = 'an untranslated item tests the source language, not the target one'
    todo = ('fix it with an erratum in errata.tsv giving the translation; when copying is right '
        "(names, numbers), set the config policy's untranslated to warn and acknowledge the items "
        'in acknowledged.yaml')
    cacheable = True  # reads the release's data only (validation/result_cache.py)

    def run(self, release: Release) -> list[CheckResult]:
        views = {v.config: v for v in configs(release)}
        pending: dict[str, str] = {}  # item key -> "erratum (version)" of the errata a later version applies
        for e in release.info.errata_pending:
            for key in e.get("items", ()):
                pending[key] = f"{e.get('id')} ({e.get('version')})"
        return [self._config(view, views, pending) for view in views.values() if view.policy.translation_of]

    def _config(self, view: ConfigView, views: dict[str, ConfigView], pending: dict[str, str]) -> CheckResult:
        source_name = view.policy.translation_of
        source = views.get(source_name or "")
        if source is None:
            return self.result(Status.SKIP, f"its source config {source_name!r} is not in this release",
                               config=view.config)
        if view.id_field is None or source.id_field is None:  # (narrowed for the calls below)
            return self.result(Status.SKIP, "no id field to align items with their source by", config=view.config)
        pairs = [(f, s) for f, s in field_pairs(view) if f in view.features and s in source.features]
        splits = [sp for sp in view.splits if sp in source.splits]
        found: list[dict[str, Any]] = []
        compared = 0
        for split in splits:
            src = _rows(source, split, source.id_field, sorted({s for _, s in pairs}))
            for key, row in _rows(view, split, view.id_field, sorted({f for f, _ in pairs})).items():
                other = src.get(key)
                if other is None:
                    continue
                for f, s in pairs:
                    compared += 1
                    if _same(row[f], other[s]):
                        found.append({"split": split, "id": key, "field": f, "value": row[f]})
        metrics = {"untranslated": len(found), "compared": compared}
        where = f"{source_name} ({', '.join(splits)})"
        if not found:
            return self.result(Status.PASS, f"0 of {compared} translated fields equal their source in {where}",
                               config=view.config, metrics=metrics)
        for x in found:
            fixed_by = pending.get(f"{view.config}/{x['split']}/{x['id']}") or pending.get(f"*/{x['split']}/{x['id']}")
            if fixed_by:
                x["fixed_by"] = fixed_by
        fixed = [x for x in found if "fixed_by" in x]
        if len(fixed) == len(found):
            errata = sorted({x["fixed_by"] for x in fixed})
            items = ", ".join(f"{x['split']}/{x['id']} {x['field']}" for x in found[:5])
            return self.result(
                Status.WARN,
                f"{len(found)} translated field(s) equal their {source_name} source (untranslated): {items}"
                + (f" (+{len(found) - 5} more)" if len(found) > 5 else "")
                + f"; known, fixed by erratum {', '.join(errata)}",
                config=view.config, metrics=metrics,
                details={"items": found[:_SHOW], "source_config": source_name,
                         "what_to_do": f"use the version that applies {', '.join(errata)}"},
            )
        status = Status.FAIL if view.policy.untranslated == "fail" else Status.WARN
        found = [x for x in found if "fixed_by" not in x] + fixed  # the unknown ones first
        first = found[0]
        items = ", ".join(f"{x['split']}/{x['id']} {x['field']}" for x in found[:5])
        return self.result(
            status,
            f"{len(found)} translated field(s) equal their {source_name} source (untranslated): {items}"
            + (f" (+{len(found) - 5} more)" if len(found) > 5 else ""),
            config=view.config, metrics=metrics,
            details={"items": found[:_SHOW], "source_config": source_name,
                     "why": "a model can answer an untranslated option by matching the source language; "
                            "it measures nothing about the target language",
                     "what_to_do": f"add an erratum with the translation of {first['split']}/{first['id']} "
                                   f"{first['field']} (and each item listed) to the builder's errata.tsv "
                                   "and release a new version"},
        )
