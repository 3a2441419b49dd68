"""The Ascend compiler passes, one per file; `registry.PASSES` names them."""
