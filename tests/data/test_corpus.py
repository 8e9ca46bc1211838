"""Corpora: the generated stories are byte for byte the files once shipped and their pronouns
agree; user files stream, report bad UTF-8 by file and offset, and refuse to be empty;
fingerprints follow content."""
import hashlib
import json
import random
import re
import sys

import pytest

from tfstudio.data import DataError, list_corpora, load_corpus, storygen, textio
from tfstudio.data.chunking import rechunk, safe_cut
from tfstudio.data.corpus import _is_blank
from tfstudio.data.paths import CACHE_ENV, cache_dir
from tfstudio.data.tasks import TASKS
from tfstudio.data.textio import check_errors_mode, read_jsonl_texts, read_text_chunks

FEMALE = set(storygen.FEMALE_NAMES)
MALE = set(storygen.MALE_NAMES)
FEMALE_PRONOUNS = {"she", "her", "hers", "herself"}
MALE_PRONOUNS = {"he", "him", "his", "himself"}


pytestmark = pytest.mark.usefixtures("private_caches")


# (bytes, sha256) of the files stories-small/medium/large.txt that tfstudio shipped until the
# stories were generated on demand: each size must serve the very same text (caches, runs and
# published lesson numbers are keyed by it), on any Python
FORMER_FILES = {
    "small": (100_268, "ac39b758acd284dfd48d4e95ee1734f7fffa04b5483d06e17c13f64a9135fe28"),
    "medium": (1_000_113, "e14da403032aa97523ba15db512c319bb05802845b2b914390c06004c7e2a57f"),
    "large": (5_000_140, "e37828edaa1fe3f69155cf04799d5ac393ff7d4a401d89b5c86c8e12e89fae45"),
}


def test_the_sizes_are_prefixes_of_one_stream_each_ending_where_a_story_does():
    texts = {size: storygen.sample_text(size) for size in storygen.SIZES}
    assert texts == storygen.generate_sizes()   # generating a size alone = cutting the largest
    for size, min_bytes in storygen.SIZES.items():
        assert min_bytes <= len(texts[size]) < min_bytes + 2000
        assert texts["large"].startswith(texts[size])
        # cut where a story ends: the next byte starts the next story
        assert texts[size].endswith(".\n\n")
    assert texts["large"][len(texts["small"])].isupper()


def test_the_draws_are_cpythons_own_on_this_python():
    # Draws writes CPython's choice/shuffle/randint out on getrandbits so that a new Python
    # cannot change them; on this Python the two must agree draw for draw
    ours, theirs = storygen.Draws(7), random.Random(7)
    for n in (1, 2, 3, 7, 8, 100, 1000):
        assert ours.choice(range(n)) == theirs.choice(range(n))
        assert ours.randint(2, n + 2) == theirs.randint(2, n + 2)
        a, b = list(range(n)), list(range(n))
        ours.shuffle(a)
        theirs.shuffle(b)
        assert a == b
        assert ours.random() == theirs.random()


def test_each_sample_size_serves_the_bytes_of_its_former_file():
    for size, (length, digest) in FORMER_FILES.items():
        data = load_corpus(f"sample:{size}").text().encode("ascii")
        assert (len(data), hashlib.sha256(data).hexdigest()) == (length, digest), size


def test_story_pronouns_agree_with_the_named_people():
    text = storygen.sample_text("medium")
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
    assert default.text() == storygen.sample_text("medium")
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


# ---------------------------------------------------------------- the edges of each case
STORIES = ("Generated short stories about named people, places and objects; pronouns to "
           "resolve.")


def test_the_corpus_picker_lists_every_built_in_choice():
    infos = {i.spec: i for i in list_corpora()}
    for size in storygen.SIZES:
        info = infos.pop(f"sample:{size}")
        assert info.title == f"Stories ({size})"
        assert info.description == STORIES + (" The default." if size == "medium" else "")
        assert info.size_bytes is None   # known once generated
    pydoc = infos.pop("pydoc")
    assert (pydoc.title, pydoc.description, pydoc.size_bytes) == (
        "Python documentation",
        "The running Python's own help topics (pydoc_data): real English.", None)
    assert sorted(infos) == sorted(f"task:{name}" for name in TASKS)
    for name, cls in TASKS.items():
        info = infos[f"task:{name}"]
        assert (info.title, info.description, info.size_bytes) == (
            f"Task: {name}", cls.description, None)


