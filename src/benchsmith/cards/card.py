"""Render a release's dataset card, Croissant metadata and lm-eval tasks from its manifest.

No number is typed by hand: split sizes, features, errata, sources and the validation
summary all come from ``release.json`` and ``reports/validation.json``. The YAML front matter
is built with huggingface_hub's ``DatasetCardData`` and holds what ``datasets.load_dataset``
needs to load the release offline: ``configs`` (``data_files`` per split) and
``dataset_info`` (features with ClassLabel names, ``num_bytes`` and ``num_examples`` per
split), plus the Hub discovery metadata the builder declares (``task_categories``,
``task_ids``, ``multilinguality``, ``source_datasets``, ``paperswithcode_id``; a key the
builder leaves empty is left out, never guessed).

A builder may add prose sections through ``Builder.card_sections(release)``. The Markdown body is
``templates/dataset_card.md.j2`` rendered by jinja2 (``StrictUndefined``: a value the card needs and
the manifest lacks is an error, never an empty cell; ``finalize=scrub``: every value written is
scrubbed of local paths). The front matter is ``yaml.safe_dump`` of the ``DatasetCardData``'s
``to_dict()`` with fixed options (key order kept), so identical builds write identical bytes.

Decisions:

* **Loading snippet**: it must run as written. A release is a folder ``<name>/<version>``
  inside a registry; the snippet loads the current folder when run inside the release folder
  (where ``lm_eval/README.md`` tells the user to ``cd``: it holds ``release.json``), else
  ``./<name>/<version>`` from the registry folder, as an absolute path (never taken for a Hub
  id; ``datasets`` cannot name a dataset loaded from ``"."``), and says so. Once published, ``publish`` re-renders with ``hub={"repo": "ORG/NAME",
  "revision": "<tag>"}`` (:func:`render_files` / :func:`write_card_files`) and the snippet
  becomes ``load_dataset("ORG/NAME", "<config>", revision="<tag>")``. The card never holds the
  registry's own location, so two builds of the same sources into different registries write
  the same card.
* **Per-split files**: readers without the card (pandas, polars, DuckDB) see only
  ``data/<config>/``, which holds every split; the card gives the per-split pattern
  ``data/<config>/<split>-*.parquet``.
* **No local paths**: every string taken from the manifest, the report or a builder section
  passes through :func:`benchsmith.cards.paths.scrub` (the template's ``finalize``), so the build
  machine's paths (e.g. a skipped split's reason, which starts with the missing file's full
  path) never reach the card.
* **Validation**: statuses and counts are rendered from the report's results, never fixed
  text, and prose and tables use the same numbers. Up to :data:`FULL_TABLE_MAX` results are
  listed one per row; beyond that the card shows the counts per check and status and lists
  the failures and warnings only (XCOPA has 360 results): every result stays in
  ``reports/validation.html``/``.json``.
* **Fields**: configs with identical features share one field table.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
import yaml
from datasets import ClassLabel, DatasetInfo, Features, LargeList, List, Sequence, SplitDict, SplitInfo, Value
from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCardData

from benchsmith.cards.croissant import croissant
from benchsmith.cards.known_artifacts import section as known_artifacts
from benchsmith.cards.lm_eval import FOLDER as LM_EVAL_FOLDER
from benchsmith.cards.lm_eval import lm_eval_files, task_name, tasks
from benchsmith.cards.paths import reason, scrub, scrub_tree
from benchsmith.manifest import ReleaseInfo
from benchsmith.registry import CARD, write_text_atomic
from benchsmith.release.reader import Release  # not benchsmith.release: its writer renders cards
from benchsmith.validation.contamination.html import card_lines

if TYPE_CHECKING:
    from benchsmith.builder import Builder

__all__ = ["card_context", "card_data", "card_yaml", "croissant", "render_body", "render_card",
           "render_files", "write_card_files"]

#: the folder of the card's Jinja template
TEMPLATES = Path(__file__).parent / "templates"
_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), keep_trailing_newline=True,
                          undefined=jinja2.StrictUndefined, finalize=scrub, autoescape=False)
CROISSANT = "croissant.json"
#: a validation report of at most this many results is listed in full in the card
FULL_TABLE_MAX = 30
#: split order in tables: the usual ones first, then the others as the configs declare them
SPLIT_ORDER = ("train", "validation", "test")
STATUSES = ("fail", "warn", "acknowledged", "pass", "stat", "skip")


def _size_category(n: int) -> str:
    for limit, label in [
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
    ]:
        if n < limit:
            return label
    return "10M<n<100M"


def card_data(info: ReleaseInfo) -> DatasetCardData:
    """The YAML metadata of a release's card, as huggingface_hub's ``DatasetCardData``."""
    return DatasetCardData(**_card_fields(info))


def card_yaml(info: ReleaseInfo) -> str:
    """The card's front matter: ``card_data(info).to_dict()`` (its key order) through
    ``yaml.safe_dump`` with fixed options, so the bytes depend on the metadata alone."""
    return yaml.safe_dump(card_data(info).to_dict(), allow_unicode=True, sort_keys=False).strip()


def _dataset_info(name: str, features: Features, splits: list[dict[str, Any]]) -> dict[str, Any]:
    """One config's ``dataset_info`` entry as ``datasets`` writes it into a card
    (``DatasetInfosDict.to_dataset_card_data``), its ``config_name`` first."""
    split_dict = SplitDict()
    for s in splits:
        split_dict.add(SplitInfo(**s))
    info = DatasetInfo(features=features, splits=split_dict, dataset_size=sum(s["num_bytes"] for s in splits))
    data = DatasetCardData()
    DatasetInfosDict({name: info}).to_dataset_card_data(data)
    return {"config_name": name, **data["dataset_info"]}


def _card_fields(info: ReleaseInfo) -> dict[str, Any]:
    """The keyword arguments of the card's ``DatasetCardData``."""
    configs, infos = [], []
    total = 0
    languages: list[str] = []
    for i, (name, cfg) in enumerate(info.configs.items()):
        entry: dict[str, Any] = {
            "config_name": name,
            "data_files": [
                {"split": s, "path": f"data/{name}/{s}-*.parquet"} for s in cfg.splits
            ],
        }
        if i == 0:
            entry["default"] = True
        configs.append(entry)
        splits: list[dict[str, Any]] = [
            {"name": s, "num_bytes": split.num_bytes, "num_examples": split.num_examples}
            for s, split in cfg.splits.items()
        ]
        infos.append(_dataset_info(name, cfg.features, splits))
        total += sum(s["num_examples"] for s in splits)
        for lang in cfg.languages:
            if lang not in languages:
                languages.append(lang)
    return {
        "language": languages or None,
        "license": (info.license or "other").lower(),
        "pretty_name": scrub(info.pretty_name),
        "task_categories": list(info.task_categories) or None,
        "task_ids": list(info.task_ids) or None,
        "multilinguality": list(info.multilinguality) or None,
        "source_datasets": list(info.source_datasets) or None,
        "paperswithcode_id": info.paperswithcode_id or None,
        "size_categories": [_size_category(total)],
        "configs": configs,
        "dataset_info": infos,
        "version": info.version,
    }


