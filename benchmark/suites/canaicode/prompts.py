"""The can-ai-code prompt templates (`prompts_params/*.txt`, `*.json` chat lists): Jinja2 templates rendered
with `language` and the question's own keys, exactly as upstream's prepare step does
(`Template(text).render({"language": language, **question})`). The published sample runs used
`chat-simple`; its rendering is what the model is asked.

A chat template (`chat.json`) is a list of messages; the benchmark sends one instruction through the
language server, so a chat template must hold exactly one user message (its content is the prompt).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from jinja2 import TemplateError
from jinja2.sandbox import SandboxedEnvironment

DEFAULT_TEMPLATE = "chat-simple"
# upstream's plain `jinja2.Template` defaults (the final newline of a template file is dropped)
_ENV = SandboxedEnvironment()


class PromptError(ValueError):
    pass


@lru_cache(maxsize=16)
def _template_source(folder: str, name: str) -> str:
    base = Path(folder)
    txt, chat = base / f"{name}.txt", base / f"{name}.json"
    if txt.is_file():
        return txt.read_text(encoding="utf-8")
    if chat.is_file():
        try:
            messages = json.loads(chat.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise PromptError(f"{chat}: not JSON: {exc}") from None
        users = (
            [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
            if isinstance(messages, list)
            else []
        )
        if not isinstance(messages, list) or len(users) != 1 or len(messages) != 1:
            raise PromptError(f"{chat}: the server takes one instruction: the chat template must be one user message")
        return str(users[0].get("content", ""))
    known = sorted({p.stem for p in base.glob("*.txt")} | {p.stem for p in base.glob("chat*.json")})
    raise PromptError(f"prompt template {name!r} not found in {base}; known: {', '.join(known) or '(none)'}")


def render(folder: Path, template: str, language: str, fields: dict) -> str:
    """The prompt for one question in one language."""
    source = _template_source(str(folder), template)
    try:
        return _ENV.from_string(source).render({"language": language, **fields})
    except TemplateError as exc:
        raise PromptError(f"prompt template {template!r}: {exc}") from None
