"""An openai client of the fault server (tests/fault_server.py) and the rich answer schema its
tests ask for: nested models, an enum, bounded lists and numbers (tests/test_fault_server*.py)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

import openai
from pydantic import BaseModel, Field


class Severity(StrEnum):
    minor = "minor"
    major = "major"
    critical = "critical"


class Check(BaseModel):
    flags: list[bool] = Field(min_length=5, max_length=5)
    note: str | None = None


class Verdict(BaseModel):
    label: Literal["good", "bad"]
    score: int = Field(ge=1, le=5)
    confidence: float = Field(ge=0, le=1)
    severity: Severity
    checks: list[Check] = Field(min_length=1, max_length=3)
    grid: list[Annotated[list[bool], Field(min_length=5, max_length=5)]]
    comment: str = Field(max_length=40)


SCHEMA = Verdict.model_json_schema()


def json_schema_format(schema: dict = SCHEMA) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "Verdict", "schema": schema}}


_clients: list[openai.OpenAI] = []


def client_for(base_url: str, timeout: float = 5.0, max_retries: int = 0) -> openai.OpenAI:
    """A sync openai client, closed after the test by :func:`close_clients`."""
    client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=max_retries, timeout=timeout)
    _clients.append(client)
    return client


def close_clients() -> None:
    """Close every client :func:`client_for` made (each test file calls it after each test)."""
    while _clients:
        _clients.pop().close()


def messages_for(text: str) -> list[dict]:
    return [{"role": "system", "content": "You are a judge."}, {"role": "user", "content": text}]


def ask(client: openai.OpenAI, text: str, *, schema: bool = True, **kwargs):
    if schema:
        kwargs.setdefault("response_format", json_schema_format())
    return client.chat.completions.create(model="judge", messages=messages_for(text), **kwargs)
