"""Command line of CoGnition: ``benchsmith stage cognition vocab|compounds|templates|place|stats``.
Translations are scored by the generic ``benchsmith evaluate cognition`` with the metrics of
``metric.py``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from benchsmith.cli import JSON_OPTION, emit, stage_app
from benchsmith.errors import ConfigError
from benchsmith.loaders.moses import iter_lines, read_lines
from benchsmith.nlp.parse import get_parser

from .atoms import enumerate_compounds
from .chunks import get_chunker
from .stats import compound_statistics, constituent_shares, corpus_statistics, summarise
from .templates import (
    compare_enumeration,
    extract_templates,
    parse_compound_lines,
    place_compounds,
    read_templates,
)
from .vocab import vocab_filter, write_lines

cognition_stage = typer.Typer(help="CoGnition construction stages (Li et al., ACL 2021).", no_args_is_help=True)
stage_app.add_typer(cognition_stage, name="cognition")

#: input files of the stages: a missing one is a usage error (exit 2), not a traceback
_INPUT = {"exists": True, "dir_okay": False, "readable": True}


def _write_tsv(path: Path, header: list[str], rows) -> None:
    write_lines(path, ["\t".join(header)] + ["\t".join(str(v) for v in r) for r in rows])


@cognition_stage.command("vocab")
def stage_vocab(
    csvs: Annotated[list[Path], typer.Argument(help="ROCStories-format CSV files.", **_INPUT)],
    out: Annotated[Path, typer.Option("--out", metavar="PATH", help="Kept sentences, one per line (tokenised).")],
    top_n: Annotated[int, typer.Option("--top-n", metavar="N")] = 2000,
    max_words: Annotated[int, typer.Option("--max-words", metavar="N")] = 20,
    vocab_out: Annotated[Path | None, typer.Option("--vocab-out", metavar="FILE", help="word<TAB>count TSV.")] = None,
    json_out: bool = JSON_OPTION,
) -> None:
    """Keep the short sentences made of frequent words.

    A sentence is kept when its words are all among the N most frequent, with at most 20 words."""
    res = vocab_filter(csvs, top_n, max_words)
    write_lines(out, res.sentences)
    if vocab_out:
        _write_tsv(vocab_out, ["word", "count"], res.vocabulary)
    emit({**res.summary(), "top_n": top_n, "max_words": max_words, "out": out}, json_out)


@cognition_stage.command("compounds")
def stage_compounds(
    released: Annotated[Path | None, typer.Option("--released", metavar="FILE", help="A released .compound file to compare with.", **_INPUT)] = None,
    out: Annotated[Path | None, typer.Option("--out", metavar="PATH", help="Enumerated compounds TSV.")] = None,
    json_out: bool = JSON_OPTION,
) -> None:
    """Enumerate atoms x the 12 patterns.

    With --released, compare the enumeration with the released compounds."""
    comps = list(enumerate_compounds())
    if out:
        _write_tsv(out, ["compound", "category", "pattern", "atoms"],
                   [(c.text, c.category, c.pattern, json.dumps([a.to_dict() for a in c.atoms])) for c in comps])
    res = compare_enumeration(read_lines(released)) if released else {"enumerated": len(comps)}
    emit(res, json_out)


@cognition_stage.command("templates")
def stage_templates(
    sentences: Annotated[Path, typer.Argument(help="Tokenised sentences, one per line.", **_INPUT)],
    out: Annotated[Path, typer.Option("--out", metavar="PATH", help="Templates TSV (category, template, filler, line).")],
    backend: Annotated[str, typer.Option("--backend", metavar="NAME", help="spacy, benepar or stanza.")] = "spacy",
    model: Annotated[str | None, typer.Option("--model", metavar="NAME", help="Backend model name or directory.")] = None,
    json_out: bool = JSON_OPTION,
) -> None:
    """Turn sentences into templates with one NP/VP/PP slot."""
    chunker = get_chunker(backend, model)
    temps = extract_templates(read_lines(sentences), chunker)
    _write_tsv(out, ["category", "template", "filler", "line"], [(t.category, t.text, t.filler, t.line) for t in temps])
    emit({"templates": len(temps), "per_category": dict(Counter(t.category for t in temps)),
          "parser": chunker.describe(), "out": out}, json_out)


@cognition_stage.command("place")
def stage_place(
    compounds: Annotated[Path, typer.Argument(help="Compounds, one per line (a .compound file).", **_INPUT)],
    templates: Annotated[Path, typer.Argument(help="Templates TSV from the templates stage.", **_INPUT)],
    out: Annotated[Path, typer.Option("--out", metavar="PATH", help="Output prefix: writes PREFIX.en and PREFIX.compound.")],
    contexts: Annotated[int, typer.Option("--contexts", metavar="N")] = 5,
    seed: Annotated[int, typer.Option("--seed", metavar="N")] = 0,
    json_out: bool = JSON_OPTION,
) -> None:
    """Place each compound in N templates of its category (seeded)."""
    comps = parse_compound_lines(read_lines(compounds), compounds)
    placed = place_compounds(comps, read_templates(templates), contexts, seed)
    write_lines(Path(f"{out}.en"), [p.sentence for p in placed])
    write_lines(Path(f"{out}.compound"), [p.compound.text for p in placed])
    emit({"compounds": len(comps), "lines": len(placed), "seed": seed, "out": str(out)}, json_out)


@cognition_stage.command("stats")
def stage_stats(
    compounds: Annotated[Path, typer.Argument(help="Compounds, one per line.", **_INPUT)],
    corpus: Annotated[Path, typer.Argument(help="Tokenised reference corpus, one sentence per line.", **_INPUT)],
    out: Annotated[Path | None, typer.Option("--out", metavar="PATH", help="Per-compound statistics as JSON lines.")] = None,
    window: Annotated[int, typer.Option("--window", metavar="N")] = 5,
    few_max: Annotated[int, typer.Option("--few-max", metavar="N", help="Few-shot = 1..N occurrences (paper: 10).")] = 10,
    json_out: bool = JSON_OPTION,
) -> None:
    """Frequency statistics of compounds in a corpus.

    Compound frequency buckets (and the share seen), atom frequencies, compound length, mean
    atom-pair PMI."""
    comps = parse_compound_lines(read_lines(compounds), compounds)
    stats = compound_statistics(comps, (line.lower() for line in iter_lines(corpus)), window, few_max)
    if out:
        write_lines(out, [json.dumps(s, ensure_ascii=False) for s in stats])
    emit(summarise(stats), json_out)


@cognition_stage.command("corpus")
def stage_corpus(
    files: Annotated[list[Path], typer.Argument(help="Tokenised text files, one sentence per line.", **_INPUT)],
    json_out: bool = JSON_OPTION,
) -> None:
    """Tables 7 and 8 of the paper for a corpus.

    Vocabulary, tokens, sentences, average length and frequency, minimum frequency (ROC-Filter =
    data/{train,valid,test}.en together)."""
    emit({**corpus_statistics(line for f in files for line in iter_lines(f)), "files": [str(f) for f in files]},
         json_out)


@cognition_stage.command("constituents")
def stage_constituents(
    sentences: Annotated[Path, typer.Argument(help="Tokenised sentences, one per line.", **_INPUT)],
    backend: Annotated[str, typer.Option("--backend", metavar="NAME", help="benepar (the paper's Berkeley parser) or stanza.")] = "benepar",
    model: Annotated[str | None, typer.Option("--model", metavar="NAME", help="Backend model name or directory.")] = None,
    json_out: bool = JSON_OPTION,
) -> None:
    """Share of NP/VP/PP among all constituents.

    The paper reports 85.1% (Section 4.3)."""
    parser = get_parser(backend, model)
    if parser.kind != "constituency":
        raise ConfigError(f"backend {backend!r} gives no constituency trees", hint="Use --backend benepar or stanza")
    trees = parser.parse_many([line.split() for line in read_lines(sentences)])
    emit({**constituent_shares(trees), "parser": parser.describe()}, json_out)
