"""``benchsmith harvest mucow``: MuCoW's construction method end to end, into a release.

Stages (modules beside this one):

1. :mod:`.corpora` reads the parallel corpora (Moses pairs, TMX) with a corpus label;
2. :mod:`.align` tokenises, aligns with eflomal (:mod:`.aligner`: seeded, so a harvest
   is reproducible), keeps one-to-one links and counts them; source words linked
   ``min_links`` (10) times to ``min_targets`` (2) distinct target words are
   candidates. Stages 1-2 run on Dask: a local cluster of one single-threaded worker
   process per core by default, ``--scheduler ADDRESS`` for a ``distributed`` cluster
   (workers need benchsmith with the ``mucow`` extra installed). The client streams the
   corpora in alignment chunks (``chunk_size`` pairs, one eflomal call each) and cuts
   each chunk into pieces so every worker tokenises and symmetrises; aligned pieces stay
   in the workers' memory for the second pass;
3. :mod:`.senses` intersects with the sense inventory, groups by synset, merges;
4. and 5. :mod:`.suites` select the scoring and translation items (second Dask pass
   over the aligned pieces, then POS filtering for the translation variant, :mod:`.pos`,
   whose tagger probe runs in the background from the start).

The result is written by :class:`benchsmith.release.ReleaseWriter` through
:class:`HarvestBuilder`, a builder made on the fly and named
``mucow-harvest-<src>-<tgt>`` (it is not in the registry of buildable datasets:
its input is whatever corpora you give it), with configs ``scoring`` and
``translation`` (same features as the released suites' configs, so
``benchsmith evaluate mucow`` scores both). Inputs are recorded in ``release.json``
with their sha256 (sources ``parallel`` and ``inventory``), the options and the
paper's statistics in each config's metadata.

Validation: the runner finds the builder of a ``mucow-harvest-*`` release through the
manifest's ``builder`` (``benchsmith.builders.mucow.harvest.HarvestBuilder``) and calls
:meth:`HarvestBuilder.for_validation`, which needs no pipeline result: a harvested release
gets MuCoW's construction checks (``checks.py``), every violation failing, since the
pipeline applies every rule by construction. It reproduces no published figure and has no
errata: ``published.yaml``, ``errata.tsv`` and ``checksums.tsv`` beside this module describe
upstream's WMT 2019 release, not a harvest.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import socket
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlparse

from benchsmith import progress
from benchsmith.builder import Builder, Config, Example
from benchsmith.builders.mucow import CITATION
from benchsmith.builders.mucow.align import (
    AlignParams,
    align_pieces,
    candidate_words,
    count_links,
    is_deterministic,
    pieces_per_chunk,
    split_chunk,
    symmetrise_piece,
    tokenize_piece,
)
from benchsmith.builders.mucow.aligner import (
    HARVEST_PREFIX,
    Aligner,
    EflomalAligner,
    remove_stale_scratch,
    require_eflomal,
    scratch_dir,
)
from benchsmith.builders.mucow.corpora import (
    SUBTITLE_LABELS,
    Corpus,
    count_nonblank_pairs,
    discover_corpora,
    iter_chunks,
)
from benchsmith.builders.mucow.pos import noun_test, start_probe
from benchsmith.builders.mucow.schema import SCORING_FEATURES, TRANSLATION_FEATURES, suite_statistics
from benchsmith.builders.mucow.senses import AmbiguousWord, build_senses, statistics
from benchsmith.builders.mucow.suites import (
    merge_pools,
    scoring_items,
    select_candidates,
    translation_items,
)
from benchsmith.errors import ConfigError
from benchsmith.lifeline import die_with_parent
from benchsmith.loaders.sense_inventory import Inventory, check_languages, load_inventory
from benchsmith.nlp.tokenize import get_tokenizer, iso3
from benchsmith.source import FileRecord, ResolvedSource, Source, Sources, sha256_file

from .checks import strict_checks

if TYPE_CHECKING:
    from benchsmith.release import Release

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class HarvestOptions:
    """Every knob of the pipeline (recorded in the release); defaults are the paper's."""

    src: str
    tgt: str
    min_links: int = 10
    min_targets: int = 2
    merge_threshold: float | None = None
    scoring_min_words: int = 10
    scoring_per_sense: int = 20
    translation_min_per_sense: int = 4
    translation_max_per_sense: int = 10
    translation_pool: int = 50  # candidates per sense kept for POS filtering
    subtitle_labels: tuple[str, ...] = SUBTITLE_LABELS
    pos_backend: str = "auto"
    chunk_size: int = 200_000
    max_tokens: int = 100
    seed: int = 0


