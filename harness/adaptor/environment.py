"""
What the programs the harness starts may see of its environment.

A conformance run happens in CI, often with real credentials in the
environment, while it runs programs and catalogues other people wrote.  The
rule, per kind of program:

- an adaptor started by a ``cmd:`` target gets the harness's environment
  without the variables that look like credentials (`looks_secret`): it is
  the user's own program and may need toolchain variables no list could
  foresee (``GOPATH``, ``JAVA_HOME``, ``NODE_OPTIONS`` ...);
- the fake CLIs get what the adaptor passes them (the reference pipeline
  passes them the same filtered environment plus the case's ``provider.env``);
- the real CLIs get ``PATH`` and their offline settings only
  (`providers_fake.api.realcli`), and a command they or the reference models
  run gets the CLI's environment, never the harness's
  (`harness.systems.sandbox`).

As a last guard the reports replace the value of every credential-looking
variable of the harness's environment wherever it appears (`scrub`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

#: Words in a variable's name that make it a credential.
_SECRET_WORDS = frozenset(
    {"KEY", "KEYS", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASS"}
    | {"CREDENTIAL", "CREDENTIALS", "AUTH", "COOKIE", "PRIVATE", "APIKEY", "PAT", "DSN"}
)
#: Parts that make a name a credential wherever they stand (``PGPASSWORD``).
_SECRET_PARTS = ("SECRET", "PASSWORD", "TOKEN", "APIKEY", "CREDENTIAL")
#: Values shorter than this are not scrubbed from reports (they would match everywhere).
_SHORTEST_SECRET = 8


def looks_secret(name: str) -> bool:
    """Whether a variable called ``name`` probably holds a credential."""
    upper = name.upper()
    words = set(re.split(r"[^A-Z0-9]+", upper))
    return bool(words & _SECRET_WORDS) or any(part in upper for part in _SECRET_PARTS)


#: A password in a URL's user information (``postgres://user:PASSWORD@host``).
_URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@]*:)([^\s/@]+)(@)")


def holds_credential(name: str, value: str) -> bool:
    """Whether variable ``name`` holds a credential: by its name, or a password in a URL."""
    return looks_secret(name) or _URL_PASSWORD.search(value) is not None


def url_passwords(text: str) -> str:
    """``text`` with the password of every ``scheme://user:password@host`` hidden."""
    return _URL_PASSWORD.sub(r"\1<redacted>\3", text)


def adaptor_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment an adaptor (or a fake it starts) gets: credentials removed."""
    source = os.environ if environ is None else environ
    return {name: value for name, value in source.items() if not holds_credential(name, value)}


def scrub(text: str, environ: Mapping[str, str] | None = None) -> str:
    """
    ``text`` with the value of every credential-looking variable replaced, and
    every password written in a URL.
    """
    source = os.environ if environ is None else environ
    secrets = sorted(
        (
            (value, name)
            for name, value in source.items()
            if holds_credential(name, value) and len(value) >= _SHORTEST_SECRET
        ),
        reverse=True,  # longer values first, so one that contains another goes whole
    )
    for value, name in secrets:
        text = text.replace(value, f"<{name}>")
    return url_passwords(text)
