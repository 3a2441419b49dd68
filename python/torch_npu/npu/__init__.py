"""torch.npu: the NPU counterpart of torch.cuda, with the same names and semantics.

Queries such as :func:`is_available`, :func:`device_count` and the memory
statistics never initialise the device; anything that needs one does so lazily.
"""

from torch_npu.npu import amp, config
from torch_npu.npu.amp import (
    get_amp_supported_dtype,
    get_autocast_dtype,
    is_autocast_enabled,
    is_bf16_supported,
    set_autocast_dtype,
    set_autocast_enabled,
)
from torch_npu.eager.stats import eager_stats, reset_eager_stats
from torch_npu.npu.devices import (
    current_device,
    device,
    device_count,
    device_of,
    get_device_capability,
    get_device_name,
    get_device_properties,
    is_available,
    set_device,
    synchronize,
)
from torch_npu.npu.initialization import _is_in_bad_fork, _lazy_call, _lazy_init, init, is_initialized  # noqa: F401
from torch_npu.npu.memory import *  # noqa: F403
from torch_npu.npu.memory import __all__ as _memory_all
from torch_npu.npu.random import (
    default_generators,
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from torch_npu.npu.streams import (
    Event,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    get_sync_debug_mode,
    set_stream,
    set_sync_debug_mode,
    stream,
)

__all__ = [
    "Event",
    "Stream",
    "StreamContext",
    "amp",
    "config",
    "current_device",
    "current_stream",
    "default_generators",
    "default_stream",
    "device",
    "device_count",
    "device_of",
    "eager_stats",
    "get_amp_supported_dtype",
    "get_autocast_dtype",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_rng_state",
    "get_rng_state_all",
    "get_sync_debug_mode",
    "init",
    "initial_seed",
    "is_autocast_enabled",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "reset_eager_stats",
    "seed",
    "seed_all",
    "set_autocast_dtype",
    "set_autocast_enabled",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "set_stream",
    "set_sync_debug_mode",
    "stream",
    "synchronize",
    *_memory_all,
]

# torch_npu's names beyond torch.cuda's core (issue 14), one module per concern.
from torch_npu.npu import host_memory as _host_memory  # noqa: E402
from torch_npu.npu.host_memory import *  # noqa: E402,F403

__all__ += [*_host_memory.__all__]

from torch_npu.npu import graphs as _graphs  # noqa: E402
from torch_npu.npu import mem_pool as _mem_pool  # noqa: E402
from torch_npu.npu.graphs import *  # noqa: E402,F403
from torch_npu.npu.mem_pool import *  # noqa: E402,F403

__all__ += [*_graphs.__all__, *_mem_pool.__all__]

from torch_npu.npu import backend_config as _backend_config  # noqa: E402
from torch_npu.npu import deterministic as _deterministic  # noqa: E402
from torch_npu.npu import device_checks as _device_checks  # noqa: E402
from torch_npu.npu import dump as _dump  # noqa: E402
from torch_npu.npu import external_stream as _external_stream  # noqa: E402
from torch_npu.npu import limits as _limits  # noqa: E402
from torch_npu.npu import memory_aliases as _memory_aliases  # noqa: E402
from torch_npu.npu import mstx as _mstx  # noqa: E402
from torch_npu.npu import options as _options  # noqa: E402
from torch_npu.npu import pluggable_allocator as _pluggable_allocator  # noqa: E402
from torch_npu.npu import typed_tensors as _typed_tensors  # noqa: E402
from torch_npu.npu import utils  # noqa: E402,F401  (torch_npu.npu.utils.is_support_inf_nan, ...)
from torch_npu.npu.backend_config import *  # noqa: E402,F403
from torch_npu.npu.deterministic import *  # noqa: E402,F403
from torch_npu.npu.device_checks import *  # noqa: E402,F403
from torch_npu.npu.devices import _get_device_index  # noqa: E402,F401
from torch_npu.npu.dump import *  # noqa: E402,F403
from torch_npu.npu.external_stream import *  # noqa: E402,F403
from torch_npu.npu.limits import *  # noqa: E402,F403
from torch_npu.npu.memory_aliases import *  # noqa: E402,F403
from torch_npu.npu.mstx import *  # noqa: E402,F403
from torch_npu.npu.options import *  # noqa: E402,F403
from torch_npu.npu.pluggable_allocator import *  # noqa: E402,F403
from torch_npu.npu.typed_tensors import *  # noqa: E402,F403

__all__ += [
    *_backend_config.__all__, *_deterministic.__all__, *_device_checks.__all__, *_dump.__all__,
    *_external_stream.__all__, *_limits.__all__, *_memory_aliases.__all__, *_mstx.__all__, *_options.__all__,
    *_typed_tensors.__all__, *_pluggable_allocator.__all__,
]

# The npu-mlir torch.compile backend's counters (torch_npu/dynamo); importing them loads no Dynamo.
from torch_npu.dynamo.stats import compile_stats, reset_compile_stats  # noqa: E402

__all__ += ["compile_stats", "reset_compile_stats"]

from torch_npu.npu import blas as _blas  # noqa: E402
from torch_npu.npu import device_control as _device_control  # noqa: E402
from torch_npu.npu import external_event as _external_event  # noqa: E402
from torch_npu.npu import npu_runtime as _npu_runtime  # noqa: E402
from torch_npu.npu import obfuscation as _obfuscation  # noqa: E402
from torch_npu.npu import overflow as _overflow  # noqa: E402
from torch_npu.npu import sync_launch_stream as _sync_launch_stream  # noqa: E402
from torch_npu.npu.blas import *  # noqa: E402,F403
from torch_npu.npu.device_control import *  # noqa: E402,F403
from torch_npu.npu.external_event import *  # noqa: E402,F403
from torch_npu.npu.npu_runtime import *  # noqa: E402,F403
from torch_npu.npu.obfuscation import *  # noqa: E402,F403
from torch_npu.npu.overflow import *  # noqa: E402,F403
from torch_npu.npu.sync_launch_stream import *  # noqa: E402,F403

__all__ += [
    *_blas.__all__, *_device_control.__all__, *_external_event.__all__, *_npu_runtime.__all__, *_obfuscation.__all__,
    *_overflow.__all__, *_sync_launch_stream.__all__,
]
