"""The contamination tokeniser (one function for the index and the corpus) and the byte-range
partitions of a plain-text corpus: what a user relies on when a scan says an item is (or is
not) in a corpus, and when it names the line."""

from __future__ import annotations

import pyarrow as pa
import pytest

from benchsmith.validation.contamination import corpus
from benchsmith.validation.contamination.ngrams import Item, ItemIndex
from benchsmith.validation.contamination.words import normalise, tokenise


@pytest.mark.parametrize(("text", "words"), [
    ("The MAN, turned-on the faucet!!", ["the", "man", "turned", "on", "the", "faucet"]),
    ("ＴＨＥ Ｍａｎ ﬁne", ["the", "man", "fine"]),  # NFKC: full-width letters, ligatures
    ("Straße STRASSE", ["strasse", "strasse"]),  # case folding, not lower()
    ("ΣΊΣΥΦΟΣ σίσυφος", ["σίσυφοσ", "σίσυφοσ"]),  # final sigma folds to sigma
    ("don't", ["don", "t"]),
    ("x我们走吧y", ["x", "我", "们", "走", "吧", "y"]),  # one token per CJK character
    ("ที่นี่ ไทย", ["ที่", "นี่", "ไ", "ท", "ย"]),  # Thai: a character with its marks
    ("हिन्दी शब्द", ["हिन्दी", "शब्द"]),  # Devanagari vowel signs stay inside their words
    ("தமிழ் சொல்", ["தமிழ்", "சொல்"]),
    ("cafe\u0301 café", ["café", "café"]),  # a combining accent composes (NFKC)
    # NFKC where it composes or reorders, and the neighbours it leaves alone
    ("\u0b95\u0bc6\u0bbe \u0b95\u0bbe", ["\u0b95\u0bca", "\u0b95\u0bbe"]),  # Tamil o from its two signs; aa stays
    ("\u0e01\u0e48\u0e38", ["\u0e01\u0e38\u0e48"]),  # Thai marks out of canonical order are sorted
    ("\u1100\u1161\u11a8", ["\uac01"]),  # Hangul jamo compose to a syllable
    ("İki i\u0307ki", ["i\u0307ki", "i\u0307ki"]),  # a dot above after i stays
    ("\u00e9\u0323", ["\u1eb9\u0301"]),  # a dot below reorders before the acute and composes
    ("a\x00b", ["a", "b"]),  # NUL is no word character, and no line separator
    ("", []),
    ("  ...  ", []),
    ("\u2014dash\u2014and \u00abquotes\u00bb", ["dash", "and", "quotes"]),  # non-ASCII punctuation
])
def test_words(text, words):
    assert normalise(text) == words


def test_a_batch_keeps_its_lines_apart():
    lines = ["first line", "", "中文", "a\x00b", "last WORDS here!"]
    tokens = tokenise(pa.array(lines))
    assert [tokens.row(i) for i in range(len(lines))] == [["first", "line"], [], ["中", "文"], ["a", "b"],
                                                           ["last", "words", "here"]]
    assert tokens.joined() == ["first line", "", "中 文", "a b", "last words here"]


@pytest.mark.parametrize("variant", [
    "THE MAN TURNED ON THE FAUCET",
    "the man, turned on the faucet!!!",
    "The man turned on the faucet.",
    "«The man» turned—on the FAUCET",
])
def test_case_and_punctuation_variants_match(variant):
    index = ItemIndex(ngram=13, min_tokens=5)
    index.add_item(Item("c", "test", 0, "x"), [("premise", "The man turned on the faucet.")])
    index.freeze()
    hits = index.scan(["nothing here", f"and then {variant} again", "the man turned the faucet on"])
    assert [(h.line, h.word, h.n) for h in hits] == [(1, 2, 6)]


def test_every_line_is_read_once_whatever_the_byte_ranges(tmp_path):
    lines = [f"line {i} " + "word " * (i % 17) for i in range(500)]
    lines[123] = "a long line " * 40  # longer than a range: read whole by one range
    lines[200] = "crlf line"
    path = tmp_path / "c.txt"
    path.write_bytes("\n".join(lines).replace("crlf line", "crlf line\r").encode() + b"\nno newline at the end")
    parts = corpus.file_parts("c", [str(path)], (), chunk=64)
    assert len(parts) > 50
    assert [p.start for p in parts[1:]] == [p.end for p in parts[:-1]]  # ranges tile the file
    seen = {}
    for part in parts:
        for texts, where in corpus.batches(part):
            for number, text in zip(where, texts.to_pylist()):
                assert number not in seen
                seen[number] = text
    assert sorted(seen) == list(range(1, len(lines) + 2))
    assert [seen[i + 1].rstrip("\r\n") for i in range(len(lines))] == lines[:200] + ["crlf line"] + lines[201:]
    assert seen[len(lines) + 1] == "no newline at the end"


def test_a_planted_line_across_a_range_boundary_is_found_once(tmp_path):
    index = ItemIndex(ngram=13, min_tokens=5)
    index.add_item(Item("c", "test", 0, "x"), [("premise", "The man turned on the faucet.")])
    index.freeze()
    path = tmp_path / "c.txt"
    path.write_text("filler " * 9 + "\nso the man turned on the faucet today\n" + "more filler\n" * 3, encoding="utf-8")
    parts = corpus.file_parts("c", [str(path)], (), chunk=70)  # a 70-byte window ends inside line 2
    assert len(parts) > 1
    found = [(where[h.line], h.word) for p in parts for texts, where in corpus.batches(p) for h in index.scan(texts)]
    assert found == [(2, 1)]


def test_long_words_match_whole_whatever_follows_them():
    """Words are hashed from their bytes 8 at a time: a word of 9-40 bytes matches whatever
    byte follows it in the line, and one differing only in its last byte does not."""
    value = "internationalisation தமிழ்நாட்டின் extraordinarily überdimensional counterrevolutionaries"
    index = ItemIndex(ngram=13, min_tokens=5)
    index.add_item(Item("c", "test", 0, "x"), [("premise", value)])
    index.freeze()
    hits = index.scan([f"so {value}!", f"«{value.upper()}»xyz", value.replace("aries", "ariez")])
    assert [(h.line, h.word, h.n) for h in hits] == [(0, 1, 5), (1, 0, 5)]
