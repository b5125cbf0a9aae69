"""Shared by tests that run a fresh Python process: the head of a script that counts
what numba compiles of the package's own functions (``compiled``, qualified names),
through numba's compile events."""

COUNT_COMPILATIONS = """
import numba.core.event as ev

compiled = []

class Listener(ev.Listener):
    def on_start(self, event):
        function = event.data["dispatcher"].py_func
        if function.__module__.startswith("spacy_lpcfg"):
            compiled.append(function.__qualname__)

    def on_end(self, event):
        pass

ev.register("numba:compile", Listener())
"""
