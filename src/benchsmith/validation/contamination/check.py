"""``validate``'s contamination check: the release against its registry and its previous version.

* **Declared releases**: the newest version of each dataset a config's policy names in
  ``contamination_against``, in the same registry (a release under ``<registry>/.staging/``
  during ``audit`` looks in ``<registry>``), is a source, scanned in this process as
  ``benchsmith contamination RELEASE --against NAME`` does (13-grams; a shorter field only
  whole and from the policy's ``contamination_min_words``; the other release's own policy
  picks its fields). Only declared datasets: the verdict must not depend on what else happens
  to be built in the registry. A declared dataset with no release there is a skipped result
  that names it. One result per config: the rate per split, the gate of :func:`scan.report`
  (``contamination_max_fraction``, ``contamination_by_design``), the first items (by id).
* **Previous version** (the newest older version beside it, looked up here, not
  ``validate --previous``): items whose normalised content
  (the leakage checks' ``dedup_fields`` content) sat in another split before. An item that
  moved from any split into a split the policy gates is contamination for everyone who
  trained on the previous version's split, and fails past the split's
  ``contamination_max_fraction``; other moves are a warning.

With no other release and no previous version the check is skipped, and says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.registry import STAGING
from benchsmith.release import find_releases
from benchsmith.validation.check import Check, CheckResult, Status, register_check
from benchsmith.validation.checks.leakage import content_batches
from benchsmith.validation.contamination import corpus, scan
from benchsmith.validation.dataview import configs
from benchsmith.validation.drift import previous_release

if TYPE_CHECKING:
    from benchsmith.release import Release

_SHOW = 10


def registry_root(release: Release) -> Path:
    root = Path(release.path).resolve().parent.parent
    return root.parent if root.name == STAGING else root


def declared(release: Release) -> tuple[list[Release], list[str]]:
    """(the newest release of each dataset the configs' policies name in
    ``contamination_against``, the names with no release in the registry), sorted by name."""

    root = registry_root(release)
    names = sorted({n for view in configs(release) for n in view.policy.contamination_against} - {release.name})
    found, missing = [], []
    for name in names:
        releases = find_releases(root, name) if root.is_dir() else []
        if releases:
            found.append(releases[-1])
        else:
            missing.append(name)
    return found, missing


@register_check
class ContaminationCheck(Check):
    name = "contamination"
    family = "leakage"
    topic = "items shared with other releases"
    why = ("an item that also sits in another benchmark (or a model's training corpus) may have been seen "
           "in training: scores on it overstate generalisation")
    todo = ("read the matches in the report: a true overlap is dropped with an erratum in errata.tsv; a "
            "generic phrase shared by chance is acknowledged in acknowledged.yaml (the policy's "
            "contamination_max_fraction sets when it fails)")

    def run(self, release: Release) -> list[CheckResult]:

        out = self._others(release)
        previous = previous_release(release, registry_root(release))
        if previous is not None:
            out += self._moved(release, previous)
        if not out:
            out.append(self.result(Status.SKIP, "no release declared in the policy's contamination_against and no "
                                   "previous version to compare with (`benchsmith contamination --against` "
                                   "checks corpora)"))
        return out

    def _others(self, release: Release) -> list[CheckResult]:

        others, missing = declared(release)
        skipped = [self.result(Status.SKIP, f"contamination_against names {name}, which has no release in "
                               f"{registry_root(release)}: not checked against it") for name in missing]
        if not others:
            return skipped
        parts: list[corpus.Part] = []
        sources = []
        for other in others:
            label = f"{other.name}/{other.version}"
            got = corpus.release_parts(other, label, scan.matched_fields)
            parts += got
            sources.append({"source": label, "kind": "release", "files": 1, "partitions": len(got)})
        views = configs(release)
        index = scan.build_index(release, min_tokens=min(v.policy.contamination_min_words for v in views))
        counts, locations, lines, per_source, ran = scan.run(index, parts, workers=1)
        rep = scan.report(release, index, counts, locations, sources=sources, lines=lines, seconds=0.0, ran=ran,
                          per_source=per_source)
        names = ", ".join(str(s["source"]) for s in sources)
        results = skipped
        for view in views:
            if not view.policy.contamination_against:
                continue
            rows = [r for r in rep["splits"] if r["config"] == view.config]
            status = Status.FAIL if any(r["status"] == "fail" for r in rows) else (
                Status.WARN if any(r["status"] == "warn" for r in rows) else Status.PASS)
            rates = "; ".join(f"{r['split']} {r['rate']:.1%} ({r['contaminated']}/{r['items']})" for r in rows)
            items = [it for it in rep["items"] if it["config"] == view.config]
            results.append(self.result(
                status, f"checked against {names}: items sharing a {rep['ngram']}-gram (or a whole short field): "
                f"{rates}", config=view.config,
                metrics={f"rate/{r['split']}": r["rate"] for r in rows},
                details={"sources": [s["source"] for s in sources], "ngram": rep["ngram"],
                         "min_tokens": rep["min_tokens"], "splits": rows, "items": items[:_SHOW]}))
        return results

    def _moved(self, release: Release, previous: Any) -> list[CheckResult]:

        results = []
        before = {v.config: v for v in configs(previous)}
        for view in configs(release):
            old = before.get(view.config)
            if old is None or not view.dedup_fields:
                continue
            where: dict[str, set[str]] = {}  # content -> the previous version's splits holding it
            for split in old.splits:
                for batch in content_batches(old, split):
                    for text in batch:
                        where.setdefault(text, set()).add(split)
            limits = dict(view.policy.contamination_max_fraction)
            moved: dict[tuple[str, str], tuple[int, list[Any]]] = {}
            for split in view.splits:
                rows_from: dict[str, list[int]] = {}
                row = 0
                for batch in content_batches(view, split):
                    for text in batch:
                        before_in = where.get(text)
                        if before_in and split not in before_in:
                            rows_from.setdefault(min(before_in), []).append(row)
                        row += 1
                for src, rows in sorted(rows_from.items()):
                    moved[(src, split)] = (len(rows), view.ids_of(split, rows[:_SHOW]))
            if not moved:
                results.append(self.result(Status.PASS, f"no item moved between splits since {previous.version}",
                                           config=view.config))
                continue
            fail = [f"{src}->{dst}" for (src, dst), (n, _) in moved.items()
                    if dst in limits and n / max(view.num_rows(dst), 1) > limits[dst]]
            summary = ("items moved between splits since " + previous.version + ": "
                       + ", ".join(f"{n} {src}->{dst}" for (src, dst), (n, _) in moved.items()))
            results.append(self.result(
                Status.FAIL if fail else Status.WARN, summary, config=view.config,
                metrics={f"moved/{src}->{dst}": n for (src, dst), (n, _) in moved.items()},
                details={"previous": previous.version, "moved": [
                    {"from": src, "to": dst, "items": n, "ids": ids} for (src, dst), (n, ids) in moved.items()]}))
        return results
