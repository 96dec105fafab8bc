"""Render a release's dataset card and Croissant metadata from its manifest.

No number is typed by hand: split sizes, features, errata, sources and the
validation summary all come from ``release.json`` and ``reports/validation.json``.
The YAML front matter is built with huggingface_hub's ``DatasetCardData`` and
holds what ``datasets.load_dataset`` needs to load the release offline:
``configs`` (``data_files`` per split) and ``dataset_info`` (features with
ClassLabel names, ``num_bytes`` and ``num_examples`` per split).

A builder may add prose sections through ``Builder.card_sections(release)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets
import jinja2
from huggingface_hub import DatasetCardData

from benchsmith.registry import CARD, write_text_atomic

TEMPLATES = Path(__file__).parent / "templates"


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


def card_data(manifest: dict[str, Any]) -> DatasetCardData:
    """The YAML metadata of a release's card."""
    configs, infos = [], []
    total = 0
    languages: list[str] = []
    for i, (name, cfg) in enumerate(manifest["configs"].items()):
        entry: dict[str, Any] = {
            "config_name": name,
            "data_files": [
                {"split": s, "path": f"data/{name}/{s}-*.parquet"} for s in cfg["splits"]
            ],
        }
        if i == 0:
            entry["default"] = True
        configs.append(entry)
        features = datasets.Features.from_dict(cfg["features"])
        splits = [
            {"name": s, "num_bytes": info["num_bytes"], "num_examples": info["num_examples"]}
            for s, info in cfg["splits"].items()
        ]
        size = sum(s["num_bytes"] for s in splits)
        infos.append(
            {
                "config_name": name,
                "features": features._to_yaml_list(),
                "splits": splits,
                "dataset_size": size,
            }
        )
        total += sum(s["num_examples"] for s in splits)
        for lang in cfg.get("languages", []):
            if lang not in languages:
                languages.append(lang)
    return DatasetCardData(
        language=languages or None,
        license=(manifest.get("license") or "other").lower(),
        pretty_name=manifest.get("pretty_name"),
        task_categories=manifest.get("task_categories") or None,
        size_categories=[_size_category(total)],
        configs=configs,
        dataset_info=infos,
        version=manifest["version"],
    )


def _feature_rows(features_dict: dict[str, Any]) -> list[dict[str, str]]:
    feats = datasets.Features.from_dict(features_dict)
    rows = []
    for name, f in feats.items():
        if isinstance(f, datasets.ClassLabel):
            typ = "ClassLabel(" + ", ".join(f"{i}={n}" for i, n in enumerate(f.names)) + ")"
        elif isinstance(f, datasets.Value):
            typ = f.dtype
        else:
            typ = type(f).__name__ + (f"({getattr(f, 'feature', '')!s})" if hasattr(f, "feature") else "")
        rows.append({"name": name, "type": typ.replace("|", "/")})
    return rows


def render_card(release: Any, builder: Any | None = None) -> str:
    """Markdown card (YAML front matter + prose) for a :class:`~benchsmith.release.Release`."""
    m = release.manifest
    report = None
    rpath = release.reports_dir / "validation.json"
    if rpath.is_file():
        report = json.loads(rpath.read_text(encoding="utf-8"))
    split_names: list[str] = []
    for cfg in m["configs"].values():
        for s in cfg["splits"]:
            if s not in split_names:
                split_names.append(s)
    source_status = {}
    for n, s in m["sources"].items():
        statuses = {f["status"] for f in s["files"].values()}
        source_status[n] = ", ".join(sorted(statuses)) or "no files"
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), keep_trailing_newline=True, undefined=jinja2.StrictUndefined
    )
    sections = dict(builder.card_sections(release)) if builder is not None else {}
    body = env.get_template("dataset_card.md.j2").render(
        m=m,
        first_config=next(iter(m["configs"])),
        split_names=split_names,
        features={c: _feature_rows(info["features"]) for c, info in m["configs"].items()},
        sections=sections,
        report=report,
        source_status=source_status,
    )
    return f"---\n{card_data(m).to_yaml()}\n---\n\n{body}"


def croissant(release: Any) -> dict[str, Any]:
    """Croissant 1.0 JSON-LD: one FileSet and one RecordSet per config and split."""
    m = release.manifest
    dist, record_sets = [], []
    for cname, cfg in m["configs"].items():
        feats = datasets.Features.from_dict(cfg["features"])
        for split in cfg["splits"]:
            fs_id = f"{cname}/{split}"
            dist.append(
                {
                    "@type": "cr:FileSet",
                    "@id": fs_id,
                    "name": fs_id,
                    "encodingFormat": "application/x-parquet",
                    "includes": f"data/{cname}/{split}-*.parquet",
                }
            )
            fields = []
            for fname, f in feats.items():
                dtype = "sc:Text"
                if isinstance(f, datasets.ClassLabel) or (
                    isinstance(f, datasets.Value) and f.dtype.startswith(("int", "uint"))
                ):
                    dtype = "sc:Integer"
                elif isinstance(f, datasets.Value) and f.dtype.startswith("float"):
                    dtype = "sc:Float"
                elif isinstance(f, datasets.Value) and f.dtype == "bool":
                    dtype = "sc:Boolean"
                field = {
                    "@type": "cr:Field",
                    "@id": f"{fs_id}/{fname}",
                    "name": fname,
                    "dataType": dtype,
                    "source": {"fileSet": {"@id": fs_id}, "extract": {"column": fname}},
                }
                if not isinstance(f, (datasets.Value, datasets.ClassLabel)):
                    field["repeated"] = True
                fields.append(field)
            record_sets.append({"@type": "cr:RecordSet", "@id": f"{fs_id}/records", "name": f"{fs_id}/records", "field": fields})
    return {
        "@context": {
            "@language": "en",
            "@vocab": "https://schema.org/",
            "cr": "http://mlcommons.org/croissant/",
            "sc": "https://schema.org/",
            "dct": "http://purl.org/dc/terms/",
            "citeAs": "cr:citeAs",
            "column": "cr:column",
            "conformsTo": "dct:conformsTo",
            "data": {"@id": "cr:data", "@type": "@json"},
            "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
            "extract": "cr:extract",
            "field": "cr:field",
            "fileSet": "cr:fileSet",
            "includes": "cr:includes",
            "recordSet": "cr:recordSet",
            "repeated": "cr:repeated",
            "source": "cr:source",
        },
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": m["name"],
        "description": m.get("description") or m.get("pretty_name", m["name"]),
        "version": m["version"],
        "license": m.get("license", ""),
        "url": m.get("homepage", ""),
        "citeAs": m.get("citation", ""),
        "distribution": dist,
        "recordSet": record_sets,
    }


def write_card_files(release: Any, builder: Any | None = None) -> None:
    """(Re)write README.md and croissant.json inside a release directory."""
    write_text_atomic(release.path / CARD, render_card(release, builder))
    write_text_atomic(release.path / "croissant.json", json.dumps(croissant(release), indent=2, ensure_ascii=False) + "\n")
