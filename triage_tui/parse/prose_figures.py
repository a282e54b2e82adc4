"""Figures quoted in sentences: "GPU util 100 % at 19 W", "0 % CPU", "stuck for 30 minutes", "RSS 425 GB".

Only where the unit and the subject are both in the sentence: a bare "100 %" says nothing. Each figure keeps
the line it came from, so the diagnosis can quote it. Patterns are bounded (a line is at most 4 KiB).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from . import prose_languages

_NUM = r"(\d{1,6}(?:\.\d{1,3})?)"
# "GPU 利用率100%" (utilisation, as a Chinese-language issue writes it); "GPU utility is always 100%" (nvidia-smi's
# GPU-Util column read as "utility": NVIDIA/nccl#238)
_GPU_UTIL = re.compile(r"\bGPU[- ]{0,2}(?:util(?:i[sz]ation|ity)?\b|usage\b|load\b|utilisation\b|利用率)[^\d\n]{0,24}?" + _NUM +
                       r"\s{0,2}%", re.I)
_UTIL_GPU = re.compile(_NUM + r"\s{0,2}% (?:GPU[- ]?)?(?:util(?:i[sz]ation)?|usage)? ?(?:on|of|for)? ?(?:the |all |every |each )?"
                       r"(?:\d{1,2} )?GPUs?\b", re.I)
# "Both GPUs locked at "100%"" (nvtop's utilisation read as the GPUs being pinned; fourteenth pass: lightning-5865)
_GPU_AT = re.compile(r"\bGPUs? (?:are |were |is |was )?(?:locked|pinned|stuck|sitting) at \"?" + _NUM + r"\s{0,2}%", re.I)
_WATTS = re.compile(r"\b" + _NUM + r"\s{0,2}W\b")
_CPU_UTIL = re.compile(r"\bCPU(?: usage| util(?:i[sz]ation)?| load)?\b[^\d\n]{0,16}?" + _NUM + r"\s{0,2}%", re.I)
_UTIL_CPU = re.compile(r"\b" + _NUM + r"\s{0,2}% ?(?:of )?CPU\b", re.I)
_STUCK = re.compile(r"\b(?:stuck|hangs?|hanging|hung|frozen|freezes?|no progress|blocked|idle|silent|waits?|waiting)\b"
                    r"[^\n.]{0,40}?\b(?:for|after|over|about|than)\s{1,3}(?:about |over |more than )?" + _NUM +
                    r"\s{0,2}(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b", re.I)
# a stuck stage whose length is told after it: "is stucked at the stage of ... and sometimes lasted for even 20 hours"
# (fourteenth pass: deepmd-kit-5117); "stucked" / "stucks" as non-native writers say it
_LASTED = re.compile(r"\b(?:stuck(?:ed)?|stucks|hangs?|hanging|hung|frozen)\b[^\n]{0,160}?\blast(?:ed|s|ing)\s{1,3}(?:for\s{1,3})?"
                     r"(?:even |about |over |more than )?" + _NUM + r"\s{0,2}(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b",
                     re.I)
# Chinese: "卡住 60+ 分钟" (stuck 60+ minutes), "在 69% 停留 66 分钟" (stayed at 69 % for 66 minutes): fourteenth pass,
# openbiliclaw-253
_STUCK_ZH = re.compile(r"(?:卡住|卡在|停留|挂起|卡死)[^\n。，]{0,12}?" + _NUM + r"\+?\s{0,2}(秒|分钟|小时)")
_ZH_SCALE = {"秒": 1, "分钟": 60, "小时": 3600}
# "stuck for hours", "hangs overnight": no number, but the order of magnitude is said
_STUCK_WORDS = re.compile(r"\b(?:stuck|hangs?|hanging|hung|frozen|blocked|idle|silent)\b[^\n.]{0,30}?\b"
                          r"(for hours|for days|for an hour|overnight|for ever|forever|indefinitely)\b", re.I)
_WORD_SECONDS = {"for hours": 7200, "for days": 172800, "for an hour": 3600, "overnight": 28800}
_RSS = re.compile(r"\b(RSS|resident memory|memory usage|RAM usage|host memory)\b[^\d\n]{0,24}?" + _NUM +
                  r"\s{0,2}(GB|GiB|MB|MiB|TB|TiB|G|M)\b", re.I)
_SCALE = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "m": 60, "min": 60, "mins": 60, "minute": 60,
          "minutes": 60, "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600}
_BYTES = {"gb": 10**9, "gib": 1 << 30, "g": 1 << 30, "mb": 10**6, "mib": 1 << 20, "m": 1 << 20, "tb": 10**12,
          "tib": 1 << 40}


@dataclass(frozen=True)
class ProseFigure:
    kind: str  # gpu-util | gpu-power | cpu-util | stuck-for | rss
    value: float  # percent, watts, seconds or bytes
    line_no: int
    line: str


def figures_in(lines: Iterable[tuple[int, str]]) -> list[ProseFigure]:
    out: list[ProseFigure] = []
    for no, line in lines:
        if len(line) > 600:  # a sentence, not a data line
            continue
        quote = line.strip()
        m = _GPU_UTIL.search(line) or _UTIL_GPU.search(line) or _GPU_AT.search(line)
        # the same figure told in another language (prose_languages.py): "GPU占用率只有2%", "CPU利用率100%"
        other = None if m else prose_languages.figure("gpu-util", line)
        if m or other is not None:
            out.append(ProseFigure("gpu-util", float(m.group(1)) if m else float(other or 0), no, quote))
            w = _WATTS.search(line)
            if w:
                out.append(ProseFigure("gpu-power", float(w.group(1)), no, quote))
        m = _CPU_UTIL.search(line) or _UTIL_CPU.search(line)
        other = None if m else prose_languages.figure("cpu-util", line)
        if m or other is not None:
            out.append(ProseFigure("cpu-util", float(m.group(1)) if m else float(other or 0), no, quote))
        m = _STUCK.search(line) or _LASTED.search(line)
        z = None if m else _STUCK_ZH.search(line)
        if m:
            out.append(ProseFigure("stuck-for", float(m.group(1)) * _SCALE.get(m.group(2).lower(), 1), no, quote))
        elif z:
            out.append(ProseFigure("stuck-for", float(z.group(1)) * _ZH_SCALE[z.group(2)], no, quote))
        elif prose_languages.figure("stuck-for", line) is not None:
            out.append(ProseFigure("stuck-for", float(prose_languages.figure("stuck-for", line) or 0), no, quote))
        else:
            w = _STUCK_WORDS.search(line)
            if w and w.group(1).lower() in _WORD_SECONDS:
                out.append(ProseFigure("stuck-for", float(_WORD_SECONDS[w.group(1).lower()]), no, quote))
        m = _RSS.search(line)
        if m:
            out.append(ProseFigure("rss", float(m.group(2)) * _BYTES.get(m.group(3).lower(), 1), no, quote))
    return out
