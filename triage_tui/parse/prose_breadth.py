"""The breadth lexicon: the common words of each mechanism as people write them, one weak row per mechanism.

The prose lexicon (prose_lexicon.py) holds precise wordings, most learned from one seen case each; on fresh text
they rarely fire, and a fresh paste most often ranks no cause at all (cases-9: 18 of its 21 misses). The rows here
are the opposite trade: the words and figures a mechanism is commonly told with in any project ("D state",
"uninterruptible", "pegs the CPU", "PTX JIT", "SIGCONT", "__syncthreads", "the event is cleared"), each read by a
rule row of small weight (diagnose/breadth_rows.py), so a precise reader still wins wherever one fires and a paste
that tells only the mechanism's words gets it ranked instead of nothing.

Each row names its source: a seen case (tests/corpus/cases .. cases-9) or the tool's documentation whose words it
uses. Read with the prose lexicon's machinery (each line alone, then each paragraph as one line); patterns are
linear: bounded gaps, alternations of literals.
"""

from __future__ import annotations

import re

from .lazy_pattern import lazy_compile
from .signal_lexicon import XID_DENIED, XID_NOT_LOST, Signal


def _w(oid: str, means: str, pattern: str, source: str, flags: int = re.I) -> Signal:
    return Signal(oid, means, lazy_compile(pattern, flags), source, False, False)  # compiled when first used


_STUCK = (r"\b(?:hangs?|hanging|hung|stuck|freez(?:es|ing)|froze|frozen|blocks?|blocked|blocking|stalls?|stalled"
          r"|waits?|waiting|never returns?)\b")

