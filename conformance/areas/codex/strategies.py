"""Strategies for the values a Codex run is made of: turn.error values, httpStatusCode forms,
answer texts and stderr cut into chunks, built from spec/codex.yaml.

Each generated value carries its own expected reading (a wire form from table `variants` carries
its variant, a form from table `http_status_forms` carries the status printed), so the runs built
from them (conformance/areas/codex/runs.py) know what to expect without restating a rule.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from conformance.areas.codex.scenarios import Json, turn_error
from conformance.areas.texts import any_text

MISSING = ...  # a key left out (the builders' convention)


@dataclass(frozen=True)
class ErrorInfo:
    """A turn.error value and the category and HTTP status the spec reads from it."""

    error: Any  # turn.error, or ... for a missing key
    category: str
    http_status: int | None
    family: str


def http_forms(spec: Any) -> st.SearchStrategy[tuple[Any, int | None]]:
    """An httpStatusCode value (``...`` for a missing key) and the printed status."""
    rows = spec.table("codex", "http_status_forms").rows
    tabled = st.sampled_from([(r["value"] if r["present"] else MISSING, r["printed"]) for r in rows])
    return st.one_of(
        tabled,
        st.integers(0, 65535).map(lambda n: (n, n)),
        st.integers(0, 65535).map(lambda n: (float(n), n)),
        st.one_of(st.integers(max_value=-1), st.integers(min_value=65536)).map(lambda n: (n, None)),
        st.floats(-1e6, 1e6).filter(lambda f: not f.is_integer()).map(lambda f: (f, None)),
        st.booleans().map(lambda b: (b, None)),
        st.integers(0, 65535).map(lambda n: (str(n), None)),
        st.just((None, None)),
        st.just((MISSING, None)),
    )


def _detail_extras() -> st.SearchStrategy[Json]:
    """Extra keys in a known variant's detail (never read, CDX-005)."""
    return st.dictionaries(st.sampled_from(["url", "message", "retryAfter", "data"]), any_text(max_size=8), max_size=2)


_JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | any_text(max_size=8),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(any_text(max_size=6), inner, max_size=2),
    max_leaves=4,
)


@st.composite
def unread_details(draw: st.DrawFn, spec: Any, variant: str) -> tuple[Json, int | None]:
    """A detail of object variant ``variant`` with at least one key the mapping never reads
    (CDX-005: any name, any JSON value; turnKind included), and the HTTP status the spec prints
    for it: that of its httpStatusCode form for the four connection and stream variants, else none."""
    http_variants = set(spec.vocabulary("codex.http_status_variant").values)
    named = st.sampled_from(["url", "message", "retryAfter", "turnKind", "data", "status", "code"])
    names = named | any_text(max_size=8)
    keys = names.filter(lambda k: variant not in http_variants or k != "httpStatusCode")
    detail: Json = draw(st.dictionaries(keys, _JSON_VALUES, min_size=1, max_size=3))
    printed = None
    if variant in http_variants:
        value, printed = draw(http_forms(spec))
        if value is not MISSING:
            detail["httpStatusCode"] = value
    items = list(detail.items())
    order = draw(st.permutations(range(len(items))))  # the read key anywhere among the others
    return {items[i][0]: items[i][1] for i in order}, printed


