"""Hypothesis strategies for format_diagnostic and bound_diagnostic inputs: the facts of a failure
and a permission as the product's tables allow them, and texts around the 4096-byte bound.

Only inputs are drawn here; what the operations must answer comes from the oracles of
conformance/areas/diagnostic/oracle.py, which read the same tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.areas.diagnostic.oracle import carries_http_status, product, stage_categories, startup_and_teardown
from conformance.areas.memo import memo

Json = dict[str, Any]


# ---------------------------------------------------------------- fact strategies

http_statuses = st.one_of(st.sampled_from([0, 200, 404, 429, 500, 503, 65535]), st.integers(0, 65535))
# DIA-006: an integral float is the integer it equals.
exit_codes = st.one_of(
    st.sampled_from([0, 1, 2, 17, 137, 255, 4294967295]),
    st.integers(0, 4294967295),
    st.integers(0, 255).map(float),
)


@memo
@st.composite
def failures(draw: st.DrawFn, spec: Any, label: str, pairs: Sequence[tuple[str, str]]) -> Json:
    """One failure's facts (without the product): a pair the stages table allows, and each
    optional fact absent, null (not observed) or observed. Only facts a provider can extract
    (DIA-008, DIA-009): an HTTP status only on a Codex connection or stream variant."""
    stage, category = draw(st.sampled_from(pairs))
    facts: Json = {"stage": stage, "category": category}
    signals = st.sampled_from(list(spec.vocabulary("diagnostic.signal").values))
    optional: list[tuple[str, st.SearchStrategy[Any]]] = [("exitCode", exit_codes), ("signal", signals)]
    if carries_http_status(spec, label, category):
        optional.insert(0, ("httpStatus", http_statuses))
    for key, values in optional:
        how = draw(st.sampled_from(["absent", "null", "observed"]))
        if how == "null":
            facts[key] = None
        elif how == "observed":
            facts[key] = draw(values)
    return facts


@memo
@st.composite
def permissions(draw: st.DrawFn, spec: Any, label: str) -> Json:
    """A permission fact: one row of the product's permission_facts table, in a mode it can fire in."""
    area = product(spec, label).area
    row = draw(st.sampled_from(spec.table(area, "permission_facts").rows))
    modes = row.get("modes") or spec.vocabulary(f"{area}.permission_mode").values
    return {
        "mode": draw(st.sampled_from(list(modes))),
        "request": row["request"],
        "decision": row["decision"],
        "reason": row["reason"],
    }


@st.composite
def format_requests(draw: st.DrawFn, spec: Any, label: str, kinds: Sequence[str] | None = None) -> Json:
    """A valid format_diagnostic input of one product, of any text kind (or of ``kinds``)."""
    kind = draw(st.sampled_from(list(kinds or spec.vocabulary("diagnostic.text_kind").values)))
    facts: Json = {"product": label}
    if kind == "failure-line":
        facts.update(draw(failures(spec, label, stage_categories(spec, label))))
    elif kind == "permission-line":
        facts.update(draw(permissions(spec, label)))
    elif kind == "run-result":
        facts.update(draw(failures(spec, label, stage_categories(spec, label, "run-result"))))
        if draw(st.booleans()):
            facts["permission"] = draw(permissions(spec, label))
    else:
        startup, teardown = startup_and_teardown(spec, label)
        if kind == "dispose-rejection":
            facts["failures"] = [draw(failures(spec, label, teardown))]
        else:
            first = draw(failures(spec, label, startup))
            rollback = draw(st.one_of(st.none(), failures(spec, label, teardown)))
            facts["failures"] = [first] if rollback is None else [first, rollback]
    return {"kind": kind, "facts": facts}


# ---------------------------------------------------------------- texts around the bound

# Characters of every UTF-8 length, the extremes of each length included, combining marks and
# right-to-left text among them; U+FFFD is one of
# the three-byte ones so that "no U+FFFD unless the input had one" meets both cases.
_CHAR_LIST = (
    ["x", "a", " ", "\n", ";", "\x7f"]
    + ["é", "ß", "ж", "\u0080", "\u07ff"]
    + ["€", "权", "限", "\u0800", "\uffef", "\ufffd"]
    + ["😀", "𝄞", "\U00010000", "\U0010ffff"]
    + ["\u0301", "\u05d0", "\u0627", "\u200f", "\u20dd"]  # combining marks, right-to-left text and mark
)
_CHARS = st.sampled_from(_CHAR_LIST)
# texts_beyond draws its pattern of 1..8 of those characters as one string choice rather than
# a list of sampled characters (up to 17 choices, which overran early small examples): the same
# patterns, and every cut offset of every width reached as often (all ten in 100 examples, on
# each of 12 seeds). texts_within keeps the list: drawn that way, its texts hit the limit
# exactly about twice as often (11 against 6 in 100 examples, mean of 12 seeds).
_PATTERNS = st.text(alphabet=_CHAR_LIST, min_size=1, max_size=8)


def _fill(pattern: list[str], lead: int, target: int, reach: bool) -> str:
    """ASCII ``lead`` characters, then ``pattern`` repeated: stop before exceeding ``target``
    bytes, or (``reach``) as soon as ``target`` bytes are reached."""
    chars = ["x"] * min(lead, target)
    size = len(chars)
    period = sum(len(char.encode("utf-8")) for char in pattern)
    whole = (target - size) // period  # whole repetitions always fit, reach or not
    chars += pattern * whole
    size += whole * period
    index = 0
    while size < target:
        char = pattern[index % len(pattern)]
        width = len(char.encode("utf-8"))
        if not reach and size + width > target:
            break
        chars.append(char)
        size += width
        index += 1
    return "".join(chars)


@st.composite
def texts_within(draw: st.DrawFn, limit: int, budget: int) -> str:
    """Texts of at most ``limit`` bytes, most of them just under the limit or near the cut point."""
    target = draw(
        st.one_of(
            st.integers(0, 64), st.just(limit), st.integers(limit - 8, limit), st.integers(budget - 4, budget + 4)
        )
    )
    pattern = draw(st.lists(_CHARS, min_size=1, max_size=8))
    return _fill(pattern, draw(st.integers(0, 8)), target, reach=False)


@st.composite
def texts_beyond(draw: st.DrawFn, limit: int) -> str:
    """Texts longer than ``limit`` bytes, most of them 4097-ish, the cut at every offset of
    every character width."""
    target = draw(st.one_of(st.just(limit + 1), st.integers(limit + 1, limit + 8), st.integers(limit + 1, 3 * limit)))
    pattern = list(draw(_PATTERNS))
    return _fill(pattern, draw(st.integers(0, 8)), target, reach=True)


def marked_texts_beyond(limit: int, budget: int) -> list[str]:
    """Fixed texts past ``limit`` whose cut falls inside runs of combining marks and right-to-left
    text at every byte offset of the cut's neighbourhood: a cut on a code-point boundary keeps a
    base letter without its marks, where a cut by graphemes (or by characters of a
    normalized text) keeps less or more. Reached in every run, beside texts_beyond."""
    run = "e\u0301\u0308" + "\u05e9\u05dc\u200f" + "a\u20dd"
    return [("x" * (budget - offset)) + run * (limit // len(run.encode()) + 1) for offset in range(12)]