def _type_name(f: Any) -> str:
    """A feature's type in words: ``string``, ``ClassLabel(0=a, 1=b)``, ``list of string``,
    ``list of {role: string, text: string}``."""
    if isinstance(f, ClassLabel):
        return "ClassLabel(" + ", ".join(f"{i}={n}" for i, n in enumerate(f.names)) + ")"
    if isinstance(f, Value):
        return f.dtype
    if isinstance(f, (List, LargeList, Sequence)):
        return "list of " + _type_name(f.feature)
    if isinstance(f, list) and f:
        return "list of " + _type_name(f[0])
    if isinstance(f, dict):
        return "{" + ", ".join(f"{k}: {_type_name(v)}" for k, v in f.items()) + "}"
    return type(f).__name__


def _feature_rows(features: Features) -> list[dict[str, str]]:
    return [{"name": name, "type": _type_name(f).replace("|", "/")} for name, f in features.items()]


def _feature_groups(info: ReleaseInfo) -> list[dict[str, Any]]:
    """Configs grouped by identical features, in manifest order."""
    groups: dict[str, dict[str, Any]] = {}
    for c, cfg in info.configs.items():
        key = json.dumps(cfg.to_dict()["features"], sort_keys=True)
        groups.setdefault(key, {"configs": [], "rows": _feature_rows(cfg.features)})["configs"].append(c)
    return list(groups.values())


def _split_names(info: ReleaseInfo) -> list[str]:
    seen: list[str] = []
    for cfg in info.configs.values():
        for s in cfg.splits:
            if s not in seen:
                seen.append(s)
    return [s for s in SPLIT_ORDER if s in seen] + [s for s in seen if s not in SPLIT_ORDER]


