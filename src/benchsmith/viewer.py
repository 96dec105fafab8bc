"""Will the Hub's dataset viewer accept this release? Checked before anything is pushed.

The Hub's own users report these failures late, after an upload: a schema mismatch
between the files of one config, card YAML whose ``configs:`` the viewer cannot resolve,
row groups too large to page. :func:`viewer_problems` finds them locally, from the files
that would be uploaded; ``publish --hub`` refuses a release with a problem, naming the file
and the reason.

What is checked (each a one-line problem naming the file):

* **One Arrow schema per config** across all its files and splits (the viewer and
  ``datasets`` build one table per config): every shard's schema, metadata aside, equals the
  first one's; a differing field is named with both types.
* **The card's ``configs:`` YAML** (parsed by huggingface_hub's ``DatasetCard``, as the Hub
  does): every config of the release is listed, nothing else is; each split's ``data_files``
  pattern matches exactly that split's shards (``fnmatch``, relative to the release root as on
  the Hub), no more, no fewer; ``dataset_info`` declares the same splits with the manifest's
  ``num_examples``; the YAML is valid ``DatasetCardData``.
* **Row groups** at most :data:`MAX_ROW_GROUP_BYTES` uncompressed: the viewer answers
  ``TooBigContentError`` ("Rows from parquet row groups are too big to be read: ... (max=286.10
  MiB)", i.e. 300,000,000 bytes) above that, and recommends 100-300 MB row groups.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
from huggingface_hub import DatasetCard

from benchsmith.errors import PublishError

if TYPE_CHECKING:
    from benchsmith.release import Release

#: the dataset viewer's row-group limit (its TooBigContentError says "max=286.10 MiB")
MAX_ROW_GROUP_BYTES = 300_000_000


def _schema_problems(release: Release) -> list[str]:
    problems = []
    for config in release.configs():
        first: tuple[str, Any] | None = None
        for split in release.splits(config):
            for path in release.files(config, split):
                schema = pq.read_schema(path).remove_metadata()
                rel = path.relative_to(release.path).as_posix()
                if first is None:
                    first = (rel, schema)
                    continue
                if not schema.equals(first[1]):
                    diff = _first_difference(first[1], schema)
                    problems.append(f"{rel}: Arrow schema differs from {first[0]} in config {config!r} ({diff}); "
                                    "the viewer needs one schema per config")
    return problems


def _first_difference(a: Any, b: Any) -> str:
    names_a, names_b = a.names, b.names
    if names_a != names_b:
        return f"columns {names_a} vs {names_b}"
    for fa, fb in zip(a, b, strict=True):
        if not fa.equals(fb):
            return f"field {fa.name!r}: {fa.type} vs {fb.type}"
    return "metadata"


def _row_group_problems(release: Release, limit: int) -> list[str]:
    problems = []
    for config in release.configs():
        for split in release.splits(config):
            for path in release.files(config, split):
                meta = pq.ParquetFile(path).metadata
                for i in range(meta.num_row_groups):
                    size = meta.row_group(i).total_byte_size
                    if size > limit:
                        problems.append(f"{path.relative_to(release.path).as_posix()}: row group {i} is {size:,} "
                                        f"bytes uncompressed, over the viewer's {limit:,} (TooBigContentError)")
    return problems


def _card_problems(release: Release, card_text: str | None) -> list[str]:
    card_path = release.path / "README.md"
    if card_text is None:
        if not card_path.is_file():
            return ["README.md: missing; the Hub shows no card and the viewer has no configs"]
        card_text = card_path.read_text(encoding="utf-8")
    try:
        data = DatasetCard(card_text).data.to_dict()
    except Exception as exc:  # noqa: BLE001 - yaml.YAMLError, ValueError: the Hub rejects it too
        return [f"README.md: the card's YAML does not parse ({type(exc).__name__}: {exc})"]
    listed = data.get("configs") or []
    problems = []
    by_name: dict[str, dict] = {}
    for entry in listed:
        if not isinstance(entry, dict) or not isinstance(entry.get("config_name"), str):
            problems.append(f"README.md: configs entry {entry!r} has no config_name")
            continue
        by_name[entry["config_name"]] = entry
    for extra in sorted(set(by_name) - set(release.configs())):
        problems.append(f"README.md: configs lists {extra!r}, which the release does not have")
    infos = data.get("dataset_info") or []
    infos = infos if isinstance(infos, list) else [infos]
    info_by_name = {i.get("config_name", "default"): i for i in infos if isinstance(i, dict)}
    for config in release.configs():
        entry = by_name.get(config)
        if entry is None:
            problems.append(f"README.md: config {config!r} is not in configs:, so the viewer does not show it")
            continue
        files = entry.get("data_files") or []
        files = files if isinstance(files, list) else [files]
        patterns: dict[str, list[str]] = {}
        for df in files:
            if isinstance(df, dict):
                paths = df.get("path")
                patterns[str(df.get("split", "train"))] = paths if isinstance(paths, list) else [paths] if paths else []
        for split in release.splits(config):
            shards = [p.relative_to(release.path).as_posix() for p in release.files(config, split)]
            pats = patterns.get(split)
            if not pats:
                problems.append(f"README.md: config {config!r} has no data_files for split {split!r}")
                continue
            everything = [p.relative_to(release.path).as_posix() for p in (release.path / "data").rglob("*")
                          if p.is_file()]
            matched = sorted(f for f in everything if any(fnmatch.fnmatchcase(f, str(pat)) for pat in pats))
            if matched != sorted(shards):
                problems.append(f"README.md: data_files {pats} of {config}/{split} match {matched[:3]}"
                                f"{' ...' if len(matched) > 3 else ''}, not exactly the split's {len(shards)} shard(s)")
        for split in set(patterns) - set(release.splits(config)):
            problems.append(f"README.md: config {config!r} lists data_files for split {split!r}, which it does not have")
        info = info_by_name.get(config)
        if info is not None:
            declared = {s.get("name"): s.get("num_examples") for s in info.get("splits") or [] if isinstance(s, dict)}
            actual = {s: release.num_examples(config, s) for s in release.splits(config)}
            if declared != actual:
                problems.append(f"README.md: dataset_info of {config!r} declares splits {declared}, the data has {actual}")
    return problems


def viewer_problems(release: Release, *, card_text: str | None = None,
                    max_row_group_bytes: int = MAX_ROW_GROUP_BYTES) -> list[str]:
    """Every reason the Hub's dataset viewer would reject ``release`` (``[]``: none).

    ``card_text``: the card as it will be uploaded (the Hub copy is rendered with the repo
    and revision), else the release's README.md.
    """
    return (_schema_problems(release) + _card_problems(release, card_text)
            + _row_group_problems(release, max_row_group_bytes))


def require_viewer_compatible(release: Release, *, card_text: str | None = None) -> None:
    """:class:`~benchsmith.errors.PublishError` naming the first problem (and how many more)."""
    problems = viewer_problems(release, card_text=card_text)
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise PublishError(f"the Hub's dataset viewer would not accept {release.name} {release.version}: "
                           f"{problems[0]}{more}", path=Path(release.path),
                           hint="Rebuild the release with `benchsmith build` (a hand-edited card or shard "
                           "causes this); nothing was uploaded")
