"""Code generators: ascendc/ (AscendC + ACL source), sim/ (the simulated device's .so), launch_list.py (both per kernel)."""
