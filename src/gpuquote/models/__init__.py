"""Workload models: architecture presets with sources and the counts derived from a shape."""

from gpuquote.models.architecture import ARCH_FIELDS, Architecture, architecture_from_dict
from gpuquote.models.presets import get_model, list_models

__all__ = ["ARCH_FIELDS", "Architecture", "architecture_from_dict", "get_model", "list_models"]
