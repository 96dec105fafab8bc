"""Croissant 1.0 metadata (``croissant.json``) of a release, from its manifest alone.

``mlcroissant`` validates it without a warning and loads every record set
(``mlcroissant.Dataset("croissant.json").records("<config>/<split>/records")``); the tests
check both on fixture and real releases. Decisions:

* **@context**: :data:`CONTEXT` is the standard Croissant 1.0 context, key for key what
  mlcroissant builds for a 1.0 document (``mlcroissant._src.core.rdf.make_context``, the
  context of the examples in mlcommons/croissant ``datasets/1.0``); a test compares them, so
  a drift is noticed. mlcroissant stays an optional extra (``benchsmith[interop]``).
* **Files**: one ``cr:FileSet`` per config and split (``@id`` ``<config>/<split>``) whose
  ``includes`` lists that split's shards by name, as the manifest records them. A glob such as
  ``data/<config>/<split>-*.parquet`` would also match the shards of a split named
  ``<split>-<x>``; the names are exact. Paths are relative to the release folder (where
  ``croissant.json`` lies), so the document is the same on every machine and on the Hub.
* **Records**: one ``cr:RecordSet`` per config and split (``<config>/<split>/records``), keyed
  by the policy's ``id_field``, one ``cr:Field`` per feature: ``Value`` -> ``sc:Text`` /
  ``sc:Integer`` / ``sc:Float`` / ``sc:Boolean``; ``List(x)`` -> the field of ``x`` with
  ``repeated: true``; a struct (``{"role": ..., "text": ...}``, alone or in a list, like
  CoGnition's ``atoms``) -> a parent field with one ``subField`` per key, each reading the
  column and selecting its key with a ``jsonPath`` transform (mlcroissant then yields a dict,
  or a list of dicts).
* **Class labels**: a ``ClassLabel`` is stored as its integer index, so its field is
  ``sc:Integer``; the names follow Croissant 1.0's recommendation for categorical data: one
  enumeration record set per config and feature (``<config>/<feature>/classes``,
  ``dataType: sc:Enumeration``, fields ``index`` and ``name``, the classes inline as
  ``data``), which the field ``references``; its description also lists ``0=name, ...``.
* **datePublished** (recommended by Croissant; mlcroissant warns without it): the data files
  and the manifest hold no timestamp, by design, so the date must not be the build's clock
  (two builds of the same sources would differ). :func:`date_published` takes, in order:
  the version's own release date if the manifest records one (``release_date``: what
  builders should declare per version), ``$SOURCE_DATE_EPOCH`` (the reproducible-builds
  convention, for a release pipeline that pins a date), else the publication year of the
  citation's first entry (the dataset's own paper: XCOPA 2020, not COPA 2011): a date of the
  content that never changes between builds. Without any of them the key is left out (and mlcroissant warns: nothing is known).
* **url**: the Hub dataset page once published (``hub=``), else the builder's homepage.
"""

from __future__ import annotations

import datetime
import os
import re
from typing import TYPE_CHECKING, Any

from datasets import ClassLabel, Features, LargeList, List, Sequence, Value

from benchsmith.cards.paths import scrub

if TYPE_CHECKING:
    from benchsmith.manifest import ReleaseInfo
    from benchsmith.release import Release

CROISSANT_1_0 = "http://mlcommons.org/croissant/1.0"

#: The standard Croissant 1.0 ``@context`` (what ``mlcroissant`` 1.x builds for conformsTo 1.0).
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

PARQUET = "application/x-parquet"
_YEAR = re.compile(r"\byear\s*=\s*[{\"]*\s*(\d{4})\b", re.IGNORECASE)


def date_published(info: ReleaseInfo) -> str | None:
    """The release's ``datePublished`` (ISO 8601), deterministic for a given manifest and
    environment; see the module docstring for the order."""
    declared = info.release_date
    if declared:
        return str(declared)
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return datetime.datetime.fromtimestamp(int(epoch), tz=datetime.UTC).date().isoformat()
    year = _YEAR.search(info.citation or "")  # the first entry: the dataset's own paper
    return year.group(1) if year else None


def _scalar_type(feature: Any) -> str:
    if isinstance(feature, ClassLabel):
        return "sc:Integer"
    dtype = getattr(feature, "dtype", "string")
    if dtype == "bool":
        return "sc:Boolean"
    if dtype.startswith(("int", "uint")):
        return "sc:Integer"
    if dtype.startswith("float"):
        return "sc:Float"
    return "sc:Text"


def _class_set_id(config: str, name: str) -> str:
    return f"{config}/{name}/classes"


