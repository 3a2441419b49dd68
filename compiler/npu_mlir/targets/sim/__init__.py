"""The simulated-device target: the LLVM build of a kernel into a .so the runtime launches (build.py)."""
