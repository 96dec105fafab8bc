"""The one scorer contract: a small class whose signature reproduces its numbers.

Modelled on sacrebleu: a metric is configured once (its options are constructor
arguments, validated there), scores with ``corpus_score`` (or a dataset-specific
``score``), and prints a *signature*: the metric's name and version, every option
that moves the number, and the benchsmith version. ``signature()`` depends on the
options alone, never on the last call; facts that belong to one scoring call (the
number of references, items, the split) go into that call's *result signature*,
built with :meth:`Metric.result_signature`. A figure in a paper can then be
reproduced from its printout.

Generic metrics (accuracy, BLEU) live in ``validation/metrics/``; dataset scorers
(CTER, MuCoW's accuracy and P/R) live in their builder folder as ``metric.py`` and
implement the same base.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import benchsmith


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ",".join(_fmt(v) for v in value)
    if isinstance(value, Mapping):
        return ",".join(f"{k}={_fmt(v)}" for k, v in value.items())
    return "none" if value is None else str(value)


class Metric:
    """Base class: set ``name`` (and ``version`` when the algorithm changes), implement
    :meth:`options` and a scoring method."""

    name: ClassVar[str]
    #: bumped when the algorithm changes the number for the same options
    version: ClassVar[str] = "1"

    def options(self) -> dict[str, Any]:
        """Every option that moves the number, in signature order (``{}`` when none)."""
        return {}

    def signature(self) -> str:
        """``name:version|option:value|...|benchsmith:X`` from the options alone."""
        parts = [f"{self.name}:{self.version}", *(f"{k}:{_fmt(v)}" for k, v in self.options().items())]
        parts.append(f"benchsmith:{benchsmith.__version__}")
        return "|".join(parts)

    def result_signature(self, **facts: Any) -> str:
        """The signature plus the facts of one scoring call (``n=1000``, ``nrefs=3``)."""
        return "|".join([self.signature(), *(f"{k}:{_fmt(v)}" for k, v in facts.items())])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.options().items())})"