@dataclass
class HarvestResult:
    options: HarvestOptions
    corpora: list[Corpus]
    inventory: Inventory
    words: dict[str, AmbiguousWord]
    scoring: list[dict]
    translation: list[dict]
    pos_source: str
    counts: dict = field(default_factory=dict)
    #: how the links were made (:meth:`Aligner.describe`), ``deterministic`` as observed in every chunk
    alignment: dict = field(default_factory=dict)

    def statistics(self) -> dict:
        return {
            "pair": f"{self.options.src}-{self.options.tgt}",
            "sentence_pairs": self.counts.get("sentence_pairs", 0),
            "candidate_words": self.counts.get("candidate_words", 0),
            **statistics(self.words),
            "scoring": suite_statistics(self.scoring, "scoring"),
            "translation": suite_statistics(self.translation, "translation"),
            "pos": self.pos_source,
        }


# --------------------------------------------------------------------------- dask


def _reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast (instead of Dask's retry loop) when nothing listens at a tcp:// address."""
    url = urlparse(address if "://" in address else f"tcp://{address}")
    if url.scheme not in ("tcp", "tls") or url.hostname is None or url.port is None:
        return  # other transports (inproc, ucx): let Dask judge
    try:
        socket.create_connection((url.hostname, url.port), timeout=timeout).close()
    except OSError as exc:
        raise ConfigError(f"cannot reach the Dask scheduler at {address!r}: {exc}",
                          hint="Start one with `dask scheduler` (and `dask worker ADDRESS`), or drop --scheduler "
                          "to run locally") from None


@contextmanager
def dask_client(address: str | None, workers: int | None = None) -> Iterator:
    """A ``distributed`` client: ``address`` (a running scheduler) or a local cluster of ``workers``
    (default: one per core) single-threaded worker processes."""
    try:
        import dask
        from dask.distributed import Client, LocalCluster
    except ModuleNotFoundError as exc:
        raise ConfigError("dask[distributed] is not installed", hint="pip install 'benchsmith[scale]'") from exc
    # distributed logs its life cycle at INFO on its own loggers; keep them for --verbose only
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        logging.getLogger("distributed").setLevel(logging.ERROR)
    if address:
        _reachable(address)
        try:
            client = Client(address, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise ConfigError(f"cannot reach the Dask scheduler at {address!r}: {exc}",
                              hint="Start one with `dask scheduler` (and `dask worker ADDRESS`), or drop --scheduler "
                              "to run locally") from None
        try:
            yield client
        finally:
            client.close()
        return
    # Processes, not threads: tokenisation and symmetrisation are pure Python (sacremoses holds the GIL).
    # Where the platform can fork, workers are forked from this process, which has imported the pipeline
    # and built the tokenisers already: they start in a fraction of a second instead of re-importing
    # everything (distributed's default, spawn). A random dashboard port: two harvests side by side must
    # not collide on :8787.
    # Workers that outlive the scheduler by a heartbeat at shutdown log an ERROR with a traceback: a
    # local cluster is ours to stop, so only CRITICAL gets through (task errors reach the client anyway).
    # Scratch: Dask's own default is $TMPDIR/dask-scratch-space, which every run left behind (empty); the
    # cluster gets a folder of this harvest's instead, removed at the end, or by the next harvest when this
    # one was killed (its name holds our pid: aligner.remove_stale_scratch; see aligner.py on kills).
    method = "fork" if _can_fork() else "spawn"
    # a forked worker dies with the harvest (aligner.py, "kills and leftovers": distributed's own guard
    # fails with fork); spawned workers inherit no pipes, so distributed's guard holds for them
    plugins = (_die_with_harvest(os.getpid()),) if method == "fork" else ()
    quiet = logging.CRITICAL if logging.getLogger().getEffectiveLevel() > logging.DEBUG else logging.WARNING
    dlog = logging.getLogger("distributed")
    level = dlog.level
    dlog.setLevel(quiet)  # before the fork: forked workers inherit it
    try:
        with scratch_dir(HARVEST_PREFIX) as scratch, \
                dask.config.set({"distributed.worker.multiprocessing-method": method,
                                 "temporary-directory": str(scratch)}), \
                LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                             dashboard_address=":0", silence_logs=quiet, local_directory=str(scratch),
                             plugins=plugins) as cluster, \
                Client(cluster) as client:
            yield client
    finally:
        dlog.setLevel(level)


def _die_with_harvest(parent: int) -> Any:
    """A worker plugin that makes its worker process die with the harvest (``parent``), set up before
    the worker connects to the scheduler. ``PR_SET_PDEATHSIG`` fires when the thread that forked the
    worker ends: distributed forks from a thread of the worker's ``AsyncProcess`` that lives as long as
    the nanny keeps that process, so only a worker already let go of is killed early."""
    from distributed import WorkerPlugin

    class DieWithHarvest(WorkerPlugin):
        name = "benchsmith-die-with-harvest"

        def setup(self, worker: Any) -> None:
            die_with_parent(parent)

    return DieWithHarvest()


def _can_fork() -> bool:
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


# --------------------------------------------------------------------------- pipeline


class _Laps:
    """Logs (DEBUG, ``-v``) the seconds each stage took."""

    def __init__(self) -> None:
        self._clock = time.perf_counter
        self._last = self._clock()

    def __call__(self, what: str) -> None:
        now = self._clock()
        log.debug("mucow harvest: %s after %.2f s", what, now - self._last)
        self._last = now


def _align_all(client: Any, corpora: list[Corpus], opts: HarvestOptions, params: AlignParams,
               aligner: Aligner) -> tuple[list, int, list]:
    """Submit stages 1-2 chunk by chunk: ``(aligned piece futures, pairs read, alignment futures)``."""
    workers = max(1, sum(client.nthreads().values()))
    aligned, alignments = [], []
    n_pairs = 0
    first = 0
    for chunk in progress.track(iter_chunks(corpora, opts.src, opts.tgt, opts.chunk_size), "mucow: read + align"):
        n_pairs += len(chunk.lines)
        pieces = split_chunk(chunk, pieces_per_chunk(len(chunk.lines), workers), first)
        first += len(pieces)
        tokenised = [client.submit(tokenize_piece, p, params, pure=False) for p in pieces]
        alignment = client.submit(align_pieces, tokenised, aligner, pure=False)
        alignments.append(alignment)
        aligned += [client.submit(symmetrise_piece, t, alignment, k, pure=False) for k, t in enumerate(tokenised)]
    return aligned, n_pairs, alignments


def no_items(opts: HarvestOptions, n_words: int, n_pairs: int) -> ConfigError:
    """The error of a harvest that found nothing to write."""
    return ConfigError(
        f"the harvest found no test item for {opts.src}-{opts.tgt} ({n_words} ambiguous words in "
        f"{n_pairs:,} sentence pairs)",
        hint="Give more parallel text, or lower --min-links",
    )


def check_inputs(parallel: Sequence[str | Path], inventory_dir: str | Path, opts: HarvestOptions,
                 need_eflomal: bool = True) -> tuple[HarvestOptions, list[Corpus]]:
    """Every input check that needs no alignment, in the order a user fixes them; the options with
    ``src``/``tgt`` as ISO 639-3 codes (``de`` and ``deu`` are one language, one release name).

    Raises:
        ConfigError: an unknown language code, ``src`` = ``tgt``, eflomal missing or broken, no or
            unlabelled corpora, a wrong ``--inventory`` (absent, a file, a language missing), or too
            few non-blank sentence pairs (fewer than ``min_links`` x ``min_targets``).
        ParseError: a corpus pair with different line counts, a bad row of the inventory read so far.
    """
    src, tgt = iso3(opts.src), iso3(opts.tgt)
    if src == tgt:
        raise ConfigError(f"--src {opts.src} and --tgt {opts.tgt} are the same language ({src})",
                          hint="A harvest needs two languages: pass the corpus's other language as --tgt")
    opts = replace(opts, src=src, tgt=tgt)
    if need_eflomal:
        require_eflomal()
    if not parallel:
        raise ConfigError("no parallel corpus given", hint="Pass --parallel DIR (repeatable)")
    corpora = [c for spec in parallel for c in discover_corpora(spec, src, tgt)]
    labels = [c.label for c in corpora]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"two corpora share a label: {labels}",
                          hint="Name them apart with --parallel LABEL=PATH")
    check_languages(inventory_dir, [src, tgt])  # the inventory itself is read while the workers align
    need = opts.min_links * opts.min_targets
    have = count_nonblank_pairs(corpora, src, tgt, need)
    if have < need:
        where = ", ".join(c.describe() for c in corpora)
        raise ConfigError(
            (f"the parallel corpora hold no sentence pair with text on both sides ({where})" if have == 0 else
             f"the parallel corpora hold {have} sentence pair(s) with text on both sides ({where}); a harvest needs "
             f"at least {need} (--min-links {opts.min_links} x --min-targets {opts.min_targets})"),
            hint="Give more parallel text with --parallel, or lower --min-links",
        )
    return opts, corpora


