"""Corpora: every source of training text behind one small interface.

``load_corpus(spec)`` understands:

=============================  ===================================================================
``"sample"``                   the built-in stories, medium size (~1 MB; see ``storygen``)
``"sample:small|medium|large"``  ~100 KB / ~1 MB / ~5 MB of the same stories
``"pydoc"``                    this Python's own documentation topics (``pydoc_data``): real prose
``"task:reverse"``             a synthetic task (copy, reverse, sort, add, brackets, induction;
                               parameters as in ``task:reverse:min_len=6,max_len=10``)
a path                         a .txt / .md / .jsonl file (``"text"`` field of each line), or a
                               folder of them (searched recursively, in sorted path order)
=============================  ===================================================================

A ``Corpus`` is a sequence of documents, each yielded as a stream of text chunks so that files
larger than memory never have to be read whole (``documents()``). The token cache ends each
document with ``<|endoftext|>``. ``fingerprint`` is the sha256 of the decoded text of all
documents and their boundaries: caches keyed by it follow the content, not the file name.
``list_corpora()`` describes the built-in choices for pickers.
"""
from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from .errors import DataError
from .tasks import TASKS, Task, parse_task
from .textio import check_errors_mode, read_jsonl_texts, read_text_chunks

DEFAULT_CORPUS = "sample"
DEFAULT_SAMPLE_SIZE = "medium"
TEXT_SUFFIXES = (".txt", ".md", ".jsonl")
TASK_CORPUS_EXAMPLES = 20_000  # examples in a task corpus used as plain text (seed 0)
_DOCUMENT_END = b"\xff"  # never occurs in UTF-8, so it cannot be confused with content


@dataclass(frozen=True)
class CorpusInfo:
    """One entry of ``list_corpora()``."""
    spec: str
    title: str
    description: str
    size_bytes: int | None  # None where it is only known after generating


@dataclass(eq=False)
class Corpus:
    spec: str
    title: str
    kind: str  # "sample" | "pydoc" | "task" | "file" | "folder"
    description: str
    size_bytes: int  # of the source (UTF-8), an estimate for generated corpora
    open_documents: Callable[[], Iterator[Iterator[str]]] = field(repr=False)
    task: Task | None = None
    _fingerprint: str | None = field(default=None, repr=False)

    def documents(self) -> Iterator[Iterator[str]]:
        """Each document as an iterator of text chunks (read lazily, every call starts over)."""
        return self.open_documents()

    def text(self) -> str:
        """The whole corpus in memory, documents separated by a blank line (for small corpora
        and previews; training goes through the token cache instead)."""
        return "\n\n".join("".join(doc) for doc in self.documents())

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            h = hashlib.sha256()
            for doc in self.documents():
                for chunk in doc:
                    h.update(chunk.encode("utf-8", "surrogatepass"))
                h.update(_DOCUMENT_END)
            self._fingerprint = h.hexdigest()
        return self._fingerprint


def list_corpora() -> list[CorpusInfo]:
    """The built-in corpora, for a picker (user files come from a file dialog)."""
    from . import storygen  # here, not at the top: `python -m tfstudio.data.storygen` runs it
    infos = []
    for size in storygen.SIZES:
        infos.append(CorpusInfo(
            f"sample:{size}", f"Stories ({size})",
            "Generated short stories about named people, places and objects; pronouns to "
            "resolve." + (" The default." if size == DEFAULT_SAMPLE_SIZE else ""),
            None))  # known once generated: a picker need not wait for it
    infos.append(CorpusInfo("pydoc", "Python documentation",
                            "The running Python's own help topics (pydoc_data): real English.",
                            None))
    for name, cls in TASKS.items():
        infos.append(CorpusInfo(f"task:{name}", f"Task: {name}", cls.description, None))
    return infos


def load_corpus(spec: str = DEFAULT_CORPUS, *, errors: str = "strict") -> Corpus:
    """The corpus ``spec`` names (see the module docstring). ``errors="replace"`` reads invalid
    UTF-8 in user files as U+FFFD instead of stopping."""
    check_errors_mode(errors)
    spec = spec.strip()
    head, _, rest = spec.partition(":")
    if head == "sample":
        return _sample_corpus(rest or DEFAULT_SAMPLE_SIZE)
    if head == "pydoc" and not rest:
        return _pydoc_corpus()
    if head == "task":
        return _task_corpus(parse_task(rest))
    return _path_corpus(Path(spec).expanduser(), errors)


