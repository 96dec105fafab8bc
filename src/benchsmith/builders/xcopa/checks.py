"""XCOPA-specific checks (returned by ``Xcopa.checks()``).

* ``xcopa_consistency`` (consistency): per language, items whose label or question
  differ from English COPA, and per split the choice order measured on upstream's
  back-translations; fails on any label that disagrees with COPA or any item whose
  back-translated choices read as COPA's in reverse order (there is no exception
  list); warns on remaining question disagreements (version 1.0.0 reproduces them;
  1.1.0 fixes them).
* ``xcopa_balance`` (distribution): label and question balance per split and
  language, premise/choice length ratios to English (characters) and words where a
  segmenter fits the script (``audit.text_lengths``); warns where a language's
  cause/effect counts differ from English COPA's.
* ``xcopa_partial_input`` (artifacts): full, NoP and NoQ inputs for the cheap
  baselines of ``baseline.py`` trained on ``en/train``; warns when a partial input
  beats 0.60.
* ``xcopa_diversity`` (a *stat*): the language sample's typology / family / geography
  indices in both units and area schemes. The comparison with the paper's Table 2 is
  not here: those values are figures of ``published.yaml`` (measure
  ``diversity_index``), checked by the generic fidelity check like every other
  published figure.
* ``xcopa_agreement`` (integrity): Fleiss' kappa, warning below 0.6. With per-annotator
  labels supplied (``BENCHSMITH_XCOPA_ANNOTATIONS``), per language over those
  annotators; without them, per split over the translators, whose labels the release
  holds (``label``, or the other choice where ``changed``; see ``agreement``), with
  each language's Table 3 agreement with the majority label in the metrics.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from benchsmith.errors import SourceError
from benchsmith.validation.check import Check, CheckResult, Status

from .agreement import changed_counts, fleiss, fleiss_by_language, translator_matrix
from .audit import SPLITS, balance, consistency, languages_in, length_ratios, text_lengths, text_order
from .baseline import evaluate
from .diversity import diversity_indices

if TYPE_CHECKING:
    from benchsmith.release import Release

PARTIAL_INPUT_WARN = 0.60
#: Fleiss' kappa below which agreement is worth a warning (the floor of Landis and Koch's "substantial")
KAPPA_WARN = 0.6


class XcopaConsistency(Check):
    name = "xcopa_consistency"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    family = "consistency"
    topic = 'translations disagree with English COPA'
    why = ('a translated item whose label or structure differs from its COPA source is not the same '
        'question')
    todo = ('fix the alignment in the builder, or record the item with an erratum in errata.tsv '
        'citing upstream')

    def run(self, release: Release) -> list[CheckResult]:
        cons = consistency(release)
        if not cons:
            return [self.result(Status.SKIP, "needs the en config and at least one language config")]
        out = []
        for split in SPLITS:
            ev = text_order(release, split)
            if ev is None:
                continue
            reversed_ = ev["reversed"]
            out.append(self.result(
                Status.FAIL if reversed_ else Status.PASS,
                f"{split}: choice order agrees with COPA on {ev['items'] - len(reversed_)}/{ev['items']} items "
                f"by upstream's back-translations ({ev['languages']} languages); reversed: {len(reversed_)}",
                metrics={"items": ev["items"], "order_agrees": ev["items"] - len(reversed_),
                         "order_reversed": len(reversed_), "smallest_margin": ev["smallest_margin"]},
                details={"order_reversed_idx": reversed_},
                config=f"*/{split}",
            ))
        for lang, splits in cons.items():
            differs = {s: c["label_differs_idx"] for s, c in splits.items() if c["label_differs_idx"]}
            qdiff = {s: c["question_differs"] for s, c in splits.items() if c["question_differs"]}
            metrics = {
                f"{s}_{k}": c[k] for s, c in splits.items()
                for k in ("items", "labels_agree", "label_differs", "question_differs")
            }
            if differs:
                status, summary = Status.FAIL, f"labels disagree with English COPA: {differs}"
            elif qdiff:
                status = Status.WARN
                summary = f"question differs from COPA's asks-for on {qdiff} items (fixed from 1.1.0)"
            else:
                status = Status.PASS
                summary = "labels and questions agree with English COPA"
            agree = " ".join(f"{s} {c['labels_agree']}/{c['items']}" for s, c in splits.items())
            out.append(self.result(
                status, f"{summary}; labels agreeing with COPA: {agree}",
                metrics=metrics,
                details={s: {"question_differs_idx": c["question_differs_idx"],
                             "label_differs_idx": c["label_differs_idx"]} for s, c in splits.items()},
                config=lang,
            ))
        return out


class XcopaBalance(Check):
    name = "xcopa_balance"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    family = "distribution"
    topic = 'label balance differs across languages'
    why = ('per-language accuracies are compared in the paper: an unequal label share shifts the '
        'chance level')
    todo = ("acknowledge upstream's balance in acknowledged.yaml, or fix the builder if it dropped "
        'items')

    def run(self, release: Release) -> list[CheckResult]:
        bal = balance(release)
        ratios = length_ratios(release)
        lengths = text_lengths(release)
        en = bal.get("en")
        out = []
        for lang in languages_in(release):
            diffs = {}
            for split, b in bal[lang].items():
                ref = en.get(split) if en else None
                if ref and b["question"] != ref["question"]:
                    diffs[split] = {"here": b["question"], "english": ref["question"]}
            status = Status.WARN if diffs else Status.PASS
            r = ratios.get(lang, {})
            ln = lengths.get(lang, {})
            words = (f", {ln['premise_words']} words by {ln['words_by']}" if ln.get("premise_words") is not None
                     else ", words not counted (no segmenter)") if ln else ""
            summary = (
                "; ".join(f"{s}: question {b['question']}, label {b['label']}" for s, b in bal[lang].items())
                + (f"; premise {r['premise_chars']} chars{words}; premise/choice characters vs English "
                   f"{r.get('premise_ratio')}/{r.get('choice_ratio')}" if r else "")
                + (f"; cause/effect counts differ from English COPA in {sorted(diffs)}" if diffs else "")
            )
            out.append(self.result(status, summary, metrics={"balance": bal[lang], "length": {**r, **ln}},
                                   details={"question_vs_english": diffs}, config=lang))
        return out or [self.result(Status.SKIP, "no XCOPA language config in this release")]


class XcopaPartialInput(Check):
    name = "xcopa_partial_input"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    concurrent = True  # scikit-learn's import and fits overlap the other checks (validation/runner.py)
    family = "artifacts"
    topic = 'an options-only probe beats chance in a language'
    why = 'a model that sees only the two alternatives scores above chance: an annotation artifact'
    todo = ('declare it in known_artifacts.yaml with its evidence, or acknowledge it in '
        'acknowledged.yaml')

    def __init__(self, warn_above: float = PARTIAL_INPUT_WARN) -> None:
        self.warn_above = warn_above

    def imports(self, release: Release) -> tuple[str, ...]:
        """The baselines' module (it imports scikit-learn), when there is en/train to train on:
        imported by the worker while validate's process tokenises (validation/runner.py)."""
        if "en" in release.configs() and "train" in release.splits("en"):
            return ("benchsmith.builders.xcopa.baseline",)
        return ()

    def run(self, release: Release) -> list[CheckResult]:
        if "en" not in release.configs() or "train" not in release.splits("en"):
            return [self.result(Status.SKIP, "needs en/train to train the baselines")]
        train = release.table("en", "train").to_pylist()
        targets = {c: release.table(c, "test").to_pylist()
                   for c in [*languages_in(release), "en"] if "test" in release.splits(c)}
        scores = evaluate(train, targets)
        worst = {
            (b, v, t): acc for b, vs in scores.items() for v, ts in vs.items() if v != "full"
            for t, acc in ts.items() if acc > self.warn_above
        }
        lr = scores["overlap-length-lr"]
        summary = "test accuracy, overlap-length-lr (full/NoP/NoQ): " + ", ".join(
            f"{t} {lr['full'][t]:.2f}/{lr['NoP'][t]:.2f}/{lr['NoQ'][t]:.2f}" for t in targets
        )
        return [self.result(
            Status.WARN if worst else Status.PASS,
            summary + (f"; partial inputs above {self.warn_above}: {sorted(worst)}" if worst else ""),
            metrics=scores,
        )]


