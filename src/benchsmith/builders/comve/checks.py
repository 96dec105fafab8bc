"""ComVE-specific validation checks (returned by ``ComVE.checks()``).

Each check reads the release only and returns :class:`CheckResult`\\ s whose metrics are
JSON-serialisable. Descriptive results are ``stat`` (they cannot fail or warn); the
results that can warn say when:

* ``comve_label_distribution`` (distribution, stat): subtask A/B label counts per split
  (paper Tables 2-3);
* ``comve_sentence_lengths`` (distribution, stat): mean length per sentence type (Table 4);
* ``comve_top_words`` (distribution, stat): top-5 informative words per type (Table 5);
* ``comve_train_repeats`` (leakage): per held-out split, *warn* when an instance's
  nonsensical statement or correct reason repeats a training one verbatim, pass otherwise;
  trial is not held out (finding trial-overlaps-train), so its result is a stat;
* ``comve_baselines`` (artifacts): copy-source BLEU (C) per split a system is scored on
  (validation, test, trial: not train, :data:`COPY_SOURCE_SKIPS`) is a stat; the
  negation-cue accuracy (B) per split *warns* when it beats chance by more than
  ``cue_margin``, passes otherwise;
* ``comve_upstream_audit`` (fidelity): the errata, *warn* when this version leaves some
  pending (1.0.0, upstream as released), pass when all are applied; and one stat per
  upstream finding (``findings.yaml``), so the report carries them.

The paper's figures (``published.yaml``) are compared by the core fidelity check
through ``ComVE.expectations()`` and the measures of ``stats.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import benchsmith.builders.comve.baseline as baselines
import benchsmith.builders.comve.stats as stats  # noqa: PLR0402 - a from-import of the package would cycle through its __init__
from benchsmith.builders.comve.findings import FINDINGS_PATH, read_findings
from benchsmith.validation.check import Check, CheckResult, Status

if TYPE_CHECKING:
    from benchsmith.release import Release

MAIN_SPLITS = ("train", "validation", "test")
#: splits without a copy-source BLEU: a reference floor for generated reasons, which are scored on
#: held-out splits only (the paper's figure is test's, 17.23). Train's (14.11) was 10,000 of the
#: 14,018 items scored, most of this check's cost, and no reader used it.
COPY_SOURCE_SKIPS = frozenset({"train"})
_SHOW = 20


def _splits(release: Release, config: str) -> list[str]:
    return release.splits(config) if config in release.configs() else []


def _main(release: Release, config: str = "tuples") -> list[str]:
    return [s for s in MAIN_SPLITS if s in _splits(release, config)]


class LabelDistribution(Check):
    name = "comve_label_distribution"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    family = "distribution"

    def run(self, release: Release) -> list[CheckResult]:
        out = []
        for config in ("subtask_a", "subtask_b"):
            dist = {s: stats.label_distribution(release, config, s) for s in _splits(release, config)}
            if not dist:
                continue
            share = {s: {k: round(v / max(1, sum(d.values())), 4) for k, v in d.items()} for s, d in dist.items()}
            text = "; ".join(f"{s} " + "/".join(f"{v:,}" for v in d.values()) for s, d in dist.items())
            out.append(self.stat(f"{config} labels ({'/'.join(next(iter(dist.values())))}): {text}",
                                 metrics={"counts": dist, "shares": share}, config=config))
        return out


class SentenceLengths(Check):
    name = "comve_sentence_lengths"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    family = "distribution"

    def run(self, release: Release) -> list[CheckResult]:
        splits = _main(release)
        if not splits:
            return [self.result(Status.SKIP, "no tuples config in this release")]
        overall = stats.average_lengths(release, splits)
        per_split = {s: stats.average_lengths(release, [s]) for s in _splits(release, "tuples")}
        text = ", ".join(f"{k} {v}" for k, v in overall.items())
        return [self.stat(f"mean whitespace tokens ({'+'.join(splits)}): {text}",
                          metrics={"overall": overall, "per_split": per_split}, config="tuples")]


class TopWords(Check):
    name = "comve_top_words"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    family = "distribution"

    def __init__(self, k: int = 5) -> None:
        self.k = k

    def run(self, release: Release) -> list[CheckResult]:
        splits = _main(release)
        if not splits:
            return [self.result(Status.SKIP, "no tuples config in this release")]
        top = stats.top_words(release, splits, self.k)
        # the paper's Table 5 groups: the training set, and dev+test
        groups = {"train": ["train"], "validation+test": [s for s in splits if s != "train"]}
        shares = {g: {kind: [[w, round(p, 3)] for w, p in stats.top_word_shares(release, ss, kind, self.k)]
                      for kind in stats.SENTENCE_TYPES} for g, ss in groups.items() if set(ss) <= set(splits) and ss}
        text = "; ".join(f"{k}: {', '.join(w for w, _ in v)}" for k, v in top.items())
        return [self.stat(f"top-{self.k} words ({'+'.join(splits)}) without the paper's uninformative words: {text}",
                          metrics={"top_words": top, "shares_percent": shares},
                          details={"uninformative_words": sorted(stats.UNINFORMATIVE)}, config="tuples")]


class TrainRepeats(Check):
    name = "comve_train_repeats"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    family = "leakage"
    topic = 'held-out items repeat training statements'
    why = "a model can recall a held-out item's answer from training instead of reasoning about it"
    todo = ("acknowledge upstream's repeats in acknowledged.yaml quoting the task paper, or drop them "
        'with an erratum in errata.tsv')
    figure_metric = 'exact_either'

    def run(self, release: Release) -> list[CheckResult]:
        if "train" not in _splits(release, "tuples"):
            return [self.result(Status.SKIP, "no tuples/train split in this release")]
        rep = stats.train_repeats(release, ("validation", "test", "trial"))
        out = []
        for split, r in rep.items():
            exact, norm = r["exact"], r["normalised"]
            metrics = {
                "n": r["n"],
                "exact_nonsensical_statement": len(exact["nonsensical_statement"]),
                "exact_correct_reason": len(exact["correct_reason"]),
                "exact_either": len(exact["either"]),
                "normalised_either": len(norm["either"]),
                "exact_statement_pair": len(exact["statement_pair"]),
                "normalised_statement_pair": len(norm["statement_pair"]),
            }
            held_out = split != "trial"
            summary = (f"{split}: {len(exact['either'])} of {r['n']} instances repeat a training nonsensical "
                       f"statement or correct reason verbatim ({len(norm['either'])} after normalising case, "
                       f"spaces and final punctuation); {len(norm['statement_pair'])} repeat a whole training "
                       "statement pair")
            details = {m: {k: v[:_SHOW] for k, v in r[m].items()} for m in ("exact", "normalised")}
            if not held_out:  # trial is drawn from the training pool: a measurement, not a verdict
                summary += "; trial is not held-out data (finding trial-overlaps-train)"
                out.append(self.stat(summary, metrics=metrics, details=details, config="tuples"))
                continue
            status = Status.WARN if exact["either"] else Status.PASS
            out.append(self.result(status, summary, metrics=metrics, details=details, config="tuples"))
        return out


class Baselines(Check):
    name = "comve_baselines"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    family = "artifacts"
    topic = "the negation cue predicts subtask B's answer"
    why = ('picking the option without a negation beats chance: subtask B scores include a lexical '
        'shortcut')
    todo = ("declare it in known_artifacts.yaml with the paper's account, or acknowledge it in "
        'acknowledged.yaml')

    def __init__(self, cue_margin: float = 0.10) -> None:
        self.cue_margin = cue_margin

    def run(self, release: Release) -> list[CheckResult]:
        out = []
        for split in [s for s in _splits(release, "subtask_c") if s not in COPY_SOURCE_SKIPS]:
            r = stats.copy_source(release, split)
            out.append(self.stat(f"copy-source (C, {split}): BLEU {r['bleu']:.2f}", metrics=r, config="subtask_c"))
        for split in _splits(release, "subtask_b"):
            r = baselines.negation_cue(release, split)
            gain = r["accuracy"] - r["chance"]
            status = Status.WARN if gain > self.cue_margin else Status.PASS
            out.append(self.result(
                status,
                f"negation cue (B, {split}): accuracy {r['accuracy']:.3f} vs chance {r['chance']:.3f}, "
                f"coverage {r['coverage']:.3f}",
                metrics=r, config="subtask_b"))
        return out


class UpstreamAudit(Check):
    name = "comve_upstream_audit"
    family = "fidelity"
    topic = 'upstream defects left as released'
    why = ('pending errata are known defects still in the data: items with a wrong label or text are '
        'scored as given')
    todo = ('decide each pending erratum in errata.tsv (apply it in a new version, or record why it '
        'stays)')

    def __init__(self, findings: list[Any] | None = None) -> None:
        self.findings = findings

    def run(self, release: Release) -> list[CheckResult]:
        findings = self.findings if self.findings is not None else read_findings(FINDINGS_PATH)
        applied = [e["id"] for e in release.info.errata_applied]
        pending = [e["id"] for e in release.info.errata_pending]
        out = [self.result(
            Status.WARN if pending else Status.PASS,
            f"errata applied: {', '.join(applied) or 'none'}; pending (upstream defects left as released in "
            f"{release.version}): {', '.join(pending) or 'none'}",
            metrics={"applied": applied, "pending": pending},
            details={"errata": [dict(e) for e in (*release.info.errata_applied, *release.info.errata_pending)]})]
        for f in findings:
            out.append(self.stat(f"{f.id}: {f.what} Decision: {f.decision}",
                                 metrics={"finding": f.id, "items": list(f.items)}, details=f.to_dict()))
        return out


def comve_checks() -> list[Check]:
    return [LabelDistribution(), SentenceLengths(), TopWords(), TrainRepeats(), Baselines(), UpstreamAudit()]
