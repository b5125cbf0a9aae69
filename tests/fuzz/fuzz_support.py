"""What the fuzz tests share: the error contract, hypothesis settings and input strategies.

The contract (DESIGN.md section 13): bad input gets a clear error. A call on
fuzzed input either succeeds or raises one of the project's own errors
(``PROJECT_ERRORS``, or a ``ValueError`` carrying a catalogue code such as
``[LPCFG-E120]``); anything else (IndexError, KeyError, a numpy or zipfile error,
RecursionError, MemoryError...) is a bug. A command exits 0, or 1/2 with a
one-line ``error:`` message on stderr, and never prints a traceback.

Example counts scale with the ``HYPOTHESIS_PROFILE`` environment variable:
unset (or ``default``) runs the fast default suite, ``long`` runs
``LONG_SCALE`` times as many examples per property::

    python -m pytest tests/fuzz                  # default, about half a minute
    HYPOTHESIS_PROFILE=long python -m pytest tests/fuzz --hypothesis-show-statistics
    FUZZ_STRICT=1 python -m pytest tests/fuzz    # known bugs fail too (KNOWN_BUGS)
"""

from __future__ import annotations

import functools
import os
import re
import traceback
from contextlib import contextmanager

from hypothesis import HealthCheck, event, reject, settings
from hypothesis import strategies as st

from spacy_lpcfg.errors import (
    DataNotFoundError,
    GrammarError,
    NonConstituentException,
    NotParsedError,
    TransformError,
    TreebankFormatError,
)

PROJECT_ERRORS = (
    TreebankFormatError,
    GrammarError,
    DataNotFoundError,
    TransformError,
    NotParsedError,
    NonConstituentException,
)
_CODED = re.compile(r"\[LPCFG-E\d{3}\]")

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
LONG_SCALE = 40
_SCALE = LONG_SCALE if PROFILE == "long" else 1
settings.register_profile(
    "fuzz",
    deadline=None,
    print_blob=True,
    # Inputs are built from session fixtures and may be large on purpose.
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,  # known bugs discard examples (see KNOWN_BUGS)
    ],
)


def fuzz(examples: int) -> settings:
    """Settings of one property: ``examples`` cases by default, more under the long profile."""
    return settings(settings.get_profile("fuzz"), max_examples=examples * _SCALE)


def is_project_error(error: BaseException) -> bool:
    """One of the package's exception types, or a ValueError with a catalogue code."""
    if isinstance(error, PROJECT_ERRORS):
        return True
    return type(error) is ValueError and bool(_CODED.search(str(error)))


# Bugs found by these tests in files their author could not change, reported and
# awaiting a fix: id -> (exception type, message pattern, file that raises it). An
# example that hits one is discarded and counted (hypothesis statistics show
# "known bug: <id>"), so the properties keep searching for new bugs; each has an
# xfail test with its reproduction in the test module. FUZZ_STRICT=1 lets them fail.
KNOWN_BUGS: dict[str, tuple[type, str, str]] = {
    # None now. Found and since fixed: cfg.json without "extra_grammars" raised
    # KeyError from grammar/model.py (test_cfg_without_extra_grammars).
}
STRICT = os.environ.get("FUZZ_STRICT") == "1"


def known_bug(error: BaseException) -> str | None:
    """The id of the known bug ``error`` is, if it is one."""
    if STRICT:
        return None
    frames = traceback.extract_tb(error.__traceback__)
    origin = frames[-1].filename if frames else ""
    for name, (kind, message, file) in KNOWN_BUGS.items():
        if type(error) is kind and re.search(message, str(error)) and origin.endswith(file):
            return name
    return None


def _tolerate_known(error: BaseException) -> None:
    name = known_bug(error)
    if name is None:
        raise error
    event(f"known bug: {name}")
    reject()


@contextmanager
def only_project_errors():
    """Swallow the project's own errors; let anything else fail the test (with its traceback)."""
    try:
        yield
    except Exception as error:
        if not is_project_error(error):
            _tolerate_known(error)


def outcome(call, *args, **kwargs):
    """``(value, None)`` or ``(None, error)`` for a project error; other errors propagate."""
    try:
        return call(*args, **kwargs), None
    except Exception as error:
        if not is_project_error(error):
            _tolerate_known(error)
        return None, error