def _single(text_source: Callable[[], Iterator[str]]) -> Callable[[], Iterator[Iterator[str]]]:
    return lambda: iter([text_source()])


def _sample_corpus(size: str) -> Corpus:
    from . import storygen
    if size not in storygen.SIZES:
        raise DataError(f"unknown sample size {size!r}; use one of "
                        f"{', '.join('sample:' + s for s in storygen.SIZES)}")
    text = storygen.sample_text(size)
    return Corpus(f"sample:{size}", f"Stories ({size})", "sample",
                  "Generated short stories (tfstudio.data.storygen).", len(text),
                  _single(lambda: iter([text])))


def _pydoc_corpus() -> Corpus:
    try:
        from pydoc_data.topics import topics
    except ImportError:
        raise DataError("this Python has no pydoc_data module (some distributions strip it); "
                        "choose another corpus") from None
    names = sorted(topics)
    return Corpus("pydoc", "Python documentation", "pydoc",
                  f"{len(names)} help topics of Python's own documentation.",
                  sum(len(topics[n].encode()) for n in names),
                  lambda: (iter([topics[n]]) for n in names))


def _task_corpus(task: Task) -> Corpus:
    def generate() -> Iterator[str]:
        examples = task.examples(TASK_CORPUS_EXAMPLES, seed=0)
        yield "".join(e.text for e in examples)
    estimate = TASK_CORPUS_EXAMPLES * len(task.example(random.Random(0)).text)
    return Corpus(task.spec, f"Task: {task.name}", "task",
                  f"{task.description} ({TASK_CORPUS_EXAMPLES:,} examples, seed 0, as text.)",
                  estimate, _single(generate), task=task)


def _path_corpus(path: Path, errors: str) -> Corpus:
    if not path.exists():
        raise DataError(f"no corpus {str(path)!r}: not a built-in name and no such file or "
                        f"folder. Use sample, sample:small|medium|large, pydoc, task:<name> "
                        f"({', '.join(TASKS)}), or a path to a .txt/.md/.jsonl file or folder")
    if path.is_dir():
        files = sorted((p for p in path.rglob("*")
                        if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES
                        and not any(part.startswith(".") for part in p.relative_to(path).parts)),
                       key=lambda p: p.relative_to(path).as_posix())
        _refuse_links_out(path, files)
        files = [p for p in files if not _is_blank(p)]
        if not files:
            raise DataError(f"{path}: the folder has no non-empty {'/'.join(TEXT_SUFFIXES)} "
                            f"files; add some text or choose another corpus")
        kind, title = "folder", f"{path.name}/ ({len(files)} files)"
    else:
        if path.suffix.lower() not in TEXT_SUFFIXES:
            raise DataError(f"{path}: unsupported file type {path.suffix or '(none)'}; use a "
                            f"{', '.join(TEXT_SUFFIXES)} file (plain UTF-8 text, or JSON Lines "
                            f"with a \"text\" field)")
        if _is_blank(path):
            raise DataError(f"{path}: the file is empty (no text to train on); choose a file "
                            f"with some text in it")
        files, kind, title = [path], "file", path.name

    def documents() -> Iterator[Iterator[str]]:
        for f in files:
            if f.suffix.lower() == ".jsonl":
                for text in read_jsonl_texts(f, errors):
                    yield iter([text])
            else:
                yield read_text_chunks(f, errors)

    return Corpus(str(path), title, kind, f"Text from {path}.",
                  sum(f.stat().st_size for f in files), documents)


def _refuse_links_out(folder: Path, files: list[Path]) -> None:
    """A corpus folder means the text inside it: a file linked from elsewhere (a link to
    /etc/passwd) is refused, naming it, rather than trained on."""
    root = folder.resolve()
    for file in files:
        real = file.resolve()
        if not real.is_relative_to(root):
            raise DataError(f"{file} links outside the corpus folder {folder} (to {real}); "
                            "copy the file into the folder, or remove the link")


def _is_blank(path: Path, probe: int = 1 << 16) -> bool:
    """True for an empty file or a small one holding only whitespace."""
    size = path.stat().st_size
    if size == 0:
        return True
    if size > probe:
        return False
    return not path.read_bytes().strip()
