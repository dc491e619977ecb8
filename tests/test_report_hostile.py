"""Reports render recorded text as text (field review M2): a runbook input, a check message, the
captured output of a command, a case's title, sections, timeline and action items are recorded
by whoever ran or wrote them, and a report is handed to a customer. The "self-contained" HTML
report loads nothing from elsewhere (a real headless browser opens it while a beacon server on
loopback logs every request), no recorded script runs in it, and the markdown report carries no
raw HTML, remote image or link a markdown viewer would act on."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from fabtui.cli import cli

pytestmark = pytest.mark.usefixtures("sim_in_process")

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("FABTUI_REQUIRE_CHROMIUM"),
    reason="needs chromium (apt-get install chromium); CI requires it")


class Beacon:
    """A loopback HTTP server that records every request (a report that loads a remote image or
    follows a link calls it)."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        beacon = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                beacon.requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def beacon() -> Iterator[Beacon]:
    server = Beacon()
    yield server
    server.stop()


def pwn(where: str) -> str:
    return f"document.body.setAttribute('data-pwned','{where}')"


def hostile_runbook(url: str) -> str:
    return f"""---
id: xss-test
title: "XSS <img src=x onerror={pwn('title')}> test"
version: 1
summary: hostile values into every report field
inputs:
  - name: val
    type: string
    required: true
    description: anything
---

# XSS test

## Echo the value {{#echo}}

```sh {{id=echo-it capture="V=(?P<captured>.*)"}}
echo "V={{{{ val }}}}"
```

```check {{id=c1}}
fail if True: check says {{{{ val }}}} and captured {{{{ captured }}}}
ok: fine
```

```check {{id=c2}}
warn if True: ![beacon]({url}/check-img.png) [phish]({url}/phish) <{url}/autolink>
ok: fine
```
"""


def hostile_case(url: str) -> str:
    return f"""---
id: xss-case
title: "Hang <script>{pwn('title')}</script> ![t]({url}/case-title.png)"
tags: [nccl-hang]
status: resolved
---

## Summary
Summary <script>{pwn('summary')}</script>
![sum]({url}/case-summary.png)

<!-- a comment -->
    <script>{pwn('after-comment')}</script>

## Symptom
<img src=x onerror="{pwn('symptom')}">
<iframe src="{url}/case-iframe"></iframe>

## Root cause
Root ![rc]({url}/case-rootcause.png) [details]({url}/phish) <{url}/auto>

[ref]: {url}/case-ref.png
![by reference][ref]

## Resolution
Fixed ![res]({url}/case-resolution.png), see `code <b>kept</b>` and:

```sh
echo "<script>{pwn('fence')}</script>"
```

| port | note |
|---|---|
| Ethernet4 | `x|<script>{pwn('cell')}</script>` ![cell]({url}/case-cell.png) |

## Timeline
- 2026-03-02T03:10Z outage began ![tl]({url}/case-timeline.png)

## Action items
- [ ] replace optic ![ai]({url}/case-action.png)

## Lessons
```
a fence left open <script>{pwn('open-fence')}</script>
"""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory, beacon: Beacon) -> dict[str, Any]:
    """A data dir with a session of the hostile runbook (its input breaks out of backticks)
    and a case folder holding the hostile case."""
    base = tmp_path_factory.mktemp("hostile-reports")
    (base / "rb").mkdir()
    (base / "rb" / "xss-test.md").write_text(hostile_runbook(beacon.url))
    (base / "cases").mkdir()
    (base / "cases" / "xss-case.md").write_text(hostile_case(beacon.url))
    config = base / "fabtui.toml"
    config.write_text(f'data_dir = "{base / "data"}"\nrunbook_dirs = ["{base / "rb"}"]\n'
                      f'case_dirs = ["{base / "cases"}"]\n')
    value = (f"<script>{pwn('input')}</script> x` ![b2]({beacon.url}/input-bt.png) `y "
             f"[[anchor:evil]] <{beacon.url}/input-auto>")
    ran = CliRunner().invoke(cli, ["--config", str(config), "runbook", "run", "xss-test",
                                   "--input", f"val={value}"])
    assert "check says" in ran.output, ran.output
    return {"config": config, "base": base}


def report(hostile: dict[str, Any], *args: str) -> str:
    result = CliRunner().invoke(cli, ["--config", str(hostile["config"]), "report", *args],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def links(html: str) -> list[str]:
    """Every URL an element of `html` links to or loads."""
    return re.findall(r"""<[^>]*?\b(?:src|href)=["']([^"']*)["']""", html)


REPORTS = {"session": ["last"], "session-incident": ["last", "--kind", "incident"],
           "case": ["--case", "xss-case"]}


@needs_chromium
@pytest.mark.parametrize("kind", list(REPORTS))
def test_an_html_report_of_hostile_records_fetches_nothing_and_runs_nothing(
        hostile: dict[str, Any], beacon: Beacon, tmp_path: Path, kind: str) -> None:
    page = tmp_path / f"{kind}.html"
    report(hostile, *REPORTS[kind], "-o", str(page))
    html = page.read_text()
    assert not [u for u in links(html) if not u.startswith(("#", "data:image/svg+xml;base64,"))]
    before = len(beacon.requests)
    browser = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=3000"]
    dom = subprocess.run([*browser, "--dump-dom", page.as_uri()], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert beacon.requests[before:] == []
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]
    # the hostile text is there, shown as text
    text = re.sub(r"<[^>]+>", " ", dom)
    if kind == "case":
        for shown in ("<script>", "![sum](", "<iframe", "[details](", "kept</b>",
                      "a fence left open"):
            assert shown in text.replace("&lt;", "<").replace("&gt;", ">"), shown
        assert "<pre><code class=\"language-sh\">" in dom  # the case's own code stays code
        assert "<table>" in dom  # and its table a table
    else:
        assert "![beacon](" in text and "check says" in text


@pytest.mark.parametrize("kind", list(REPORTS))
def test_a_markdown_report_of_hostile_records_carries_no_markup_a_viewer_acts_on(
        hostile: dict[str, Any], beacon: Beacon, kind: str) -> None:
    """Rendered as a markdown viewer would, with raw HTML on (CommonMark's default)."""
    text = report(hostile, *REPORTS[kind], "--format", "md")
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert not re.search(r"<(script|img|iframe)\b", html), html
    assert not re.search(r"<[a-z]+\s[^>]*\bon[a-z]+=", html), html  # no event handler
    assert [u for u in links(html) if not u.startswith("#")] == []
    if kind == "case":
        assert "## Timeline" in text and "## Action items" in text  # not swallowed by a fence