def _class_sets(config: str, features: Features) -> list[dict[str, Any]]:
    """One ``sc:Enumeration`` record set per top-level ClassLabel of a config."""
    out = []
    for name, feature in features.items():
        if not isinstance(feature, ClassLabel):
            continue
        rs = _class_set_id(config, name)
        out.append({
            "@type": "cr:RecordSet",
            "@id": rs,
            "name": rs,
            "description": f"The classes of `{name}` in config `{config}`: the integer stored in the data "
            "is the index of its name.",
            "dataType": "sc:Enumeration",
            "key": {"@id": f"{rs}/index"},
            "field": [
                {"@type": "cr:Field", "@id": f"{rs}/index", "name": "index", "dataType": "sc:Integer"},
                {"@type": "cr:Field", "@id": f"{rs}/name", "name": "name", "dataType": "sc:Text"},
            ],
            "data": [{f"{rs}/index": i, f"{rs}/name": n} for i, n in enumerate(feature.names)],
        })
    return out


def _field(fid: str, name: str, feature: Any, fileset: str, column: str, path: tuple[str, ...],
           config: str, top: bool) -> dict[str, Any]:
    """The ``cr:Field`` of one feature; ``path`` is the key path inside a struct column."""
    repeated = False
    inner = feature
    if isinstance(inner, (List, LargeList, Sequence)):
        repeated, inner = True, inner.feature
    if isinstance(inner, list):  # the old list-of-one-feature spelling
        repeated, inner = True, inner[0]
    field: dict[str, Any] = {"@type": "cr:Field", "@id": fid, "name": name}
    if isinstance(inner, (dict, Features)):
        field["subField"] = [
            _field(f"{fid}/{key}", key, sub, fileset, column, (*path, key), config, top=False)
            for key, sub in inner.items()
        ]
    else:
        field["dataType"] = _scalar_type(inner)
        source: dict[str, Any] = {"fileSet": {"@id": fileset}, "extract": {"column": column}}
        if path:
            source["transform"] = {"jsonPath": ".".join(path)}
        field["source"] = source
        if isinstance(inner, ClassLabel):
            field["description"] = "ClassLabel: " + ", ".join(f"{i}={n}" for i, n in enumerate(inner.names))
            if top and not repeated:
                field["references"] = {"field": {"@id": f"{_class_set_id(config, name)}/index"}}
        elif isinstance(inner, (Value,)) and inner.dtype not in ("string", "large_string", "bool") \
                and not inner.dtype.startswith(("int", "uint", "float")):
            field["description"] = f"Arrow type {inner.dtype}"
    if repeated:
        field["repeated"] = True
    return field


def croissant(release: Release, *, hub: dict[str, str] | None = None) -> dict[str, Any]:
    """Croissant 1.0 JSON-LD of a :class:`~benchsmith.release.Release` (see module docstring).

    ``hub``: ``{"repo": "ORG/NAME", "revision": "<tag>"}`` once published; the document's
    ``url`` then points at the Hub dataset (file paths stay relative to the repo root).
    """
    m = release.info
    dist: list[dict[str, Any]] = []
    record_sets: list[dict[str, Any]] = []
    for cname, cfg in m.configs.items():
        feats = cfg.features
        record_sets.extend(_class_sets(cname, feats))
        id_field = cfg.policy.get("id_field", "id")
        for split, info in cfg.splits.items():
            fs_id = f"{cname}/{split}"
            files = list(info.files)
            dist.append({
                "@type": "cr:FileSet",
                "@id": fs_id,
                "name": fs_id,
                "description": f"The Parquet shards of config `{cname}`, split `{split}`.",
                "encodingFormat": PARQUET,
                "includes": files if len(files) > 1 else files[0],
            })
            rs: dict[str, Any] = {
                "@type": "cr:RecordSet",
                "@id": f"{fs_id}/records",
                "name": f"{fs_id}/records",
                "description": scrub(f"{cfg.description or cname} Split `{split}`: "
                                     f"{info.num_examples:,} examples."),
                "field": [_field(f"{fs_id}/{fname}", fname, f, fs_id, fname, (), cname, top=True)
                          for fname, f in feats.items()],
            }
            if id_field and id_field in feats:
                rs["key"] = {"@id": f"{fs_id}/{id_field}"}
            record_sets.append(rs)
    doc: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CROISSANT_1_0,
        "name": m.name,
        "alternateName": m.pretty_name or m.name,
        "description": scrub(m.description or m.pretty_name or m.name),
        "version": m.version,
    }
    if m.license:
        doc["license"] = m.license
    if hub:
        doc["url"] = f"https://huggingface.co/datasets/{hub['repo']}"
    elif m.homepage:
        doc["url"] = m.homepage
    if m.homepage and doc.get("url") != m.homepage:
        doc["sameAs"] = m.homepage
    if m.citation:
        doc["citeAs"] = m.citation
    date = date_published(m)
    if date:
        doc["datePublished"] = date
    languages = sorted({lang for c in m.configs.values() for lang in c.languages})
    if languages:
        doc["inLanguage"] = languages
    keywords = [*m.task_categories, *m.task_ids]
    if keywords:
        doc["keywords"] = keywords
    doc.update(responsible_ai(m))
    doc["distribution"] = dist
    doc["recordSet"] = record_sets
    return doc


