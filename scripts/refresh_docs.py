"""Regenerate the command outputs quoted in README.md, docs/plan.md and docs/rfq.md from the embedded snapshot.

Each quoted output sits between `<!-- BEGIN:cmd ... -->` and `<!-- END -->` markers; the command after
`BEGIN:` is run (COLUMNS=130, an empty store, so the embedded snapshot answers) and its output replaces the block.
Run: python scripts/refresh_docs.py
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", ROOT / "docs" / "plan.md", ROOT / "docs" / "rfq.md"]
BLOCK = re.compile(r"(<!-- BEGIN:(?P<cmd>[^>]*?) -->\n)(?P<body>.*?)(<!-- END -->)", re.S)


def run(cmd: str) -> str:
    env = dict(os.environ, COLUMNS="130", PYTHONPATH=str(ROOT / "src"), GPUQUOTE_HOME=tempfile.mkdtemp(),
               GPUQUOTE_LANG="en")
    env.pop("GPUQUOTE_DB", None)
    args = shlex.split(cmd)
    assert args[0] == "gpuquote", cmd
    res = subprocess.run([sys.executable, "-m", "gpuquote", *args[1:]], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    out = "\n".join(line.rstrip() for line in (res.stdout + res.stderr).rstrip().splitlines())
    return f"```console\n$ {cmd}\n{out}\n```\n"


def main() -> None:
    for f in FILES:
        text = f.read_text(encoding="utf-8")
        new = BLOCK.sub(lambda m: m.group(1) + run(m.group("cmd").strip()) + m.group(4), text)
        if new != text:
            f.write_text(new, encoding="utf-8")
            print(f"updated {f.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
