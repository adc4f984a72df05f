"""A Strands `Model` base for scripted models (the bench's and the tests'): no provider, no configuration,
no structured output; a subclass writes `stream`."""

from __future__ import annotations

from typing import Any

from strands.models import Model


class ScriptModel(Model):
    """A model that only streams what its subclass scripts."""

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
