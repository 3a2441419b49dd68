"""Read-only facts about modules and kernels that passes, targets and the eager worker share."""