def test_a_task_corpus_is_twenty_thousand_seed_zero_examples_as_text():
    corpus = load_corpus("task:sort")
    task = corpus.task
    assert (corpus.spec, corpus.title, corpus.kind) == ("task:sort", "Task: sort", "task")
    assert corpus.description == f"{task.description} (20,000 examples, seed 0, as text.)"
    assert corpus.size_bytes == 20_000 * len(task.example(random.Random(0)).text)
    rng = random.Random(0)
    expected = "".join(task.example(rng).text for _ in range(20_000))
    assert corpus.text() == expected


def test_the_picker_lists_the_samples_without_generating_them(monkeypatch):
    monkeypatch.setattr(storygen, "generate_text", lambda *a, **k: pytest.fail("generated"))
    sizes = {i.spec: i.size_bytes for i in list_corpora()}
    assert [sizes[f"sample:{size}"] for size in storygen.SIZES] == [None, None, None]


def test_unknown_error_mode_names_both_choices():
    with pytest.raises(DataError, match=r"""^errors='ignore' is not supported; use "strict" """
                                        r"""\(stop at invalid UTF-8\) or "replace" \(read it """
                                        r"""as U\+FFFD\)$"""):
        check_errors_mode("ignore")


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 1 << 20])
def test_chunks_decode_split_characters_drop_one_bom_and_locate_bad_bytes(tmp_path, chunk):
    path = tmp_path / "t.txt"
    text = "\ufeffé日\ufeff\r\nb👍"
    path.write_bytes(text.encode())
    assert "".join(read_text_chunks(path, chunk_bytes=chunk)) == text[1:]  # only the first BOM
    bad = tmp_path / "bad.txt"
    bad.write_bytes("aé".encode() + b"\xff" + b"z")
    with pytest.raises(DataError, match=r"bad.txt: not valid UTF-8 at byte offset 3 \(byte ff: "
                                        r"invalid start byte\)\. Convert the file to UTF-8"):
        list(read_text_chunks(bad, chunk_bytes=chunk))
    assert "".join(read_text_chunks(bad, "replace", chunk_bytes=chunk)) == "aé\ufffdz"


def test_jsonl_lines_numbers_and_field_errors(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "one"}\n\n  \n{"text": "two"}\n{"text": "tail"}')
    assert list(read_jsonl_texts(path, chunk_bytes=4)) == ["one", "two", "tail"]
    cases = {'{"text": "a"}\n\n{"body": 1, "id": 2}\n': r"line 3: no \"text\" field \(it has "
                                                        r"'body', 'id'\); each line must be",
             '{"text": "a"}\n[1]\n': r"line 2: no \"text\" field; each line must be an object",
             '{"text": 5}\n': r"line 1: \"text\" is int, expected a string$",
             '{"text": "a"}\n{"text": \n': r"line 2: not valid JSON \(Expecting value\); each "
                                           r"line of a \.jsonl file must be one JSON object",
             '{"text": "a"}\n{"text": "b"': r"d\.jsonl, line 2: not valid JSON"}
    for body, message in cases.items():
        path.write_text(body)
        with pytest.raises(DataError, match=message):
            list(read_jsonl_texts(path, chunk_bytes=3))


def test_a_sample_corpus_is_the_generated_stories_of_its_size():
    corpus = load_corpus("sample:small")
    assert (corpus.spec, corpus.title, corpus.kind) == ("sample:small", "Stories (small)",
                                                        "sample")
    assert corpus.description == "Generated short stories (tfstudio.data.storygen)."
    assert corpus.size_bytes == len(corpus.text()) == FORMER_FILES["small"][0]
    assert corpus.text() == storygen.generate_text(storygen.SIZES["small"])


def test_an_unknown_sample_size_names_the_sizes_there_are():
    with pytest.raises(DataError, match=r"^unknown sample size 'huge'; use one of sample:small, "
                                        r"sample:medium, sample:large$"):
        load_corpus("sample:huge")


def test_storygen_main_prints_the_stories_of_a_size(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["storygen", "small"])
    storygen.main()
    assert capsys.readouterr().out == storygen.sample_text("small")
    monkeypatch.setattr(sys, "argv", ["storygen", "huge"])
    with pytest.raises(SystemExit) as exited:
        storygen.main()
    assert exited.value.code == 2
    assert capsys.readouterr().err == ("unknown size 'huge'; use one of small, medium, "
                                       "large\n")


