"""lm-evaluation-harness task configs shipped with a release (``<release>/lm_eval/``).

One task YAML per config that is a task lm-eval can score, i.e. a config whose policy says
``task="multiple_choice"`` with ``choices`` and a gold ``label`` (XCOPA's languages and
translations, COPA ``en``, ComVE ``subtask_a``/``subtask_b``), a group YAML over them and a
README.md saying how to run them. Everything comes from the manifest: the config's
features, languages and :class:`~benchsmith.policy.Policy` (``context``, ``choices``,
``label``); nothing imports lm-eval or a builder. Decisions:

* **Task names**: ``benchsmith_<dataset>_<config>`` with every character outside
  ``[A-Za-z0-9_]`` made ``_`` (``translation-et`` -> ``benchsmith_xcopa_translation_et``); the
  group is ``benchsmith_<dataset>``.
* **Data**: a local release is read with ``dataset_path: parquet`` and
  ``dataset_kwargs.data_files`` mapping each split to ``data/<config>/<split>-*.parquet``,
  paths relative to the release folder: lm-eval (``datasets``) resolves them against the
  working directory, so the README says to run lm-eval *from the release folder*. An absolute
  path would work from anywhere but break when the release is moved, copied or published, and
  would put the build machine's path into the release. Once published (``hub=`` given, e.g.
  by ``publish`` re-rendering the files), the YAMLs read the Hub repo instead:
  ``dataset_path: ORG/NAME``, ``dataset_name: <config>``, ``dataset_kwargs: {revision: TAG}``;
  every local YAML says so in a comment.
* **Splits**: ``training_split``/``validation_split``/``test_split`` for the config's
  ``train``/``validation``/``test`` (lm-eval scores ``test`` when there is one, else
  ``validation``; other splits, such as ComVE's ``trial``, are left out).
* **COPA-shaped configs** (choices ``choice1``/``choice2`` with ``premise`` and ``question`` in
  the context) use lm-eval's own prompts, so scores compare with lm-eval's built-in ``copa``
  and ``xcopa_<lang>`` tasks: the premise without its last character (the period), a space and
  the connector for ``cause``/``effect``; the choices with their first letter lowercased. A
  config in a language the builder gives connectors for (``connectors``: the builder's
  ``lm_eval_connectors``, e.g. XCOPA's ``tasks/xcopa/utils.py`` words in
  ``builders/xcopa/lm_eval.py``) uses them and its choices as they are (``xcopa_<lang>``); an
  English config, or a language without connectors, uses :data:`ENGLISH` (``because`` /
  ``therefore``) and a space before each choice (``tasks/super_glue/copa/utils.py``, whose
  continuations therefore start with two spaces, as the built-in task does). ``question``
  is the string ``cause``/``effect`` (as upstream, the Hub and lm-eval have it), looked up as
  lm-eval does (``connector[doc["question"]]``); a COPA-shaped config whose ``question`` is
  not a string (a release built before it was stored so) gets the lettered prompt below.
* **Decontamination**: every task sets ``should_decontaminate: true`` and
  ``doc_to_decontamination_query``, the policy's ``contamination_fields`` (default: the
  context and the choices) as a Jinja template, the same text ``benchsmith contamination``
  matches, so lm-eval's own 13-gram decontamination works with these tasks.
* **Other multiple-choice configs** get a lettered prompt (as lm-eval's MMLU-style tasks):
  the context fields, one line each; the question; ``A. <option>`` lines; ``Answer:``; the
  choices are the letters and the target the label's index. It works whatever the label means
  (ComVE subtask A's gold is the statement that does *not* make sense, which a "most likely
  continuation" prompt would get backwards). The question is the policy's ``prompt`` when the
  manifest has one (to be declared by builders), else the config's description.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import yaml
from datasets import ClassLabel, Features, Value

from benchsmith.cards.paths import scrub

if TYPE_CHECKING:
    from benchsmith.manifest import ReleaseInfo
    from benchsmith.release import Release

FOLDER = "lm_eval"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SPLIT_KEYS = (("train", "training_split"), ("validation", "validation_split"), ("test", "test_split"))

#: lm-eval's English COPA connectors (cause, effect), ``tasks/super_glue/copa/utils.py``'s; other
#: languages' come from the builder (``Builder.lm_eval_connectors``, ``{language: (cause, effect)}``)
ENGLISH: tuple[str, str] = ("because", "therefore")
Connectors = Mapping[str, tuple[str, str]]


def task_name(dataset: str, config: str | None = None) -> str:
    """``benchsmith_<dataset>[_<config>]`` with non-identifier characters made ``_``."""
    raw = f"benchsmith_{dataset}" + (f"_{config}" if config else "")
    return re.sub(r"[^0-9A-Za-z_]", "_", raw)


def _label_field(policy: dict[str, Any], feats: Features) -> str | None:
    label = policy.get("label", "auto")
    if label == "auto":
        labels = [n for n, f in feats.items() if isinstance(f, ClassLabel)]
        return labels[0] if len(labels) == 1 else None
    return label if label in feats else None


def _names(feature: Any) -> list[str] | None:
    return list(feature.names) if isinstance(feature, ClassLabel) else None


def _lower_first(var: str, space: bool) -> str:
    return ('" " + ' if space else "") + f"{var}[:1].lower() + {var}[1:]"


def _copa_prompt(language: str, connectors: Connectors | None = None) -> tuple[str, str, str]:
    """(doc_to_text, doc_to_choice, what) of lm-eval's copa/xcopa prompt (``question`` a string)."""
    connectors = {"en": ENGLISH, **(connectors or {})}
    cause, effect = connectors.get(language, ENGLISH)
    space = language == "en" or language not in connectors
    connector = {"cause": cause, "effect": effect}
    text = f"{{{{ premise.strip()[:-1] }}}} {{{{ {connector!r}[question] }}}}"
    choice = f"{{{{ [{_lower_first('choice1', space)}, {_lower_first('choice2', space)}] }}}}"
    if language == "en":
        what = "lm-eval's built-in `copa` prompt (tasks/super_glue/copa)"
    elif language in connectors:
        what = f"lm-eval's built-in `xcopa_{language}` prompt (tasks/xcopa)"
    else:
        what = f"lm-eval's `copa` prompt with English connectors (no connectors for {language!r})"
    return text, choice, what


