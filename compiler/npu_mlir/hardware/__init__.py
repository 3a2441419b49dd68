"""The hardware model (soc.py) that the dialect, passes and emitters read."""
