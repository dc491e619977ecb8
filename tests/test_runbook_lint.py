"""`fabtui runbook lint`: each rule points at the line to fix; the shipped library is clean."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result

BROKEN = """\
---
id: broken
title: Broken on purpose
summary: every lint rule once
symptoms: [x]
inputs:
  - name: port
    type: port
tests:
  - name: t
    scenario: no-such-scenario
    answers: {no-such-gate: "yes"}
    expect: {path: [start, nowhere]}
---

# Broken

## Start

```sh {id=down}
sudo config interface shutdown {{ port }}
```

```sh {id=quoted tiemout=5}
echo '{{ port }}'
```

```probe {id=p}
probe: switch.nonexistent
target: "{{ port }}"
```

```check {id=c}
fail if undefined_thing > 1: bad
warn if frobnicate(port): odd
ok: fine
```

```decide {id=d}
c.verdict == 'fail' -> missing-step
default -> end
```

## Orphan

```note
never reached
```
"""


def test_every_rule_names_its_line(run: Callable[..., Result],
                                   write: Callable[[str, str], Path]) -> None:
    path = write("broken.md", BROKEN)
    result = run("runbook", "lint", str(path))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()

    def said(line: int, text: str) -> bool:
        return any(f"broken.md:{line}: error:" in out and text in out for out in lines)

    assert said(20, "`config interface shutdown VALUE` config interface shutdown: changes the "
                "switch's configuration: mark the block danger=true"), lines
    assert said(24, "unknown attribute 'tiemout'"), lines
    assert said(24, "inside single quotes cannot be quoted safely"), lines
    assert said(29, "no probe 'switch.nonexistent' in the catalog"), lines
    assert said(34, "'undefined_thing' is not defined"), lines
    assert said(35, "no function 'frobnicate'"), lines
    assert said(40, "no step 'missing-step' to go to"), lines
    assert said(44, "step 'orphan' cannot be reached"), lines
    assert said(10, "no scenario 'no-such-scenario'"), lines
    assert said(10, "no gate or input block 'no-such-gate'"), lines
    assert said(10, "expects step 'nowhere'"), lines


def test_front_matter_and_block_problems_are_located(run: Callable[..., Result],
                                                     write: Callable[[str, str], Path]) -> None:
    path = write("bad.md", """\
---
id: Bad Id
title: x
inputs:
  - name: n
    type: colour
---

# x

## One

```sh {id=x timeout=5
echo
```
""")
    result = run("runbook", "lint", str(path))
    assert result.exit_code == 1
    assert "bad.md:2: error: id:" in result.stdout, result.stdout
    assert "bad.md:6: error: inputs[0].type:" in result.stdout, result.stdout


def test_block_errors(run: Callable[..., Result], write: Callable[[str, str], Path]) -> None:
    path = write("blocks.md", """\
---
id: blocks
title: x
tests: [{name: t, expect: {outcome: ok}}]
---

# x

## One

```sh {id=x timeout=5
echo
```

```check {id=c}
this is not a rule
```

```decide {id=d}
just words
```

```sh {id=c}
echo twice
```
""")
    result = run("runbook", "lint", str(path))
    assert result.exit_code == 1
    out = result.stdout
    assert "blocks.md:11: error: attributes must be in braces" in out, out
    assert "blocks.md:16: error: c: a check rule is" in out, out
    assert "blocks.md:20: error: d: a decide line is" in out, out
    assert "blocks.md:23: error: block id 'c' is used twice (first at line 15)" in out, out


def test_the_shipped_library_is_clean(run: Callable[..., Result]) -> None:
    result = run("runbook", "lint")
    assert result.exit_code == 0, result.stdout
    assert result.stdout == ""
    assert ": 0 errors, 0 warnings" in result.stderr


def test_a_block_cannot_read_what_its_own_set_defines(run: Callable[..., Result],
                                                      write: Callable[[str, str], Path]) -> None:
    path = write("own.md", """\
---
id: own
title: x
tests: [{name: t, at: 10m20s, expect: {outcome: ok}}, {name: u, at: soon}]
---

# x

## One

```check {id=c set="hits=3"}
fail if hits > 2: too many
ok: fine
```
""")
    result = run("runbook", "lint", str(path))
    assert "own.md:11: error: c: uses 'hits', which only its own `set` defines" in \
        result.stdout, result.stdout
    assert "own.md:4: error: test 'u': at: 'soon' is not a duration" in result.stdout
    assert "test 't'" not in result.stdout


def test_a_hand_over_must_carry_what_its_runbook_requires(
        run: Callable[..., Result], write: Callable[[str, str], Path]) -> None:
    """optic-replacement requires `port`: a hand-over to it from a session that never holds
    `port` as a value prints `fabtui runbook run optic-replacement --handed-over-from ...`,
    which fails `--input: port: required`. A block named `port` does not carry it (its
    result is a table); a `set` does."""
    def book(name: str, block: str) -> Path:
        return write(f"{name}.md", f"""\
---
id: {name}
title: x
---

# x

## One

{block}

```decide
default -> runbook:optic-replacement
```
""")

    warning = ("hands over to runbook optic-replacement, which requires input 'port', and "
               "nothing here sets 'port' as a value")
    for name, block in [("bare", "```note\nno port\n```"),
                        ("table", "```probe {id=port}\nprobe: switch.dom\ntarget: "
                                  "leaf-g00-r3:Ethernet16\n```")]:
        path = book(name, block)
        line = path.read_text().splitlines().index("default -> runbook:optic-replacement") + 1
        result = run("runbook", "lint", str(path))
        assert f"{name}.md:{line}: warning: one-2: {warning}" in result.stdout, result.stdout
    result = run("runbook", "lint", str(book("carried", '```note {set="port=\'leaf-g00-r3:'
                                                        'Ethernet16\'"}\nport\n```')))
    assert warning not in result.stdout, result.stdout
