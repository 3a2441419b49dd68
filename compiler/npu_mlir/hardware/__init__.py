"""The hardware model (soc.py) and the element types it stores (dtypes.py) that the dialect, passes and emitters read."""