def run_harvest(parallel: Sequence[str | Path], inventory_dir: str | Path, opts: HarvestOptions,
                scheduler: str | None = None, aligner: Aligner | None = None,
                workers: int | None = None) -> HarvestResult:
    """Stages 1-5 (see module docstring). Raises ConfigError / ParseError on bad input, before any output:
    every check that needs no alignment first (:func:`check_inputs`), so a wrong input costs no cluster.

    ``aligner``: eflomal seeded with ``opts.seed`` by default (tests and benchmarks may give a fixed
    alignment); ``workers``: worker processes of the local cluster (default one per core).
    """
    remove_stale_scratch()  # what killed harvests left in $TMPDIR
    opts, corpora = check_inputs(parallel, inventory_dir, opts, need_eflomal=aligner is None)
    if aligner is None:
        aligner = EflomalAligner(opts.seed)
    params = AlignParams(opts.src, opts.tgt, opts.max_tokens)
    from dask.distributed import as_completed

    get_tokenizer(opts.src), get_tokenizer(opts.tgt)  # built once here: forked local workers inherit them
    lap = _Laps()
    with dask_client(scheduler, workers) as client:
        lap("cluster up")
        probe = start_probe(opts.src, opts.pos_backend)  # after the fork: no thread is copied into a worker
        aligned, n_pairs, alignments = _align_all(client, corpora, opts, params, aligner)
        lap("corpora read and submitted")
        inventory = load_inventory(inventory_dir, [opts.src, opts.tgt])  # while the workers align
        lap("inventory read")
        totals: Counter = Counter()
        for fut in progress.track(as_completed(client.map(count_links, aligned)), "mucow: count links", total=len(aligned)):
            totals.update(fut.result())
        deterministic = all(client.gather(client.map(is_deterministic, alignments)))
        del alignments
        lap("tokenised, aligned, symmetrised, counted")
        candidates = candidate_words(totals, opts.min_links, opts.min_targets)
        words = build_senses(candidates, inventory, opts.src, opts.tgt, merge_threshold=opts.merge_threshold)
        if not words:  # nothing to select sentences for (and Dask cannot scatter an empty dict)
            raise no_items(opts, len(words), n_pairs)
        words_f = client.scatter(words, broadcast=True)
        parts = client.map(select_candidates, aligned, words=words_f, seed=opts.seed,
                           min_words=opts.scoring_min_words, scoring_pool=opts.scoring_per_sense,
                           translation_pool=opts.translation_pool)
        results = [f.result() for f in progress.track(parts, "mucow: select sentences")]
        client.cancel(aligned)
        lap("sentences selected")
    lap("cluster down")
    scoring_pool = merge_pools((r[0] for r in results), opts.scoring_per_sense)
    translation_pool = merge_pools((r[1] for r in results), opts.translation_pool)
    is_noun, pos_source = noun_test(probe.result(), opts.pos_backend, words)
    lap("POS probe answered")
    alignment = {**aligner.describe(), "deterministic": deterministic}
    return HarvestResult(
        opts, corpora, inventory, words,
        scoring_items(scoring_pool, words, opts.scoring_per_sense),
        translation_items(translation_pool, words, is_noun, min_per_sense=opts.translation_min_per_sense,
                          max_per_sense=opts.translation_max_per_sense, subtitle_labels=opts.subtitle_labels),
        pos_source,
        {"sentence_pairs": n_pairs, "candidate_words": len(candidates)},
        alignment,
    )


