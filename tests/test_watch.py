"""`gpuquote watch`: rules in the store, a real webhook receiver and SMTP server on 127.0.0.1, once per crossing."""

from __future__ import annotations

import json
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import ROOT

LORA = str(ROOT / "examples" / "jobs" / "lora-70b.yaml")
QUOTE = """quotes:
  - id: {id}
    vendor: Test IDC
    gpu: A100 80GB SXM4
    gpu_count: 8
    form: node_rental
    exclusive: true
    intra_node: nvswitch
    cpu: {{model: "2x AMD EPYC 7763", cores: 128}}
    ram_gb: 2048
    nvme: {{capacity_tb: 15.36}}
    network: {{kind: ib, gbps_per_node: 1600}}
    region: test-1
    price: {{amount: {amount}, currency: USD, per: hour}}
    billing: minute
    covers: [power, hosting, storage, egress]
"""


class Receiver:
    """A webhook endpoint on 127.0.0.1 that records every POST body."""

    def __init__(self, status: int = 200):
        self.bodies: list[dict] = []
        self.status = status
        outer = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                n = int(self.headers.get("content-length", 0))
                outer.bodies.append(json.loads(self.rfile.read(n)))
                self.send_response(outer.status)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _quote_file(tmp_path, qid: str, amount: float):
    p = tmp_path / f"{qid}.yaml"
    p.write_text(QUOTE.format(id=qid, amount=amount), encoding="utf-8")
    return str(p)


