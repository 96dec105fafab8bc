"""Drift: what changed since the previous release of the same dataset.

*Previous* means, in order:

1. the release given explicitly (``validate --previous DIR``; ``audit`` passes the
   registry's existing release of the **same version** when it rebuilds one, read
   before anything is replaced);
2. otherwise the newest release of the same name with an **older** version in the
   same registry (the release's parent folder).

No previous release: no drift results (the report says so).

Per config and split it compares counts, label distributions, fingerprints and,
when fingerprints differ, which ids were added, removed or changed (content =
every field but the id, compared by a hash of its JSON). Verdicts:

* same version (a rebuild): any difference fails. A version is immutable and
  builds are deterministic, so a difference is a reproducibility bug or a silent
  upstream change. The one exception is declared, not guessed: when either manifest
  says ``"reproducible": false`` (a builder whose output depends on something it cannot
  seed, e.g. an aligner that seeds itself), changed content warns and names that
  declaration; a lost or new config or split still fails;
* a newer version: a config or split that disappeared fails (a regression);
  removed or changed ids that the errata newly applied in this version do not
  list warn ("unexplained"); additions and explained changes pass. An erratum's
  ``items`` may name an example as ``id``, ``split/id`` or ``config/split/id``
  (XCOPA's ids repeat across languages and splits).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from benchsmith.builder import parse_version
from benchsmith.release import Release, find_releases
from benchsmith.validation.check import Check, CheckResult, Status
from benchsmith.validation.dataview import ConfigView

_SHOW = 20


def previous_release(release: Release, registry: Path | None = None) -> Release | None:
    """The newest release of the same name with an older version (see module docstring)."""
    root = Path(registry) if registry is not None else release.path.parent.parent
    mine = parse_version(release.version)
    older = [r for r in find_releases(root, release.name) if parse_version(r.version) < mine]
    return older[-1] if older else None


def _row_hashes(view: ConfigView, split: str) -> dict[Any, str]:
    names = [n for n in view.features if n != view.id_field]
    cols = [view.column(split, n) for n in names]
    ids = view.ids(split)
    out = {}
    for ident, *vals in zip(ids, *cols):
        blob = json.dumps(dict(zip(names, vals)), sort_keys=True, ensure_ascii=False, default=str)
        out[ident] = hashlib.sha1(blob.encode("utf-8")).hexdigest()
    return out


def _label_counts(view: ConfigView, split: str) -> dict[str, dict[str, int]]:
    out = {}
    for field in view.label_fields:
        names = view.label_names(field)
        counts: dict[str, int] = {}
        for v in view.labeled(split, field):
            key = "unlabeled" if v < 0 else (names[v] if names and v < len(names) else str(v))
            counts[key] = counts.get(key, 0) + 1
        out[field] = dict(sorted(counts.items()))
    return out


def _newly_fixed_items(new: Release, old: Release) -> set[str]:
    before = {e["id"] for e in old.info.errata_applied}
    return {
        str(i) for e in new.info.errata_applied if e["id"] not in before for i in e.get("items", [])
    }


class DriftCheck(Check):
    name = "drift"
    family = "drift"
    topic = 'changed since the previous release'
    why = ("scores on this version are not comparable with the previous one's unless the change is "
        'known')
    todo = ('if the change is intended, bump the version and record it in the changelog (an erratum '
        'in errata.tsv); a rebuild of the same version must be identical: fix the builder')

    def __init__(self, previous: Release) -> None:
        self.previous = previous

    def run(self, release: Release) -> list[CheckResult]:
        old = self.previous
        rebuild = old.version == release.version
        # declared in release.json by the builder (Builder.reproducible); absent means reproducible
        tolerant = rebuild and not all(r.info.reproducible for r in (release, old))
        against = f"{old.name} {old.version}" + (" (the release this build replaces)" if rebuild else "")
        explained = _newly_fixed_items(release, old)
        results = []
        new_cfgs, old_cfgs = release.configs(), old.configs()
        for gone in [c for c in old_cfgs if c not in new_cfgs]:
            results.append(
                self.result(Status.FAIL, f"config {gone!r} of {against} is missing", config=gone,
                            details={"previous": str(old.path)})
            )
        for cfg in new_cfgs:
            if cfg not in old_cfgs:
                status = Status.FAIL if rebuild else Status.PASS
                results.append(self.result(status, f"new config (not in {against})", config=cfg,
                                           details={"previous": str(old.path)}))
                continue
            results.append(self._config(ConfigView(release, cfg), ConfigView(old, cfg), rebuild, against, explained,
                                        tolerant))
        return results

    def _config(
        self, new: ConfigView, old: ConfigView, rebuild: bool, against: str, explained: set[str],
        tolerant: bool = False,
    ) -> CheckResult:
        splits: dict[str, Any] = {}
        problems: list[str] = []
        unexplained: list[str] = []
        changes: list[str] = []
        tolerated: list[str] = []  # differing splits of a build declared not reproducible
        for split in old.splits:
            if split not in new.splits:
                problems.append(f"split {split!r} of {against} is missing")
        for split in new.splits:
            entry: dict[str, Any] = {"num_examples": [None, new.num_rows(split)]}
            if split not in old.splits:
                splits[split] = {**entry, "status": "added"}
                changes.append(f"{split} added")
                if rebuild:
                    problems.append(f"split {split!r} is new")
                continue
            fp_old = old.release.split_info(old.config, split).fingerprint
            fp_new = new.release.split_info(new.config, split).fingerprint
            entry["num_examples"] = [old.num_rows(split), new.num_rows(split)]
            entry["fingerprint"] = {"previous": fp_old, "current": fp_new, "same": fp_old == fp_new}
            entry["labels"] = {"previous": _label_counts(old, split), "current": _label_counts(new, split)}
            if fp_old != fp_new:
                if new.id_field and old.id_field:
                    h_old, h_new = _row_hashes(old, split), _row_hashes(new, split)
                    added = [i for i in h_new if i not in h_old]
                    removed = [i for i in h_old if i not in h_new]
                    changed = [i for i in h_new if i in h_old and h_old[i] != h_new[i]]
                    entry.update(
                        added=len(added), removed=len(removed), changed=len(changed),
                        added_ids=added[:_SHOW], removed_ids=removed[:_SHOW], changed_ids=changed[:_SHOW],
                    )
                    if not (added or removed or changed):
                        entry["reordered"] = True
                    bad = [
                        i for i in removed + changed
                        if not {str(i), f"{split}/{i}", f"{new.config}/{split}/{i}"} & explained
                    ]
                    unexplained += [f"{split}:{i}" for i in bad]
                    changes.append(
                        f"{split} +{len(added)} -{len(removed)} ~{len(changed)}" + (" (reordered)" if entry.get("reordered") else "")
                    )
                else:
                    changes.append(f"{split} content changed (no id field to say where)")
                if rebuild and tolerant:
                    tolerated.append(split)
                elif rebuild:
                    problems.append(f"{split} differs from the same version's previous build")
            splits[split] = entry
        metrics = {
            f"{s}/{k}": e[k] for s, e in splits.items() for k in ("added", "removed", "changed") if k in e
        }
        details = {"previous": str(old.release.path), "previous_version": old.release.version, "splits": splits,
                   "unexplained": unexplained[:_SHOW]}
        if problems:
            return self.result(Status.FAIL, f"vs {against}: " + "; ".join(problems), config=new.config,
                               metrics=metrics, details=details)
        if tolerated:
            details["tolerated"] = tolerated
            return self.result(
                Status.WARN,
                f"vs {against}: {', '.join(tolerated)} differ, tolerated because the build is declared not "
                "reproducible (release.json `reproducible: false`); " + ", ".join(changes),
                config=new.config, metrics=metrics, details=details,
            )
        if unexplained:
            return self.result(
                Status.WARN,
                f"vs {against}: {len(unexplained)} removed/changed example(s) not covered by this version's errata "
                f"(e.g. {unexplained[0]}); " + ", ".join(changes),
                config=new.config, metrics=metrics, details=details,
            )
        summary = f"vs {against}: " + (", ".join(changes) if changes else "identical (all fingerprints match)")
        return self.result(Status.PASS, summary, config=new.config, metrics=metrics, details=details)
