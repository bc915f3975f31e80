"""The configured backends by name: an OpenAI-compatible client per endpoint, the embedded model for
`local...` models (loaded only when one is configured)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from server.backends.config import BackendConfig
from server.backends.openai_backend import OpenAIBackend
from server.tasks import TaskSet

if TYPE_CHECKING:
    from server.backends.local_backend import LocalBackend


def make_backend(config: BackendConfig) -> OpenAIBackend | LocalBackend:
    """The embedded model for `local...` models, an OpenAI-compatible client otherwise."""
    from server.backends.local_spec import is_local_spec

    if is_local_spec(config.model):
        from server.backends.local_backend import LocalBackend

        return LocalBackend(config)
    return OpenAIBackend(config)


class BackendPool:
    """The configured backends by name; rebuilt when settings change, clients reused when unchanged."""

    def __init__(self) -> None:
        self._backends: dict[str, OpenAIBackend | LocalBackend] = {}
        self._closing = TaskSet()  # backends the settings dropped, closing in the background

    def configure(self, configs: list[BackendConfig]) -> None:
        new: dict[str, OpenAIBackend | LocalBackend] = {}
        for cfg in configs:
            old = self._backends.get(cfg.name)
            new[cfg.name] = old if old is not None and old.config == cfg else make_backend(cfg)
        for name, old in self._backends.items():
            if new.get(name) is not old:
                self._closing.spawn(old.aclose(), name=f"close:{name}")
        self._backends = new

    def names(self) -> list[str]:
        return list(self._backends)

    def get(self, name: str) -> OpenAIBackend | LocalBackend | None:
        return self._backends.get(name)

    def __len__(self) -> int:
        return len(self._backends)

    async def aclose(self) -> None:
        backends, self._backends = self._backends, {}
        await asyncio.gather(self._closing.wait(), *(b.aclose() for b in backends.values()), return_exceptions=True)
