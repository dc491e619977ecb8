"""Turning a credentials reference into a secret, at the last moment, and keeping it out of logs.

The topology holds references only (`env:LEAF_PASSWORD`, `keyring:leaf-admin`, `ssh-agent`, ...).
A secret is resolved when a transport needs to answer a password prompt, used once, and never put
into a result, a journal or a message; `Redactor` scrubs it from any text that might echo it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

KEY_BASED = ("ssh-agent", "none")


class CredentialError(Exception):
    """A reference that cannot be resolved, with a message that says how to fix it."""


def is_password(reference: str | None) -> bool:
    """True when the reference names a password (as opposed to key-based login)."""
    if reference is None or reference in KEY_BASED:
        return False
    return not reference.startswith("ssh-key:")


def identity_file(reference: str | None) -> Path | None:
    """The private key file an `ssh-key:PATH` reference names."""
    if reference is not None and reference.startswith("ssh-key:"):
        return Path(reference.split(":", 1)[1]).expanduser()
    return None


def resolve(reference: str) -> str:
    """The secret a password reference names. Raises `CredentialError` with a fix."""
    scheme, _, name = reference.partition(":")
    if scheme == "env":
        value = os.environ.get(name)
        if not value:
            raise CredentialError(f"environment variable {name} is not set (credentials "
                                  f"{reference})")
        return value
    if scheme == "file":
        path = Path(name).expanduser()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise CredentialError(f"cannot read {path}: {exc.strerror}") from None
        if not lines or not lines[0]:
            raise CredentialError(f"{path} is empty")
        return lines[0]
    if scheme == "keyring":
        return _keyring(name)
    if scheme == "pass":
        return _command(["pass", "show", name], reference)
    if scheme == "vault":
        secret_path, _, field = name.partition("#")
        return _command(["vault", "kv", "get", f"-field={field or 'password'}", secret_path],
                        reference)
    raise CredentialError(f"{reference} is not a password reference")


def _keyring(name: str) -> str:
    try:
        import keyring  # type: ignore[import-not-found]
    except ImportError:
        raise CredentialError("keyring references need the `keyring` package "
                              "(pip install keyring)") from None
    value = keyring.get_password("fabtui", name)
    if not value:
        raise CredentialError(f"no secret stored in the keyring under fabtui/{name}")
    return str(value)


def _command(argv: list[str], reference: str) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except FileNotFoundError:
        raise CredentialError(f"{reference}: the `{argv[0]}` command is not installed") from None
    except subprocess.TimeoutExpired:
        raise CredentialError(f"{reference}: `{argv[0]}` did not answer in 30s") from None
    first = done.stdout.splitlines()[0] if done.stdout else ""
    if done.returncode != 0 or not first:
        raise CredentialError(f"{reference}: `{argv[0]}` found no secret")
    return first


class Redactor:
    """Replaces known secrets in text with `****`."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()

    def add(self, secret: str) -> None:
        """Remember a secret (short ones too: a 4-character PIN is still a secret)."""
        if secret:
            self._secrets.add(secret)

    def __call__(self, text: str) -> str:
        for secret in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(secret, "****")
        return text
