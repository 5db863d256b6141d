"""Run configs: YAML validated by pydantic, with dotted ``--set KEY=VALUE`` overrides.

Models are declared by role (``generator``, ``judge``, ``translator``); swapping the judge is one
line in YAML or one flag (``--set judge.model=openai/gpt-4o-mini``). Unknown or ill-typed keys
fail with one message naming the file, the line, the key and what was expected. Values are read
as written (:func:`judgekit.data.yamltext.load_yaml`): ``2024-05-01`` is that text, not a date,
and ``no``/``on`` are text to a text field, booleans only to a boolean field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from judgekit.data import resolve_path
from judgekit.data.yamltext import load_yaml, yaml_input_error
from judgekit.datasets.refs import is_data_ref
from judgekit.errors import InputError
from judgekit.llm.spec import ModelSpec
from judgekit.pipelines import PIPELINES, get_options

OptionsT = TypeVar("OptionsT", bound=BaseModel)


class CacheConfig(BaseModel):
    """Response cache: ``enabled``, and ``dir`` (default ``$JUDGEKIT_CACHE_DIR`` or
    ``~/.cache/judgekit``)."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    dir: Path | None = None


class RunConfig(BaseModel):
    """One run: which pipeline, which models in which roles, and the pipeline's options.

    Pipeline options live in a section named after the pipeline (``spilling:``, ...), typed
    by the options model the pipeline's registry entry names (:mod:`judgekit.pipelines.options`).
    :func:`load_config` checks the run's section (absent = defaults) and any other pipeline's
    section present, reporting errors with file, line and key like the rest; :meth:`section`
    (or the attribute: ``config.spilling``) returns a checked section and :meth:`options` the
    same with its relative paths looked up.

    Attributes:
        pipeline: registered pipeline name (``spilling``; see ``judgekit.pipelines``).
        name: run name, used in tables (default: the pipeline's name).
        out: output directory (default ``runs/<name>-<judge name>``, so configs that differ
            only in their model lines write to different directories).
        limit: items to run (for spilling: words); 0 or None = all.
        generator: the model(s) under test; a list compares several models.
        judge: the judge model; a list forms a jury where the pipeline supports one.
        translator: model for the English back-check translations (default: the judge).
    """

    model_config = ConfigDict(extra="allow")  # pipeline sections; checked in _known_sections
    pipeline: str
    name: str | None = None
    out: Path | None = None
    limit: int | None = Field(None, ge=0)
    seed: int = 0
    cache: CacheConfig = Field(default_factory=CacheConfig)
    generator: ModelSpec | list[ModelSpec] | None = None
    judge: ModelSpec | list[ModelSpec] | None = None
    translator: ModelSpec | None = None
    _path: Path | None = PrivateAttr(None)
    _root: Any = PrivateAttr(None)
    _overrides: list[str] = PrivateAttr(default_factory=list)
    _sections: dict[str, BaseModel] = PrivateAttr(default_factory=dict)

    @field_validator("generator", "judge")
    @classmethod
    def _distinct_names(cls, value: Any) -> Any:
        # results, records and task keys are per model name: two models under one name would
        # overwrite each other
        if isinstance(value, list):
            labels = [spec.label for spec in value]
            repeated = sorted({x for x in labels if labels.count(x) > 1})
            if repeated:
                raise ValueError(f"models need distinct names (set 'name'): {repeated} repeated")
        return value

    @model_validator(mode="after")
    def _known_sections(self) -> RunConfig:
        if self.pipeline not in PIPELINES:
            raise ValueError(f"unknown pipeline '{self.pipeline}' (known: {sorted(PIPELINES)})")
        for key in self.model_extra or {}:
            if key not in PIPELINES:
                raise ValueError(f"unknown key '{key}'")
        return self

    def options(self, name: str, model: type[OptionsT]) -> OptionsT:
        """Validate the ``name:`` section (absent = defaults) against ``model``; its relative
        paths are looked up in this config's folder, then in the working directory.

        Raises:
            InputError: a key in the section is unknown, missing or ill-typed.
        """
        return self._with_paths(self._validated(name, model), name)

    def __getattr__(self, name: str) -> Any:
        # ``config.spilling`` (any pipeline's name): its checked section, as :meth:`section`
        if name in PIPELINES:
            return self.section(name)
        return super().__getattr__(name)  # type: ignore[misc]

    def section(self, name: str | None = None) -> BaseModel:
        """The ``name:`` section (default: the run's pipeline's) validated against that
        pipeline's registered options model, as checked when the config loaded; relative paths
        not yet looked up (:meth:`options` does that).

        Raises:
            InputError: no pipeline of that name, or a key in the section is unknown, missing
                or ill-typed.
        """
        name = name or self.pipeline
        if name not in self._sections:
            model = get_options(name)
            if model is None:
                raise InputError(self._path, f"no pipeline '{name}' has options", field=name)
            self._sections[name] = self._validated(name, model)
        return self._sections[name]

    def check_sections(self) -> None:
        """Validate the run's pipeline section (absent = defaults) and every other pipeline's
        section present against each pipeline's options model.

        Raises:
            InputError: a key in a section is unknown, missing or ill-typed (file, line, key).
        """
        for name in dict.fromkeys([self.pipeline, *(self.model_extra or {})]):
            self.section(name)

    def _validated(self, name: str, model: type[OptionsT]) -> OptionsT:
        data = (self.model_extra or {}).get(name) or {}
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            key, message = explain_error({**err, "loc": (name, *err["loc"])})
            raise self.located(key, message) from None

    def _with_paths(self, options: OptionsT, prefix: str) -> OptionsT:
        """``options`` with each relative path field (``Path``-typed, not ``data:``) looked up
        in this config's folder, then in the working directory (:func:`resolve_path`).

        Raises:
            InputError: a path found in neither (located at the key; names both places).
        """
        base = self._path.parent if self._path is not None else None
        update: dict[str, Any] = {}
        for field, value in options:
            key = f"{prefix}.{field}"
            if isinstance(value, BaseModel):
                update[field] = self._with_paths(value, key)
            elif isinstance(value, Path) and not value.is_absolute() and not is_data_ref(value):
                try:
                    update[field] = resolve_path(value, base)
                except InputError as exc:
                    raise self.located(key, exc.message) from None
        return options.model_copy(update=update) if update else options

    def located(self, key: str, message: str) -> InputError:
        """An error about the value at dotted ``key``, located where that value came from:
        a ``--set`` on the command line, or this config's file and line."""
        return located(self._path, self._root, self._overrides, key, message)

    def judges(self) -> list[ModelSpec]:
        """The judge role as a list (empty if unset)."""
        if self.judge is None:
            return []
        return self.judge if isinstance(self.judge, list) else [self.judge]

    def single_judge(self) -> ModelSpec:
        """The one judge of a pipeline without juries.

        Raises:
            InputError: no judge, or a list of judges.
        """
        judges = self.judges()
        if len(judges) != 1:
            raise InputError(self._path, "this pipeline needs exactly one judge", field="judge")
        return judges[0]

    def model_roles(self) -> dict[str, ModelSpec | list[ModelSpec] | None]:
        """Every role's model as configured (a spec, a list of specs, or None): what the
        preflight checks (``judgekit.llm.preflight``)."""
        return {"generator": self.generator, "judge": self.judge, "translator": self.translator}

    def generators(self) -> list[ModelSpec]:
        """The generator role as a list (empty if unset)."""
        if self.generator is None:
            return []
        return self.generator if isinstance(self.generator, list) else [self.generator]

    def run_name(self) -> str:
        return self.name or self.pipeline

    def out_dir(self) -> Path:
        if self.out is not None:
            return self.out
        judges = self.judges()
        judge = re.sub(r"[^A-Za-z0-9._-]+", "-", judges[0].label) if judges else "nojudge"
        return Path("runs") / f"{self.run_name()}-{judge}"


