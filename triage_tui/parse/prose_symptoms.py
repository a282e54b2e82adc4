"""The symptom as the reporter tells it: "it seems stuck", "hangs after loading", "taking too long", "no output".

Almost every paste says what was seen before (or instead of) showing why; many hold nothing else (a screenshot and
"it seems the training is stuck", a CI link that "hangs in nightly", a script whose comment says "# This hangs.").
The prose lexicon's rows (prose_lexicon.py) read a mechanism told in words; these read the symptom: the reporter's
own statement that the job stalls, is slow or shows nothing. It is what the whole paste is about, so it is read and
said (`told-stall`, shown as an observation, the piece it is in counted as used), but it is evidence for no cause:
every cause in the vocabulary, and a healthy job that is only slow, looks stuck to someone. No rule row names it
(tests/unit/test_vocabulary.py lists it among the informational ids).

Read with the prose lexicon's machinery (each line alone, then each paragraph as one line). Patterns are linear:
alternations of literals and bounded gaps. Sources: the seen cases (tests/corpus/cases .. cases-17) whose only
readable words these are; the wordings are the common English (and Chinese) words for a stall, not theirs alone.
"""

from __future__ import annotations

import re

from .lazy_pattern import lazy_compile
from .signal_lexicon import Signal

MEANS = ("the symptom in the reporter's words (it stalls, hangs, is slow or shows nothing): what was seen, not why; "
         "evidence for no cause by itself")


def _t(pattern: str, source: str) -> Signal:
    return Signal("told-stall", MEANS, lazy_compile(pattern, re.I), source, False, False)  # compiled when first used


SYMPTOMS: tuple[Signal, ...] = (
    # a stall word: "seems stuck", "hangs in nightly", "the training freezes", "it stucks here", "silently hang"
    _t(r"\b(?:hangs?|hanging|hung|stuck|stucks|stucked|freez(?:es|ing)|froze|frozen|stalls?|stalled|stalling"
       r"|unresponsive|not responding|deadlock(?:s|ed)?)\b",
       "https://github.com/James-QiuHaoran/LLM-serving-with-proxy-models/issues/4; "
       "https://github.com/tenstorrent/tt-xla/issues/4004; https://github.com/ray-project/ray/issues/2541; "
       "https://github.com/Parsl/parsl/issues/738; https://github.com/mr-guard/dayz-server-manager/issues/75"),
    # slowness and endless waits told without a stall word: "epoch is taking too long", "takes a long time before
    # training", "waiting for a long time", "appears to be starting indefinitely", "keeps running endlessly", "there
    # is waiting time every 1000 steps"
    _t(r"\b(?:tak(?:es|ing|e)|took)\b[^\n]{0,20}?\b(?:(?:too|very|so|really|extremely|a) long|forever|ages|hours)\b"
       r"|\b(?:wait(?:s|ed|ing)?)\b[^\n]{0,12}?\b(?:for )?(?:a |so |very |really )?(?:long time|forever|ages)\b"
       r"|\bwaiting time\b"
       r"|\b(?:starting|loading|running|waiting|spinning|continues?) (?:indefinitely|forever|endlessly)\b"
       r"|\b(?:very|extremely|really|super|too|so|painfully|incredibly) slow(?:ly)?\b"
       r"|\bnever (?:finishes|returns|completes|ends|terminates)\b",
       "https://github.com/MIC-DKFZ/nnUNet/issues/239; https://github.com/Yusufma03/pfrnns/issues/8; "
       "https://github.com/theislab/scarches/issues/100; "
       "https://github.com/homelab-00/TranscriptionSuite/issues/207"),
    # progress that stopped at a percentage: "Program stoped at 34% in last epoch" (the reporter's spelling too)
    _t(r"\b(?:stop(?:p?ed|s)?|halt(?:ed|s)?|paused?) at \d{1,3}(?:\.\d{1,2})? ?%",
       "https://github.com/Linketic/CityGaussian/issues/106"),
    # output that comes late, after a long run: "the tool run a long time before I can see the long output", "the
    # log appears only after the program ends", "runs for a very long time", "want the log output immediately"
    _t(r"\b(?:runs?|running|ran)\b (?:for )?(?:a |so |such a |very |really )?(?:very )?long time\b"
       r"|\bbefore (?:i|we|you) (?:can |could )?see (?:the |any )?(?:[a-z]{1,20} )?(?:output|logs?|progress|prints?)\b"
       r"|\b(?:output|logs?|prints?)\b (?:only )?(?:appears?|shows? up|comes?|came|arrives?) (?:only )?"
       r"(?:after|at the end|all at once|late)\b"
       r"|\b(?:output|logs?|prints?) (?:output )?(?:immediately|right away|in real[ -]?time)\b",
       "https://github.com/chriskiehl/Gooey/issues/225"),
    # nothing shown: "no meaningful download progress is displayed", "the training progress is not shown"
    _t(r"\bno (?:meaningful |visible |more |further |new )?(?:[a-z]{1,20} )?(?:output|progress|response|logs?|feedback)\b"
       r"|\b(?:progress|output|logs?)(?: bar)? (?:is |are )?(?:not|never) (?:shown|displayed|printed|updated|appearing)\b",
       "https://github.com/homelab-00/TranscriptionSuite/issues/207; https://github.com/theislab/scarches/issues/100"),
    # the same in Chinese: 卡住 / 卡死 / 卡在 (stuck), 很慢 / 特别慢 (very slow), 没有反应 (no response). Chinese
    # characters are word characters: no \b
    _t(r"卡住|卡死|卡在|卡顿|(?:很|特别|非常|太|极其)慢|没有?反应|无响应",
       "https://github.com/QwenLM/Qwen/issues/970"),
)
