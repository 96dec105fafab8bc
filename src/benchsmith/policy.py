"""A config's validation policy: the roles of its fields and the thresholds of its checks.

One typed, documented dataclass per config (``Config(..., policy=Policy(...))``), stored
in ``release.json`` under ``configs.<name>.policy``. Checks read it from the release alone
(``benchsmith.validation.dataview.ConfigView.policy``), never from the builder.

A misspelt setting is an error, never a silent default: the constructor rejects unknown
keywords (``TypeError`` at import of the builder), and :meth:`Policy.from_dict` (reading a
manifest) raises a :class:`~benchsmith.errors.ConfigError` with "did you mean".
Dataset facts that are not validation settings (a language pair, a variant name) stay in
``Config.metadata``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from benchsmith.errors import ConfigError, did_you_mean

Task = Literal["multiple_choice", "classification", "generation", "translation", "pairs"]
#: ``label`` sentinel: infer the label field (the config's only ClassLabel, if exactly one).
AUTO = "auto"


@dataclass(frozen=True, kw_only=True)
class Policy:
    """Field roles and check thresholds of one config.

    Field roles:
        task: what the config is for (cards and baselines read it); None = not declared.
        id_field: the stable example id (``None``: the config has none).
        label: the gold label field; ``"auto"`` = the config's only ClassLabel; ``None`` =
            no label (its ClassLabels are attributes, e.g. a domain).
        choices: multiple choice: several fields (one option each) or one list field.
        context: fields shown with every option (premise, question).
        text_fields: fields the text checks read (default: every string feature but the id).
        dedup_fields: the content that defines a duplicate (default: ``text_fields``).
        partial_input: classification: the fields a partial-input baseline sees alone.
        allow_empty: text fields that may be empty.
        prompt: the question a model is asked (multiple choice), for the shipped lm-eval
            task configs; None: the config's description.

    Thresholds (defaults are the generic checks' own):
        partial_input_max_gain: partial-input accuracy above chance that fails the gate when
            significant (None: 0.10 for a true partial input; see
            ``validation/checks/partial_input.py``). A known artifact is declared in
            ``known_artifacts.yaml``, not hidden by raising this.
        finetuned_probe_epochs: epochs of the fine-tuned partial-input probe
            (``validation/baselines/probe.py``).
        finetuned_probe_cpu_max_train / finetuned_probe_cpu_max_test /
            finetuned_probe_cpu_max_seconds: its budget on CPU (seeded subsamples of the
            training and held-out items, and a training time limit); on CUDA every item, no
            time limit. ``finetuned_probe_cpu_max_train: 0`` turns the probe off on CPU (the
            result is a skip saying so).
        balanced_labels: a skewed label distribution fails instead of warning.
        label_balance_alpha: chi-square p-value below which labels count as skewed.
        length_cue_min_gain / length_cue_min_effect: when a length cue is worth a warning.
        cue_min_gain / cue_min_coverage: when a lexical cue (Niven & Kao) is worth a warning.
        exact_duplicate_max_fraction: share of a split repeating an earlier split that fails.
        near_duplicate_threshold / near_duplicate_ngram / near_duplicate_max_fraction:
            Jaccard threshold, character n-gram size, and failing share for near duplicates.
        leakage_exempt_splits: splits left out of the leakage checks (e.g. ComVE's trial).

    Contamination (``benchsmith contamination``, and ``validate`` against the registry):
        contamination_fields: the fields whose words are matched against other text
            (default: ``text_fields``); list fields are matched element by element.
        contamination_against: the datasets whose newest release in the same registry
            ``validate`` checks this config against (declared, never "whatever the registry
            holds": a result must not depend on what else happens to be built there);
            default none. ``benchsmith contamination --against`` checks anything else.
        contamination_min_words: the evidence ``validate`` gates on: a field shorter than the
            n-gram (13 words) counts only when it matches whole and has at least this many
            words (default 8, GPT-3's floor for short items: a 5-word sentence such as
            "People are crossing the street." recurs by chance and proves nothing).
        contamination_max_fraction: ``(split, share)`` pairs: the share of a split's items
            that may share an n-gram with a source before the gate fails; a split not
            listed is reported only (default: validation and test must be clean).
        contamination_by_design: sources whose overlap is known and intended (fnmatch
            patterns on a source's name, e.g. ``copa-*.xml`` for XCOPA's English, which
            is COPA): reported, never gated. Declared, not guessed.

    Translation (the ``untranslated`` check, ``validation/checks/translation.py``):
        translation_of: the config of the same release this config translates, item for
            item: an example is aligned with the source example of the same split and
            ``id_field`` value. None: not a translation (the check skips the config).
        translated_fields: the fields that must be translated, each a field name (the
            source's field of the same name) or a ``(field, source_field)`` pair
            (default: ``text_fields``).
        untranslated: what a translated field equal to its source (after normalising case,
            punctuation and spacing) does: ``"fail"`` (the gate stops) or ``"warn"``.
    """

    task: Task | None = None
    id_field: str | None = "id"
    label: str | None = AUTO
    choices: tuple[str, ...] | str = ()
    context: tuple[str, ...] = ()
    text_fields: tuple[str, ...] = ()
    dedup_fields: tuple[str, ...] = ()
    partial_input: tuple[str, ...] = ()
    allow_empty: tuple[str, ...] = ()
    prompt: str | None = None
    partial_input_max_gain: float | None = None
    finetuned_probe_epochs: int = 3
    finetuned_probe_cpu_max_train: int = 500
    finetuned_probe_cpu_max_test: int = 500
    finetuned_probe_cpu_max_seconds: float = 300.0
    balanced_labels: bool = False
    label_balance_alpha: float = 0.01
    length_cue_min_gain: float = 0.05
    length_cue_min_effect: float = 0.02
    cue_min_gain: float = 0.15
    cue_min_coverage: float = 0.05
    exact_duplicate_max_fraction: float = 0.0
    near_duplicate_threshold: float = 0.8
    near_duplicate_ngram: int = 5
    near_duplicate_max_fraction: float = 0.05
    leakage_exempt_splits: tuple[str, ...] = ()
    contamination_fields: tuple[str, ...] = ()
    contamination_max_fraction: tuple[tuple[str, float], ...] = (("validation", 0.0), ("test", 0.0))
    contamination_by_design: tuple[str, ...] = ()
    contamination_against: tuple[str, ...] = ()
    contamination_min_words: int = 8
    translation_of: str | None = None
    translated_fields: tuple[str | tuple[str, str], ...] = ()
    untranslated: Literal["fail", "warn"] = "fail"

    def __post_init__(self) -> None:
        # lists (from YAML/JSON or a builder) become tuples: the policy is hashable and immutable
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, list):  # (a list of pairs, from JSON, becomes a tuple of pairs)
                object.__setattr__(self, f.name, tuple(tuple(x) if isinstance(x, list) else x for x in v))
        if self.untranslated not in ("fail", "warn"):
            raise ConfigError(f"policy: untranslated is {self.untranslated!r}; expected 'fail' or 'warn'")
        for pair in self.translated_fields:
            if not isinstance(pair, str) and (len(pair) != 2 or not all(isinstance(x, str) for x in pair)):
                raise ConfigError(f"policy: translated_fields entry {pair!r} is neither a field name nor a "
                                  "(field, source_field) pair")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, *, where: str = "policy") -> Policy:
        """A policy from a mapping; an unknown key is a ConfigError with suggestions."""
        data = dict(data or {})
        names = {f.name for f in fields(cls)}
        for key in data:
            if key not in names:
                raise ConfigError(f"{where}: unknown validation policy key {key!r}", hint=did_you_mean(key, names))
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return {k: [list(x) if isinstance(x, tuple) else x for x in v] if isinstance(v, tuple) else v
                for k, v in asdict(self).items()}

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in fields(cls)]
