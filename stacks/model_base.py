"""Base class of every spec model: camelCase keys as users write them, unknown keys refused, immutable."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class SpecModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True,
                              use_enum_values=False)