def _parse_value(text: str) -> Any:
    try:
        return load_yaml(text)
    except yaml.YAMLError:
        return text


def apply_override(data: dict[str, Any], assignment: str) -> None:
    """Apply one ``dotted.key=value`` to nested config data (value parsed as YAML scalar).

    Raises:
        InputError: not of the form KEY=VALUE, or the path crosses a non-mapping.
    """
    if "=" not in assignment:
        raise InputError(None, f"--set expects KEY=VALUE, got '{assignment}'", field=assignment)
    dotted, value = assignment.split("=", 1)
    parts = dotted.strip().split(".")
    node: Any = data
    for i, part in enumerate(parts[:-1]):
        here = ".".join(parts[: i + 1])
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                where = ".".join(parts[:i])
                raise InputError(None, f"'{where}' is a list; use an index 0..{len(node) - 1}")
            if not isinstance(node[int(part)], dict | list):
                raise InputError(None, f"'{here}' is a value, not a section", field=dotted)
            node = node[int(part)]
            continue
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict | list):
            raise InputError(None, f"'{here}' is a value, not a section", field=dotted)
        node = child
    last = parts[-1]
    if isinstance(node, list):
        if not last.isdigit() or int(last) >= len(node):
            where = ".".join(parts[:-1])
            raise InputError(None, f"'{where}' is a list; use an index 0..{len(node) - 1}")
        node[int(last)] = _parse_value(value)
    else:
        node[last] = _parse_value(value)