BREADTH: tuple[Signal, ...] = (
    # --- blocked I/O: the kernel's own word for the wait, and storage named as where it waits. ps(1) "PROCESS STATE
    # CODES": "D uninterruptible sleep (usually IO)"; a paste says the data sits on a network or slow drive and that
    # moving it to a local disk cured it
    _w("told-word-io", "storage told as where the job waits (a network or slow drive, local disk cures it, I/O wait)",
       r"\b(?:network|shared|remote|mounted|slow|bad|dedicated storage) (?:drive|disk|storage|file ?system|share|mount)\b"
       r"[^\n]{0,160}?" + _STUCK +
       r"|" + _STUCK + r"[^\n]{0,160}?\b(?:network|shared|remote|mounted|slow|bad) (?:drive|disk|storage|file ?system"
       r"|share|mount)\b"
       r"|\b(?:mov(?:e|ed|ing)|cop(?:y|ied|ying))\b[^\n]{0,80}?\bto (?:a |the )?local (?:drive|disk|ssd|nvme|storage)\b"
       r"|\b(?:io ?wait|I/O wait|waiting (?:for|on) (?:disk|I/O|IO)\b)|\buninterruptible sleep\b"
       r"|\b(?:network|remote) (?:storage|file ?system)\b",
       "https://man7.org/linux/man-pages/man1/ps.1.html (PROCESS STATE CODES: D); "
       "https://github.com/BVLC/caffe/issues/6020"),
    # --- a busy loop: the CPU told as pegged by something that does not progress (top's %CPU at 100 of a core)
    _w("told-word-spin", "the CPU told as pegged (spins, burns, 100 % of a core) while nothing progresses",
       r"\b(?:spins?|spinning|pegs?|pegged|pegging|burns?|burning|maxe[sd](?: out)?|maxing(?: out)?|eats?|eating|hogs?"
       r"|hogging)\b[^\n]{0,16}?\b(?:cpu|cores?)\b|\bbusy[- ]spin(?:s|ning)?\b|\bcpu\b[^\n]{0,12}?\b(?:pegged|maxed(?: out)?|spinning|spins)\b"
       r"|\b(?:process|thread|child|worker)\b[^\n]{0,30}?\bat 100 ?%|\bat 100 ?% (?:cpu|of a core)\b"
       r"|\breturns? immediately\b[^\n]{0,120}?\bloop\b|\bnever (?:gets|breaks) out of (?:that |the )?loop\b",
       "https://github.com/sahlberg/libiscsi/issues/241; https://github.com/Aetherinox/aetherinox/issues/1517 "
       "(cases-8)"),
    # --- a compile: the CUDA driver JIT-compiling PTX, autotuning, a compute cache (CUDA C Programming Guide,
    # "Just-in-Time Compilation": PTX is compiled by the driver at load time and cached in the compute cache)
    _w("told-word-compile", "a compile told in words (PTX JIT by the driver, autotuning, a compute / kernel cache)",
       r"\bPTX\b[^\n]{0,60}?\b(?:compil\w{0,6}|JIT)\b|\b(?:compil\w{0,6}|JIT)\b[^\n]{0,40}?\bPTX\b|\bJIT[- ]?compil\w{0,6}"
       r"|\bautotun(?:e|es|ed|ing)\b|\bCUDA_CACHE_\w{2,12}|\bcompute cache\b|\b(?:kernel|compile|inductor|triton) cache\b"
       r"[^\n]{0,60}?\b(?:warm|cold|empty|cleared|populated)\b",
       "https://docs.nvidia.com/cuda/cuda-c-programming-guide/ (Just-in-Time Compilation); "
       "https://github.com/tensorflow/tensorflow/issues/39052"),
    # a compiler or graph capture named with what it builds (torch.compile's Triton / inductor, CUDA graph capture,
    # nvcc / ninja builds): "compiling the following snippet for CUDA", "Cudagraph capture", "compiles twelve Triton
    # kernels"
    _w("told-word-compile", "a compile told in words (a compiler or graph capture named with what it builds)",
       r"\b(?:triton|inductor|dynamo|nvcc|ninja|xla|tvm|cudagraph|cuda graph)\w{0,4}\b[^\n]{0,30}?\b(?:compil\w{0,5}|build"
       r"(?:s|ing)?|captur\w{0,3})\b|\bcompil\w{0,5}\b[^\n]{0,30}?\b(?:triton|inductor|kernels?|graphs?|cuda)\b",
       "https://pytorch.org/docs/stable/torch.compiler.html; https://github.com/pytorch/pytorch/issues/96662 (cases)"),
    # JAX's compile step named as where the process is (jax/_src/compiler.py: backend_compile, compile_or_get_cached;
    # pxla's compile_and_load): a thread capture or a stack that shows it is XLA compiling (eleventh pass; marin-8077,
    # cases-10)
    _w("told-word-compile", "a compile told in words (JAX / XLA's compile step named as where the process is)",
       r"\bbackend_compile\w{0,12}|\bcompile_and_load\b|\bcompile_or_get_cached\b",
       "https://github.com/jax-ml/jax/blob/main/jax/_src/compiler.py; "
       "https://github.com/marin-community/marin/issues/8077 (cases-10)"),
    # a first call slow, the next ones fast: what a compile cache does (the driver's compute cache, Triton's and
    # inductor's caches): "the first request took 25 s and the identical repeat 11 s", "every first time I start a
    # session it needs 1-3 minutes"
    _w("told-word-compile", "a first run told as slow with a figure (a compile whose cache warms: later runs are fast)",
       r"\bfirst (?:time|run|start|call|request|step|iteration|epoch|batch|inference|forward)\b[^\n]{0,60}?\b(?:takes?"
       r"|took|needs?|needed|lasts?|lasted|costs?)\b[^\n]{0,20}?\b\d{1,4}(?:[-\u2013]\d{1,4})? ?(?:s|secs?|seconds?"
       r"|min(?:ute)?s?|hours?)\b",
       "https://github.com/syv-ai/qwen38-27b-rtx3090/issues/155 (cases-8); "
       "https://github.com/tensorflow/tensorflow/issues/22043"),
    # --- stopped: the job-control words (signal(7): SIGSTOP, SIGTSTP stop; SIGCONT continues), ps's "T" state, a
    # debugger that detached and left it stopped
    _w("told-word-stopped", "a process told as stopped (SIGSTOP / SIGTSTP, SIGCONT resumes it, state T, a debugger "
       "left it stopped)",
       r"\bSIG(?:STOP|TSTP)\b|\bSIGCONT\b|\bkill -(?:CONT|STOP|18|19)\b|\b(?:stays?|stayed|remains?|remained|remaining"
       r"|left|leaves?|is|was|still) (?:in (?:the|a) )?stopped(?: state)?\b(?! (?:working|responding|printing|logging"
       r"|at|after|when|with|because))|\bstop reason = signal\b|\bstate\W{1,3}T\b|\bT \(stopped\)"
       # the terminal's suspend key, which sends SIGTSTP, and bash's job line for a stopped job ("[1]+  Stopped
       # python train.py"): bash(1) JOB CONTROL (eleventh pass; hercules-487, cases-10, tells Ctrl-Z and `fg`)
       r"|\bctrl[-+ ]?z\b|(?<![\w^])\^Z\b|^\[\d{1,3}\][+-]?\s{1,4}Stopped\b",
       "https://man7.org/linux/man-pages/man7/signal.7.html; https://man7.org/linux/man-pages/man1/bash.1.html "
       "(JOB CONTROL); https://github.com/rwth-i6/sisyphus/issues/176"),
    # --- a GPU kernel that never finishes: a barrier in divergent code (CUDA Programming Guide: __syncthreads() in
    # conditional code only if the condition evaluates the same across the block), a kernel told as never finishing,
    # a device sync that never returns
    _w("told-word-gpu-kernel", "a GPU kernel told as never finishing (a __syncthreads() some threads never reach, a "
       "kernel or device sync that hangs)",
       r"__syncthreads\(\)|\bkernel\b[^\n]{0,40}?\bnever (?:finish|complet|return|terminat|end)\w{0,3}"
       r"|\b(?:blocking|blocks|waits?|waiting) on kernel completion\b|\b(?:GPU|device) (?:to )?hangs?\b"
       r"|\b(?:cudaDeviceSynchronize|cudaStreamSynchronize|cuda\.synchronize|cuCtxSynchronize)\b[^\n]{0,60}?"
       + _STUCK,
       "https://docs.nvidia.com/cuda/cuda-c-programming-guide/ (__syncthreads); "
       "https://github.com/tile-ai/tilelang/issues/1026"),
    # --- a wait for a completion nobody delivers: an event cleared or never set, a future whose result() blocks
    # (asyncio.Event: wait() blocks until set(); clear() resets it)
    _w("told-word-event", "an event, flag or future told as never set, cleared before the waiter saw it, or blocking "
       "its waiter",
       r"(?<![A-Za-z])(?:event|flag|condition|future|promise)\w{0,10}`?[^\n]{0,40}?\b(?:(?:is |was |gets |got )?never (?:set|fired"
       r"|signal(?:l?ed)?|resolved|notified)|(?:is |was )?already cleared|clears?|cleared|(?:is|was) not set)\b"
       r"|\bnever (?:marked|set|flagged) (?:as )?(?:done|complete|completed|finished|resolved)\b"
       # a wait on a future's result: concurrent.futures.Future.result() blocks until the future is done
       r"|\.result\(\)",
       "https://docs.python.org/3/library/asyncio-sync.html#asyncio.Event; "
       "https://docs.python.org/3/library/concurrent.futures.html#concurrent.futures.Future.result; "
       "https://github.com/encode/uvicorn/issues/748"),
    # --- a lock inherited across fork: fork(2) named as what the program does (fork(2): the child has one thread,
    # the one that called fork; a mutex another thread held stays locked in the child for ever). The precise rows
    # (prose_lexicon.py) need the lock told too; this one needs only the fork named as the mechanism
    _w("told-word-fork", "fork told as what the program does (the child of a threaded parent inherits its held locks)",
       r"\b(?:unix|posix|os\.|with|after|without|across|plain|raw) ?fork\b(?! of\b)|\bfork\(\)|\bforked\b(?! (?:repo|version"
       r"|branch|project|from))|\bfork \(without exec\)|\bpthread_atfork\b"
       r"|\b(?:calls?|called|calling|does|did|doing) (?:a |an )?`?fork\b`?(?! of\b)",
       "https://man7.org/linux/man-pages/man2/fork.2.html; https://github.com/xianyi/OpenBLAS/issues/294 (cases-8)"),
    # --- the causes the precise readers know best, told without the tool's output (second group of the tenth pass):
    # each a mechanism's everyday words that the seen sets show in several projects
    # shared memory: /dev/shm and docker's flag for its size (docker run --shm-size; --ipc=host shares the host's)
    _w("told-word-shm", "shared memory told in words (/dev/shm, a shared-memory limit or space)",
       # not docker's --shm-size: a container given a size says its /dev/shm is big enough (the precise rows read it)
       r"/dev/shm\b|\bshared memory\b[^\n]{0,40}?\b(?:full|small|limit|too|insufficient"
       r"|exhaust\w{0,4}|space)\b",
       "https://docs.docker.com/reference/cli/docker/container/run/ (--shm-size); "
       "https://github.com/fastai/docker-containers/issues/21 (cases)"),
    # a lock file: the words for one, and torch's extension build directory that keeps one
    _w("told-word-lock-file", "a lock file told in words (a lock file, a .lock to delete, torch_extensions' build lock)",
       r"\block ?file\b|\.lock\b[^\n]{0,40}?\b(?:delet|remov|rm\b)|\b(?:delet|remov)\w{0,4}\b[^\n]{0,40}?\.lock\b"
       r"|\btorch_extensions\b",
       "https://pytorch.org/docs/stable/cpp_extension.html (the build directory, TORCH_EXTENSIONS_DIR); "
       "https://github.com/NVlabs/nvdiffrast/issues/190 (cases)"),
    # a GPU gone: NVIDIA's Xid errors, nvidia-smi's "GPU is lost" / "No devices were found", "fell off the bus"
    _w("told-word-gpu-lost", "a GPU told as lost (an Xid error, fell off the bus, nvidia-smi finds no device)",
       # an Xid whose number is not a lost board's (an NVLink error, Xid 8's idle timeout) is not (thirteenth pass)
       r"\bfell off the bus\b|" + XID_DENIED + r"\bXids?\b" + XID_NOT_LOST + r"|\bGPU (?:is )?lost\b|\bNo devices were found\b"
       # the driver no longer reaching a GPU, told through NVIDIA's own tools (fourteenth pass): GPUs gone from
       # nvidia-smi's list (gpu-operator-643, cases-13), NVML's init hanging (go-nvml-152, cases-11): NVML and
       # nvidia-smi block or miss a device the driver has lost
       r"|\bGPUs? (?:have |has )?(?:disappear\w{0,3}|vanish\w{0,3}|went missing|(?:is |are )?missing)\b[^\n]{0,30}?"
       r"\b(?:in|from) `?nvidia-smi\b|\bnvml[._ ]?init\w{0,16}(?:\(\))?[^\n]{0,160}?\b(?:hangs|hanging|hung)\b",
       "https://docs.nvidia.com/deploy/xid-errors/index.html; https://github.com/wilicc/gpu-burn/issues/1 (cases-2); "
       "https://github.com/NVIDIA/gpu-operator/issues/643 (cases-13); https://github.com/NVIDIA/go-nvml/issues/152 (cases-11)"),
    # rendezvous: torch.distributed's words for the meeting point (MASTER_ADDR / MASTER_PORT, a refused connect); not
    # the word "rendezvous" itself, which the seen sets use as often for a rank that never arrived (cases-6: jax-22740,
    # marin-5480 went wrong with it)
    _w("told-word-rendezvous", "a rendezvous told in words (MASTER_ADDR / MASTER_PORT, TCPStore, a refused or timed-out connect, "
       "init_process_group hangs)",
       r"\bMASTER_(?:ADDR|PORT)\b|\bconnection (?:refused|timed out)\b|\bfirewall\b|\bTCPStore\b"
       r"|\binit_process_group\b[^\n]{0,80}?\b(?:hangs?|hung|hanging|stuck|never returns)\b",
       "https://pytorch.org/docs/stable/distributed.html (environment variable initialization); "
       "https://github.com/pytorch/pytorch/issues/69197 (cases)"),
    # the OOM killer: bash's "Killed" line, exit status 137 (128 + SIGKILL), a kill tied to memory, swapping
    _w("told-word-oom", "an out-of-memory kill told in words (Killed, exit code 137, killed for memory, swapping)",
       # not the kernel's own "Killed process N (name)": its reader ties the kill to this job's PIDs or not (scope)
       r"^\s{0,4}Killed\s{0,4}$|\bkilled\b(?! process)[^\n]{0,40}?\b(?:memory|oom|ram)\b"
       r"|\b(?:memory|ram)\b[^\n]{0,40}?\bkilled\b(?! process)"
       r"|\bswap(?:ping|ped)\b(?! (?:out|back|in|to|it|them|the|this|that|my|our|\W))|\bswap (?:usage|space|is full|full"
       r"|thrash\w{0,3})\b|\b(?:into|to|on|hits?|hitting|using) swap\b|\bswap(?:ping|ped)? (?:to|out to) disk\b|\bexit (?:code|status):? ?137\b",
       "https://man7.org/linux/man-pages/man1/bash.1.html (EXIT STATUS: 128+n); "
       "https://github.com/noelshin/selfmask/issues/11 (cases)"),
    # ranks that disagree on a collective: "mismatch", "different collectives / keys / shapes"
    _w("told-word-mismatch", "ranks told as disagreeing on a collective (a mismatch, different collectives, keys or "
       "shapes)",
       r"(?<![-\w])mismatch(?:ed|es)?\b|\bdifferent (?:collectives?|keys|number of \w{1,20}|shapes?|order)\b",
       "https://pytorch.org/docs/stable/distributed.html (TORCH_DISTRIBUTED_DEBUG=DETAIL checks collectives match); "
       "https://github.com/NVIDIA/nccl/issues/296 (cases)"),
    # a worker's death: a signal that kills by fault (SIGSEGV, SIGABRT; torchrun's negative exit codes: -11, -6)
    _w("told-word-died", "a worker told as having died of a fault (SIGSEGV / SIGABRT, exit code -11 or -6)",
       # not "a worker died" alone: the seen sets say it as often of a worker the OOM killer took (cases-8 ananse-96)
       r"\bexit ?code\W{0,4}-(?:11|6|4|8)\b|\bSIGSEGV\b|\bSIGABRT\b",
       "https://man7.org/linux/man-pages/man7/signal.7.html; https://github.com/NVIDIA/Megatron-LM/issues/1880 (cases-3)"),
    # SIGKILL: unasked, the kernel's OOM killer (torchrun's exit code -9)
    _w("told-word-sigkill", "a SIGKILL told in words (exit code -9): unasked, the kernel's OOM killer",
       r"\bexit ?code\W{0,4}-9\b|\bSIGKILL\b",
       "https://man7.org/linux/man-pages/man7/signal.7.html; https://github.com/hpcaitech/ColossalAI/issues/3172 (cases)"),
    # a rank that is late: the first rank still doing its own work (saving, evaluating, loading) while the others
    # wait, or the others told as waiting for a rank (torch.distributed's barrier waits for every rank)
    _w("told-word-late", "ranks told at different points: one rank at (or through) its own work (saving, loading), "
       "the others waiting",
       r"\b(?:only )?(?:rank ?0|the main process|the master|the first rank)\b[^\n]{0,40}?\b(?:is |was )?(?:still |busy )?"
       r"(?:saving|evaluating|writing|logging|loading|downloading|doing|processing|preprocessing|computing)\b"
       r"|\bwaiting for (?:rank|the other ranks?|other ranks?|all ranks)\b|\bother ranks\b[^\n]{0,30}?\bwait",
       "https://pytorch.org/docs/stable/distributed.html (barrier); https://github.com/pytorch/pytorch/issues/87995 "
       "(cases-8)"),
    # --- a collective hang: nccl-tests' binaries (all_reduce_perf, sendrecv_perf, ...) run nothing but NCCL
    # collectives, so a hang there is the transport's, no application logic between the ranks (eleventh pass:
    # nccl-tests-117 in cases, nccl-tests-200 in cases-10)
    _w("told-word-nccl-tests", "an nccl-tests binary named (it runs only NCCL collectives: a hang there is the "
       "transport's)",
       r"\b(?:all_reduce|all_gather|broadcast|reduce_scatter|reduce|alltoall|sendrecv|scatter|gather|hypercube)_perf\b",
       "https://github.com/NVIDIA/nccl-tests (README: the tests); https://github.com/NVIDIA/nccl-tests/issues/117 "
       "(cases)"),
    # --- a starved CPU: a CPU limit named (twelfth pass): docker's --cpus / --cpu-quota, cgroup v2's cpu.max and v1's
    # cfs_quota_us, cpu.stat's nr_throttled, a Kubernetes CPU limit, cores pinned, a fraction of a vCPU. A job sized
    # for the machine's cores runs more threads than the quota allows and is throttled (seen: 311-data-994 "0.5
    # vCPUs", cases-8; hypergbm-93 "the resource limits", cases-10; nvidia-docker-757 --cpu-quota, ollama-17916
    # "pinned to 4 CPUs", cases-11)
    _w("told-word-cpu-limit", "a CPU limit told (a container's CPU quota, cores pinned, a fraction of a vCPU)",
       # not a memory limit told beside the CPU ("the CPU memory limit", "limits the CPU RAM")
       r"\b(?:cpu|cpus|cores?|vcpus?)\b(?![^\n]{0,24}?\b(?:memory|ram|mem)\b)[^\n]{0,40}?\b(?:limits?|quotas?|pinned"
       r"|capped)\b"
       r"|\b(?:limits?|quotas?|pinned|capped)\b[^\n]{0,30}?\b(?:to |at )?(?:\d{1,4}(?:\.\d{1,3})? )?(?:cpu|cpus|cores?"
       r"|vcpus?)\b(?! ?(?:memory|ram|mem)\b)|--cpu-quota\b|--cpus\b|\bcpu\.max\b|\bcfs_quota_us\b|\bnr_throttled\b|\b\d?\.\d{1,3} ?vCPUs?\b",
       "https://docs.docker.com/engine/containers/resource_constraints/ (--cpus, --cpu-quota); "
       "https://docs.kernel.org/admin-guide/cgroup-v2.html (cpu.max, cpu.stat nr_throttled); "
       "https://github.com/DataCanvasIO/HyperGBM/issues/93 (cases-10)"),
    # --- a lock inherited across fork: logging named with multiprocessing or a fork (twelfth pass). logging's handler
    # lock and the stream's buffer lock are the locks a fork most often copies held: a thread of the parent was
    # writing a record when it forked, and the child's first record waits on it for ever (CPython bpo-6721; the
    # logging cookbook: logging to one file from several processes is not supported). Seen: prunemate-29 (cases-7:
    # a scheduler thread logging, then gunicorn forks), multiprocessing-logging-26 (cases-11)
    _w("told-word-fork-logging", "logging told together with multiprocessing or a fork (its lock copied held across "
       "fork)",
       r"\b(?:multiprocessing|billiard)\b[^\n]{0,80}?\blogg(?:ing|er)\b"
       # not a repository's fork ("logging from my fork of the repo")
       r"|\blogg(?:ing|er)\b[^\n]{0,80}?\b(?:multiprocessing|billiard|fork(?:s|ed|ing)?)\b"
       r"(?! of\b| (?:repo|repository|version|branch|project)\b)",
       "https://github.com/python/cpython/issues/50970 (bpo-6721: locks in the standard library should be sanitized on "
       "fork); https://docs.python.org/3/howto/logging-cookbook.html (logging to a single file from multiple "
       "processes); "
       "https://github.com/anoniemerd/PruneMate/issues/29 (cases-7)"),
    # --- still loading: a load of the model told as slow or still going (twelfth pass): "the model is still loading",
    # "loading weights take very long", "model loading speed", "Loading checkpoint shards ... take me so long". A
    # load's time grows with the checkpoint and the storage it is read from; a server answers only when it is done
    # (seen: vllm-35547, cases-4; vllm-2253, cases-9; kolors-wrapper-6, cases-10; freetoken-237, cases-11). Not the
    # word "model loading" alone: the seen sets say it of ranks that wait at a barrier after their load too
    _w("told-word-load-slow", "a model load told as slow or still going (the model is still loading, loading the "
       "weights takes long)",
       r"\b(?:is |are )?still (?:loading|downloading)\b"
       r"|\b(?:loading|load) (?:the )?(?:model|weights|checkpoints?(?: shards)?)\b[^\n]{0,60}?\b(?:takes?|took|taking"
       r"|slow|slowly|forever|\d{1,4} ?(?:minutes|mins|hours))\b"
       r"|\b(?:model|weights?|checkpoint) (?:loading|load)\b[^\n]{0,40}?\b(?:takes?|took|taking|slow|slowly|forever"
       r"|speed|\d{1,4} ?(?:minutes|mins|hours))\b",
       "https://huggingface.co/docs/transformers/main/en/big_models (loading large models: sharded checkpoints); "
       "https://github.com/vllm-project/vllm/issues/35547 (cases-4)"),
)
