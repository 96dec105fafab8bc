"""``benchsmith contamination RELEASE --against SOURCE [SOURCE ...]``.

Prints the per-split table (or one JSON object with ``--json``, markdown with
``--markdown``), writes the JSON report to ``--out`` when given, and exits 1 when a split's
share of items that overlap a source not declared by design exceeds its policy's
``contamination_max_fraction`` (see :mod:`benchsmith.validation.contamination`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

from benchsmith.cli.options import JSON_OPTION, REGISTRY_OPTION, ReleaseArg
from benchsmith.cli.output import console, emit, table
from benchsmith.errors import ConfigError, GateError
from benchsmith.jsonable import to_jsonable
from benchsmith.lookup import resolve_release
from benchsmith.registry import write_text_atomic
from benchsmith.validation.contamination import scan

#: contaminated items listed on the terminal (the first screen); --markdown and --json list more
SHOWN = 5


def contamination_cmd(
    release: ReleaseArg,
    against: Annotated[list[str], typer.Option(
        "--against", metavar="SOURCE", help="A SOURCE: another release (folder or NAME[/VERSION]), hf://datasets/ORG/NAME@REV"
        "[?config=C&field=F], or text files (txt, jsonl, csv, parquet; folders, globs). Repeatable.")],
    ngram: Annotated[int, typer.Option("--ngram", metavar="N", help="Words per n-gram (lm-eval's 13).", min=1, max=64)] = 13,
    min_tokens: Annotated[int, typer.Option(
        "--min-words", metavar="N", help="A matched field shorter than --ngram is matched whole from this many words.",
        min=1)] = 5,
    text_field: Annotated[list[str] | None, typer.Option(
        "--text-field", metavar="NAME", help="Text field/column of jsonl, csv and parquet sources (repeatable; default: "
        "'text', every column of a csv).")] = None,
    near_dup: Annotated[float | None, typer.Option(
        "--near-dup", metavar="X", help="Also count near duplicates: Jaccard of character 5-grams at least this (MinHash "
        "candidates, verified exactly).", min=0.0, max=1.0)] = None,
    scheduler: Annotated[str | None, typer.Option(
        "--scheduler", metavar="ADDRESS", help="Dask scheduler ADDRESS: partition the sources over that cluster.")] = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", metavar="N", help="Local processes (default: one per core).", min=1)] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the report as markdown.")] = False,
    out: Annotated[Path | None, typer.Option("--out", metavar="FILE", help="Also write the JSON report to this file.")] = None,
    registry: Path | None = REGISTRY_OPTION,
    json_out: bool = JSON_OPTION,
) -> None:
    """Find a release's items in other datasets or corpora.

    The sources are other releases, Hub datasets or text corpora.
    Exit 1 when a split's share of contaminated items is past its policy's threshold."""
    if min_tokens > ngram:
        raise ConfigError(f"--min-words {min_tokens} is more than --ngram {ngram}",
                          hint="A field of --ngram words or more is always matched by n-grams: lower --min-words")
    r = resolve_release(release, registry)
    start = time.perf_counter()
    parts, sources = scan.source_parts(against, registry=registry, text_fields=tuple(text_field or ()))
    index = scan.build_index(r, ngram=ngram, min_tokens=min_tokens, near=near_dup)
    counts, locations, lines, per_source, ran = scan.run(index, parts, scheduler=scheduler, workers=workers)
    rep = scan.report(r, index, counts, locations, sources=sources, lines=lines,
                      seconds=time.perf_counter() - start, ran=ran, per_source=per_source)
    if out is not None:
        write_text_atomic(out, json.dumps(to_jsonable(rep), indent=1, ensure_ascii=False) + "\n")

    def human() -> None:
        if markdown:
            console.print(scan.markdown(rep), markup=False, highlight=False)
            return
        # the verdict first, then only what was found: a release has dozens of clean splits
        found = [x for x in rep["splits"] if x["contaminated"]]
        verdict = "fail" if rep["failed"] else "warn" if any(x["status"] == "warn" for x in found) else "pass"
        console.print(f"contamination of {rep['release']} ({rep['ngram']}-grams): {verdict}: "
                      f"{len(rep['items']):,} item(s) found in {len(found)} of {len(rep['splits'])} splits",
                      highlight=False)
        if found:
            several = len(rep["sources"]) > 1  # by source only when there is more than one
            rows = [(x["config"], x["split"], f"{x['contaminated']:,} of {x['items']:,} ({x['rate']:.2%})",
                     *([", ".join(f"{k} {v}" for k, v in x["by_source"].items())] if several else []), x["status"])
                    for x in found]
            console.print(table("splits with contaminated items",
                                ["config", "split", "contaminated", *(["by source"] if several else []), "status"],
                                rows))
            console.print("\n".join(scan.item_line(it) for it in rep["items"][:SHOWN]), markup=False, highlight=False)
            if len(rep["items"]) > SHOWN:
                console.print(f"(+{len(rep['items']) - SHOWN:,} more: --markdown or --json lists them)")
        console.print(f"{lines:,} lines in {rep['seconds']} s ({rep['lines_per_second'] or 0:,} lines/s, {ran})",
                      highlight=False)

    emit(rep, json_out, human)
    if rep["failed"]:
        raise GateError(f"contamination above the policy's threshold in {', '.join(rep['failed'])}",
                        hint="Remove or replace the contaminated items, or declare a known overlap in the "
                        "builder's policy (contamination_by_design / contamination_max_fraction)")
