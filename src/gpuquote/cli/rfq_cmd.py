"""`gpuquote rfq JOB`: the request for quotes to send vendors (Markdown, a YAML quote template, or JSON)."""

from __future__ import annotations

import sys

import typer

from gpuquote.cli.common import print_json
from gpuquote.i18n import t


def register(app: typer.Typer) -> None:
    @app.command("rfq", help=t("rfq.help"))
    def rfq_cmd(
        job: str = typer.Argument(..., help="A job file (YAML/JSON, DESIGN.md section 3): examples/jobs/*.yaml"),
        gpu: str = typer.Option(None, "--gpu", help="Request this GPU (else the job's hardware, else the plan's)."),
        gpus: int = typer.Option(None, "--gpus", help="Request this many GPUs in all."),
        region: str = typer.Option(None, "--region", help="The region or data centre to ask for."),
        currency: str = typer.Option(None, "--currency", help="Currency of the template's price (CNY for zh-CN, "
                                     "else USD)."),
        lang: str = typer.Option(None, "--lang", help="en | zh-CN (default: GPUQUOTE_LANG / LANG)."),
        fmt: str = typer.Option("md", "--format", help="md | yaml (a quote-file template) | json"),
    ) -> None:
        """Write the specification and checklist questions to send vendors, sized from JOB."""
        from gpuquote.service.rfq import rfq_document

        doc = rfq_document(job, fmt=fmt, gpu=gpu, gpus=gpus, region=region, currency=currency, lang=lang)
        if isinstance(doc, dict):
            print_json(doc)
        else:
            sys.stdout.write(doc)
