"""What a benchmark maintainer outside this repository relies on: ``sources --checksums --write``
and a ``benchsmith list`` that follows an editable plugin (issue 28)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import one_json, run_cli
from toy_builder import FIXTURES, ToyBuilder

from benchsmith.builder import register, unregister


@pytest.fixture
def toy_here(tmp_path):
    """The toy builder with its data files (checksums.tsv) in a temporary folder."""
    home = tmp_path / "builder"
    home.mkdir()

    class ToyHere(ToyBuilder):
        @classmethod
        def data_path(cls, filename: str) -> Path:
            return home / filename

    register(ToyHere)
    yield home
    unregister("toy")


def test_sources_register_write_replaces_checksums_atomically(capsys, toy_here):
    (toy_here / "checksums.tsv").write_text("source\tpath\tsize\tsha256\ntoy\titems.tsv\t1\t" + "0" * 64 + "\n")
    code, out, err = run_cli(capsys, "sources", "toy", "--checksums", str(FIXTURES), "--write")
    assert code == 0, err
    assert out == "" and "wrote 1 checksum(s)" in err
    lines = (toy_here / "checksums.tsv").read_text().splitlines()
    assert lines[0] == "source\tpath\tsize\tsha256"
    assert lines[1].startswith("toy\titems.tsv\t") and not lines[1].endswith("0" * 64)
    assert "changed from the registered sha256" in err  # the old row was compared, then replaced
    assert sorted(p.name for p in toy_here.iterdir()) == ["checksums.tsv"]  # no temp file left
    # the written file is what `build` verifies against
    code, _, err = run_cli(capsys, "sources", "toy", "--json")
    assert code == 0 and one_json(_)["sources"][0]["files"][0]["sha256"] == lines[1].split("\t")[3]


def test_sources_register_write_on_nothing_found_keeps_the_file(capsys, toy_here, tmp_path):
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli(capsys, "sources", "toy", "--checksums", str(tmp_path / "empty"), "--write")
    assert code == 2 and "no source file of toy found" in err
    assert not (toy_here / "checksums.tsv").exists()


def test_the_old_redirect_recipe_is_not_circular(capsys, toy_here):
    """`--checksums DIR > checksums.tsv` empties the file first: regenerating still works, and
    every other command's error names the working recipe."""
    (toy_here / "checksums.tsv").write_text("")  # what the shell's `>` leaves before benchsmith runs
    code, out, err = run_cli(capsys, "sources", "toy", "--checksums", str(FIXTURES))
    assert code == 0, err
    assert out.splitlines()[0] == "source\tpath\tsize\tsha256"
    code, _, err = run_cli(capsys, "sources", "toy")
    assert code == 2 and "--checksums DIR --write" in err and "empties the file" in err


def test_write_needs_checksums(capsys, toy_here):
    code, _, err = run_cli(capsys, "sources", "toy", "--write")
    assert code == 2 and "--write needs --checksums DIR" in err


# ----------------------------------------------------------------------------- benchsmith.testing


def test_builder_test_base_requires_split_counts(tmp_path):
    """A test that declares no counts (or leaves a built config out) fails and shows what was built."""
    from benchsmith.testing import BuilderTestBase, build_release

    release = build_release(ToyBuilder, FIXTURES, tmp_path / "registry")

    class Undeclared(BuilderTestBase):
        builder = ToyBuilder
        sources = FIXTURES

    class Partial(Undeclared):
        counts = {"plain": {"train": 20, "validation": 5, "test": 4}}  # noqa: RUF012

    class Complete(Undeclared):
        counts = {"plain": {"train": 20, "validation": 5, "test": 4}, "short": {"train": 20}}  # noqa: RUF012

    class Wrong(Undeclared):
        counts = {"plain": {"train": 20, "validation": 5, "test": 5}, "short": {"train": 20}}  # noqa: RUF012

    with pytest.raises(pytest.fail.Exception, match=r"declares no split counts: set `counts = \{'plain'"):
        Undeclared().test_split_counts(release)
    with pytest.raises(pytest.fail.Exception, match=r"does not declare config\(s\) \['short'\]"):
        Partial().test_split_counts(release)
    with pytest.raises(AssertionError):
        Wrong().test_split_counts(release)
    Complete().test_split_counts(release)


def test_testing_kit_helpers(tmp_path):
    import benchsmith.testing as kit
    from benchsmith.builder import builders

    assert kit.fixtures_dir(tmp_path / "test_x.py", "toy") == tmp_path / "fixtures" / "toy"
    path = kit.write_tsv(tmp_path / "raw" / "toy" / "items.tsv", ["id", "split", "text", "label"],
                         [{"id": "a", "split": "train", "text": "x y", "label": "no"}, ["b", "test", "z", "yes"]])
    assert path.read_text() == "id\tsplit\ttext\tlabel\na\ttrain\tx y\tno\nb\ttest\tz\tyes\n"
    with kit.registered(ToyBuilder):
        assert builders()["toy"] is ToyBuilder
    assert "toy" not in builders()
    release = kit.build_release(ToyBuilder("1.0.0"), tmp_path / "raw", tmp_path / "registry", configs=["plain"])
    assert release.num_examples("plain", "train") == 1 and release.num_examples("plain", "test") == 1
    with pytest.raises(AttributeError):
        kit.NoSuchThing  # noqa: B018
    assert kit.LocalHub.__module__ == "benchsmith.testing.hub"


def test_a_figure_names_its_own_paper(tmp_path):
    """A file quoting two papers: each figure's `reference:` replaces the file's ("" drops it)."""
    from benchsmith.expectation import read_published_yaml

    path = tmp_path / "published.yaml"
    path.write_text(
        'reference: "Main et al. (2020)"\n'
        "figures:\n"
        "  - {id: a, value: 1, source: Table 1, measure: count}\n"
        '  - {id: b, value: 2, source: Table 2, measure: count, reference: "Other et al. (2021)"}\n'
        '  - {id: c, value: 3, source: "Doe (2019), Section 4", measure: count, reference: ""}\n')
    assert [f.source for f in read_published_yaml(path)] == [
        "Main et al. (2020), Table 1", "Other et al. (2021), Table 2", "Doe (2019), Section 4"]