class XcopaDiversity(Check):
    """A stat: the sample's diversity indices (Table 2's comparison is a fidelity figure)."""

    name = "xcopa_diversity"
    family = "distribution"

    def run(self, release: Release) -> list[CheckResult]:
        langs = languages_in(release)
        if not langs:
            return [self.result(Status.SKIP, "no XCOPA language config in this release")]
        try:
            measured = diversity_indices(langs)
        except SourceError as exc:
            return [self.result(Status.SKIP, f"indices not computed: {exc}")]
        summary = (
            f"{len(langs)} languages: typology {measured['typology_nats']} nats, "
            f"family {measured['family']}, "
            f"geography {measured['geography_bits']} bits over WALS macro-areas "
            f"({measured['geography_un_region_nats']} nats over UN sub-regions); "
            "Table 2's values are checked as fidelity figures (published.yaml)"
        )
        return [self.stat(summary, metrics=measured)]


class XcopaAgreement(Check):
    name = "xcopa_agreement"
    family = "integrity"
    topic = 'low agreement with the translation source'
    why = "items whose translation drifted test a different question than COPA's"
    todo = ("read the items; fix them with an erratum in errata.tsv, or acknowledge upstream's in "
        'acknowledged.yaml quoting the paper')

    def __init__(self, annotations: Path | None = None, warn_below: float = KAPPA_WARN) -> None:
        self.annotations = annotations
        self.warn_below = warn_below

    def run(self, release: Release) -> list[CheckResult]:
        if self.annotations is not None:
            kappas = fleiss_by_language(self.annotations)
            low = {lang: k["kappa"] for lang, k in kappas.items() if k["kappa"] < self.warn_below}
            return [self.result(
                Status.WARN if low else Status.PASS,
                "Fleiss' kappa: " + ", ".join(f"{lang} {k['kappa']:.3f}" for lang, k in kappas.items())
                + (f"; below {self.warn_below}: {sorted(low)}" if low else ""),
                metrics=kappas,
            )]
        return self._translators(release)

    def _translators(self, release: Release) -> list[CheckResult]:
        """Fleiss' kappa over the languages' translators, per split, from ``label`` and ``changed``."""
        langs = languages_in(release)
        if len(langs) < 2:
            return [self.result(Status.SKIP, "needs two XCOPA languages (translators) or per-annotator labels "
                                             "(BENCHSMITH_XCOPA_ANNOTATIONS)")]
        out = []
        for split in SPLITS:
            present = [lang for lang in langs if split in release.splits(lang)]
            if len(present) < 2:
                continue
            kappa = fleiss(translator_matrix(release, split, present))
            counts = {lang: changed_counts(release, lang, split) for lang in present}
            agreement = {lang: round(100 * (1 - c / n), 1) for lang, (c, n) in counts.items()}
            low = not kappa >= self.warn_below  # nan (every label the same) warns too
            out.append(self.result(
                Status.WARN if low else Status.PASS,
                f"{split}: Fleiss' kappa {kappa:.3f} over {len(present)} translators (labels recovered from "
                f"label and changed){f', below {self.warn_below}' if low else ''}; % of each translator's labels "
                "agreeing with the majority label: " + ", ".join(f"{lang} {a}" for lang, a in agreement.items()),
                metrics={"kappa": round(kappa, 4), "translators": len(present),
                         "majority_agreement": agreement, "changed": {lang: c for lang, (c, _) in counts.items()}},
                config=f"*/{split}",
            ))
        return out
