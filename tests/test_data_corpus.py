"""Corpora: the shipped stories regenerate byte for byte and their pronouns agree; user files
stream, report bad UTF-8 by file and offset, and refuse to be empty; fingerprints follow
content."""
import hashlib
import json
import re

import pytest

from tfstudio.data import DataError, list_corpora, load_corpus, storygen
from tfstudio.data import textio

FEMALE = set(storygen.FEMALE_NAMES)
MALE = set(storygen.MALE_NAMES)
FEMALE_PRONOUNS = {"she", "her", "hers", "herself"}
MALE_PRONOUNS = {"he", "him", "his", "himself"}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TFSTUDIO_CACHE", str(tmp_path / "cache"))


def test_shipped_stories_regenerate_identically():
    generated = storygen.generate_sizes()
    for size, min_bytes in storygen.SIZES.items():
        shipped = storygen.sample_path(size).read_bytes()
        assert generated[size].encode("ascii") == shipped, f"stories-{size}.txt is stale"
        assert min_bytes <= len(shipped) < min_bytes + 2000
    assert generated["large"].startswith(generated["small"])
    # the sizes are what generating that size alone gives
    assert storygen.generate_text(storygen.SIZES["small"]) == generated["small"]
    total = sum(storygen.sample_path(s).stat().st_size for s in storygen.SIZES)
    assert total < 8_000_000


def test_story_pronouns_agree_with_the_named_people():
    text = storygen.sample_path("medium").read_text()
    stories = [s for s in text.split("\n\n") if s.strip()]
    assert len(stories) > 1000
    used_female = used_male = 0
    for story in stories:
        words = re.findall(r"[A-Za-z]+", story)
        females = [w for w in words if w in FEMALE]
        males = [w for w in words if w in MALE]
        # two people of different genders, so every pronoun has exactly one referent
        assert len(set(females)) == 1 and len(set(males)) == 1, story
        lower = [w.lower() for w in words]
        for pronouns, names in ((FEMALE_PRONOUNS, FEMALE), (MALE_PRONOUNS, MALE)):
            first_pronoun = next((i for i, w in enumerate(lower) if w in pronouns), None)
            if first_pronoun is not None:
                first_name = next(i for i, w in enumerate(words) if w in names)
                assert first_name < first_pronoun, f"pronoun before its referent: {story}"
        used_female += any(w in FEMALE_PRONOUNS for w in lower)
        used_male += any(w in MALE_PRONOUNS for w in lower)
    assert used_female > 0.5 * len(stories) and used_male > 0.5 * len(stories)


def test_builtin_specs_and_picker_list():
    specs = [info.spec for info in list_corpora()]
    for expected in ("sample:small", "sample:medium", "sample:large", "pydoc", "task:reverse",
                     "task:add", "task:brackets", "task:induction", "task:copy", "task:sort"):
        assert expected in specs
    default = load_corpus("sample")
    assert default.spec == "sample:medium"
    assert default.text() == storygen.sample_path("medium").read_text()
    from pydoc_data.topics import topics
    pydoc = load_corpus("pydoc")
    assert [("".join(d)) for d in pydoc.documents()] == [topics[k] for k in sorted(topics)]
    task = load_corpus("task:reverse")
    assert task.task is not None and task.task.name == "reverse"
    with pytest.raises(DataError, match="sample:small"):
        load_corpus("sample:huge")
    with pytest.raises(DataError, match="no such file or folder"):
        load_corpus("/definitely/not/here.txt")
    with pytest.raises(DataError, match="unknown task"):
        load_corpus("task:juggle")