def _list(cli) -> dict:
    res = cli("watch", "list", "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.mark.db_backends
@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_offers_rule_posts_once_with_the_new_offer_id(cli, tmp_path, db_backend):
    with Receiver() as hook:
        res = cli("watch", "add", "a100-under-1", "--offers", "--gpu", "a100-80gb", "--below", "1.0",
                  "--notify", f"webhook:{hook.url}", "--json")
        assert res.returncode == 0, res.stderr
        base = json.loads(res.stdout)["baseline"]
        assert base["count"] >= 1  # the shipped catalog already has A100 80GB offers under 1 USD: not notified
        run0 = cli("watch", "run", "--json")
        assert run0.returncode == 0, run0.stderr
        assert hook.bodies == [] and json.loads(run0.stdout)["notified"] == 0
        # 8 GPUs at 4 USD per node-hour = 0.5 USD per GPU-hour: a new offer below the threshold
        imp = cli("import", "quotes", _quote_file(tmp_path, "idc-a100-cheap", 4.0))
        assert imp.returncode == 0, imp.stderr
        run1 = cli("watch", "run", "--json")
        assert run1.returncode == 0, run1.stderr
        assert len(hook.bodies) == 1
        body = hook.bodies[0]
        assert body["offer_ids"] == ["idc-a100-cheap"]
        assert body["rule"]["name"] == "a100-under-1" and body["rule"]["below"] == 1.0
        assert body["event"] == "price_below" and body["unit"] == "per_gpu_hour"
        offer = body["offers"][0]
        assert offer["offer_id"] == "idc-a100-cheap" and abs(offer["usd_per_gpu_hour"] - 0.5) < 1e-9
        assert offer["old_usd_per_gpu_hour"] is None
        assert abs(body["old"]["value_usd"] - base["value_usd"]) < 1e-9
        assert body["new"]["value_usd"] == min(base["value_usd"], 0.5)
        assert "/offers?gpu=a100-80gb" in body["links"]["page"]
        # a second run sends nothing: the rule remembers what it sent
        run2 = cli("watch", "run", "--json")
        assert run2.returncode == 0, run2.stderr
        assert len(hook.bodies) == 1 and json.loads(run2.stdout)["notified"] == 0
    w = _list(cli)["watches"][0]
    assert w["last_notified_at"] and w["last_event"]["event"] == "notified"
    assert w["last_event"]["offer_ids"] == ["idc-a100-cheap"]
    hist = json.loads(cli("watch", "history", "a100-under-1", "--json").stdout)["events"]
    assert [e["event"] for e in hist] == ["notified", "baseline"]


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_failed_delivery_is_retried_on_the_next_run(cli, tmp_path):
    with Receiver(status=500) as hook:
        assert cli("watch", "add", "w", "--offers", "--gpu", "a100-80gb", "--below", "1",
                   "--notify", f"webhook:{hook.url}").returncode == 0
        assert cli("import", "quotes", _quote_file(tmp_path, "q-cheap", 4.0)).returncode == 0
        res = cli("watch", "run")
        assert res.returncode == 1 and "HTTP 500" in res.stderr
        assert len(hook.bodies) == 1
        hook.status = 200
        assert cli("watch", "run").returncode == 0
        assert len(hook.bodies) == 2 and hook.bodies[1]["offer_ids"] == ["q-cheap"]
        assert cli("watch", "run").returncode == 0 and len(hook.bodies) == 2


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_plan_rule_fires_when_an_import_lowers_the_best_total_cost(cli, tmp_path):
    before = json.loads(cli("plan", LORA, "--json", "--top", "1").stdout)["rows"][0]["total_cost_usd"]
    threshold = round(before * 0.8, 2)
    with Receiver() as hook:
        res = cli("watch", "add", "lora70", "--plan", LORA, "--below", str(threshold), "--notify",
                  f"webhook:{hook.url}", "--json")
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["baseline"]["below"] is False
        # an import that does not beat the threshold changes nothing
        assert cli("import", "quotes", _quote_file(tmp_path, "idc-dear", 80.0)).returncode == 0
        assert cli("watch", "run").returncode == 0 and hook.bodies == []
        # a whole 8x A100 node for 1 USD/hour: ~52 h x 1 USD, far below the threshold
        assert cli("import", "quotes", _quote_file(tmp_path, "idc-bargain", 1.0)).returncode == 0
        run = cli("watch", "run", "--json")
        assert run.returncode == 0, run.stderr
        assert len(hook.bodies) == 1
        body = hook.bodies[0]
        after = json.loads(cli("plan", LORA, "--json", "--top", "1").stdout)["rows"][0]
        assert after["offer_id"] == "idc-bargain"
        assert body["event"] == "plan_below" and body["offer_ids"] == ["idc-bargain"]
        assert abs(body["old"]["value_usd"] - before) < 0.01
        assert abs(body["new"]["value_usd"] - after["total_cost_usd"]) < 0.01 and body["new"]["value_usd"] < threshold
        assert cli("watch", "run").returncode == 0 and len(hook.bodies) == 1


class _SMTP(socketserver.StreamRequestHandler):
    """Just enough SMTP (RFC 5321) to accept one message: EHLO, MAIL, RCPT, DATA, QUIT."""

    def handle(self):
        def say(line: str) -> None:
            self.wfile.write((line + "\r\n").encode())

        say("220 localhost test SMTP")
        msg: dict = {"rcpt": []}
        while True:
            line = self.rfile.readline().decode()
            if not line:
                return
            cmd = line.strip().upper()
            if cmd.startswith(("EHLO", "HELO")):
                say("250 localhost")
            elif cmd.startswith("MAIL FROM"):
                msg["from"] = line.split(":", 1)[1].strip()
                say("250 OK")
            elif cmd.startswith("RCPT TO"):
                msg["rcpt"].append(line.split(":", 1)[1].strip())
                say("250 OK")
            elif cmd == "DATA":
                say("354 end with .")
                data = []
                while (ln := self.rfile.readline().decode()) not in (".\r\n", ".\n", ""):
                    data.append(ln)
                msg["data"] = "".join(data)
                self.server.messages.append(msg)
                say("250 queued")
            elif cmd == "QUIT":
                say("221 bye")
                return
            else:
                say("250 OK")


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_email_notification_through_smtp_settings_from_the_environment(cli, tmp_path):
    srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _SMTP)
    srv.messages = []
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        env = {"GPUQUOTE_SMTP_HOST": "127.0.0.1", "GPUQUOTE_SMTP_PORT": str(srv.server_address[1]),
               "GPUQUOTE_SMTP_FROM": "gpuquote@example.org"}
        assert cli("watch", "add", "mail", "--offers", "--gpu", "a100-80gb", "--below", "1",
                   "--notify", "email:buyer@example.org").returncode == 0
        assert cli("import", "quotes", _quote_file(tmp_path, "mail-cheap", 4.0)).returncode == 0
        res = cli("watch", "run", env=env)
        assert res.returncode == 0, res.stderr
        assert len(srv.messages) == 1
        m = srv.messages[0]
        assert m["rcpt"] == ["<buyer@example.org>"] and "gpuquote@example.org" in m["from"]
        assert "mail-cheap" in m["data"] and "Subject: gpuquote watch 'mail'" in m["data"]
    finally:
        srv.shutdown()
        srv.server_close()