# --------------------------------------------------------------------------- release


def _resolved(name: str, paths: Sequence[Path], description: str) -> ResolvedSource:
    root = Path(os.path.commonpath([str(p.parent.resolve()) for p in paths]))
    rels = tuple(p.resolve().relative_to(root).as_posix() for p in paths)
    src = Source(name, url="", license="", files=rels, description=description)
    records = {r: FileRecord(r, (root / r).stat().st_size, sha256_file(root / r), None, "unregistered") for r in rels}
    return ResolvedSource(src, root, records, origin="harvest-input")


class HarvestBuilder(Builder):
    """Writes a :class:`HarvestResult` (its items are computed before the writer starts).

    Made without a result (:meth:`for_validation`), it only declares the checks of a
    harvested release; ``configs()`` and ``examples()`` then raise a ConfigError.
    """

    name = "mucow-harvest"
    pretty_name = "MuCoW (harvested)"
    release_notes: ClassVar[dict[str, str]] = {"1.0.0": "Harvested with benchsmith's implementation of the MuCoW pipeline."}
    citation = CITATION
    license = "inherits the licences of the parallel corpora and the sense inventory"
    homepage = "https://github.com/Helsinki-NLP/MuCoW"
    task_categories = ("translation",)

    def __init__(self, result: HarvestResult | None, version: str | None = None) -> None:
        super().__init__(version)
        self.result = result
        if result is None:
            return
        o = result.options
        self.name = f"mucow-harvest-{o.src}-{o.tgt}"
        self.seed = o.seed  # release.json's `seed`: sentence ranking and eflomal's sampler
        # whether a rebuild from the same inputs gives the same files: release.json's `reproducible`,
        # which drift reads (a same-version difference of a non-reproducible harvest warns, not fails)
        self.reproducible = bool(result.alignment.get("deterministic", False))
        corpora = ", ".join(c.describe() for c in result.corpora)
        self.description = (f"MuCoW-style WSD test suites for {o.src}->{o.tgt} harvested from {corpora} "
                            f"with the sense inventory {result.inventory.name}.")

    @classmethod
    def for_validation(cls, release: Release) -> HarvestBuilder:
        """The builder that validates a harvested ``release``: its checks, no pipeline result."""
        b = cls(None, release.version)
        b.name = release.name
        b.description = release.info.description or ""
        return b

    @classmethod
    def data_path(cls, filename: str) -> Path:
        """A harvest's own data files would sit in ``harvest/`` beside this module; there are
        none (no published figures, errata or registered checksums: see the module docstring).
        MuCoW's files beside the module describe upstream's release and must not apply here."""
        return cls.module_dir() / "harvest" / filename

    def checks(self) -> Sequence[Any]:
        """MuCoW's construction checks, every violation failing (``checks.strict_checks``)."""
        return strict_checks()

    def _result(self) -> HarvestResult:
        if self.result is None:
            raise ConfigError(f"{self.name}: this builder was made to validate a release and holds no harvest",
                              hint="Run `benchsmith harvest mucow` to build one")
        return self.result

    def configs(self) -> Sequence[Config]:
        o = self._result().options
        stats = self._result().statistics()
        meta = {"pair": f"{o.src}-{o.tgt}", "options": asdict(o), "statistics": stats,
                "alignment": self._result().alignment}
        return [
            Config("scoring", "Harvested scoring suite: reference vs contrastive translations.", SCORING_FEATURES,
                   splits=("test",), languages=(o.src, o.tgt), metadata={"variant": "scoring", **meta}),
            Config("translation", "Harvested translation suite: correct/incorrect target words per sentence.",
                   TRANSLATION_FEATURES, splits=("test",), languages=(o.src, o.tgt),
                   metadata={"variant": "translation", **meta}),
        ]

    def examples(self, config: Config, split: str, sources: Sources) -> Iterator[Example]:
        result = self._result()
        yield from (result.scoring if config.name == "scoring" else result.translation)

    def sources_for_release(self) -> Sources:
        result = self._result()
        corpora = [p for c in result.corpora for p in c.paths]
        return Sources({
            "parallel": _resolved("parallel", corpora, "parallel corpora given with --parallel"),
            "inventory": _resolved("inventory", result.inventory.files, "sense inventory given with --inventory"),
        })

    def card_sections(self, release: Release) -> dict[str, str]:
        """The harvest's statistics, read from the release (the configs' metadata), so a card
        re-rendered after validation shows them too."""
        meta = next((c.metadata for c in release.info.configs.values() if "statistics" in c.metadata), None)
        if meta is None:
            return {}
        st, o = meta["statistics"], meta["options"]
        sc, tr = st["scoring"], st["translation"]
        lines = [
            f"- sentence pairs read: {st['sentence_pairs']:,}",
            (f"- candidate source words (>= {o['min_links']} one-to-one links to >= {o['min_targets']} target words): "
             f"{st['candidate_words']:,}"),
            (f"- ambiguous words: {st['ambiguous_words']:,}; senses: {st['senses']:,}; "
             f"senses per word: {st['senses_per_word']:.2f}"),
            f"- scoring items: {sc['items']:,} ({sc.get('contrastive_pairs', 0):,} contrastive pairs)",
            (f"- translation items: {tr['items']:,} (in domain {tr.get('in_domain', 0)}, "
             f"out of domain {tr.get('out_of_domain', 0)}); noun test: {st['pos']}"),
        ]
        return {"Harvest statistics": "\n".join(lines), "Reproducibility": _reproducibility(meta)}


def _reproducibility(meta: dict) -> str:
    """The card's word on rebuilding this harvest, from the recorded ``alignment`` metadata."""
    a = meta.get("alignment") or {}
    if a.get("deterministic"):
        how = a.get("how", "")
        return (f"Reproducible: harvesting the same inputs (their sha256 are under Sources) with the same options "
                f"and seed ({meta['options'].get('seed')}) gives the same items. The word alignment is "
                f"{a.get('aligner', 'eflomal')} {a.get('version', '')} with its default model and iterations; eflomal "
                f"has no seed option and seeds itself from /dev/urandom, so benchsmith runs {how}. Every later "
                "stage is deterministic. This is a harvest, not upstream's release: errata do not apply to it.")
    return ("**Not reproducible**: the word aligner seeded itself from /dev/urandom "
            f"({a.get('how', 'no alignment recorded')}), so a new harvest of the same inputs can differ in a few "
            "links, and so in a few borderline words or items. Every later stage is deterministic. This is a "
            "harvest, not upstream's release: errata do not apply to it.")