def _show(field: str, feature: Any) -> str:
    """Jinja for one field's value: a ClassLabel index shown as its name."""
    names = _names(feature)
    if names:
        return f"{{{{ {names!r}[{field}] if {field} is number else {field} }}}}"
    return f"{{{{ {field} }}}}"


def _lettered_prompt(feats: Features, context: list[str], choices: list[str] | str,
                     question: str) -> tuple[str, Any, str]:
    lines = [_show(c, feats[c]) for c in context if c in feats]
    if question:  # literal text: a brace would start a Jinja tag
        lines.append(re.sub(r"[{}]", lambda b: f"{{{{ {b.group(0)!r} }}}}", question))
    if isinstance(choices, str):
        options = (f"{{% for option in {choices} %}}{{{{ {LETTERS!r}[loop.index0] }}}}. {{{{ option }}}}\n"
                   "{% endfor %}Answer:")
        text = "\n".join(lines) + ("\n" if lines else "") + options
        choice: Any = f"{{{{ {LETTERS!r}[:{choices}|length] | list }}}}"
    else:
        lines += [f"{LETTERS[i]}. {_show(c, feats[c])}" for i, c in enumerate(choices)]
        text = "\n".join([*lines, "Answer:"])
        choice = list(LETTERS[: len(choices)])
    return text, choice, "lettered options (context, question, `A. ...` lines, `Answer:`)"


