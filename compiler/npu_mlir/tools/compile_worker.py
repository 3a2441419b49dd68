"""A compile worker process: reads build requests, answers with kernel metadata.

Run as `python -m npu_mlir.tools.compile_worker` (torch_npu/eager/workers.py starts the pool): it
needs only torch and npu_mlir, and must not load the device runtime. Frames on the protocol pipe are a 4-byte
little-endian length and a pickle: a CompileRequest in, ("ok", KernelRecord), ("error", message) (the
compiler refused it) or ("stale", message) (not a request of this PROTOCOL_VERSION) out (compile_protocol.py).
A request of kind "graph" is a whole torch.compile graph (frontend/fx_graph.py), "op" one eager call.
A crash of MLIR (SIGFPE, LLVM ERROR) ends only this process; the pool in workers.py notices.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
import time
import traceback


def _read_exact(stream, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def main() -> int:
    # The protocol gets its own descriptor: MLIR and LLVM print diagnostics to stdout.
    reply = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    from npu_mlir.frontend import fx_graph, kernel_build  # after the dup2: their imports may print
    # What every build imports lazily, loaded before "ready": the pool starts workers as a miss is
    # being planned in the user's process, so this overlaps the plan instead of delaying the compile.
    import npu_mlir.pipeline  # noqa: F401
    import npu_mlir.targets.launch_list  # noqa: F401
    from npu_mlir.frontend import torch_import
    from npu_mlir.targets.sim.build import linking_together
    from npu_mlir.tools.compile_protocol import PROTOCOL_VERSION, CompileRequest, record_from_build

    torch_import._decompositions()  # the trace's table (~0.5 s): built here, not in the first request

    builders = {"graph": fx_graph.build, "op": kernel_build.build}

    reply.write(struct.pack("<I", 0))  # ready
    reply.flush()
    while True:
        try:
            size = struct.unpack("<I", _read_exact(requests, 4))[0]
            request = pickle.loads(_read_exact(requests, size))
        except EOFError:
            return 0
        if not isinstance(request, CompileRequest) or request.protocol != PROTOCOL_VERSION:
            sent = getattr(request, "protocol", type(request).__name__)
            answer = ("stale", f"a request of protocol {sent}; this worker reads CompileRequest {PROTOCOL_VERSION}")
        else:
            try:
                # A request's kernels (a launch list, a graph's) are generated and linked as one .so.
                start = time.perf_counter()
                with linking_together():
                    built = builders[request.kind](request.builder_input())
                built["compile_ms"] = (time.perf_counter() - start) * 1e3
                answer = ("ok", record_from_build(built))
            except Exception as err:  # a rejected op is an answer, not a worker failure
                answer = ("error", f"{type(err).__name__}: {err}"[:4000] or traceback.format_exc())
        data = pickle.dumps(answer)
        reply.write(struct.pack("<I", len(data)) + data)
        reply.flush()


if __name__ == "__main__":
    sys.exit(main())
