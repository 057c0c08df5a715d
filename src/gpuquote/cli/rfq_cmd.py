"""`gpuquote rfq JOB`: the request for quotes to send vendors (Markdown, a YAML quote template, or JSON)."""

from __future__ import annotations

import sys

import typer

from gpuquote.cli.common import print_json
from gpuquote.i18n import t


def register(app: typer.Typer) -> None:
    @app.command("rfq", help=t("rfq.help"))
    def rfq_cmd(
        job: str = typer.Argument(..., help=t("help.rfq.opt.job")),
        gpu: str = typer.Option(None, "--gpu", help=t("help.rfq.opt.gpu")),
        gpus: int = typer.Option(None, "--gpus", help=t("help.rfq.opt.gpus")),
        region: str = typer.Option(None, "--region", help=t("help.rfq.opt.region")),
        currency: str = typer.Option(None, "--currency", help=t("help.rfq.opt.currency")),
        lang: str = typer.Option(None, "--lang", help=t("help.rfq.opt.lang")),
        fmt: str = typer.Option("md", "--format", help=t("help.rfq.opt.format")),
    ) -> None:
        """Write the specification and checklist questions to send vendors, sized from JOB."""
        from gpuquote.service.rfq import rfq_document

        doc = rfq_document(job, fmt=fmt, gpu=gpu, gpus=gpus, region=region, currency=currency, lang=lang)
        if isinstance(doc, dict):
            print_json(doc)
        else:
            sys.stdout.write(doc)