def error_infos(spec: Any) -> st.SearchStrategy[ErrorInfo]:
    """turn.error values of every family: each variant of the union (with every httpStatusCode
    form), the newer variants, and the unknown, mixed, empty and null-detail shapes."""
    rows = spec.table("codex", "variants").rows
    union = set(spec.vocabulary("codex.variant").values)
    strings = [r["variant"] for r in rows if r["kind"] == "string"]
    objects = [r["variant"] for r in rows if r["kind"] == "object"]
    http_variants = list(spec.vocabulary("codex.http_status_variant").values)
    forms = http_forms(spec)

    @st.composite
    def http_variant(draw: st.DrawFn) -> tuple[Any, str, int | None, str]:
        name = draw(st.sampled_from(http_variants))
        value, printed = draw(forms)
        detail = draw(_detail_extras())
        if value is not MISSING:
            detail["httpStatusCode"] = value
        return {name: detail}, name, printed, "http-variant"

    @st.composite
    def other_object_variant(draw: st.DrawFn) -> tuple[Any, str, int | None, str]:
        name = draw(st.sampled_from([v for v in objects if v not in http_variants]))
        detail = {"turnKind": draw(st.sampled_from(["review", "compact"]) | any_text(max_size=8))}
        detail.update(draw(_detail_extras()))
        return {name: detail}, name, None, "object-variant"

    newer = [r["wire"] for r in spec.table("codex", "newer_variants").rows]
    outside = any_text(max_size=24).filter(lambda s: s not in union)
    recase = st.sampled_from(
        [str.upper, str.capitalize, lambda v: v + " ", lambda v: " " + v, lambda v: v.lower() + "\n"]
    )
    near_miss = st.builds(lambda v, f: f(v), st.sampled_from(sorted(union)), recase).filter(lambda s: s not in union)
    known = st.sampled_from(sorted(union))
    non_object = st.one_of(
        st.none(), st.integers(), st.booleans(), any_text(max_size=6), st.lists(st.integers(), max_size=2)
    )
    unknown_info = st.one_of(
        st.sampled_from(newer),
        outside,
        near_miss,
        st.just({}),  # empty object
        st.dictionaries(known | any_text(max_size=6), st.just({}), min_size=2, max_size=3),  # mixed keys
        st.builds(lambda k, d: {k: d}, st.sampled_from(objects), non_object),  # null or non-object detail
        st.builds(lambda k: {k: {}}, st.sampled_from(strings)),  # a string variant written as an object
        st.builds(lambda k: {k: {"message": "x"}}, outside),  # an unknown object variant
        st.one_of(st.none(), st.integers(), st.booleans(), st.lists(known, max_size=2)),  # not a string or object
        st.just(MISSING),
    )
    labelled = st.one_of(
        st.sampled_from(strings).map(lambda name: (name, name, None, "string-variant")),
        http_variant(),
        other_object_variant(),
        unknown_info.map(lambda info: (info, "unknown", None, "unknown")),
    )

    @st.composite
    def in_error(draw: st.DrawFn) -> ErrorInfo:
        info, category, status, family = draw(labelled)
        message = draw(any_text(max_size=20))
        details = draw(st.sampled_from([MISSING, None]) | any_text(max_size=12))
        error = (
            turn_error(info, message) if details is MISSING else turn_error(info, message, additionalDetails=details)
        )
        return ErrorInfo(error, category, status, family)

    odd_error = st.one_of(
        st.just(MISSING), st.none(), any_text(max_size=8), st.lists(st.just({"codexErrorInfo": "other"}), max_size=2)
    )
    return st.one_of(in_error(), odd_error.map(lambda e: ErrorInfo(e, "unknown", None, "not-an-error-object")))


# JavaScript whitespace, Python-only whitespace and ordinary text: what answers are made of.
ANSWER_TEXTS = st.one_of(
    st.sampled_from(["answer", "  exact answer\n", "", " \n ", "\u3000\ufeff", "\u001c\u0085", "partial", "é 权限"]),
    any_text(max_size=12),
)


def split_points(draw: st.DrawFn, text: str, max_cuts: int = 4) -> list[str]:
    """``text`` cut into non-empty chunks at random positions."""
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=max_cuts))) if len(text) > 1 else []
    bounds = [0, *[c for c in cuts if 0 < c < len(text)], len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def latest_signature(signatures: list[str], chunks: list[str]) -> tuple[str, int] | None:
    """The signature whose last occurrence in the stream ends latest, and the chunk that completes it.

    Two signatures never overlap, so the one whose occurrence ends latest is also the one
    that starts latest within its chunk (CDX-040); the chunk it ends in is its observation.
    """
    stream = "".join(chunks)
    best: tuple[int, str] | None = None
    for signature in signatures:
        index = stream.rfind(signature)
        if index >= 0 and (best is None or index + len(signature) > best[0]):
            best = (index + len(signature), signature)
    if best is None:
        return None
    end, signature = best
    offset = 0
    for n, chunk in enumerate(chunks):
        offset += len(chunk)
        if offset >= end:
            return signature, n
    raise AssertionError("unreachable")
