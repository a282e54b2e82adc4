"""How many records the default directory keeps: the figures and the sentence the help and the recorder share.

Its own module, with no imports, because `triage --help` and every start parse the command line with this
sentence in it, and the recorder's module pulls in the whole model and its codec (~90 ms before the first frame).
"""

KEEP_RECORDS = 20  # in the default directory: the newest 20 records ...
KEEP_BYTES = 1024 * 1024 * 1024  # ... and no more than 1 GiB of them in all
RETENTION_TEXT = (f"the newest {KEEP_RECORDS} records and at most {KEEP_BYTES // 1024 ** 3} GiB in all are kept "
                  "(older ones are deleted when a new one starts)")