def line_of(root: Any, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the deepest YAML node on ``loc`` (for error messages)."""
    node, line = root, None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = [(k, v) for k, v in node.value if k.value == str(part)]
            if not match:
                break
            key_node, node = match[0]
            line = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and str(part).isdigit():
            if int(part) >= len(node.value):
                break
            node = node.value[int(part)]
            line = node.start_mark.line + 1
        else:
            break
    return line


def explain_error(err: dict[str, Any]) -> tuple[str, str]:
    """(dotted key, message) of one pydantic error, without pydantic's union-branch markers."""
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p in ("ModelSpec",)))
    # drop pydantic's union-branch markers such as 'list[ModelSpec]'
    loc = tuple(p for p in loc if not (isinstance(p, str) and "[" in p))
    key = ".".join(str(p) for p in loc)
    if err["type"] == "extra_forbidden":
        return key, "unknown key"
    if err["type"] == "missing":
        return key, "required key is missing"
    given = err.get("input")
    if isinstance(given, dict | list):  # a whole section: the message says what is wrong
        return key, err["msg"]
    return key, f"{err['msg']} (got {given!r})"


# errors that only say a value took the other branch of a union (one spec vs a list of specs)
_BRANCH_ERRORS = ("list_type", "model_type", "model_attributes_type", "dict_type")


def _first_error(exc: ValidationError) -> tuple[str, str, str]:
    """(dotted key, message, " (+n more)") of the most specific error of ``exc``."""
    explained = list(
        dict.fromkeys(explain_error(e) for e in exc.errors() if e["type"] not in _BRANCH_ERRORS)
    )
    if not explained:  # a value that fits no branch at all
        first = exc.errors()[0]
        key, message = explain_error(first)
        if len({e["type"] for e in exc.errors()}) > 1:
            message = f"expected a mapping or a list (got {first.get('input')!r})"
        return key, message, ""
    key, message = explained[0]
    return key, message, f" (+{len(explained) - 1} more)" if len(explained) > 1 else ""


def located(
    path: Path | None, root: Any, overrides: list[str], key: str, message: str
) -> InputError:
    """The error at dotted ``key``, located on the command line when a ``--set`` gave that
    value (or a section above it), else in the file ``path`` at the key's line."""
    for assignment in reversed(overrides):
        dotted = assignment.split("=", 1)[0].strip()
        if key == dotted or key.startswith(dotted + "."):
            return InputError(None, f"--set {assignment}: {message}", field=key or None)
    line = line_of(root, tuple(key.split("."))) if key and root is not None else None
    return InputError(path, message, line=line, field=key or None)


def load_config(path: Path | str, overrides: list[str] | None = None) -> RunConfig:
    """Read a YAML run config, apply ``--set`` overrides, validate.

    Raises:
        InputError: the file is missing or not YAML, or a key is unknown, missing or
            ill-typed, in the pipeline sections too (the message names file, line and key).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "config file not found")
    text = path.read_text(encoding="utf-8")
    try:
        data = load_yaml(text) or {}
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        raise yaml_input_error(path, exc) from None
    if not isinstance(data, dict):
        raise InputError(path, "expected a mapping of keys at the top level", line=1)
    for assignment in overrides or []:
        apply_override(data, assignment)
    known = set(RunConfig.model_fields) | set(PIPELINES)
    overrides = overrides or []
    for key in data:
        if key not in known:
            expected = f"unknown key (expected one of: {', '.join(sorted(known))})"
            dotted = [a.split("=", 1)[0].strip() for a in overrides]
            given = next((d for d in dotted if d.split(".")[0] == key), str(key))
            raise located(path, root, overrides, given, expected)
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as exc:
        key, message, more = _first_error(exc)
        raise located(path, root, overrides, key, message + more) from None
    config._path, config._root, config._overrides = path, root, overrides
    config.check_sections()
    return config
