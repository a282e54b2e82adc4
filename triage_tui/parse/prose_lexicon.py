"""The prose lexicon: a mechanism told in words (issue bodies, chat), what each wording is evidence for, and where
it was learned. Data, not code, like the signal lexicon (signal_lexicon.py), and read only by `triage diagnose`.

The signal lexicon holds what programs print (a log line, a kernel line); a live log tail is scanned with it. The
rows here hold what people write when they explain a hang ("the child inherits the lock held at fork time", "the
executor segfaults and the main process hangs", "not all of them arrived"): no program prints that, so the live
engine never reads them. A paste is scanned with both.

People wrap their sentences: a paragraph (a run of prose lines without a blank line) is also read as one line, so
a story told over two lines is found; each hit keeps the number of the line it starts on.

Sources: every row names a case of the corpus's seen sets (tests/corpus/cases .. cases-6) it was learned from; the
module's tests (tests/unit/test_prose_lexicon.py) show each row on the real text of the seen cases it fires on.
Patterns are linear like the signal lexicon's: bounded gaps ({0,200}), alternations of literals.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from .lazy_pattern import lazy_compile
from .negation import stated_match
from .prose_breadth import BREADTH
from .prose_languages import HEDGE as OTHER_HEDGE
from .prose_languages import SIGNALS as OTHER_LANGUAGES
from .prose_mechanisms import MECHANISMS
from .prose_mined import MINED_SIGNALS
from .prose_symptoms import SYMPTOMS
from .signal_lexicon import HEDGE, Signal

# a paragraph read as one line is cut here (a prose paragraph is far shorter; a pasted blob is not prose)
MAX_PARAGRAPH = 8000


def _p(oid: str, means: str, pattern: str, source: str, stated: bool = False) -> Signal:
    return Signal(oid, means, lazy_compile(pattern, re.I), source, False, stated)  # compiled when first used


# a fork named as the mechanism (os.fork(), "forks the worker", "forked child", "after fork", "got forked"), never
# a repository's fork ("my fork of the repo")
_FORK = (r"(?:\bos\.fork\(\)|\bfork\(\)|\bfork(?:s|ed|ing)? (?:off )?(?:the |a |its |new |worker )?(?:process(?:es)?|workers?"
         r"|child(?:ren)?|subprocess(?:es)?)\b|\bforked (?:child|children|process(?:es)?|workers?|subprocess(?:es)?)\b"
         r"|\bafter (?:a |the )?fork\b|\b(?:got|been|be|is|was|were) forked\b|\bfork (?:start method|context|mode)\b"
         # fork(2) named as a call the program makes ("after the process calls fork", "does a `fork` followed by an
         # exec"; eleventh pass: openpbs-1588, cases-9, google-cloud-python-4992, cases-10)
         r"|\b(?:calls?|called|calling|does|did|doing) (?:a |an )?`?fork\b`?(?! of\b))")
_LOCKED = r"\b(?:lock(?:s|ed)?|deadlock(?:s|ed)?|hangs?|hanging|hung|stuck)\b"
_NETFS = (r"\b(?:nfs[34]?|lustre|gpfs|cephfs|ceph-fuse|beegfs|cifs|smb|sshfs|s3fs|gcsfuse|network (?:storage|filesystem"
          r"|file system|drive))\b")
_HANG = r"\b(?:hangs?|hanging|hung|stuck|waits?|waiting|blocks?|blocked|deadlock(?:s|ed)?)\b"

# NCCL's knobs that turn a transport or a protocol off (P2P, shared memory, InfiniBand, NVLS, the LL protocols),
# set to a value: "NCCL_P2P_DISABLE=1", "NCCL_LL_THRESHOLD=0", "NCCL_PROTO=Simple"
_NCCL_KNOB = (r"\bNCCL_(?:P2P_DISABLE|SHM_DISABLE|IB_DISABLE|NVLS_ENABLE|LL_THRESHOLD|LL128_THRESHOLD|PROTO|ALGO"
              r"|P2P_LEVEL|NET_GDR_LEVEL|CUMEM_ENABLE|P2P_USE_CUDA_MEMCPY)\s{0,2}=\s{0,2}[\w,^]{1,16}")

PROSE: tuple[Signal, ...] = (
    # --- a lock inherited across fork
    _p("told-fork-lock", "a lock inherited across fork, told in words (a thread held it when the process forked; "
       "in the child no thread can release it)",
       _FORK + r"[^\n]{0,200}?" + _LOCKED + r"|\b(?:lock(?:s|ed)?|deadlock(?:s|ed)?)\b[^\n]{0,200}?" + _FORK,
       "https://github.com/getsentry/sentry-python/issues/6149"),
    _p("told-fork-lock", "a worker or child blocked on a lock, told in words (the lock a forked child inherits held)",
       r"\b(?:workers?|child(?:ren)?|subprocess(?:es)?)\b[^\n]{0,40}?\b(?:is |are )?(?:blocked|stuck|hangs?|hanging|waits?"
       r"|waiting|deadlock(?:s|ed)?)\b[^\n]{0,80}?\block\b",
       "https://github.com/benoitc/gunicorn/issues/3529"),
    # --- a worker that died while the others wait for it
    _p("log-segfault", "a segmentation fault", r"\bsegfault(?:s|ed|ing)?\b|\bseg(?:mentation)?[ -]faults?\b",
       "https://github.com/ojii/django-better-test/issues/3"),
    _p("told-crash-others-wait", "a worker died (crashed, raised, segfaulted) and the others wait for it, told in words",
       r"\b(?:hangs?|hanging|hung|stuck|waits?|waiting|deadlocks?)\b[^\n]{0,60}?\b(?:after|on|during|because of) (?:an? |the )?"
       r"(?:exception|error|crash)\b|\b(?:exception|crash(?:es|ed)?|dies|died|raises?|raised|segfaults?|segfaulted)\b"
       r"[^\n]{0,80}?\b(?:the )?(?:main|parent|master|other|remaining|rest of the)(?: gpu)? (?:workers?|ranks?|process(?:es)?"
       r"|nodes?)\b[^\n]{0,60}?" + _HANG,
       "https://github.com/dmlc/xgboost/issues/11217"),
    # --- a rank, host or task that never joined
    _p("log-rank-late", "some ranks never arrived (still starting, pending or gone) while the others wait, told in words",
       r"\bnot all (?:of )?(?:them|the \w{1,20}|ranks|hosts|workers|processes|nodes|threads|participants|peers|tasks) "
       r"(?:have )?(?:arrived|joined|reached|checked in|connected|registered)\b"
       r"|\b(?:(?:its |a |the )?siblings?(?: replicas?| tasks?| hosts?| nodes?)?|other (?:hosts?|ranks?|workers?|replicas?|nodes?"
       r"|tasks?)|(?:a )?(?:random )?(?:subset|some) of (?:the )?(?:hosts|ranks|workers|replicas|nodes|tasks))\b[^\n]{0,30}?"
       r"\bstill (?:pending|provisioning|loading|starting|booting|initiali[sz]ing|setting up|syncing|doing)\b"
       r"|\b(?:the )?(?:other|remaining|already[- ]registered)(?: gpu)?(?: \d{1,7})? (?:processes|ranks|workers|hosts|nodes|tasks)\b"
       r"[^\n]{0,30}?\b(?:wait(?:s|ed|ing)?|hit \w{0,20}(?:DEADLINE|timeout)\w{0,20}|time out|timed out)\b"
       # one rank goes on (or leaves) while the others stay behind
       r"|\b(?:rank ?\d{1,5}|one rank|a rank|one (?:host|node|process|worker)|host ?\d{1,4}|the (?:main|first) process)\b"
       r"[^\n]{0,30}?\b(?:proceeds?|continues?|goes on|moves on|is ahead|skips?|skipped|exits? first|exited first"
       r"|leaves? (?:early|first))\b[^\n]{0,80}?\b(?:other|remaining|rest)\b",
       "https://github.com/marin-community/marin/issues/5480"),
    # --- memory that keeps growing (toward the OOM killer)
    _p("told-memory-grows", "memory that keeps growing, told in words (a leak or an unbounded buffer, toward the OOM "
       "killer)",
       r"\b(?:memory|RAM|RSS|mem)\b[^\n]{0,40}?\b(?:larger and larger|bigger and bigger|keeps? (?:growing|increasing|rising"
       r"|going up)|grows?|growing|increas(?:es|ing)|rising|climbs?|climbing|goes up|went up|explod(?:es|ed|ing))\b",
       "https://github.com/ZhehengJiangLancaster/AMVUR/issues/2"),
    # --- I/O the kernel cannot interrupt
    _p("told-d-state", "a process in uninterruptible sleep (D state), told in words: a wait on I/O that not even "
       "SIGKILL ends",
       r"\bD[- ]state\b|\bstate[: ]{1,2}[`'\"]?D[`'\"]?(?![\w-])|\buninterruptible\b[^\n]{0,20}?\b(?:sleep|wait|I/O|IO|state"
       r"|disk)|\bdisk[- ]?wait\b"
       r"|\b(?:cannot|can't|could not|couldn't) be killed\b|\bunkillable\b"
       # the same state told in Chinese ("处于D状态", "不可中断睡眠"): Chinese characters are word characters, so no \b
       # before the D (eleventh pass; the wording is the one ps(1) names, right in English on cases-3, -6 and -9)
       r"|(?<![A-Za-z0-9])D ?状态|不可中断(?:睡眠|的睡眠|状态)",
       "https://github.com/marmos91/dittofs/issues/670; https://man7.org/linux/man-pages/man1/ps.1.html (D)"),
    # NFS is the one the seen cases name; the others are the same mechanism under another name (a networked
    # filesystem whose server stops answering blocks every access in the kernel)
    _p("told-netfs-stuck", "a network filesystem that stops answering (NFS): every access to it blocks in the kernel",
       _NETFS + r"[^\n]{0,120}?\b(?:not available|unavailable|not respon\w{0,5}|unresponsive|unreachable|hangs?|hung"
       r"|hanging|stuck|blocked|D[- ]state)\b|\b(?:hangs?|hung|hanging|stuck|blocked)\b[^\n]{0,120}?" + _NETFS +
       r"|\btype nfs4?\b[^\n]{0,300}?[(,]hard[,)]",
       "https://github.com/giampaolo/psutil/issues/1931"),
    # --- two threads each waiting for the other's lock (eighth pass): a lock, mutex or the GIL held by another thread
    # that itself waits — the cycle a deadlock is, as a debugger session tells it
    _p("told-lock-cycle", "a lock cycle told in words: a thread waits for a lock held by another thread that waits too",
       r"\b(?:mutex|lock|GIL|semaphore)\b[^\n]{0,40}?\b(?:owned|held)\b[^\n]{0,20}?\bby (?:another|a|the other|a second) "
       r"thread\b[^\n]{0,60}?\b(?:waiting|waits|blocked|trying to acquire)\b",
       "https://github.com/ceph/ceph/pull/38677"),
    # the same cycle with the debugger's thread numbers (ninth pass): "thread 0 waits for threads to complete /
    # thread 1 is waiting for gc futex, locked by thread 0": a thread waits, and another waits for a lock it holds
    _p("told-lock-cycle", "a lock cycle told in words: a thread waits for a lock held by another thread that waits too",
       r"\bthread \d{1,4}\b[^\n]{0,20}?\b(?:waits|is waiting|is blocked|blocks)\b[^\n]{0,120}?\bthread \d{1,4}\b[^\n]{0,20}?"
       r"\b(?:waits|is waiting|is blocked|blocks)\b[^\n]{0,60}?\b(?:locked|held|owned)\b[^\n]{0,10}?\bby thread \d{1,4}\b"
       r"|\bthread \d{1,4}\b[^\n]{0,20}?\b(?:waits|is waiting|is blocked|blocks)\b[^\n]{0,60}?\b(?:locked|held|owned)\b"
       r"[^\n]{0,10}?\bby thread \d{1,4}\b[^\n]{0,120}?\bthread \d{1,4}\b[^\n]{0,20}?\b(?:waits|is waiting|is blocked|blocks)\b",
       "https://github.com/colesbury/gilectomy/issues/11"),
    # --- a completion nobody delivers (eighth pass): a request, future, callback or event that "never received" /
    # "never completes" / "never fires" while the rest runs — the waiter waits for a result nobody will send
    _p("told-never-completes", "a request, future or event that never completes, told in words (nobody delivers its "
       "result)",
       r"\b(?:requests?|futures?|promises?|callbacks?|responses?|events?|calls?)\b[^\n]{0,60}?\bnever (?:received|gets?|got"
       r"|completes?|completed|resolves?|resolved|returns?|returned|fires?|fired|arrives?|arrived)\b",
       "https://github.com/sgl-project/sglang/issues/33858"),
    # --- a hang only when the work goes to forked DataLoader workers (eighth pass): num_workers > 0 and a hang
    # within a sentence, either order. The workers are forked from a process whose thread pools (OpenMP, OpenCV)
    # may hold a lock at that moment; shared memory is the other suspect (its own rows say so when it shows)
    _p("told-workers-hang", "a hang only with DataLoader worker processes (num_workers > 0), told in words",
       r"\bnum_workers\s{0,2}(?:>|>=|!=)\s{0,2}[01]\b[^\n]{0,120}?" + _HANG + r"|" + _HANG +
       r"[^\n]{0,120}?\bnum_workers\s{0,2}(?:>|>=|!=)\s{0,2}[01]\b",
       "https://github.com/albumentations-team/albumentations/issues/1825"),
    # --- CPU (eighth pass, from the seen sets cases .. cases-7): the mechanism's own words, in two languages
    _p("told-infinite-loop", "an infinite loop, told in words (the CPU spins without progress)",
       r"\binfinite(?:ly)? loop(?:s|ing)?\b|\bloops? (?:forever|endlessly)\b|\bspins? forever\b|\bbusy[- ]loop(?:s|ing)?\b"
       r"|\bbusy[- ]wait(?:s|ing)?\b|死循环|无限循环",
       "https://github.com/vllm-project/vllm/issues/43941"),
    _p("told-oversubscribed", "more threads than cores, told in words (each worker starts its own thread pool: they "
       "wait for a CPU, not for work)",
       r"\boversubscri(?:bed|ption|be|bing)\b|\btoo many threads\b|\b(?:spawn|start|creat|launch)\w{0,4} (?:multiple|many"
       r"|several|their own|too many) (?:internal |worker |OpenMP |OMP |BLAS |MKL )?threads\b",
       "https://github.com/eduardoAcunaEspinoza/Hy2DL/issues/48"),
    # --- a lock file (eighth pass, from the seen sets cases .. cases-7): torch calls its build directory's lock a
    # "baton" (torch.utils.file_baton.FileBaton); a baton that blocks, or a wait on it, is a wait on a lock file
    _p("log-file-lock", "a wait on a lock file, told in words (torch's build-directory 'baton')",
       r"\b(?:file ?)?baton\b[^\n]{0,60}?\b(?:block(?:s|ed|ing)?|wait(?:s|ed|ing)?|stuck|hangs?|hanging|spin(?:s|ning)?"
       r"|lock(?:ed|_file\w{0,20})?)\b|\b(?:blocked|stuck|waiting|waits|hangs?|spins?) (?:on|by|in|for) (?:the |a )?"
       r"(?:torch |file ?)?baton\b",
       "https://github.com/AnswerDotAI/RAGatouille/issues/245"),
    # --- slow, not stuck
    _p("log-compiling", "compiling (JIT / CUDA graphs / Triton / autotuning), told in words",
       r"\bcompil(?:ation|e|ing)\b[^\n]{0,40}?\b(?:time|takes?|took|taking|slow|slower|long|minutes?|hours?|min)\b"
       r"|\b(?:was|is|still|were|keeps?) compiling\b|\b(?:when|while|during) compil(?:ing|ation)\b",
       "https://github.com/pytorch/pytorch/issues/148073"),
    _p("log-loading", "loading weights, told in words (minutes to load or initialise, every rank reading the checkpoint)",
       r"\b(?:takes?|took|taking)\b[^\n]{0,30}?\b\d{1,4}\+? ?(?:min(?:ute)?s?|hours?|h)\b[^\n]{0,40}?\bto (?:complete )?"
       r"(?:load|initiali[sz]e|start)|\b(?:each|every) (?:rank|process|worker|gpu)\b[^\n]{0,20}?\b(?:reads?|loads?)\b"
       r"[^\n]{0,30}?\b(?:ckpt|checkpoint|weights|model)",
       "https://github.com/Lightning-AI/pytorch-lightning/issues/21017"),
    # the phase named first, then how long it takes (eighth pass): "loading checkpoint takes 30 minutes", and in
    # Chinese, "loading checkpoint 需要30分钟" / "加载模型要半小时" (需要/要/花了/用了/耗时 = takes; 分钟 minutes,
    # 小时 hours, 半小时 half an hour)
    _p("log-loading", "loading weights, told in words (the load phase named, and the minutes or hours it takes)",
       r"\bloading (?:the )?(?:checkpoints?|ckpt|weights|model|shards|checkpoint shards)\b[^\n]{0,40}?\b(?:takes?|took"
       r"|taking|needs?|lasts?|lasted|for)\b[^\n]{0,20}?\b\d{1,4}\+? ?(?:min(?:ute)?s?|hours?|h)\b"
       r"|(?:\bloading (?:the )?(?:checkpoints?|ckpt|weights|model|shards)\b|加载|载入)[^\n]{0,30}?"
       r"(?:需要|要|花了|用了|耗时|花费|得)\s{0,2}(?:\d{1,4}\s{0,2}(?:多)?(?:分钟|小时|个小时|min)|半小时|半个小时)",
       "https://github.com/modelscope/ms-swift/issues/7058"),
    # a cold start or a weight phase and the minutes it takes (ninth pass): "full cold-start completes in ~12
    # minutes", "weight loading took 40 minutes"; not "did not finish within 20 minutes" (a load that never ends
    # is no slow load: sglang#37806's faults on Lustre)
    _p("log-loading", "loading weights, told in words (a cold start or weight phase, and the minutes or hours it takes)",
       r"\b(?:cold[- ]start|weights? (?:loading|materiali[sz]ation|load)|(?:model|checkpoint) loading)\b[^\n]{0,40}?"
       r"(?<!not )(?<!never )(?<!n't )\b(?:takes?|took|taking|completes?|completed|finish(?:es|ed)?|lasts?|lasted)\b"
       r"[^\n]{0,12}?(?:\bin |\babout |~|\bover )?"
       r"~?\d{1,4}\+? ?(?:min(?:ute)?s?|hours?|h)\b",
       "https://github.com/vllm-project/vllm/issues/40988"),
    # --- a hang that a transport or protocol knob of NCCL avoids (ninth pass, from the seen sets): "works with
    # NCCL_P2P_DISABLE=1", "if I set NCCL_NVLS_ENABLE=0 the deadlock is not reproducing", "worked around it by
    # NCCL_LL_THRESHOLD=0": what the knob turns off (GPU peer-to-peer, shared memory, InfiniBand, NVLink SHARP, a
    # protocol) is where the collective hung
    _p("told-transport-knob", "a hang that goes away when an NCCL transport or protocol is turned off, told in words: "
       "the collective hung in that transport",
       r"\b(?:works?|worked|working|fix(?:es|ed)?|resolves?|resolved|solves?|solved|avoids?|avoided|workaround|worked "
       r"around|not reproduc\w{0,3}|goes away|went away|disappears?)\b[^\n]{0,120}?" + _NCCL_KNOB + r"|" + _NCCL_KNOB +
       r"[^\n]{0,120}?\b(?:works?|worked|fix(?:es|ed)?|resolves?|resolved|solves?|solved|avoids?|avoided|not reproduc\w{0,3}"
       r"|goes away|went away|disappears?)\b",
       "https://github.com/NVIDIA/nccl/issues/2079"),
    # --- a hang that another implementation of the GPU kernel avoids (ninth pass): "the workaround is using triton
    # kernel for the prefill: --gdn-prefill-backend triton", "works with VLLM_ATTENTION_BACKEND=XFORMERS": the kernel
    # that was swapped out is the one that never finished
    _p("told-kernel-swap", "a hang that goes away with another implementation of a GPU kernel, told in words: the kernel "
       "swapped out is the one that never finished",
       r"\b(?:workaround|work-around|works?|worked|fix(?:es|ed)?|avoids?|avoided|resolves?|resolved|solves?|solved|goes "
       r"away|no longer hangs)\b[^\n]{0,80}?(?:\b(?:using|use|switch(?:ing)? to|with)\b[^\n]{0,20}?\b(?:triton|flashinfer"
       r"|flash[-_ ]?attn|xformers|sdpa|cutlass)\b[^\n]{0,20}?\b(?:kernels?|backend)\b|--[\w-]{0,30}(?:attention|attn|prefill"
       r"|decode|moe|gemm|sampling|kernel)[\w-]{0,20}backend[= ]\w{1,20}|\bVLLM_ATTENTION_BACKEND=\w{1,20})",
       "https://github.com/flashinfer-ai/flashinfer/issues/3986"),
    # --- a collective some ranks never call (eleventh pass, from the seen sets): torch.distributed's rule that every
    # rank of the group must call each collective, told as the ranks that skip it ("the non-participating ranks never
    # post the matching collective", "ranks 6/7 hadn't scheduled their side"), or shown as code: a collective under a
    # rank test ("if rank != 3: torch.distributed.barrier()")
    _p("told-collective-skipped", "a collective that some ranks never call, told in words or shown as code (every rank "
       "of the group must call it: the ones that did wait for the rest)",
       r"\branks?\b[^\n]{0,60}?\b(?:never (?:post|call|reach|enter|issue|schedul)\w{0,3}|(?:hadn'?t|had not|haven'?t|have not"
       r"|didn'?t|did not|don'?t|do not|does not|doesn'?t) (?:yet )?(?:scheduled?|called?|reached?|posted?|issued?|enter(?:ed)?))"
       r"\b[^\n]{0,60}?\b(?:collective|side|barrier|broadcast\w{0,12}|all_?reduce|all_?gather\w{0,6}|a2a|all_to_all\w{0,8}"
       r"|the matching)\b|\bmatching collective\b"
       r"|\bif\s{1,3}(?:self\.)?(?:rank|local_rank|global_rank|args\.rank|\w{0,20}get_rank\(\))\s{0,2}(?:!=|==|>=|<=|>|<)"
       r"\s{0,2}\d{1,3}\s{0,2}:\s{1,40}(?:torch\.)?(?:distributed|dist)\.(?:barrier|all_reduce|broadcast\w{0,12}"
       r"|all_gather\w{0,12}|reduce\w{0,12}|gather|scatter)\b",
       "https://pytorch.org/docs/stable/distributed.html (collective functions: all processes of the group must call "
       "them); https://github.com/pytorch/pytorch/issues/138322 (cases-9)"),
    # --- a lock-order deadlock told by its name (eleventh pass): two locks taken in opposite orders, the term of the
    # Linux kernel's lockdep ("possible circular locking dependency detected") and of ThreadSanitizer
    # ("lock-order-inversion (potential deadlock)"); not the bare word "deadlock" (most seen threads that say it have
    # another cause) nor "lock order" near a lock file
    _p("told-lock-order", "two locks taken in opposite orders, told in words (a lock-order inversion: a deadlock cycle)",
       r"\block[- ]order[- ]inversion\b|\block[- ]ordering (?:violation|bug|problem|issue|deadlock)\b"
       r"|\b(?:opposite|reverse|reversed|inverted|inconsistent) (?:lock )?(?:acquisition )?orders? (?:on|of|for) (?:the |two |both )"
       r"?(?:locks|mutexes|mutices)\b|\bcircular locking dependency\b|\bABBA (?:dead)?lock",
       "https://www.kernel.org/doc/html/latest/locking/lockdep-design.html; "
       "https://github.com/google/sanitizers/wiki/ThreadSanitizerDeadlockDetector; "
       "https://github.com/r-spade/ormah/issues/207 (cases-10)"),
    # --- /dev/shm at the container default (eleventh pass): docker and Kubernetes give a container a 64 MB /dev/shm
    # unless told otherwise (docker run --shm-size: "default 64m"); NCCL, DataLoader workers and MPI's shared-memory
    # transport need more, and running out shows as a bus error or a segfault, not a clean error
    _p("told-shm-default-size", "/dev/shm told at the container default of 64 MB (too small for shared-memory "
       "transports and DataLoader workers)",
       r"\b64 ?(?:Mi|MiB|MB|M|m)\b[^\n]{0,40}?(?:/dev/shm|\bshm\b|\btmpfs\b|\bshared memory\b)"
       r"|(?:/dev/shm|\bshm\b|\bshared memory\b)[^\n]{0,60}?\b64 ?(?:Mi|MiB|MB|M|m)\b(?!/)",
       "https://docs.docker.com/reference/cli/docker/container/run/ (--shm-size, default 64m); "
       "https://github.com/NVIDIA/ai-cloud-validation/issues/643 (cases-10)"),
    # --- a healthy job whose output does not show (ninth pass, from the seen sets cases .. cases-8): a program's
    # stdout to a file or a pipe (a Slurm job, nohup, a container) is block-buffered, so a job that runs shows
    # nothing for hours; told as "it works when I run it directly, but as a job it outputs nothing", or "training
    # is working (the logs / results show it) but the console shows nothing"
    _p("told-output-only-stale", "the job runs but its console or output file does not move, told in words (stdout "
       "to a file or pipe is buffered: the output lags, the work does not)",
       r"\b(?:run|runs|works?|working)\b[^\n]{0,40}?\b(?:directly|interactively|in (?:the|a|my) (?:terminal|shell)|by hand)"
       r"\b[^\n]{0,200}?\b(?:as a (?:slurm |batch |sbatch )?job|(?:with|through|via|under|in) (?:sbatch|slurm|nohup|a batch "
       r"job)|in the background)\b[^\n]{0,200}?\b(?:outputs?|prints?|shows?|writes?)\b[^\n]{0,20}?\bnothing\b"
       r"|\b(?:training|it|the (?:job|run|model|process))\b[^\n]{0,10}?\b(?:is|was|keeps?) (?:working|running|progressing"
       r"|training)\b[^\n]{0,160}?\b(?:console|terminal|stdout|output|screen)\b[^\n]{0,40}?\b(?:(?:hasn'?t|has not|doesn'?t"
       r"|does not|didn'?t|did not|never|won'?t)\b[^\n]{0,20}?\b(?:show|shown|print|printed|update|updated|display|displayed)"
       # the same told affirmatively (eleventh pass; lightgbm-7394, cases-10: "training normally ..., but the console
       # shows no output for minutes")
       r"|(?:shows?|showed|prints?|printed|displays?) (?:no|nothing)\b)",
       "https://github.com/MIC-DKFZ/nnUNet/issues/2921"),
    # --- a memory figure that counts pages twice (ninth pass, from the seen sets): RSS summed over forked children
    # counts each copy-on-write page once per process ("RSS overestimates due to copy-on-write", "PSS is more
    # accurate"); mmap'd weights counted in RAM and again on the GPU ("double-counted", "misleading"): the job is
    # fine, the figure is not
    _p("told-memory-overcounted", "a memory figure that counts shared pages twice, told in words (RSS over forked "
       "children, mmap'd weights): the memory is not really used",
       r"\b(?:RSS|memory|SIZE|usage|size)\b[^\n]{0,60}?\b(?:overestimat\w{1,4}|overstat\w{1,4}|over-?count\w{0,4}"
       r"|double[- ]count\w{0,4}|counted twice)\b|\bcopy[- ]on[- ]write\b[^\n]{0,60}?\bcount\w{0,3}\b"
       r"|\bPSS\b[^\n]{0,40}?\b(?:more accurate|instead of RSS)\b|\bmmap\w{0,3}\b[^\n]{0,40}?\bdouble[- ]count\w{0,4}",
       "https://github.com/ipython/ipykernel/issues/935"),
    # --- kernels compiled at the first request (ninth pass): "the first request compiles twelve Triton kernels",
    # "JIT-compiles the kernels": a compile, slow once, not a hang
    _p("log-compiling", "compiling (JIT / CUDA graphs / Triton / autotuning), told in words (kernels compiled)",
       r"\b(?:JIT[- ])?compil(?:es|ing|ed)\b[^\n]{0,30}?\b(?:triton|cuda|jit|gpu)\b[^\n]{0,10}?\bkernels?\b",
       "https://github.com/syv-ai/qwen38-27b-rtx3090/issues/155"),
)

# the weak rows of the breadth lexicon (prose_breadth.py) are read after the precise ones, by the same machinery, and
# then the phrases mined from the seen sets by a rule (prose_mined.py), last the symptom as the reporter tells it
# (prose_symptoms.py: evidence for no cause, shown)
PROSE = PROSE + BREADTH + MINED_SIGNALS + SYMPTOMS
# the same rows' translations into the languages threads are told in (prose_languages.py, the twentieth pass): each
# feeds its English row's id, read last so that an English row that fires is the one quoted
PROSE = PROSE + OTHER_LANGUAGES
# the twenty-first pass: fixed technical terms that name a mechanism (prose_mechanisms.py: QuickEdit mode, a zombie, CFS
# throttling, fork() in a multithreaded process, lazy-apps, the GIL held, ...); their patterns skip a sentence that asks,
# supposes or denies
PROSE = PROSE + MECHANISMS


def _supposes(text: str) -> bool:
    """A line (or paragraph) that supposes rather than states, in English or another language."""
    return bool(HEDGE.search(text) or OTHER_HEDGE.search(text))

IDS = tuple(dict.fromkeys(s.id for s in PROSE))


@lru_cache(maxsize=1024)  # a pasted line repeated thousands of times is read once (bounded, like scan_line's)
def _told_rows(line: str) -> tuple[Signal, ...]:
    hits: dict[str, Signal] = {}
    for s in PROSE:
        if s.id not in hits and stated_match(s.id, s.pattern, line):
            hits[s.id] = s
    if any(s.stated for s in hits.values()) and _supposes(line):
        return tuple(s for s in hits.values() if not s.stated)
    return tuple(hits.values())


def scan_told(line: str) -> list[Signal]:
    """The prose rows a line (or a paragraph read as one line) carries: one per id; a statement row not on a line
    that supposes."""
    return list(_told_rows(line))


def told_in(numbered: Sequence[tuple[int, str]], paragraph: bool) -> list[tuple[int, str, Signal]]:
    """(line number, the words, row) of every prose row found in these lines, first hit per id: each line alone (the
    line is quoted), or with `paragraph` the lines joined into one (the words that matched are quoted, with the
    number of the line they start on). A long run of lines is read in windows of at most MAX_PARAGRAPH characters,
    each starting one line before the last one ended, so that every sentence of a long story is read once whole."""
    found: dict[str, tuple[int, str, Signal]] = {}
    if not paragraph:
        for no, line in numbered:
            for s in scan_told(line.strip()):
                found.setdefault(s.id, (no, line, s))
        return sorted(found.values(), key=lambda hit: hit[0])
    i = 0
    windows: set[str] = set()
    while i < len(numbered) - 1:
        starts: list[tuple[int, int]] = []
        pieces: list[str] = []
        at, j = 0, i
        while j < len(numbered) and (at == 0 or at + len(numbered[j][1]) < MAX_PARAGRAPH):
            piece = numbered[j][1].strip()[:MAX_PARAGRAPH]
            starts.append((at, numbered[j][0]))
            pieces.append(piece)
            at += len(piece) + 1
            j += 1
        joined = " ".join(pieces)
        if joined in windows:  # the same lines again (a repeated line): every row it carries was found already
            i = max(j - 1, i + 1)
            continue
        windows.add(joined)
        for s in PROSE:
            if s.id in found:
                continue
            m = stated_match(s.id, s.pattern, joined)
            if m is None or (s.stated and _supposes(joined)):
                continue
            no = next(n for off, n in reversed(starts) if off <= m.start())
            found[s.id] = (no, m.group(0), s)  # the words that matched: they run over several lines
        i = max(j - 1, i + 1)
    return sorted(found.values(), key=lambda hit: hit[0])
