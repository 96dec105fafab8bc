"""typer's coercion of command-line values, without pydantic for plain strings and paths.

typer (0.2x) coerces every parameter value through a pydantic ``TypeAdapter`` built on
first use, even a string into ``str`` and the ``None`` of an unused ``--help``. Importing
pydantic and building those adapters cost 0.13-0.25 s CPU of every ``benchsmith``
command on this 2-core machine (``python -c "import typer, typer._adapters"`` against
``import typer``, medians of 5; ``python -X importtime -m benchsmith.cli list``: pydantic,
pydantic_core, annotated_types and typing_inspection were 26 % of the import time) - the
largest piece of ``benchsmith list`` and ``build --help`` once rich is lazy.

:func:`install` puts a front on typer's ``build_runtime_param`` that answers the values
whose result is known without pydantic and hands every other value to typer's own
coercion (built, with pydantic, the first time such a value comes):

* ``str``: a ``str`` value as it is (what typer's ``_parse_cli_str`` and pydantic's lax
  ``str`` give it);
* ``bool``: a ``bool`` or ``None`` as it is (typer already skips flags that are bools);
* ``pathlib.Path`` without parser or ``path_type``: ``Path(value)`` (pydantic's lax
  ``Path`` validation of a string), then typer's own ``coerce_cli_path`` with the
  parameter's flags (exists, file_okay, readable...), which then needs no pydantic;
* ``list`` of those, item by item, as typer's list adapter does.

Everything else (numbers, choices, enums, datetimes, custom parsers, bytes) goes to
typer unchanged, so messages and results stay typer's: tests/test_core_cli_startup.py
compares both on the same values. typer's coercion of such a parameter is built when its
first value other than None comes (an option not given is None, which typer's ``coerce``
answers itself), not when the command line is parsed. The front is installed only where typer has this hook
(``typer.core.build_runtime_param``, typer >= 0.2x); an older typer (no pydantic) is left
as it is. Rejected: replacing typer with argparse (every command's help and usage text
would change), and pinning an older typer (one dependency version chosen for its start-up).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

_INSTALLED = False
#: typer's own ``build_runtime_param``, once :func:`install` has put the front on it
TYPERS_OWN: Any = None


def install() -> bool:
    """Put the front on typer's runtime coercion; False where typer has no such hook."""
    global _INSTALLED, TYPERS_OWN
    if _INSTALLED:
        return True
    try:
        from typer import core
        from typer._coercion import RuntimeParam
        from typer._param_types import coerce_cli_path
    except ImportError:  # pragma: no cover - typer without the pydantic coercion layer
        return False
    if not hasattr(core, "build_runtime_param"):  # pragma: no cover - likewise
        return False
    typers_own = TYPERS_OWN = core.build_runtime_param

    @dataclass(frozen=True)
    class PlainRuntimeParam(RuntimeParam):
        """Strings, bools and paths without pydantic; anything else through typer's own."""

        descriptor: Any = None

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.annotation in _LEAVES:
                done, out = _leaf(self.annotation, value, self.parameter_info, param, ctx)
            else:  # list[leaf]
                item = get_args(self.annotation)[0]
                values = value if isinstance(value, (list, tuple)) else [value]
                out = []
                done = True
                for v in values:
                    ok, got = _leaf(item, v, self.parameter_info, param, ctx)
                    if not ok:
                        done = False
                        break
                    out.append(got)
            if done:
                return out
            return _typers(self.descriptor)._coerce_value(value, param=param, ctx=ctx)

    cache: dict[int, Any] = {}

    def _typers(descriptor: Any) -> Any:
        key = id(descriptor)
        if key not in cache:
            cache[key] = (descriptor, typers_own(descriptor))
        return cache[key][1]

    def _leaf(ann: type, value: Any, info: Any, param: Any, ctx: Any) -> tuple[bool, Any]:
        if ann is str:
            return (True, value) if type(value) is str else (False, None)
        if ann is bool:
            return (True, value) if type(value) is bool else (False, None)
        if type(value) is str:  # Path
            value = Path(value)
        if isinstance(value, Path):
            return True, coerce_cli_path(value, info, path_type=Path, param=param, ctx=ctx)
        return False, None

    @dataclass(frozen=True)
    class DeferredRuntimeParam(RuntimeParam):
        """Any other type: typer's own coercion, built when a value comes. typer builds a
        parameter's coercion to process even the None of an option not given (``coerce`` answers
        None or ``()`` itself, before ``_coerce_value``), so ``validate``'s unused
        ``--near-dup-threshold`` (a float) imported pydantic: 0.26 CPU s of every ``validate``."""

        descriptor: Any = None

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            return _typers(self.descriptor)._coerce_value(value, param=param, ctx=ctx)

    def front(descriptor: Any) -> Any:
        cls = PlainRuntimeParam if _plain(descriptor) else DeferredRuntimeParam
        return cls(annotation=descriptor.annotation, parameter_info=descriptor.parameter_info,
                   descriptor=descriptor)

    core.build_runtime_param = front
    _INSTALLED = True
    return True


_LEAVES = (str, bool, Path)


def _plain(descriptor: Any) -> bool:
    """Whether the front may answer this parameter's values (see the module docstring)."""
    info = descriptor.parameter_info
    if descriptor.file_annotation is not None or info.parser is not None or info.path_type is not None:
        return False
    ann = descriptor.annotation
    if get_origin(ann) is list:
        args = get_args(ann)
        return len(args) == 1 and args[0] in _LEAVES
    return ann in _LEAVES