def test_each_size_ends_with_the_first_story_that_reaches_it(monkeypatch):
    r = storygen.Draws(3)
    stories = [storygen.story(r) + "\n\n" for _ in range(3)]   # what seed 3 draws, in order
    b1, b2 = len(stories[0]), len(stories[0]) + len(stories[1])
    assert storygen.generate_text(b1, seed=3) == stories[0]          # reached exactly: stop
    assert storygen.generate_text(b1 + 1, seed=3) == stories[0] + stories[1]
    assert storygen.generate_text(b2, seed=3) == stories[0] + stories[1]
    monkeypatch.setattr(storygen, "SIZES", {"one": b1, "two": b1 + 1, "three": b2 + 1})
    assert storygen.generate_sizes(seed=3) == {"one": stories[0],
                                               "two": stories[0] + stories[1],
                                               "three": "".join(stories)}


def test_the_pydoc_corpus_describes_the_running_pythons_topics():
    from pydoc_data.topics import topics
    corpus = load_corpus("pydoc")
    assert (corpus.spec, corpus.title, corpus.kind) == ("pydoc", "Python documentation", "pydoc")
    assert corpus.description == f"{len(topics)} help topics of Python's own documentation."
    assert corpus.size_bytes == sum(len(v.encode("utf-8")) for v in topics.values())


def test_a_python_without_pydoc_data_gets_one_line_naming_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pydoc_data.topics", None)  # makes the import fail
    with pytest.raises(DataError) as err:
        load_corpus("pydoc")
    assert str(err.value) == ("this Python has no pydoc_data module (some distributions strip "
                              "it); choose another corpus")


def test_a_missing_path_is_named_with_the_choices(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(DataError) as err:
        load_corpus(str(missing))
    msg = str(err.value)
    assert msg.startswith(f"no corpus {str(missing)!r}: not a built-in name")
    assert f"({', '.join(TASKS)})" in msg


def test_a_file_of_unknown_type_names_its_suffix_or_none(tmp_path):
    bare = tmp_path / "README"
    bare.write_text("hello")
    with pytest.raises(DataError) as err:
        load_corpus(str(bare))
    assert "unsupported file type (none); use a .txt, .md, .jsonl file" in str(err.value)


def test_a_single_file_corpus_names_its_path_kind_title_and_size(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_bytes("héllo world\n".encode())
    corpus = load_corpus(str(f))
    assert (corpus.spec, corpus.title, corpus.kind) == (str(f), "notes.txt", "file")
    assert corpus.description == f"Text from {f}."
    assert corpus.size_bytes == len("héllo world\n".encode())


def test_a_folder_corpus_reads_files_in_posix_path_order_and_sums_their_sizes(tmp_path):
    # "a-b.txt" < "a/b.txt" as text ('-' < '/'), though Path ordering puts a/b.txt first
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.txt").write_text("second")
    (tmp_path / "a-b.txt").write_text("first")
    corpus = load_corpus(str(tmp_path))
    assert corpus.text() == "first\n\nsecond"
    assert corpus.spec == str(tmp_path) and corpus.size_bytes == 11


def test_a_jsonl_file_read_with_replace_gets_u_fffd_for_bad_bytes(tmp_path):
    f = tmp_path / "d.jsonl"
    f.write_bytes(b'{"text": "ok \xff here"}\n')
    corpus = load_corpus(str(f), errors="replace")
    assert corpus.text() == "ok \ufffd here"


def test_a_whitespace_file_exactly_the_probe_size_is_blank(tmp_path):
    f = tmp_path / "w.txt"
    f.write_bytes(b" \n\t ")
    assert _is_blank(f, probe=4) is True
    assert _is_blank(f, probe=3) is False  # bigger than the probe: not read, taken as text


def test_safe_cut_finds_the_last_boundary_at_or_before_the_limit():
    # boundaries (letter then whitespace) of "ab cd ef gh" start at 1, 4, 7: cuts 2, 5, 8
    text = "ab cd ef gh"
    assert safe_cut(text, 6) == 5
    assert safe_cut(text, 3) == 2  # the boundary at 1 ends at 3 <= limit + 1
    assert safe_cut(text, 1) == 1  # the boundary at 1 would cut at 2 > 1: hard cut
    assert safe_cut("a b", 2) == 1  # a boundary at position 0 counts
    assert safe_cut("abc", 2) == 2  # no boundary: hard cut at the limit


def test_rechunk_leaves_a_piece_of_exactly_the_size_whole():
    assert list(rechunk(["ab cd"], 5)) == ["ab cd"]
    assert list(rechunk(["ab cd", "e"], 5)) == ["ab", " cde"]


def test_cache_dir_is_the_env_folder_or_home_dot_cache_tfstudio(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    assert cache_dir("tok") == tmp_path / "c" / "tok" and (tmp_path / "c" / "tok").is_dir()
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "tfstudio"
