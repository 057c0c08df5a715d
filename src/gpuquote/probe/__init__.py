"""Inspect the machine the probe runs on and check it against a quote (`gpuquote probe`).

Modules: run (commands with time limits), nvidia / amd / host (pure parsers), inventory (collect),
bench (optional bounded measurements), verdict (the 10 checklist items against a quote).
"""

from gpuquote.probe.inventory import collect
from gpuquote.probe.run import CmdResult, RecordedRunner, live_runner, run_cmd
from gpuquote.probe.verdict import ITEMS, compare, exit_code, load_quote

__all__ = ["ITEMS", "CmdResult", "RecordedRunner", "collect", "compare", "exit_code", "live_runner", "load_quote",
           "run_cmd"]