def test_email_without_smtp_host_fails_and_stays_unsent(cli, tmp_path):
    assert cli("watch", "add", "mail", "--offers", "--gpu", "a100-80gb", "--below", "1",
               "--notify", "email:buyer@example.org").returncode == 0
    assert cli("import", "quotes", _quote_file(tmp_path, "c1", 4.0)).returncode == 0
    res = cli("watch", "run", env={"GPUQUOTE_SMTP_HOST": ""})
    assert res.returncode == 1 and "GPUQUOTE_SMTP_HOST" in res.stderr
    assert _list(cli)["watches"][0]["last_event"]["event"] == "failed"


def test_stdout_rule_prints_the_notification(cli, tmp_path):
    assert cli("watch", "add", "s", "--offers", "--gpu", "a100-80gb", "--below", "1").returncode == 0
    assert cli("import", "quotes", _quote_file(tmp_path, "stdout-cheap", 4.0)).returncode == 0
    res = cli("watch", "run")
    assert res.returncode == 0, res.stderr
    assert "stdout-cheap" in res.stdout and "1 notified" in res.stdout
    assert "1 notified" not in cli("watch", "run").stdout


@pytest.mark.db_backends
def test_bad_input_is_one_line_exit_2_and_nothing_stored(cli, db_backend):
    cases = [
        (["--offers", "--colour", "red", "--below", "1"], "--colour"),  # an unknown filter
        (["--offers", "--gpu", "a100-999gb", "--below", "1"], "gpu"),  # a filter value that names no GPU
        (["--offers", "--gpu", "a100", "--below", "1", "--notify", "webhook:ftp://example.org/x"], "http(s)"),
        (["--offers", "--gpu", "a100", "--below", "1", "--notify", "webhook:not a url"], "http(s)"),
        (["--offers", "--gpu", "a100", "--below", "-1"], "--below"),  # a negative threshold
        (["--offers", "--gpu", "a100", "--below", "1", "--notify", "pager:42"], "--notify"),
        (["--offers", "--gpu", "a100", "--below", "1", "--currency", "XYZ"], "currency"),
        (["--offers", "--plan", LORA, "--below", "1"], "exactly one"),
        (["--plan", LORA, "--below", "1", "--available"], "--available"),
        (["--offers", "--gpu", "a100"], "--below"),
    ]
    for args, needle in cases:
        res = cli("watch", "add", "bad", *args)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert res.stderr.strip().count("\n") == 0 and needle in res.stderr, (args, res.stderr)
    assert _list(cli) == {"watches": [], "count": 0}
    assert cli("watch", "add", "ok", "--offers", "--gpu", "a100", "--below", "1").returncode == 0
    dup = cli("watch", "add", "ok", "--offers", "--gpu", "a100", "--below", "2")
    assert dup.returncode == 2 and "exists" in dup.stderr
    assert [w["below"] for w in _list(cli)["watches"]] == [1.0]
    gone = cli("watch", "remove", "nope")
    assert gone.returncode == 2 and "no watch named 'nope'" in gone.stderr
    assert cli("watch", "remove", "ok").returncode == 0 and _list(cli)["count"] == 0


