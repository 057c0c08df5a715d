"""A typer-free start for the everyday `gpuquote offers ...`: Typer (and the pydantic it now imports) costs
more than the query itself on a cold start. Only plain option lists are taken here; anything else (--help, an
unknown or malformed option, a value that does not convert) returns None and the full Typer app answers, with
its own messages. The options are the command's own (`offers_cmd.OPTIONS` / `FLAGS`).
"""

from __future__ import annotations


def parse_offers(argv: list[str]) -> dict | None:
    """The keyword arguments of `offers_cmd.run` for argv (`offers ...`), or None to let Typer parse it."""
    from gpuquote.cli.offers_cmd import FLAGS, OPTIONS

    if not argv or argv[0] != "offers":
        return None
    kw: dict = {}
    seen: set[str] = set()
    i = 1
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in FLAGS and not eq:
            key, v = FLAGS[name]
            kw[key] = v
            i += 1
            continue
        if name not in OPTIONS:
            return None
        key, kind = OPTIONS[name]
        if not eq:
            if i + 1 >= len(argv) or argv[i + 1].startswith("--"):
                return None
            value = argv[i + 1]
            i += 2
        else:
            i += 1
        if kind is list:
            kw.setdefault(key, []).append(value)
            continue
        if name in seen:
            return None  # click keeps the last; let it
        seen.add(name)
        try:
            kw[key] = kind(value) if kind is not str else value
        except ValueError:
            return None
    return kw


def try_offers(argv: list[str]) -> bool:
    """Run `gpuquote offers` without Typer when the arguments are plain; False: not handled here."""
    kw = parse_offers(argv)
    if kw is None:
        return False
    from gpuquote.cli.offers_cmd import run

    run(**kw)
    return True
