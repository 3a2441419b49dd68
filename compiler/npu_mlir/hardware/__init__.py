"""The hardware model (soc.py) and the element types it stores (dtypes.py) that the dialect, passes and emitters read, and the host CPU the sim runs kernels on (host_cpu.py)."""