#: what any benchsmith release promises about its maintenance (rai:dataReleaseMaintenancePlan)
MAINTENANCE_PLAN = (
    "Versioned with semantic versioning. A released version's content never changes: its split fingerprints "
    "are registered (builders/<name>/fingerprints.tsv) and a build that differs fails; fixes to upstream data "
    "ship as errata in a new version, each listed with its evidence, and `benchsmith diff` gives the item-level "
    "changelog between any two versions."
)


def responsible_ai(m: ReleaseInfo) -> dict[str, Any]:
    """Croissant RAI fields (``rai:`` vocabulary) from what the manifest already records.

    Computed, never typed by hand: ``dataCollection`` (the builder's description and its
    upstream sources), ``dataCollectionRawData`` (each source with its licence, URL and the
    sha256 of every file read), ``dataPreprocessingProtocol`` (how the release was made and
    each erratum applied), ``dataLimitations`` (errata not yet applied, skipped configs and
    splits, a build declared not reproducible, known artifacts the builder declares),
    ``dataUseCases`` (the task categories and the configs' languages), and
    ``dataReleaseMaintenancePlan`` (:data:`MAINTENANCE_PLAN`). A builder adds what only it knows
    (annotation protocol, demographics, biases...) as ``rai`` in the manifest (``Builder.rai``):
    keys in the vocabulary's spelling without the prefix, e.g. ``{"dataAnnotationProtocol": ...}``.
    """
    sources = m.sources
    raw = []
    for name, src in sources.items():
        files = src.get("files") or {}
        digests = "; ".join(f"{f} sha256 {(r or {}).get('sha256', '?')}" for f, r in files.items())
        raw.append(f"{name}: {src.get('url') or 'no download URL'} (licence {src.get('license') or 'not stated'})"
                   + (f"; files read: {digests}" if digests else ""))
    out: dict[str, Any] = {}
    description = scrub(m.description or m.pretty_name or m.name)
    if sources:
        out["rai:dataCollection"] = (f"{description} This release is built by benchsmith from "
                                     f"{len(sources)} upstream source(s): {', '.join(sources)}; nothing is "
                                     "collected anew.")
        out["rai:dataCollectionRawData"] = "\n".join(raw)
    steps = [(f"Built by benchsmith {m.tool_versions.get('benchsmith', '?')} from the upstream "
             "files, each verified against its registered sha256, into deterministic Parquet shards.")]
    steps += [f"Erratum {e.get('id')}: {e.get('what')} -> {e.get('fix')} (evidence: {e.get('evidence')})"
              for e in m.errata_applied]
    out["rai:dataPreprocessingProtocol"] = steps
    limits = [f"Known upstream defect not fixed in this version: {e.get('id')}: {e.get('what')}"
              for e in m.errata_pending]
    limits += [f"Config {c} not built: {dict(why)}" for c, why in m.skipped_configs.items()]
    limits += [f"Config {c} split {s} not built: {why}" for c, cfg in m.configs.items()
               for s, why in cfg.skipped_splits.items()]
    if m.reproducible is False:
        limits.append("The build is declared not reproducible: a rebuild from the same sources may differ.")
    limits += [f"Known artifact: {a}" for a in m.extra.get("known_artifacts") or []]
    if limits:
        out["rai:dataLimitations"] = limits
    tasks = [*m.task_categories, *m.task_ids]
    languages = sorted({lang for c in m.configs.values() for lang in c.languages})
    if tasks:
        out["rai:dataUseCases"] = [f"Evaluation benchmark for {t}" + (f" in {', '.join(languages)}" if languages else "")
                                   for t in tasks]
    out["rai:dataReleaseMaintenancePlan"] = MAINTENANCE_PLAN
    for key, value in (m.extra.get("rai") or {}).items():
        out[f"rai:{key}"] = value
    return out
