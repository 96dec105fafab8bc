"""XCOPA-specific checks (returned by ``Xcopa.checks()``).

* ``xcopa_consistency`` (consistency): per language, items whose label or question
  differ from English COPA, and per split the choice order measured on upstream's
  back-translations; fails on any label that disagrees with COPA or any item whose
  back-translated choices read as COPA's in reverse order (there is no exception
  list); warns on remaining question disagreements (version 1.0.0 reproduces them;
  1.1.0 fixes them).
* ``xcopa_balance`` (distribution): label and question balance per split and
  language, premise/choice length ratios to English; warns where a language's
  cause/effect counts differ from English COPA's.
* ``xcopa_partial_input`` (artifacts): full, NoP and NoQ inputs for the cheap
  baselines of ``baseline.py`` trained on ``en/train``; warns when a partial input
  beats 0.60.
* ``xcopa_diversity`` (a *stat*): the language sample's typology / family / geography
  indices in both units and area schemes. The comparison with the paper's Table 2 is
  not here: those values are figures of ``published.yaml`` (measure
  ``diversity_index``), checked by the generic fidelity check like every other
  published figure.
* ``xcopa_agreement`` (integrity): Fleiss' kappa when per-annotator labels are
  supplied (``BENCHSMITH_XCOPA_ANNOTATIONS``), warning below 0.6; without them, the
  ``changed`` counts are reported as a *stat* (nothing there can fail or warn).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.validation.check import Check, CheckResult, Status

from benchsmith.errors import SourceError

from .audit import SPLITS, balance, consistency, languages_in, length_ratios, text_order

PARTIAL_INPUT_WARN = 0.60
#: Fleiss' kappa below which agreement is worth a warning (the floor of Landis and Koch's "substantial")
KAPPA_WARN = 0.6


class XcopaConsistency(Check):
    name = "xcopa_consistency"
    family = "consistency"

    def run(self, release: Any) -> list[CheckResult]:
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
    family = "distribution"

    def run(self, release: Any) -> list[CheckResult]:
        bal = balance(release)
        ratios = length_ratios(release)
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
            summary = (
                "; ".join(f"{s}: question {b['question']}, label {b['label']}" for s, b in bal[lang].items())
                + (f"; premise/choice length vs English {r.get('premise_ratio')}/{r.get('choice_ratio')}" if r else "")
                + (f"; cause/effect counts differ from English COPA in {sorted(diffs)}" if diffs else "")
            )
            out.append(self.result(status, summary, metrics={"balance": bal[lang], "length": r},
                                   details={"question_vs_english": diffs}, config=lang))
        return out or [self.result(Status.SKIP, "no XCOPA language config in this release")]


class XcopaPartialInput(Check):
    name = "xcopa_partial_input"
    family = "artifacts"

    def __init__(self, warn_above: float = PARTIAL_INPUT_WARN) -> None:
        self.warn_above = warn_above

    def run(self, release: Any) -> list[CheckResult]:
        from .baseline import evaluate

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

    def run(self, release: Any) -> list[CheckResult]:
        from .diversity import diversity_indices

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

    def __init__(self, annotations: Path | None = None) -> None:
        self.annotations = annotations

    def run(self, release: Any) -> list[CheckResult]:
        if self.annotations is not None:
            from .agreement import fleiss_by_language

            kappas = fleiss_by_language(self.annotations)
            low = {lang: k["kappa"] for lang, k in kappas.items() if k["kappa"] < KAPPA_WARN}
            return [self.result(
                Status.WARN if low else Status.PASS,
                "Fleiss' kappa: " + ", ".join(f"{lang} {k['kappa']:.3f}" for lang, k in kappas.items())
                + (f"; below {KAPPA_WARN}: {sorted(low)}" if low else ""),
                metrics=kappas,
            )]
        changed = {}
        for lang in languages_in(release):
            changed[lang] = {
                s: sum(release.table(lang, s, ["changed"]).column("changed").to_pylist())
                for s in release.splits(lang)
            }
        if not changed:
            return [self.result(Status.SKIP, "no XCOPA language config in this release")]
        return [self.stat(
            "no per-annotator labels supplied (set BENCHSMITH_XCOPA_ANNOTATIONS); items changed by translators: "
            + ", ".join(f"{lang} {sum(v.values())}" for lang, v in changed.items()),
            metrics={"changed": changed},
        )]
