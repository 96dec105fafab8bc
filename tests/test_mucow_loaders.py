"""MuCoW readers and NLP adapters: each reads its fixture; each malformed twin is a typed error at file:line."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from benchsmith.builders.mucow.corpora import discover_corpora, iter_chunks, label_of
from benchsmith.errors import ConfigError, ParseError
from benchsmith.loaders.mucow_json import read_mucow_json
from benchsmith.loaders.mucow_txt import read_translation_suite
from benchsmith.loaders.sense_inventory import load_inventory
from benchsmith.loaders.tmx import iter_tmx, iter_tmx_pairs
from benchsmith.nlp.tag import available, get_tagger
from benchsmith.nlp.tokenize import get_tokenizer, iso1, iso3

FIX = Path(__file__).parent / "fixtures"
WMT = FIX / "mucow" / "mucow" / "WMT2019"
SCORING = WMT / "scoring test suite" / "json" / "cs-en.mucow.scoring.json"
TXT = WMT / "translation test suite" / "txt"
OPUS = FIX / "opus" / "toy-deu-eng"
INV = FIX / "sense-inventory"


def txt_files(root: Path, pair: str) -> list[Path]:
    return [root / f"{pair}.{k}.txt" for k in ("text", "ref", "key", "domain")]


# ----------------------------------------------------------------------------- JSON


def test_json_reads_items_in_order_with_lines():
    items = read_mucow_json(SCORING)
    assert [len(i.errors) for i in items] == [2, 1, 0]
    assert items[0].ambiguous_word == "vazba" and items[0].sense == "detention_custody"
    assert items[0].errors[1].replacement == "binding"
    assert items[1].corpus == "opensubs" and items[1].line == 22
    assert items[0].sentence_id is None


def test_json_tts_has_ids():
    items = read_mucow_json(WMT / "translation test suite" / "json" / "en-cs.mucow.tts.json")
    assert [i.sentence_id for i in items] == [16155475, 555, 777]


@pytest.mark.parametrize(
    "edit, line, words",
    [
        (lambda t: t.replace('"sense": "bond",', ""), 22, "lacks field"),
        (lambda t: t.replace('"replacement": "custody"', '"replacement": 3'), 22, "errors[0]"),
        (lambda t: t.replace('"origin": "opensubs",\n    "sense": "bond"', '"origin": "opensubs"\n    "sense": "bond"'), 27, "invalid JSON"),
        (lambda t: t[: t.rindex("]")], 46, "expected ',' or ']'"),
    ],
)
def test_json_malformed_names_file_and_line(tmp_path, edit, line, words):
    bad = tmp_path / "cs-en.mucow.scoring.json"
    bad.write_text(edit(SCORING.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(ParseError) as exc:
        read_mucow_json(bad)
    assert exc.value.path == bad and exc.value.line == line
    assert words in str(exc.value) and f"{bad}:{line}" in str(exc.value)


def test_json_bad_bytes_name_the_line(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_bytes(SCORING.read_bytes().replace(b"vazba", b"vazb\xff", 1))
    line = SCORING.read_text(encoding="utf-8").split("vazba")[0].count("\n") + 1
    with pytest.raises(ParseError, match="invalid UTF-8") as exc:
        read_mucow_json(bad)
    assert exc.value.path == bad and exc.value.line == line


# ----------------------------------------------------------------------------- txt


def test_txt_joins_the_four_files():
    items = read_translation_suite(*txt_files(TXT, "en-de"))
    assert [i.domain for i in items] == ["out", "in", "out", "in"]
    assert items[1].correct == ("teilchenbeschleuniger", "beschleuniger") and items[1].incorrect == ("gaspedal",)
    assert items[0].sentence_id == 34526532 and items[0].corpus == "ted"
    assert items[3].source == "The new accelerator was built near Geneva."


def _twin(tmp_path: Path, kind: str, edit) -> list[Path]:
    for p in txt_files(TXT, "en-de"):
        shutil.copy(p, tmp_path / p.name)
    target = tmp_path / f"en-de.{kind}.txt"
    target.write_text(edit(target.read_text(encoding="utf-8")), encoding="utf-8")
    return txt_files(tmp_path, "en-de")


@pytest.mark.parametrize(
    "kind, edit, line, words",
    [
        ("ref", lambda t: t.rsplit("\n", 2)[0] + "\n", 4, "line counts differ"),
        ("key", lambda t: t.replace("1000001\teubooks", "1000001"), 2, "expected 5"),
        ("key", lambda t: t.replace("1000002", "x1000002"), 4, "expected an integer"),
        ("domain", lambda t: t.replace("\tout\t", "\tsideways\t"), 1, "expected 'in' or 'out'"),
        ("domain", lambda t: t.split("\n")[0] + "\n", 2, "has no row"),
    ],
)
def test_txt_malformed_names_file_and_line(tmp_path, kind, edit, line, words):
    files = _twin(tmp_path, kind, edit)
    with pytest.raises(ParseError) as exc:
        read_translation_suite(*files)
    assert exc.value.line == line and words in str(exc.value)
    assert exc.value.path.parent == tmp_path


# ----------------------------------------------------------------------------- TMX


def test_tmx_streams_units_and_drops_inline_codes():
    units = list(iter_tmx(OPUS / "OpenSubtitles.de-en.tmx"))
    assert len(units) == 45 and units[0].line == 5
    assert units[3].get("deu") == "Der alte Mann öffnet das Schloss ."  # <ph> content is markup, not text
    assert units[3].get("en-GB") == "The old man opens the lock ."
    pairs = list(iter_tmx_pairs(OPUS / "OpenSubtitles.de-en.tmx", "de", "en"))
    assert len(pairs) == 44  # the German-only unit is skipped


@pytest.mark.parametrize(
    "edit, line, words",
    [
        (lambda t: t.replace("</seg></tuv>\n      <tuv xml:lang=\"en\">", "</tuv>\n      <tuv xml:lang=\"en\">", 1), 6, "malformed XML"),
        (lambda t: t.replace('<tuv xml:lang="en">', "<tuv>", 1), 7, "no xml:lang"),
        (lambda t: t.replace('<tuv xml:lang="en">', '<tuv xml:lang="de">', 1), 7, "two segments"),
    ],
)
def test_tmx_malformed(tmp_path, edit, line, words):
    bad = tmp_path / "x.tmx"
    bad.write_text(edit((OPUS / "OpenSubtitles.de-en.tmx").read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(ParseError) as exc:
        list(iter_tmx(bad))
    assert exc.value.path == bad and exc.value.line == line and words in str(exc.value)


# ----------------------------------------------------------------------------- inventories


@pytest.mark.parametrize("folder", ["omw", "babelnet"])
def test_inventories_give_the_same_senses(folder):
    inv = load_inventory(INV / folder, ["de", "eng"])
    bank = inv.senses("Bank", "deu", "en")
    assert sorted(map(frozenset, bank.values()), key=sorted) == sorted(
        [frozenset({"bank", "depository financial institution"}), frozenset({"bench"})]
        + ([frozenset({"shore"})] if folder == "omw" else []), key=sorted)
    assert {inv.pos_of[s] for s in inv.senses("essen", "de", "en")} == {"n", "v"}


def test_omw_skips_other_languages_types_and_empty_lemmas():
    inv = load_inventory(INV / "omw", ["deu", "eng"])
    assert inv.languages() == ["deu", "eng"]  # wikt-fra.tab is not read
    assert [p.name for p in inv.files] == ["wikt-deu.tab", "wikt-eng.tab"]
    assert inv.skipped_empty == 1
    assert inv.lemmas_of["deu"]["03544360-n"] == {"haus"}  # the deu:def row is not a lemma


def test_babelnet_malformed_row(tmp_path):
    bad = tmp_path / "x.tsv"
    text = (INV / "babelnet" / "de-en.tsv").read_text(encoding="utf-8").replace("bench\tNOUN", "bench\tNOUNISH")
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ParseError) as exc:
        load_inventory(tmp_path, ["de", "en"])
    assert exc.value.path == bad and exc.value.line == 6 and "NOUNISH" in str(exc.value)


def test_omw_unknown_language_code_names_file_and_line(tmp_path):
    shutil.copy(INV / "omw" / "wikt-deu.tab", tmp_path / "wikt-deu.tab")
    (tmp_path / "wikt-deu.tab").open("a", encoding="utf-8").write("00000001-n\tq!:lemma\tfoo\n")
    n = len((tmp_path / "wikt-deu.tab").read_text(encoding="utf-8").splitlines())
    with pytest.raises(ParseError) as exc:
        load_inventory(tmp_path, ["de"])
    assert exc.value.path == tmp_path / "wikt-deu.tab" and exc.value.line == n and "'q!'" in str(exc.value)


def test_inventory_without_a_language_is_a_config_error():
    with pytest.raises(ConfigError, match="no entries for language 'fin'"):
        load_inventory(INV / "omw", ["de", "fi"])


# ----------------------------------------------------------------------------- corpora


def test_discover_moses_and_tmx_with_labels():
    corpora = discover_corpora(OPUS, "deu", "en")
    assert [(c.label, c.kind) for c in corpora] == [("europarl", "moses"), ("opensubtitles", "tmx")]
    assert label_of("tatoeba-test-v2021-08-07") == "tatoeba"
    chunks = list(iter_chunks(corpora, "de", "en", 100))
    assert [len(c.lines) for c in chunks] == [100, 100, 48]
    assert chunks[-1].corpora[-1] == "opensubtitles" and chunks[-1].corpora[0] == "europarl"  # chunks span corpora
    labelled = discover_corpora(f"parl={OPUS / 'Europarl.de-en.de'}", "de", "en")
    assert [(c.label, c.kind, len(c.paths)) for c in labelled] == [("parl", "moses", 2)]


def test_misaligned_moses_pair_is_a_parse_error(tmp_path):
    shutil.copy(OPUS / "Europarl.de-en.de", tmp_path / "c.de")
    lines = (OPUS / "Europarl.de-en.en").read_text(encoding="utf-8").splitlines()
    (tmp_path / "c.en").write_text("\n".join(lines[:-3]) + "\n", encoding="utf-8")
    with pytest.raises(ParseError) as exc:
        discover_corpora(tmp_path, "de", "en")
    assert exc.value.path == tmp_path / "c.de" and exc.value.line == len(lines) - 2
    assert "line counts differ" in str(exc.value)


def test_truncated_gzip_corpora_are_parse_errors(tmp_path):
    data = gzip.compress((OPUS / "OpenSubtitles.de-en.tmx").read_bytes())
    (tmp_path / "x.tmx.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ParseError, match="corrupt gzip stream") as exc:
        discover_corpora(tmp_path, "de", "en")
    assert exc.value.path == tmp_path / "x.tmx.gz"
    (tmp_path / "x.tmx.gz").unlink()
    for side in ("de", "en"):
        data = gzip.compress((OPUS / f"Europarl.de-en.{side}").read_bytes())
        (tmp_path / f"y.{side}.gz").write_bytes(data[: len(data) // 2] if side == "de" else data)
    with pytest.raises(ParseError, match="corrupt gzip stream") as exc:
        discover_corpora(tmp_path, "de", "en")
    assert exc.value.path == tmp_path / "y.de.gz"


def test_no_corpus_for_the_pair(tmp_path):
    with pytest.raises(ConfigError, match="no fi-en corpus"):
        discover_corpora(OPUS, "fi", "en")


# ----------------------------------------------------------------------------- NLP adapters


def test_language_codes():
    assert iso1("deu") == "de" and iso1("de-DE") == "de" and iso3("en") == "eng"
    with pytest.raises(ConfigError):
        iso1("xyz")


def test_moses_tokenizer_keeps_characters():
    assert get_tokenizer("eng")("I don't like \"banks\".") == ["I", "don", "'t", "like", '"', "banks", '"', "."]


def test_tagger_spacy_english_and_none_for_german():
    assert "spacy" in available("en")
    tags = get_tagger("en").tag([["The", "bank", "is", "closed", "."], ["I", "bank", "here"]])
    assert tags[0][1] == "NOUN" and tags[1][1] == "VERB"
    with pytest.raises(ConfigError, match="no POS tagger installed for language 'deu'"):
        get_tagger("deu")
    with pytest.raises(ConfigError, match="has no model"):
        get_tagger("en", "stanza")


# ----------------------------------------------------------------------------- issue 12: no bad input crashes

_ITEM = ('{"source": "s", "reference": "r", "ambig word": "w", "original translation": "o", "sense": "x", '
         '"origin": "c", "errors": [%s], "id": %s}')


@pytest.mark.parametrize(
    "second, words",
    [
        (_ITEM % ("", "1" * 4301), "item #1: JSON integer with more than 4300 digits"),  # was a raw ValueError
        ("[" * 100_000, "item #1: JSON nested too deeply"),  # was a raw RecursionError
        (_ITEM % ("", 2**63), "item #1 id is 9223372036854775808; expected an integer that fits in 64 bits"),
        (_ITEM.replace('"s"', '"\\udc80"') % ("", 1), "item #1 field 'source' holds a lone surrogate U+DC80"),
        (_ITEM % ('{"contrastive": "c", "replacement": "r", "type": ["x"]}', 1), "errors[0] is"),  # str(list) kept
        (_ITEM.replace('"r"', '"a\\u0000b"') % ("", 1), "item #1 field 'reference' holds a NUL character"),
        (_ITEM % ('{"contrastive": "\\uD800", "replacement": "r"}', 1),
         "errors[0] field 'contrastive' holds a lone"),
        (_ITEM.replace('"x"', "5") % ("", 1), "item #1 field 'sense' is 5; expected a string"),
        (_ITEM % ("", "true"), "item #1 id is True; expected an integer"),
    ],
)
def test_json_values_python_cannot_hold_are_parse_errors(tmp_path, second, words):
    bad = tmp_path / "x.mucow.scoring.json"
    bad.write_text("[\n" + _ITEM % ("", 1) + ",\n" + second + "\n]\n", encoding="utf-8")
    with pytest.raises(ParseError) as exc:
        read_mucow_json(bad)
    assert exc.value.path == bad and exc.value.line == 3 and words in str(exc.value), str(exc.value)
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 500


def test_txt_huge_or_out_of_range_ids_are_short_parse_errors(tmp_path):
    for value in ("9" * 5000, str(2**63), "١٢", "1_0"):  # int() took all four (the first with a 5,000-char message)
        files = _twin(tmp_path, "key", lambda t, v=value: t.replace("1000002", v))
        with pytest.raises(ParseError, match="expected an integer") as exc:
            read_translation_suite(*files)
        assert exc.value.line == 4 and len(str(exc.value)) < 300


_TMX = ('<tmx version="1.4"><header srclang="de"/><body>\n<tu><tuv xml:lang="de"><seg>%s</seg></tuv>'
        '<tuv xml:lang="en"><seg>b</seg></tuv></tu>\n</body></tmx>\n')


@pytest.mark.parametrize(
    "text, line, words",
    [
        ('<?xml version="1.0" encoding="bogus"?>\n' + _TMX % "a", 1, "unknown encoding: bogus"),  # was LookupError
        ('<?xml version="1.0" encoding="utf-32"?>\n' + _TMX % "a", 1, "multi-byte encodings"),  # was ValueError
        ('<!DOCTYPE tmx [<!ENTITY e "text">]>\n' + _TMX % "a &e;", 1, "DTD declares entity 'e'"),  # was expanded
        ('<!DOCTYPE tmx SYSTEM "tmx14.dtd">\n' + _TMX % "a &e;", 3, "undeclared entity &e;"),  # was dropped
        (_TMX.replace('<tuv xml:lang="de"><seg>%s</seg></tuv>', "<seg>a</seg>"), 2, "<seg> outside a <tuv>"),
    ],
)
def test_tmx_encodings_entities_and_stray_segments(tmp_path, text, line, words):
    bad = tmp_path / "x.tmx"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ParseError) as exc:
        list(iter_tmx_pairs(bad, "de", "en"))  # the stray <seg> was an AttributeError in get()
    assert exc.value.path == bad and exc.value.line == line and words in str(exc.value), str(exc.value)


def test_directories_where_files_belong_are_source_errors(tmp_path):
    from benchsmith.errors import SourceError

    (tmp_path / "wikt-deu.tab").mkdir()
    with pytest.raises(SourceError, match="is a directory") as exc:  # each was an IsADirectoryError
        load_inventory(tmp_path, ["de"])
    assert exc.value.path == tmp_path / "wikt-deu.tab"
    for read in (read_mucow_json, lambda p: list(iter_tmx(p)), lambda p: read_translation_suite(p, p, p, p)):
        with pytest.raises(SourceError, match="is a directory"):
            read(tmp_path)


def test_inventory_config_errors_name_the_folder(tmp_path):
    with pytest.raises(ConfigError) as exc:
        load_inventory(INV / "omw", ["de", "fi"])
    assert exc.value.path == INV / "omw"
    with pytest.raises(ConfigError, match="does not exist") as exc:
        load_inventory(tmp_path / "nope", ["de"])
    assert exc.value.path == tmp_path / "nope"


def test_json_escaped_backslash_before_u0000_is_text(tmp_path):
    """``\\\\u0000`` is a backslash and "u0000": text, kept."""
    path = tmp_path / "x.mucow.scoring.json"
    path.write_text("[\n" + _ITEM.replace('"s"', '"a\\\\u0000"') % ("", 1) + "\n]\n", encoding="utf-8")
    assert read_mucow_json(path)[0].source == "a\\u0000"
