"""Reading users' text files in bounded memory, with errors that say where and what to do.

Files are read in chunks of ``CHUNK_BYTES`` through an incremental UTF-8 decoder (a character
split across two chunks is handled), so a file larger than memory streams. Invalid UTF-8 stops
with the file name and the byte offset of the first bad byte, unless the caller asked for
``errors="replace"``, which turns each bad sequence into U+FFFD. A leading byte-order mark is
dropped. Line endings are kept as they are.
"""
from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Iterator

from .errors import DataError

CHUNK_BYTES = 1 << 20
ERRORS = ("strict", "replace")


def check_errors_mode(errors: str) -> None:
    if errors not in ERRORS:
        raise DataError(f'errors={errors!r} is not supported; use "strict" (stop at invalid '
                        f'UTF-8) or "replace" (read it as U+FFFD)')


def read_text_chunks(path: Path, errors: str = "strict",
                     chunk_bytes: int | None = None) -> Iterator[str]:
    """The text of ``path`` as a stream of decoded chunks."""
    check_errors_mode(errors)
    size = chunk_bytes or CHUNK_BYTES
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    consumed = 0  # bytes read from the file before the current chunk
    first = True
    with open(path, "rb") as f:
        while True:
            data = f.read(size)
            pending = len(decoder.getstate()[0])  # undecoded tail of the previous chunk
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                offset = consumed - pending + exc.start
                bad = exc.object[exc.start:exc.end]
                raise DataError(
                    f"{path}: not valid UTF-8 at byte offset {offset} (byte "
                    f"{bad.hex(' ')}: {exc.reason}). Convert the file to UTF-8, or read it "
                    f"with errors=\"replace\" (tfstudio train --errors replace) to turn bad "
                    f"bytes into U+FFFD.") from None
            consumed += len(data)
            if first and text:
                text = text.removeprefix("\ufeff")
                first = False
            if text:
                yield text
            if not data:
                return


def read_jsonl_texts(path: Path, errors: str = "strict",
                     chunk_bytes: int | None = None) -> Iterator[str]:
    """The "text" field of each line of a JSON Lines file, streamed; blank lines are skipped."""
    tail = ""
    line_no = 0
    for chunk in read_text_chunks(path, errors, chunk_bytes):
        lines = (tail + chunk).split("\n")
        tail = lines.pop()
        for line in lines:
            line_no += 1
            if line.strip():
                yield _record_text(path, line_no, line)
    if tail.strip():
        yield _record_text(path, line_no + 1, tail)


def _record_text(path: Path, line_no: int, line: str) -> str:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}, line {line_no}: not valid JSON ({exc.msg}); each line of a "
                        f".jsonl file must be one JSON object like {{\"text\": \"...\"}}") from None
    if not isinstance(record, dict) or "text" not in record:
        keys = f" (it has {', '.join(map(repr, record))})" if isinstance(record, dict) else ""
        raise DataError(f"{path}, line {line_no}: no \"text\" field{keys}; each line must be "
                        f"an object like {{\"text\": \"...\"}}")
    text = record["text"]
    if not isinstance(text, str):
        raise DataError(f"{path}, line {line_no}: \"text\" is {type(text).__name__}, expected "
                        f"a string")
    return text