def test_unknown_filter_key_through_the_service_is_bad_input():
    from gpuquote.errors import BadInput
    from gpuquote.service.watch import add_watch, list_watches

    with pytest.raises(BadInput, match="filter 'colour' is not one of"):
        add_watch("x", offers={"colour": "red"}, below=1.0)
    assert list_watches()["count"] == 0


def test_available_again_rule(cli, tmp_path):
    """vast reports whether a machine is rented: a rule on availability fires once when one comes back."""
    bundles = json.loads((ROOT / "tests" / "fixtures" / "vast" / "bundles.json").read_text(encoding="utf-8"))

    def snapshot(rented: bool) -> None:
        for o in bundles["offers"]:
            if o["id"] == 12345682:  # 1x A100 SXM4 at 0.99 USD/h
                o["rented"] = rented
        p = tmp_path / f"vast-{rented}.json"
        p.write_text(json.dumps(bundles), encoding="utf-8")
        res = cli("import", "vast", str(p))
        assert res.returncode == 0, res.stderr

    snapshot(rented=True)
    res = cli("watch", "add", "back", "--offers", "--provider", "vast", "--gpu", "a100", "--available", "--json")
    assert res.returncode == 0, res.stderr
    assert all("12345682" not in i for i in json.loads(res.stdout)["baseline"]["offer_ids"])
    assert json.loads(cli("watch", "run", "--json").stdout)["notified"] == 0
    snapshot(rented=False)
    out = json.loads(cli("watch", "run", "--json").stdout)
    assert out["notified"] == 1
    r = out["results"][0]
    assert [i for i in r["crossed"] if "12345682" in i] == r["crossed"] and len(r["crossed"]) >= 1
    assert r["notification"]["event"] == "available_again"
    assert r["notification"]["offers"][0]["available"] is True
    assert json.loads(cli("watch", "run", "--json").stdout)["notified"] == 0
    snapshot(rented=True)
    assert json.loads(cli("watch", "run", "--json").stdout)["notified"] == 0
    snapshot(rented=False)
    assert json.loads(cli("watch", "run", "--json").stdout)["notified"] == 1


def test_an_offer_that_falls_under_the_threshold_reports_the_price_it_came_from(tmp_path):
    from gpuquote.service.quotes import import_quotes
    from gpuquote.service.watch import add_watch, run_watches

    p = tmp_path / "idc.yaml"
    p.write_text(QUOTE.format(id="idc-x", amount=16.0), encoding="utf-8")  # 2 USD per GPU-hour
    import_quotes(p)
    add_watch("fall", offers={"gpu": "a100-80gb-sxm4", "region": "test"}, below=1.0)
    assert run_watches()["notified"] == 0
    p.write_text(QUOTE.format(id="idc-x", amount=6.0), encoding="utf-8")  # the same offer at 0.75
    import_quotes(p)
    res = run_watches()["results"][0]
    assert res["crossed"] == ["idc-x"]
    o = res["notification"]["offers"][0]
    assert o["old_usd_per_gpu_hour"] == 2.0 and o["usd_per_gpu_hour"] == 0.75
    assert res["notification"]["old"]["value_usd"] is None and res["notification"]["new"]["value_usd"] == 0.75
    assert run_watches()["notified"] == 0


