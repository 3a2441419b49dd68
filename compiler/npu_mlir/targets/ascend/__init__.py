"""The Ascend target: hardware model, emitters and the simulated-device build."""
