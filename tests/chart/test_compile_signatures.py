"""Every kernel compiles once: what keeps a fresh process's first parse short.

A fresh process with an empty numba cache compiles each kernel it calls, once per
distinct tuple of argument types. These tests parse with the kinds of grammars the
chart has kernels for (one-state and latent, max-rule and MBR decoding) in a
process of their own with a new ``NUMBA_CACHE_DIR``, record numba's compile events,
and check the rules of ``chart.scaled`` ("Compile time"): no kernel compiled for a
literal argument, no kernel compiled more often than its argument types require,
and none of numba's string formatting (the error message of a slice copied from an
array) or other avoidable NumPy functions compiled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numba.core.event as ev

    events = []

    class Listener(ev.Listener):
        def on_start(self, event):
            function = event.data["dispatcher"].py_func
            events.append([function.__module__, function.__qualname__,
                           [str(t) for t in event.data["args"]]])

        def on_end(self, event):
            pass

    ev.register("numba:compile", Listener())

    from spacy_lpcfg.corpora import load_split
    from spacy_lpcfg.decode import Parser
    from spacy_lpcfg.estimators.clustering import ClusteringEstimator
    from spacy_lpcfg.estimators.mle import MLEEstimator

    train = load_split("ptb_sample", "train", data_dir=sys.argv[1])[:150]
    sentences = [tree.words() for tree in load_split("ptb_sample", "dev", data_dir=sys.argv[1])[:4]]
    one_state = MLEEstimator().fit(train).model_
    Parser(one_state).parse_all(sentences)  # max_rule
    Parser(one_state, decoder="mbr").parse_all(sentences)
    latent = ClusteringEstimator(n_states=2).fit(train).model_
    Parser(latent).parse_all(sentences)  # mbr
    Parser(latent, decoder="max_rule").parse_all(sentences)
    print(json.dumps(events))
    """
)
# Kernels whose argument types legitimately vary: ``grow`` per array dtype and
# dimension, ``normalise`` for int32 (a symbol's states) and int64 (products) sizes,
# and the coarse pass's helpers specialised on purpose for a literal flag (chart.scaled).
SPECIALISATIONS = {"grow": 4, "normalise": 2, "_split_range": 2, "_unary_closure": 2}
LITERAL_FLAGS = {"_split_range", "_unary_closure"}
# numba functions that only an avoidable construct compiles (chart.scaled).
AVOIDABLE = ("raise_with_shape_context", "numba.cpython.unicode", "searchsorted")


def _unliteral(arg: str) -> str:
    """The base type of a literal's name (Literal[int](0) -> int64, Literal[bool] -> bool)."""
    if arg.startswith("Literal[int]"):
        return "int64"
    if arg.startswith("Literal[bool]"):
        return "bool"
    return arg


@pytest.fixture(scope="module")
def compile_events(data_dir, tmp_path_factory):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path_factory.mktemp("numba_cache")))
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(data_dir)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_no_kernel_compiles_for_a_literal_argument(compile_events):
    """Literals only where a specialisation is wanted, and never a kernel compiled both
    for a literal and for its base type (a constant that could have been typed, or a
    counter typed as the literal 0 until type inference sees it change)."""
    signatures: dict[str, list[list[str]]] = {}
    for module, qualname, args in compile_events:
        if module.startswith("spacy_lpcfg"):
            signatures.setdefault(qualname, []).append(args)
    literal = {
        name
        for name, found in signatures.items()
        for args in found
        if any("Literal" in arg for arg in args) and name.rsplit(".", 1)[-1] not in LITERAL_FLAGS
    }
    assert literal == set()
    both = set()
    for name, found in signatures.items():
        for one in found:
            for other in found:
                differ = [(a, b) for a, b in zip(one, other) if a != b]
                if (
                    len(differ) == 1
                    and "Literal" in differ[0][0]
                    and (_unliteral(differ[0][0]) == differ[0][1])
                ):
                    both.add((name, differ[0]))
    assert both == set()


@pytest.mark.slow
def test_each_kernel_compiles_once_per_argument_types(compile_events):
    counts: dict[str, int] = {}
    for module, qualname, _ in compile_events:
        if module.startswith("spacy_lpcfg"):
            counts[f"{module}.{qualname}"] = counts.get(f"{module}.{qualname}", 0) + 1
    assert any(name.endswith("latent_inside") for name in counts)  # the scenario ran
    too_many = {
        name: count
        for name, count in counts.items()
        if count > SPECIALISATIONS.get(name.rsplit(".", 1)[-1], 1)
    }
    assert too_many == {}


@pytest.mark.slow
def test_no_avoidable_numba_function_is_compiled(compile_events):
    avoidable = {
        f"{module}.{qualname}"
        for module, qualname, _ in compile_events
        if any(name in f"{module}.{qualname}" for name in AVOIDABLE)
    }
    assert avoidable == set()
