"""
A2A artifacts in the two wire shapes a service may publish.

A2A v0.3 discriminates parts by ``kind`` (``text`` / ``data``) and has no
media type on a data part, so a service that labels its structured part
``application/json`` puts the label in the part's ``metadata``.  A2A v1.0
dropped ``kind``: the member present (``text`` or ``data``) is the
discriminator, and every part may carry ``mediaType``.  A scenario chooses
the shape; the reference service builds it here, from one registry of
shapes rather than a condition per version.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

#: The media type of a structured result part.
JSON_MEDIA_TYPE: Final = "application/json"


class PartShape(Protocol):
    """How one A2A version writes a text part and a JSON data part."""

    def text(self, text: str) -> dict[str, Any]: ...

    def data(self, value: Any) -> dict[str, Any]: ...


class _V03:
    def text(self, text: str) -> dict[str, Any]:
        return {"kind": "text", "text": text}

    def data(self, value: Any) -> dict[str, Any]:
        return {"kind": "data", "data": value, "metadata": {"mimeType": JSON_MEDIA_TYPE}}


class _V1:
    def text(self, text: str) -> dict[str, Any]:
        return {"text": text}

    def data(self, value: Any) -> dict[str, Any]:
        return {"data": value, "mediaType": JSON_MEDIA_TYPE}


#: A2A version → its part shapes.  The scenario schema lists the same names.
SHAPES: Final[dict[str, PartShape]] = {"v0.3": _V03(), "v1": _V1()}


def artifact(
    version: str, artifact_id: str, name: str, parts: list[dict[str, Any]]
) -> dict[str, Any]:
    """An artifact; its keys are the same in both versions (v1 protojson is camelCase)."""
    assert version in SHAPES, version
    return {"artifactId": artifact_id, "name": name, "parts": parts}
