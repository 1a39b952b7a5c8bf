"""Base class of every spec model: camelCase keys as users write them, unknown keys refused, immutable, and scalars
read strictly (``stacks/spec/scalars.py``: no boolean for a number, no fraction for a count, nothing past int32, what
``pulumi config set --path`` writes accepted where its meaning is plain)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

from stacks.spec.scalars import read_scalar


class SpecModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True, use_enum_values=False
    )

    TEXT_FROM_BOOL: ClassVar[frozenset[str]] = frozenset()
    """Fields (model names) whose ``true``/``false`` mean the text ``"true"``/``"false"`` (a taint value)."""
    KEEP_DIGITS: ClassVar[frozenset[str]] = frozenset()
    """String fields where a YAML integer is refused, not turned into text: leading zeros would be lost."""

    @field_validator("*", mode="before")
    @classmethod
    def _strict_scalars(cls, value: Any, info: ValidationInfo) -> Any:
        name = info.field_name or ""
        field = cls.model_fields.get(name)
        if field is None:
            return value
        return read_scalar(
            field.annotation,
            field.metadata,
            value,
            text_from_bool=name in cls.TEXT_FROM_BOOL,
            keep_digits=name in cls.KEEP_DIGITS,
        )