def _validation(report: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the card says about a report: counts and lists computed once from its results."""
    if report is None:
        return None
    results = report.get("results") or []
    # an acknowledged warning is its own count, as in the report (validation/acknowledge.py)
    counts = Counter("acknowledged" if r.get("acknowledged") else r.get("status") for r in results)
    statuses = [s for s in STATUSES if counts.get(s)] + sorted(s for s in counts if s not in STATUSES)
    by_check: dict[str, dict[str, Any]] = {}
    for r in results:
        row = by_check.setdefault(r["check"], {"check": r["check"], "family": r.get("family") or "",
                                               "counts": Counter()})
        row["counts"]["acknowledged" if r.get("acknowledged") else r.get("status")] += 1
    listed = []
    for status, heading in (("fail", "Failures"), ("warn", "Warnings")):
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        for r in results:
            if r.get("status") == status and not r.get("acknowledged"):
                row = rows.setdefault((r["check"], r.get("summary") or ""), {
                    "check": r["check"], "summary": r.get("summary") or "", "status": status, "configs": []})
                row["configs"].append(r.get("config") or "—")
        listed.append((heading, list(rows.values())))
    acknowledged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in results:
        ack = r.get("acknowledged")
        if ack:
            src = str(ack.get("source", "")).split(":")[0]
            row = acknowledged.setdefault((r["check"], str(ack.get("reason", "")), src), {
                "check": r["check"], "reason": str(ack.get("reason", "")), "source": src, "configs": []})
            row["configs"].append(r.get("config") or "—")
    return {
        "passed": bool(report.get("passed", counts.get("fail", 0) == 0)),
        "total": len(results),
        "counts": counts,
        "statuses": statuses or ["pass"],
        "counts_text": ", ".join(f"{counts[s]:,} {s}" for s in statuses) or "none",
        "by_check": list(by_check.values()),
        "listed": listed,
        "acknowledged": list(acknowledged.values()),
        "results": results,
        "full": len(results) <= FULL_TABLE_MAX,
        "notes": list(report.get("notes") or []),
        "baselines": report.get("baselines") if isinstance(report.get("baselines"), str) else None,
    }


def _baselines(report: dict[str, Any] | None) -> dict[str, Any] | None:
    """The baselines table from the report's results that carry ``details.table`` rows (the
    gated and the recorded model baselines): one row per baseline, config, split and metric
    (the first result wins when the report has the same row twice)."""
    if report is None:
        return None
    rows: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    runs: set[str] = set()
    not_comparable: list[str] = []
    for r in report.get("results") or []:
        table = (r.get("details") or {}).get("table") if r.get("family") == "baselines" else None
        if not isinstance(table, list) or r.get("status") == "skip":
            continue
        for row in table:
            key = (row["baseline"], row["config"], row["split"], row["metric"])
            if key in rows:
                continue
            runs.add(row["baseline"])
            value = row.get("value")
            paper = "; ".join(f"{p['value']} ({p['id']})" for p in row.get("paper") or []) or "—"
            rows[key] = {**row, "score": "—" if value is None else f"{value:g}" if isinstance(value, float)
                         else str(value), "paper": paper}
            if row.get("comparable") is False and row["baseline"] not in not_comparable:
                not_comparable.append(row["baseline"])
    if not rows:
        return None
    return {"rows": list(rows.values()), "runs": len(runs), "not_comparable": not_comparable}


def _source_status(info: ReleaseInfo) -> dict[str, str]:
    out = {}
    for n, s in info.sources.items():
        statuses = Counter(f["status"] for f in (s.get("files") or {}).values())
        out[n] = ", ".join(f"{k} {v}" if len(statuses) > 1 else k for k, v in sorted(statuses.items())) or "no files"
    return out


def harvested(info: ReleaseInfo) -> bool:
    """Whether the release was harvested by a construction pipeline from inputs the user gave
    (every source's origin ``harvest-input``) rather than rebuilt from upstream's release: its
    card then never says it "reproduces upstream as released"."""
    sources = info.sources.values()
    return bool(sources) and all(s.get("origin") == "harvest-input" for s in sources)


def _changes_markdown(release: Release) -> str | None:
    """The "Changes since" excerpt a build wrote into the release (benchsmith.changelog), without
    its own heading (the template has one)."""
    record = release.info.extra.get("changes_since") or {}
    rel = record.get("markdown")
    if not isinstance(rel, str) or not rel.startswith("changes/") or ".." in rel:
        return None
    path = Path(release.path) / rel
    if path.is_symlink() or not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(lines[2:] if lines and lines[0].startswith("#") else lines).strip() + "\n"


def lm_eval_connectors(builder: Builder | None) -> Any:
    """The builder's COPA connector words for the lm-eval tasks (``lm_eval_connectors``, e.g.
    XCOPA's per language), or None: English only (:mod:`benchsmith.cards.lm_eval`)."""
    return getattr(builder, "lm_eval_connectors", None)


def card_context(release: Release, builder: Builder | None = None, *,
                 hub: dict[str, str] | None = None) -> dict[str, Any]:
    """The values the card's body is written from (the template's variables). Arguments as
    :func:`render_card`'s."""
    info = release.info
    m = info.to_dict()  # the card renders the documented JSON form (benchsmith.manifest)
    report = None
    rpath = release.reports_dir / "validation.json"
    if rpath.is_file():
        report = json.loads(rpath.read_text(encoding="utf-8"))
    sections = dict(builder.card_sections(release)) if builder is not None else {}
    sections.update(known_artifacts(builder, report))  # declared partial-input artifacts (gate warns)
    first = next(iter(info.configs))
    skipped = {c: {s: reason(why) for s, why in cfg.skipped_splits.items()}
               for c, cfg in info.configs.items() if cfg.skipped_splits}
    lm_tasks = [t["name"] for t in tasks(info, lm_eval_connectors(builder))]
    contamination = card_lines(report)
    return {
        "m": m,
        "hub": hub,
        "local_path": f"{info.name}/{info.version}",
        "first_config": first,
        "first_splits": [s for s in _split_names(info) if s in info.configs[first].splits],
        "split_names": _split_names(info),
        "feature_groups": _feature_groups(info),
        "sections": sections,
        "v": _validation(report),
        "contamination": contamination,
        "baselines": _baselines(report),
        "skipped": skipped,
        "source_status": _source_status(info),
        "lm_eval_tasks": lm_tasks,
        "lm_eval_group": task_name(info.name),
        "harvested": harvested(info),
        "changes_md": _changes_markdown(release),
    }


def render_body(context: Mapping[str, Any]) -> str:
    """The card's Markdown body: the template rendered with :func:`card_context`'s values (a value
    it needs and ``context`` lacks is a ``jinja2.UndefinedError``)."""
    return _ENV.get_template("dataset_card.md.j2").render(**context)


def render_card(release: Release, builder: Builder | None = None, *,
                hub: dict[str, str] | None = None) -> str:
    """Markdown card (YAML front matter + prose) for a :class:`~benchsmith.release.Release`.

    ``hub``: ``{"repo": "ORG/NAME", "revision": "<tag>"}`` once the release is published there.
    """
    body = render_body(card_context(release, builder, hub=hub))
    return f"---\n{card_yaml(release.info)}\n---\n\n{body}"


def render_files(release: Release, builder: Builder | None = None, *,
                 hub: dict[str, str] | None = None) -> dict[str, str]:
    """Every rendered file of a release, ``{path relative to the release: text}``: README.md,
    croissant.json and the lm_eval/ folder. ``publish --hub`` can commit these (rendered with
    ``hub=``) in place of the local ones without touching the release folder."""
    files = {
        CARD: render_card(release, builder, hub=hub),
        CROISSANT: json.dumps(scrub_tree(croissant(release, hub=hub)), indent=2, ensure_ascii=False) + "\n",
    }
    files.update(lm_eval_files(release, hub=hub, connectors=lm_eval_connectors(builder)))
    return files


def write_card_files(release: Release, builder: Builder | None = None, *, hub: dict[str, str] | None = None,
                     staged: bool = False) -> None:
    """(Re)write README.md, croissant.json and lm_eval/ inside a release directory; files of
    an earlier rendering that this one does not produce are removed from lm_eval/. ``staged``:
    the release is a build's staging folder, which no reader sees until it is renamed into
    place, so each file is written directly rather than through a temporary sibling."""
    files = render_files(release, builder, hub=hub)
    root = Path(release.path)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if staged:
            (root / rel).write_text(text, encoding="utf-8")
        else:
            write_text_atomic(root / rel, text)
    folder = root / LM_EVAL_FOLDER
    if folder.is_dir():
        for stale in sorted(folder.iterdir()):
            if stale.is_file() and f"{LM_EVAL_FOLDER}/{stale.name}" not in files:
                stale.unlink()
        if not any(folder.iterdir()):
            folder.rmdir()