class ShortRepr(dict):
    """A dict of fixture data with a short repr: hypothesis prints the arguments of a
    failing example, and these hold whole files."""

    def __repr__(self) -> str:
        return f"<{', '.join(map(str, self))}>"


# Command line ---------------------------------------------------------------------


def assert_clean_exit(result, *, evalb_abort: bool = False) -> None:
    """A CliRunner result: exit 0, or 1/2 with a one-line ``error:`` message, no traceback.

    evalb_abort (bool): also accept EVALB's own abort (``evaluate`` after too many
        errors: exit 1 with EVALB's ``N : message`` lines and no summary).
    """
    crash = result.exception
    if crash is not None and not isinstance(crash, SystemExit):
        raise AssertionError(f"the command raised {crash!r}") from crash
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.stderr[-2000:])
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    if result.exit_code == 0:
        return
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    if evalb_abort and not errors:
        assert re.search(r"^\d+ : ", result.stderr, re.M), result.stderr[-2000:]
        return
    if result.exit_code == 2 and not errors:  # click's usage errors: "Error: ..." in a box
        assert "Error" in result.stderr, result.stderr[-2000:]
        return
    assert len(errors) == 1, result.stderr[-2000:]
    assert len(errors[0]) < 2000, "an error message should quote excerpts, not whole input"


# Bytes and text -------------------------------------------------------------------

SUFFIXES = {"penn": ".mrg", "psd": ".psd", "floresta": ".ptb", "cess": ".tbf"}
"""Format name -> a file ending that ``detect_format`` reads as that format."""

# Pieces that matter to bracket readers, decoders and tokenisers.
SPECIAL_BYTES = [
    b"(",
    b")",
    b"((",
    b"))",
    b"()",
    b"( ",
    b" ",
    b"\n",
    b"\r\n",
    b"\r",
    b"\t",
    b"\x0b\x0c",
    b"\x00",
    b"\x1c",
    b"\xef\xbb\xbf",  # UTF-8 byte-order mark
    b"\xff\xfe",
    b"\x80",
    b"\xc3",  # a lone UTF-8 lead byte
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xc2\x85",  # NEL
    b"\xe2\x80\xa8",  # LINE SEPARATOR
    b"\xe3\x80\x80",  # IDEOGRAPHIC SPACE
    b"(TOP ",
    b"(ROOT ",
    b"(NP ",
    b"(-NONE- *T*-1)",
    b"(NN x)",
    b"(ID X,.1)",
    b"(CODE <P_1>)",
    b"(, ,)",
    b"(?+?",
    b"#1 x\n",
    b"#",
    b"(\n",
    b"(np00000 w w)",
    b"(sn.e-SUJ *0*)",
    b"+",
    b"-",
    b"*",
    b"0",
    b"$",
    b"<dash/>",
    b"-LRB-",
    b"{",
]


def _insert(data: bytearray, at: int, piece: bytes) -> None:
    data[at:at] = piece


