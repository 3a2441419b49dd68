"""The eager path's Python side: the miss path (plan, disk cache, compile workers) and its counters.

The hit path is C++ (csrc/eager); this package runs only when a call's key is new.
"""
