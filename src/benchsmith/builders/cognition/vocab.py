"""Construction stage 1: the vocabulary filter over ROCStories-format CSVs.

The paper builds its corpus from stories restricted to a small vocabulary:
keep the sentences whose words all fall in the ``top_n`` (2,000) most frequent
words of the corpus and that have at most ``max_words`` (20) words.

Decisions (the paper gives only the two numbers):

* Sentences are lowercased and Moses-tokenised (sacremoses, ``escape=False``),
  the form of CoGnition's English side ("the dog gave him his very own car .").
* A *word* is a token with at least one letter or digit; punctuation tokens are
  neither counted in the frequency list nor in the length, and never exclude a
  sentence.
* Frequencies are counted over every sentence of every input file; ties at the
  cut-off are broken alphabetically so the vocabulary is deterministic.
* Output order is input order (file, story, sentence); duplicates are kept once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchsmith import progress
from benchsmith.errors import ConfigError
from benchsmith.loaders.rocstories import read_rocstories
from benchsmith.nlp.tokenize import get_tokenizer
from benchsmith.release import write_text_atomic


def tokenize(sentence: str) -> list[str]:
    """Lowercased Moses tokens."""
    return get_tokenizer("en")(sentence.lower())


def is_word(token: str) -> bool:
    return any(ch.isalnum() for ch in token)


@dataclass
class VocabResult:
    vocabulary: list[tuple[str, int]]  # (word, count), most frequent first
    sentences: list[str]  # kept sentences, tokenised, space-joined
    total: int  # sentences read

    def summary(self) -> dict:
        return {"sentences_read": self.total, "sentences_kept": len(self.sentences),
                "vocabulary_size": len(self.vocabulary)}


def vocab_filter(paths: Sequence[Path], top_n: int = 2000, max_words: int = 20) -> VocabResult:
    """Run the filter (module docstring) over ROCStories CSVs."""
    if top_n < 1 or max_words < 1:
        raise ConfigError(f"top_n={top_n} and max_words={max_words} must be positive",
                          hint="Use e.g. --top-n 2000 --max-words 20")
    tokenized: list[list[str]] = []
    for path in paths:
        for story in progress.track(read_rocstories(path), f"tokenising {Path(path).name}"):
            tokenized.extend(tokenize(s) for s in story.sentences)
    counts = Counter(t for toks in tokenized for t in toks if is_word(t))
    vocab = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top_n]
    allowed = {w for w, _ in vocab}
    kept: list[str] = []
    seen: set[str] = set()
    for toks in tokenized:
        words = [t for t in toks if is_word(t)]
        if words and len(words) <= max_words and all(w in allowed for w in words):
            line = " ".join(toks)
            if line not in seen:
                seen.add(line)
                kept.append(line)
    return VocabResult(vocab, kept, len(tokenized))


def write_lines(path: Path, lines: Sequence[str]) -> None:
    """Write one line per item, atomically (a temporary sibling renamed into place), creating the folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, "".join(f"{line}\n" for line in lines))