def test_non_utf8_is_reported_with_file_and_offset(tmp_path, monkeypatch):
    monkeypatch.setattr(textio, "CHUNK_BYTES", 1000)
    path = tmp_path / "notes.txt"
    # a 2-byte character straddles the first chunk boundary; the bad byte is in chunk 3
    data = b"a" * 999 + "é".encode() + b"b" * 1500 + b"\xff" + b"tail"
    bad_offset = 999 + 2 + 1500
    path.write_bytes(data)
    corpus = load_corpus(str(path))
    with pytest.raises(DataError) as info:
        corpus.text()
    message = str(info.value)
    assert str(path) in message and f"byte offset {bad_offset}" in message
    assert 'errors="replace"' in message
    replaced = load_corpus(str(path), errors="replace").text()
    assert replaced == data.decode("utf-8", "replace")
    # a sequence cut off by the end of the file
    path.write_bytes(b"ok " + "日".encode()[:2])
    with pytest.raises(DataError, match="byte offset 3"):
        load_corpus(str(path)).text()
    with pytest.raises(DataError, match="replace"):
        load_corpus(str(path), errors="ignore")


def test_empty_inputs_are_refused(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "blank.md").write_text("  \n\n\t ")
    for name in ("empty.txt", "blank.md"):
        with pytest.raises(DataError, match="empty"):
            load_corpus(str(tmp_path / name))
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "image.png").write_bytes(b"\x89PNG")
    (folder / "empty.txt").write_bytes(b"")
    with pytest.raises(DataError, match="no non-empty .txt/.md/.jsonl files"):
        load_corpus(str(folder))
    (tmp_path / "data.csv").write_text("a,b\n")
    with pytest.raises(DataError, match="unsupported file type .csv"):
        load_corpus(str(tmp_path / "data.csv"))


def test_folder_and_jsonl_documents(tmp_path):
    folder = tmp_path / "texts"
    (folder / "sub").mkdir(parents=True)
    (folder / "b.txt").write_text("second file")
    (folder / "a.md").write_text("# first file")
    (folder / "sub" / "c.jsonl").write_text(
        json.dumps({"text": "record one", "id": 1}) + "\n\n" + json.dumps({"text": "two ✓"}))
    (folder / ".hidden.txt").write_text("never read")
    corpus = load_corpus(str(folder))
    docs = ["".join(d) for d in corpus.documents()]
    assert docs == ["# first file", "second file", "record one", "two ✓"]
    assert corpus.kind == "folder"

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"body": "no text"}\n')
    with pytest.raises(DataError, match=r"bad.jsonl, line 2: no \"text\" field \(it has 'body'\)"):
        load_corpus(str(bad)).text()
    bad.write_text('{"text": "fine"}\n{not json}\n')
    with pytest.raises(DataError, match="line 2: not valid JSON"):
        load_corpus(str(bad)).text()


def test_fingerprint_follows_content_not_location(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("the same words")
    b.write_text("the same words")
    fa, fb = load_corpus(str(a)).fingerprint, load_corpus(str(b)).fingerprint
    assert fa == fb and re.fullmatch(r"[0-9a-f]{64}", fa)
    b.write_text("the same words!")
    assert load_corpus(str(b)).fingerprint != fa
    assert load_corpus("sample:small").fingerprint != load_corpus("sample:medium").fingerprint
    # document boundaries count: one file "ab" differs from two files "a" + "b"
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    (one / "x.txt").write_text("ab")
    (two / "x.txt").write_text("a")
    (two / "y.txt").write_text("b")
    assert load_corpus(str(one)).fingerprint != load_corpus(str(two)).fingerprint
    assert load_corpus(str(one)).fingerprint == hashlib.sha256(b"ab\xff").hexdigest()


def test_corpus_and_tokenizer_layers_do_not_import_torch(tmp_path):
    import os
    import subprocess
    import sys
    code = ("import sys\n"
            "from tfstudio.data import load_corpus, build_tokenizer, token_array, split_train_val\n"
            "c = load_corpus('sample:small')\n"
            "for spec in ('byte', 'char', 'bpe:300'):\n"
            "    split_train_val(token_array(c, build_tokenizer(spec, c)))\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n"
            "assert not any(m.startswith('PySide6') for m in sys.modules)\n")
    env = {**os.environ, "TFSTUDIO_CACHE": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