def tasks(info: ReleaseInfo, connectors: Connectors | None = None) -> list[dict[str, Any]]:
    """The lm-eval task of every config that is one: ``{"name", "config", "yaml" (dict), "what",
    "splits", "scored"}``; configs that are not multiple-choice tasks with a gold label (or whose
    field names are not identifiers, which lm-eval's Jinja cannot name) are left out.
    ``connectors``: the builder's COPA connector words per language (see module docstring)."""
    out = []
    for cname, cfg in info.configs.items():
        policy = dict(cfg.policy)
        choices = policy.get("choices") or []
        if policy.get("task") != "multiple_choice" or not choices:
            continue
        feats = cfg.features
        label = _label_field(policy, feats)
        fields = [choices] if isinstance(choices, str) else list(choices)
        context = list(policy.get("context") or [])
        if label is None or any(f not in feats for f in fields):
            continue
        if not all(f.isidentifier() for f in [*fields, *context, label]):  # lm-eval renders doc fields as
            continue  # Jinja variables: a name such as `option-a` cannot be one
        languages = list(cfg.languages or ["en"])
        if list(choices) == ["choice1", "choice2"] and {"premise", "question"} <= set(context) \
                and "premise" in feats and feats.get("question") == Value("string"):
            text, choice, what = _copa_prompt(languages[0] if len(languages) == 1 else "en", connectors)
        else:
            question = policy.get("prompt") or cfg.description or ""
            text, choice, what = _lettered_prompt(feats, context, choices, scrub(question))
        splits = {key: s for s, key in SPLIT_KEYS if s in cfg.splits}
        if "validation_split" not in splits and "test_split" not in splits:
            splits["test_split"] = next(iter(cfg.splits))
        name = task_name(info.name, cname)
        out.append({
            "name": name,
            "config": cname,
            "what": what,
            "splits": splits,
            "scored": splits.get("test_split") or splits["validation_split"],
            "yaml": {
                "task": name,
                "output_type": "multiple_choice",
                **splits,
                "doc_to_text": text,
                "doc_to_choice": choice,
                "doc_to_target": label,
                # lm-eval's own 13-gram decontamination (``--decontamination_ngrams_path``) reads this
                "should_decontaminate": True,
                "doc_to_decontamination_query": _decontamination_query(policy, feats, [*context, *fields]),
                "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
                "metadata": {"version": 1.0, "dataset": info.name, "release": info.version,
                             "config": cname},
            },
        })
    return out


def _decontamination_query(policy: dict[str, Any], feats: Features, default: list[str]) -> str:
    """The text lm-eval's decontamination matches for a doc: the policy's contamination fields
    (default: the context and the choices) that are text, joined by spaces; list fields joined too."""
    names = [f for f in (policy.get("contamination_fields") or default) if f in feats and f.isidentifier()]
    parts = []
    for f in names:
        feat = feats[f]
        if isinstance(feat, Value) and feat.dtype in ("string", "large_string"):
            parts.append("{{" + f + "}}")
        elif isinstance(getattr(feat, "feature", None), Value):
            parts.append("{{" + f + " | join(' ')}}")
    return " ".join(parts)


def _data_source(info: ReleaseInfo, config: str, splits: list[str],
                 hub: dict[str, str] | None) -> dict[str, Any]:
    if hub:
        return {"dataset_path": hub["repo"], "dataset_name": config,
                "dataset_kwargs": {"revision": hub.get("revision") or info.version}}
    return {"dataset_path": "parquet",
            "dataset_kwargs": {"data_files": {s: f"data/{config}/{s}-*.parquet" for s in splits}}}


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (a lettered prompt) as literal blocks, readable as the prompt reads."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)


def _dump(obj: dict[str, Any]) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000,
                     default_flow_style=False)


