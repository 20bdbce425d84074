"""Model fields shared by the cluster models."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import models


class StringListFormField(forms.CharField):
    """Edits a list of strings as one comma-separated line in the admin."""

    def prepare_value(self, value: Any) -> str:
        if isinstance(value, list):
            return ", ".join(str(v) for v in value)
        return "" if value is None else str(value)

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        if isinstance(value, list):
            return [str(v) for v in value]
        text = super().to_python(value)
        return [item.strip() for item in text.split(",") if item.strip()]

    def has_changed(self, initial: Any, data: Any) -> bool:
        return self.to_python(initial or []) != self.to_python(data)


class StringListField(models.JSONField):
    """A JSON list of strings (rootfses, drivers, placement tags)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("default", list)
        kwargs.setdefault("blank", True)
        super().__init__(*args, **kwargs)

    def validate(self, value: Any, model_instance: Any) -> None:
        super().validate(value, model_instance)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValidationError(f"Invalid field: {self.name}", code="invalid")

    def formfield(self, **kwargs: Any) -> forms.Field:
        return StringListFormField(
            required=not self.blank,
            label=self.verbose_name.capitalize(),
            help_text=self.help_text or "Comma-separated.",
        )
