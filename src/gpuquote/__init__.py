"""gpuquote: which GPU offer finishes a job for the least money, and are the quotes comparable?

Layers (DESIGN.md section 2), data flowing one way:
hardware, models -> offers, estimate -> sources, store, plan, probe -> service -> cli, web.
"""

__version__ = "0.1.0"
