"""Where a watch sends what crossed: a webhook (JSON POST), an email (SMTP), or stdout.

Targets are written `webhook:https://...`, `email:ops@example.com` or `stdout`. SMTP settings come
from the environment only (never the store): GPUQUOTE_SMTP_HOST, GPUQUOTE_SMTP_PORT (25),
GPUQUOTE_SMTP_USER / GPUQUOTE_SMTP_PASSWORD, GPUQUOTE_SMTP_FROM, GPUQUOTE_SMTP_STARTTLS=1,
GPUQUOTE_SMTP_SSL=1.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from gpuquote.errors import BadInput
from gpuquote.i18n import Msg

KINDS = ("webhook", "email", "stdout")
ACCEPTED = ["webhook:http(s)://HOST/PATH", "email:ADDRESS", "stdout"]
EMAIL_RE = re.compile(r"^[^@\s:]+@[^@\s:]+\.[^@\s:]+$")
TIMEOUT_S = 10.0


class DeliveryError(Exception):
    """A notification that did not arrive (network error, HTTP status, SMTP refusal)."""


def parse_target(raw: str | None) -> tuple[str, str]:
    """`webhook:URL` | `email:ADDR` | `stdout` -> (kind, target); BadInput naming the field otherwise."""
    s = (raw or "stdout").strip()
    if s == "stdout":
        return "stdout", ""
    kind, _, target = s.partition(":")
    kind = kind.lower()
    if kind == "webhook":
        u = urlsplit(target)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise BadInput(f"--notify: webhook URL '{target}' is not an http(s) URL with a host",
                           field="notify", accepted=ACCEPTED)
        return "webhook", target
    if kind == "email":
        if not EMAIL_RE.match(target):
            raise BadInput(f"--notify: '{target}' is not an email address", field="notify", accepted=ACCEPTED)
        return "email", target
    raise BadInput(Msg("err.not_one_of", field="--notify",
                       value=s, accepted=", ".join(ACCEPTED)), field="notify", accepted=ACCEPTED)


def send(target: str, payload: dict, *, env: Mapping[str, str] | None = None) -> str:
    """Deliver one notification; returns how it went (a short text); DeliveryError when it did not arrive."""
    kind, where = parse_target(target)
    if kind == "webhook":
        return _webhook(where, payload)
    if kind == "email":
        return _email(where, payload, os.environ if env is None else env)
    return "stdout"


def _webhook(url: str, payload: dict) -> str:
    import httpx

    try:
        r = httpx.post(url, content=json.dumps(payload, default=str).encode("utf-8"), timeout=TIMEOUT_S,
                       headers={"content-type": "application/json", "user-agent": "gpuquote-watch"})
    except httpx.HTTPError as e:
        raise DeliveryError(f"webhook {url}: {type(e).__name__}: {e}") from None
    if not 200 <= r.status_code < 300:
        raise DeliveryError(f"webhook {url}: HTTP {r.status_code}")
    return f"webhook HTTP {r.status_code}"


def _email(to: str, payload: dict, env: Mapping[str, str]) -> str:
    import smtplib
    from email.message import EmailMessage

    host = env.get("GPUQUOTE_SMTP_HOST", "").strip()
    if not host:
        raise DeliveryError("email: GPUQUOTE_SMTP_HOST is not set (SMTP settings come from the environment)")
    try:
        port = int(env.get("GPUQUOTE_SMTP_PORT", "") or (465 if env.get("GPUQUOTE_SMTP_SSL") == "1" else 25))
    except ValueError:
        raise DeliveryError("email: GPUQUOTE_SMTP_PORT is not a port number") from None
    msg = EmailMessage()
    msg["Subject"] = payload.get("subject") or "gpuquote watch"
    msg["From"] = env.get("GPUQUOTE_SMTP_FROM") or env.get("GPUQUOTE_SMTP_USER") or "gpuquote@localhost"
    msg["To"] = to
    msg.set_content((payload.get("message") or "") + "\n\n" + json.dumps(payload, indent=2, default=str,
                                                                         ensure_ascii=False))
    try:
        cls = smtplib.SMTP_SSL if env.get("GPUQUOTE_SMTP_SSL") == "1" else smtplib.SMTP
        with cls(host, port, timeout=TIMEOUT_S) as s:
            if env.get("GPUQUOTE_SMTP_STARTTLS") == "1":
                s.starttls()
            if env.get("GPUQUOTE_SMTP_USER"):
                s.login(env["GPUQUOTE_SMTP_USER"], env.get("GPUQUOTE_SMTP_PASSWORD", ""))
            s.send_message(msg)
    except (OSError, smtplib.SMTPException) as e:
        raise DeliveryError(f"email {to} via {host}:{port}: {type(e).__name__}: {e}") from None
    return f"email via {host}:{port}"