def lm_eval_files(release: Release, *, hub: dict[str, str] | None = None,
                  connectors: Connectors | None = None) -> dict[str, str]:
    """``{path relative to the release: text}`` of the ``lm_eval/`` folder (``{}`` when no
    config is a task); ``hub`` (``{"repo", "revision"}``) points the tasks at the Hub;
    ``connectors`` as :func:`tasks`."""
    m = release.info
    found = tasks(m, connectors)
    if not found:
        return {}
    files: dict[str, str] = {}
    where = (f"the Hub dataset {hub['repo']} at revision {hub.get('revision') or m.version}" if hub
             else f"the local release {m.name} {m.version}")
    for t in found:
        cfg = m.configs[t["config"]]
        y = {"task": t["yaml"]["task"],
             **_data_source(m, t["config"], [s for s in cfg.splits if s in t["splits"].values()], hub)}
        y.update({k: v for k, v in t["yaml"].items() if k not in y})
        head = [f"# lm-eval task for config `{t['config']}` of {where} (generated by benchsmith; do not edit).",
                f"# Prompt: {t['what']}."]
        if hub:
            head.append("# Reads the published repo at the tag above: runs from any folder.")
        else:
            head += [
                "# data_files are relative to the release folder: run lm_eval from there (see README.md).",
                "# Once published on the Hub, replace dataset_path and dataset_kwargs with:",
                "#   dataset_path: ORG/NAME",
                f"#   dataset_name: {t['config']}",
                f"#   dataset_kwargs: {{revision: '{m.version}'}}",
            ]
        files[f"{FOLDER}/{t['config']}.yaml"] = "\n".join(head) + "\n" + _dump(y)
    group = {
        "group": task_name(m.name),
        "task": [t["name"] for t in found],
        "aggregate_metric_list": [{"metric": "acc", "aggregation": "mean", "weight_by_size": True}],
        "metadata": {"version": 1.0},
    }
    files[f"{FOLDER}/_{task_name(m.name)}.yaml"] = (
        f"# Every lm-eval task of {m.name} {m.version}: accuracy averaged over examples.\n" + _dump(group))
    files[f"{FOLDER}/README.md"] = _readme(m, found, hub)
    return files


def _readme(m: ReleaseInfo, found: list[dict[str, Any]], hub: dict[str, str] | None) -> str:
    first = found[0]["name"]
    group = task_name(m.name)
    lines = [
        f"# lm-evaluation-harness tasks for {m.pretty_name or m.name} {m.version}",
        "",
        "One task per multiple-choice config, generated from the release's manifest by benchsmith.",
        "",
        "## Run",
        "",
    ]
    if hub:
        lines += [
            (f"The tasks read the Hub dataset `{hub['repo']}` at revision `{hub.get('revision') or m.version}`, "
             "so they run from any folder:"),
            "",
            "```bash",
            f"lm_eval --model hf --model_args pretrained=EleutherAI/pythia-160m --include_path lm_eval --tasks {first}",
            "```",
        ]
    else:
        lines += [
            ("The tasks read this release's Parquet files by paths relative to the release folder (the folder "
             "that holds `release.json` and this `lm_eval/`), so run lm-eval from there:"),
            "",
            "```bash",
            f"cd {m.name}/{m.version}   # inside the registry (benchsmith build --registry DIR)",
            f"lm_eval --model hf --model_args pretrained=EleutherAI/pythia-160m --include_path lm_eval --tasks {first}",
            "```",
            "",
            ("Once the release is published on the Hub, each YAML's comment says what to change "
             "(`dataset_path: ORG/NAME`, `dataset_name: <config>`, `dataset_kwargs: {revision: TAG}`)."),
        ]
    lines += [
        "",
        (f"`--tasks {group}` runs them all (accuracy averaged over examples); any model lm-eval supports "
         "works (`--model vllm`, `--model local-completions`, ...); `--model dummy --limit 3` is a smoke test."),
        "",
        "## Tasks",
        "",
        "| task | config | scored split | examples | prompt |",
        "|---|---|---|---:|---|",
    ]
    for t in found:
        n = m.configs[t["config"]].splits[t["scored"]].num_examples
        lines.append(f"| `{t['name']}` | `{t['config']}` | {t['scored']} | {n:,} | {t['what']} |")
    return "\n".join(lines) + "\n"
