"""The sim's kernel cache key: a kernel built for one CPU is never loaded on another."""

from __future__ import annotations

from npu_mlir.hardware import host_cpu
from npu_mlir.targets.sim import cache


def test_fingerprint_carries_the_host_isa(monkeypatch):
    here = cache.compiler_fingerprint()
    monkeypatch.setattr(cache, "_fingerprint", [])
    monkeypatch.setattr(host_cpu, "isa", lambda: "avx avx2 fma")  # an AVX2-only host
    other = cache.compiler_fingerprint()
    monkeypatch.setattr(cache, "_fingerprint", [])
    monkeypatch.setattr(host_cpu, "isa", lambda: "avx avx2 fma")
    assert other != here and cache.compiler_fingerprint() == other


def test_host_isa_lists_this_cpus_flags():
    isa = host_cpu.isa()
    assert isa and isa == " ".join(sorted(isa.split()))
    assert ("avx2" in host_cpu.flags()) == ("avx2" in isa.split())
