"""What every model baseline shares: device choice, precision, seeding, Trainer set-up, the run record.

Shared ``transformers.Trainer`` plumbing, for every engine that trains on Trainer::

    with runtime.training_arguments(device: str, seed: int, **overrides) as args:  # -> TrainingArguments
        trainer = runtime.quiet(Trainer(model=..., args=args, ...))
        trainer.train()

A model baseline's figure is only worth something if it can be reproduced, so each
result carries a :class:`RunRecord`: the model folder and a sha256 over its files,
seed, device, dtype, library versions, hyper-parameters, optimisation steps, wall
time and throughput. ``torch`` is imported lazily: importing this module costs nothing
for commands that never train.

Decisions:

* ``device="auto"`` means CUDA when ``torch.cuda.is_available()``, else CPU; asking for
  ``cuda`` on a machine without one is a :class:`~benchsmith.errors.ConfigError`, not
  a silent fallback.
* Mixed precision only on CUDA: bf16 where the GPU supports it, else fp16 (with a
  grad scaler, decided by the caller); CPU runs in fp32 (CPU autocast is slower than
  fp32 for these small models and changes the numbers).
* ``seed_everything`` seeds ``random``, numpy and torch (all devices) and asks torch for
  deterministic algorithms where they exist (``warn_only``), so a seeded CPU rerun gives
  identical numbers.
* :func:`training_arguments` holds the defaults every Trainer run here shares: the precision
  rule above (bf16, else fp16 with Trainer's grad scaler, on CUDA; fp32 and ``use_cpu`` on
  CPU), ``seed`` and ``data_seed``, no ``report_to``, no checkpoint on disk (``save_strategy="no"``
  and a temporary ``output_dir`` removed on exit: an engine saves its final model itself), no
  tqdm, columns kept (our collators build batches), data loaded in the main process.
  Keyword ``overrides`` win (the schedule, batch size, logging interval...).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import random
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.errors import ConfigError

DEVICES = ("auto", "cpu", "cuda")


def pick_device(preference: str = "auto") -> str:
    """``auto`` -> ``cuda`` if available else ``cpu``; ``cuda`` without a GPU is an error."""
    import torch

    if preference not in DEVICES:
        raise ConfigError(f"device {preference!r} is not one of {list(DEVICES)}", hint="Use --device auto|cpu|cuda")
    has_cuda = torch.cuda.is_available()
    if preference == "cuda" and not has_cuda:
        raise ConfigError("--device cuda was asked for, but torch sees no CUDA device",
                          hint="Use --device auto (CPU here) or run on a machine with a GPU")
    if preference == "auto":
        return "cuda" if has_cuda else "cpu"
    return preference


def autocast_dtype(device: str) -> Any:
    """The autocast dtype for ``device``: bf16/fp16 on CUDA, None (fp32) on CPU."""
    import torch

    if not device.startswith("cuda"):
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def dtype_name(dtype: Any) -> str:
    return "float32" if dtype is None else str(dtype).removeprefix("torch.")


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch (every device) for a reproducible run."""
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)


def model_sha256(path: str | Path) -> str:
    """sha256 over a model folder: every file's relative path and bytes, in sorted order
    (a single file hashes its bytes). Identifies exactly which weights produced a figure."""
    path = Path(path)
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    if not files:
        raise ConfigError("model folder is empty or missing", path=path,
                          hint="Pass --model-path with a local transformers model folder")
    for f in files:
        rel = f.name if f == path else f.relative_to(path).as_posix()
        h.update(rel.encode() + b"\0")
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("torch", "transformers", "numpy", "tokenizers", "sentencepiece"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        out[name] = getattr(module, "__version__", "?")
    return out


@dataclass
class RunRecord:
    """Everything needed to reproduce one baseline figure (JSON-serialisable via :meth:`to_dict`)."""

    baseline: str
    model: str
    model_sha256: str | None
    seed: int
    device: str
    dtype: str
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    steps: int = 0
    wall_time_s: float = 0.0
    examples_per_s: float | None = None
    tokens_per_s: float | None = None
    versions: dict[str, str] = field(default_factory=library_versions)
    gpu: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self), default=str))


@contextmanager
def timed(record: RunRecord, *, examples: int | None = None, tokens: int | None = None) -> Iterator[RunRecord]:
    """Time the body into ``record.wall_time_s`` and derive throughput from the counts given."""
    start = time.perf_counter()
    yield record
    record.wall_time_s = round(time.perf_counter() - start, 3)
    if examples is not None and record.wall_time_s > 0:
        record.examples_per_s = round(examples / record.wall_time_s, 2)
    if tokens is not None and record.wall_time_s > 0:
        record.tokens_per_s = round(tokens / record.wall_time_s, 2)


def gpu_name(device: str) -> str | None:
    if not device.startswith("cuda"):
        return None
    import torch

    return torch.cuda.get_device_name(torch.device(device))


def trainer_defaults(device: str, seed: int, dtype: Any) -> dict[str, Any]:
    """The shared ``TrainingArguments`` keywords (module docstring) for a picked ``device`` with
    autocast ``dtype`` (:func:`autocast_dtype`: bf16/fp16 on CUDA, None on CPU), no ``output_dir``.
    A plain dict, so what ``--device cuda`` gets can be checked on a machine without a GPU."""
    import torch

    return {
        "seed": seed, "data_seed": seed, "use_cpu": not device.startswith("cuda"),
        "bf16": dtype == torch.bfloat16, "fp16": dtype == torch.float16, "save_strategy": "no",
        "report_to": "none", "disable_tqdm": True, "remove_unused_columns": False,
        "dataloader_num_workers": 0, "dataloader_pin_memory": False,
    }


@contextmanager
def training_arguments(device: str, seed: int, **overrides: Any) -> Iterator[Any]:
    """``transformers.TrainingArguments`` with :func:`trainer_defaults` for a picked ``device``
    (``cpu``/``cuda``), in a temporary output folder removed on exit; ``overrides`` win."""
    from transformers import TrainingArguments

    with tempfile.TemporaryDirectory(prefix="benchsmith-trainer-") as tmp:
        defaults = {"output_dir": tmp, **trainer_defaults(device, seed, autocast_dtype(device))}
        yield TrainingArguments(**{**defaults, **overrides})


def quiet(trainer: Any) -> Any:
    """``trainer`` without its printed log lines (our progress bar and run record report instead)."""
    from transformers import PrinterCallback

    trainer.remove_callback(PrinterCallback)
    return trainer