def test_refresh_runs_the_watches_after_a_good_snapshot(cli, tmp_path):
    """`refresh --from-archive` re-parses the latest archived vast response: a good snapshot, then `watch run`."""
    bundles = json.loads((ROOT / "tests" / "fixtures" / "vast" / "bundles.json").read_text(encoding="utf-8"))
    first = tmp_path / "vast-1.json"
    first.write_text(json.dumps(bundles), encoding="utf-8")
    assert cli("import", "vast", str(first)).returncode == 0
    assert cli("watch", "add", "h100", "--offers", "--provider", "vast", "--gpu", "h100", "--below",
               "1.5").returncode == 0
    for o in bundles["offers"]:
        if o["id"] == 12345679:  # 1x H100 PCIe at 2.41 USD/h, now 1.2
            o["dph_total"] = 1.2
    second = tmp_path / "vast-2.json"
    second.write_text(json.dumps(bundles), encoding="utf-8")
    assert cli("import", "vast", str(second)).returncode == 0  # an import does not run the watches
    res = cli("refresh", "--source", "vast", "--from-archive", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["results"][0]["status"] == "good"
    assert out["watch"]["notified"] == 1 and any("12345679" in i for i in out["watch"]["results"][0]["crossed"])
    again = json.loads(cli("refresh", "--source", "vast", "--from-archive", "--json").stdout)
    assert again["watch"]["notified"] == 0
    skipped = json.loads(cli("refresh", "--source", "vast", "--from-archive", "--no-watch", "--json").stdout)
    assert "watch" not in skipped


def test_threshold_in_another_currency_is_converted_at_the_dated_rate():
    from gpuquote.offers.currency import from_usd, to_usd
    from gpuquote.service.watch import add_watch

    out = add_watch("cny", offers={"gpu": "a100-80gb"}, below=7.0, currency="CNY")
    limit_usd = to_usd(7.0, "CNY")[0]
    base = out["baseline"]
    assert base["value_usd"] < limit_usd and abs(base["value"] - from_usd(base["value_usd"], "CNY")) < 1e-6
    usd = add_watch("usd", offers={"gpu": "a100-80gb"}, below=round(limit_usd, 6))
    assert usd["baseline"]["count"] == base["count"]


class SlowReceiver(Receiver):
    """A webhook that takes its time to answer: two runs at once overlap inside their deliveries."""

    def __init__(self, delay_s: float):
        super().__init__()
        handler = self.server.RequestHandlerClass
        orig = handler.do_POST

        def slow(h):
            time.sleep(delay_s)
            orig(h)

        handler.do_POST = slow


@pytest.mark.db_backends
@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_two_runs_at_once_send_each_crossing_once(cli, tmp_path, db_backend):
    import os
    import subprocess
    import sys

    from conftest import SRC

    names = [f"w{i}" for i in range(4)]
    with SlowReceiver(0.4) as hook:
        for n in names:
            assert cli("watch", "add", n, "--offers", "--gpu", "a100-80gb", "--below", "1",
                       "--notify", f"webhook:{hook.url}").returncode == 0
        assert cli("import", "quotes", _quote_file(tmp_path, "q-cheap", 4.0)).returncode == 0
        env = dict(os.environ, PYTHONPATH=str(SRC))
        runs = [subprocess.Popen([sys.executable, "-m", "gpuquote", "watch", "run", "--json"], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in runs]
        assert all(p.returncode == 0 for p in runs), [o[1] for o in outs]
        assert sorted(b["rule"]["name"] for b in hook.bodies) == names, "each rule's crossing sent exactly once"
        results = [r for o in outs for r in json.loads(o[0])["results"]]
        for n in names:
            mine = sorted(r["status"] for r in results if r["name"] == n)
            assert mine in (["notified", "skipped"], ["notified", "unchanged"]), (n, mine)
        assert cli("watch", "run", "--json").returncode == 0 and len(hook.bodies) == 4
    hist = json.loads(cli("watch", "history", "w0", "--json").stdout)["events"]
    assert [e["event"] for e in hist] == ["notified", "baseline"]


def test_a_stale_rule_loses_the_claim():
    from gpuquote.service.watch import _store, add_watch
    from gpuquote.store.watches import claim, list_rules

    add_watch("cheap", offers={"gpu": "a100-80gb"}, below=1.0)
    engine = _store(True)
    first, second = list_rules(engine), list_rules(engine)  # two runs read the rule before either writes
    won = claim(engine, first[0], at="2026-12-01T00:00:00+00:00", state={"offers": {"x": 0.5}}, value_usd=0.5)
    assert won is not None
    lost = claim(engine, second[0], at="2026-12-01T00:00:01+00:00", state={"offers": {"y": 0.4}}, value_usd=0.4)
    assert lost is None
    assert list_rules(engine)[0]["state"] == {"offers": {"x": 0.5}}, "the winner's state stands"