@st.composite
def mutated(draw, seed: bytes, max_steps: int = 6) -> bytes:
    """``seed`` after a few random edits: bracket and byte insertions, deletions, swaps,
    bit flips, truncation, duplication, huge tokens, deep nesting, a byte-order mark."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, max_steps))):
        op = draw(
            st.sampled_from(
                [
                    "insert",
                    "insert",
                    "delete",
                    "swap",
                    "flip",
                    "high_byte",
                    "truncate",
                    "duplicate",
                    "huge_token",
                    "deep",
                    "bom",
                    "empty",
                ]
            )
        )
        at = draw(st.integers(0, len(data)))
        if op == "insert":
            piece = draw(
                st.one_of(
                    st.sampled_from(SPECIAL_BYTES),
                    st.binary(min_size=1, max_size=8),
                    st.text(min_size=1, max_size=8).map(lambda s: s.encode("utf-8", "replace")),
                )
            )
            _insert(data, at, piece)
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif op == "swap" and data:
            other = draw(st.integers(0, len(data) - 1))
            at = min(at, len(data) - 1)
            data[at], data[other] = data[other], data[at]
        elif op == "flip" and data:
            at = min(at, len(data) - 1)
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "high_byte" and data:
            data[min(at, len(data) - 1)] = draw(st.integers(0x80, 0xFF))
        elif op == "truncate":
            del data[at:]
        elif op == "duplicate" and data:
            start = draw(st.integers(0, len(data) - 1))
            _insert(data, at, bytes(data[start : start + draw(st.integers(1, 400))]))
        elif op == "huge_token":
            size = draw(st.sampled_from([1_000, 70_000, 300_000]))
            _insert(data, at, draw(st.sampled_from([b"x", b"\xc3\xa9", b"-", b"*"])) * size)
        elif op == "deep":
            depth = draw(st.sampled_from([50, 1_000, 20_000]))
            _insert(data, at, b"(A " * depth + b"(B w)" + b")" * depth)
        elif op == "bom":
            _insert(data, 0, b"\xef\xbb\xbf")
        elif op == "empty":
            data.clear()
    return bytes(data)


LABELS = st.one_of(
    st.sampled_from(["S", "NP", "NP-SBJ-1", "VP", "TOP", "ROOT", "", "-NONE-", "ID", "CODE"]),
    st.sampled_from(["STA+fcl", "H+n", ">N+art", ",", "«", "sn-SUJ", "grup.nom.ms", "sn.e-SUJ"]),
    st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="() \n"), max_size=6),
)
WORDS = st.one_of(
    st.sampled_from(["the", "*T*-1", "0", "*pro*", "*0*", "menn-maður", "-", "---", "*-*", "w"]),
    st.sampled_from(["<dash/>", "a<dash>b", "{á}", "tungur$", "-Fpa-", "[x:??]", "\u00a0"]),
    st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="() \n"), max_size=6),
)
SEPARATORS = [" ", "  ", "\n", "\t", "\n  ", "\r\n"]
SPACE = st.sampled_from([*SEPARATORS, ""])


@st.composite
def bracket_text(draw) -> str:
    """Bracket-ish text: random (often well-formed) trees with random labels, words and
    spacing, some with a lemma after the word, some with a Floresta block header."""
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            parts.append(f"#{draw(st.integers(0, 9))} {draw(WORDS)}\n")
        if draw(st.integers(0, 3)) == 0:
            parts.append("(\n")
        parts.append(draw(_tree_text(draw(st.integers(0, 3)))))
        parts.append(draw(SPACE))
    if draw(st.integers(0, 4)) == 0:  # unbalance it
        at = draw(st.integers(0, len(parts)))
        parts.insert(at, draw(st.sampled_from(["(", ")", "((", "))", "( )"])))
    return "".join(parts)


@functools.cache
def _tree_text(depth: int):
    leaf = st.builds(
        lambda label, word, lemma, space: f"({label}{space}{word}{lemma})",
        LABELS,
        WORDS,
        st.one_of(st.just(""), WORDS.map(lambda lemma: " " + lemma)),
        st.sampled_from([" ", "\t", "  "]),
    )
    if depth == 0:
        return st.one_of(leaf, LABELS.map(lambda label: f"({label})"))
    return st.builds(
        lambda label, kids, space: f"({label}{space}{space.join(kids)})",
        LABELS,
        st.lists(_tree_text(depth - 1), min_size=1, max_size=3),
        st.sampled_from(SEPARATORS),
    )


ENCODINGS = st.sampled_from(
    [None, "utf-8", "latin-1", "utf-16", "utf-32", "cp1252", "ascii", "base64"]
)

# Token text for parsers: brackets, slashes, escapes, whitespace-like and control
# characters, combining marks, emoji, and now and then a very long token.
TOKEN_PIECES = st.sampled_from(
    [
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "-LRB-",
        "/",
        "//",
        "\\",
        "-",
        "--",
        "'",
        '"',
        "``",
        "“",
        "”",
        "…",
        "—",
        "\x00",
        "\x07",
        "\x7f",
        "\u200b",  # zero width space (not whitespace to Python)
        "\u200d",
        "\ufeff",
        "\u0301",  # combining acute
        "e\u0301",
        "👍🏽",
        "🏳️‍🌈",
        "\U0001f600",
        "ß",
        "İ",
        "Ⅻ",
        "١٢",
        "The",
        "dog",
        "runs",
        ".",
        ",",
        "$",
        "%",
        "#",
        "*",
        "0",
        "x",
    ]
)
TOKENS = st.one_of(
    st.lists(TOKEN_PIECES, min_size=1, max_size=4).map("".join),
    st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=8),
    st.builds(lambda piece, n: piece * n, TOKEN_PIECES, st.sampled_from([100, 5_000])),
)
WHITESPACE = st.sampled_from(
    [" ", "  ", "\t", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u2028", "\u3000"]
)
