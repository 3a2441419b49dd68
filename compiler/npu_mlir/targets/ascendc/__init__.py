"""AscendC kernel source (emit.py, vector.py, cube.py), ACL host calls (acl.py), and cpu_twin/ (their host build)."""
