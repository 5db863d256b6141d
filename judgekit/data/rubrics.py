"""The one reader of rubric files (``rubrics/<name>.yaml`` or a path to a YAML file).

Each method keeps its own schema (the CS/CA rubric of ``pipelines/cultural_schemas.py``, the error
typology of ``pipelines/localisation_schemas.py``); :func:`read_rubric` finds, parses, validates
and fingerprints the file the same way for both.
"""

from __future__ import annotations

import hashlib
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from judgekit.data import rubric_path
from judgekit.data.yamltext import load_yaml, yaml_input_error
from judgekit.errors import InputError

R = TypeVar("R", bound=BaseModel)


def read_rubric(name: str, schema: type[R]) -> R:
    """Load the rubric ``name`` (a shipped rubric's name, or a .yaml/.yml path) into ``schema``.

    The model's ``hash`` field is set to the first 12 hex digits of the SHA-256 of the YAML
    text, so a run's signature changes when its rubric does.

    Raises:
        InputError: file missing, not YAML, or not valid for ``schema`` (naming the field).
    """
    path = rubric_path(name)
    if not path.is_file():
        raise InputError(path, "rubric not found")
    text = path.read_text(encoding="utf-8")
    try:
        rubric = schema.model_validate(load_yaml(text))
    except yaml.YAMLError as exc:
        raise yaml_input_error(path, exc) from None
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or None
        raise InputError(path, err["msg"], field=loc) from None
    rubric.hash = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]  # type: ignore[attr-defined]
    return rubric
