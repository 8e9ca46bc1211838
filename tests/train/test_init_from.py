"""--init-from fits an imported checkpoint's embedding and head to the run's tokenizer: widened
with new rows at the mean of the old, narrowed only where no token lives."""
import copy
from types import SimpleNamespace

import pytest
import tokenizers
import torch
from padded_run import padded_byte_run
from train_stand_ins import TINY

import tfstudio
from tfstudio.cli import main
from tfstudio.compiler import compile_graph
from tfstudio.data.simple_tokenizers import ByteTokenizer
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.folder import RunFolder
from tfstudio.train.init_from import load_weights_from
from tfstudio.train.pipeline import fit_graph_to_tokenizer
from tfstudio.train.start import RunRefused
from tfstudio.train.trainer import Trainer


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """A tiny GPT-2 saved by transformers with a 400-token byte-level BPE (401 ids with
    <|endoftext|>), imported with `tfstudio import-hf` (tfstudio's specials make it 404)."""
    from tfstudio.data import load_corpus
    root = tmp_path_factory.mktemp("gpt2")
    docs = ["".join(d) for d in load_corpus("sample:small").documents()]
    tok = tokenizers.ByteLevelBPETokenizer()
    tok.train_from_iterator(docs, vocab_size=400, min_frequency=2, show_progress=False)
    tok.add_special_tokens(["<|endoftext|>"])
    (root / "hf").mkdir()
    tok.save(str(root / "hf" / "tokenizer.json"))
    torch.manual_seed(0)
    import transformers  # a second of import: here, not at collection
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=tok.get_vocab_size(), n_embd=32, n_layer=2, n_head=4, n_positions=64))
    hf.save_pretrained(root / "hf")
    assert main(["import-hf", str(root / "hf"), "--out", str(root / "run")]) == 0
    return root, hf.eval()


def test_the_imported_gpt2_fine_tunes_with_the_documented_command(imported, capsys):
    root, _ = imported
    run = root / "run"
    capsys.readouterr()
    assert main(["train", str(run / "graph.json"), "--init-from", str(run), "--corpus",
                 "sample:small", "--steps", "2", "--batch-size", "4", "--seq-len", "32",
                 "--eval-every", "0", "--out", str(root / "tuned")]) == 0
    err = capsys.readouterr().err
    assert "embed.weight widened from 401 to 404 rows" in err
    assert RunFolder(root / "tuned").graph().node("embed").params["vocab_size"] == 404


def test_old_rows_keep_their_ids_and_new_rows_start_at_the_mean(imported):
    root, hf = imported
    folder = RunFolder(root / "run")
    tokenizer = folder.tokenizer()
    assert tokenizer.vocab_size == 404
    model = compile_graph(fit_graph_to_tokenizer(folder.graph(), tokenizer))
    [note] = load_weights_from(folder, model, tokenizer.vocab_size)
    table = model.state_dict()["embed.weight"]
    wte = hf.transformer.wte.weight.detach()
    assert torch.equal(table[:401], wte)
    assert torch.allclose(table[401:], wte.mean(dim=0).expand(3, -1))
    ids = torch.tensor([[5, 17, 230, 400, 3]])
    with torch.no_grad():  # the tied head: the old ids' logits are Hugging Face's
        assert torch.allclose(model.eval()(ids)[..., :401], hf(ids).logits, atol=1e-4)


def test_narrowing_that_would_lose_ids_is_refused(imported):
    root, _ = imported
    folder = RunFolder(root / "run")
    graph = copy.deepcopy(folder.graph())
    for _, node in graph.walk():
        if "vocab_size" in node.resolved_params():
            node.params["vocab_size"] = 300
    with pytest.raises(RunRefused, match=r"ids 300\.\.403 would be lost"):
        load_weights_from(folder, compile_graph(graph), 300)


def test_rows_past_the_tokenizer_are_dropped(tmp_path):
    """A vocabulary padded past its tokenizer (264 rows, 260 byte ids) narrows to 260."""
    tokenizer, padded, folder, source = padded_byte_run(tmp_path / "padded")
    model = compile_graph(fit_graph_to_tokenizer(padded, tokenizer))
    [note] = load_weights_from(folder, model, tokenizer.vocab_size)
    assert "narrowed from 264 to 260" in note
    assert torch.equal(model.state_dict()["embed.weight"],
                       source.state_dict()["embed.weight"][:260])


# ---------------------------------------------------------------- the edges of each case
def test_widening_keeps_every_row_and_adds_the_mean_row_in_the_tables_dtype():
    from tfstudio.train.init_from import resize_rows
    table = torch.tensor([[1.0, 2.0], [3.0, 6.0]], dtype=torch.bfloat16)
    wide = resize_rows(table, 4)
    assert wide.dtype == torch.bfloat16
    assert wide.tolist() == [[1.0, 2.0], [3.0, 6.0], [2.0, 4.0], [2.0, 4.0]]
    narrow = resize_rows(table, 1)
    assert narrow.tolist() == [[1.0, 2.0]]
    narrow[0, 0] = 9.0                                  # a copy: the source is untouched
    assert table[0, 0] == 1.0
    same = resize_rows(table, 2)
    assert same.tolist() == table.tolist() and same.data_ptr() != table.data_ptr()


def _repeated(graph_name="tiny-gpt", repeat=None, d_model=None):
    graph = tfstudio.load_graph(graph_name)
    for _, node in graph.walk():
        if repeat is not None and node.type == "group":
            node.params["repeat"] = repeat
        if d_model is not None and "d_model" in node.params:
            node.params["d_model"] = d_model
    return graph


def test_weights_that_do_not_fit_the_graph_are_refused_with_what_differs(finished_run):
    from tfstudio.compiler import compile_graph
    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.init_from import load_weights_from
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    folder = RunFolder(finished_run)

    def refusal(graph):
        model = compile_graph(fit_graph_to_tokenizer(graph, ByteTokenizer()))
        with pytest.raises(RunRefused) as refused:
            load_weights_from(folder, model, 260)
        return str(refused.value)
    prefix = f"--init-from {folder.path}: its weights do not fit this graph ("
    advice = f"; train {folder.graph_path} itself, with the run's tokenizer"
    deeper = refusal(_repeated(repeat=3))
    assert deeper.startswith(prefix + "missing ['layers.2.") and deeper.endswith(
        ", unexpected [])" + advice)
    assert len(deeper.split("missing [")[1].split("]")[0].split(", ")) == 3   # the first three
    shallower = refusal(_repeated(repeat=1))
    assert shallower.startswith(prefix + "missing [], unexpected ['layers.1.")
    assert len(shallower.split("unexpected [")[1].split("]")[0].split(", ")) == 3
    wider = refusal(_repeated(d_model=32))
    assert wider.startswith(prefix + "size mismatch for ") and wider.endswith(")" + advice)
    assert "\n" not in wider                              # one line of torch's message
    same = compile_graph(fit_graph_to_tokenizer(tfstudio.load_graph("tiny-gpt"), ByteTokenizer()))
    assert load_weights_from(folder, same, 260) == []     # nothing to fit: no notes
    saved = folder.load_model().state_dict()
    assert all(torch.equal(same.state_dict()[k], v) for k, v in saved.items())


def test_narrowing_without_a_tokenizer_file_counts_every_row_as_used(tmp_path):
    from tfstudio.compiler import compile_graph
    from tfstudio.runs.checkpoint import save_checkpoint
    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.init_from import load_weights_from
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    padded = tfstudio.load_graph("tiny-gpt")
    for _, node in padded.walk():
        if "vocab_size" in node.params:
            node.params["vocab_size"] = 264
    folder = RunFolder(tmp_path / "source")
    folder.write_setup(padded, TrainConfig(), ByteTokenizer())
    folder.tokenizer_path.unlink()
    save_checkpoint(folder.checkpoints, 1, compile_graph(padded), None, {})
    model = compile_graph(fit_graph_to_tokenizer(padded, ByteTokenizer()))
    with pytest.raises(RunRefused) as refused:
        load_weights_from(folder, model, 260)
    assert str(refused.value) == (
        f"--init-from {folder.path}: its embedding has 264 rows and its tokens go up to id 263, "
        "but this run's tokenizer has 260 ids, so ids 260..263 would be lost; train with "
        f"{folder.path}'s own tokenizer (leave --tokenizer out)")
    wide = compile_graph(fit_graph_to_tokenizer(padded, SimpleNamespace(vocab_size=270)))
    notes = load_weights_from(folder, wide, 270)
    assert notes == [f"--init-from {folder.path}: embed.weight widened from 264 to 270 rows for "
                     "this run's tokenizer (new rows start as the mean of the old)"]


def test_init_from_a_folder_without_a_checkpoint_is_refused(tmp_path):
    from tfstudio.compiler import compile_graph
    from tfstudio.runs.folder import RunFolder
    from tfstudio.train.init_from import load_weights_from
    folder = RunFolder(tmp_path / "empty")
    folder.write_setup(tfstudio.load_graph("tiny-gpt"), TrainConfig(), ByteTokenizer())
    with pytest.raises(RunRefused) as refused:
        load_weights_from(folder, compile_graph(tfstudio.load_graph("tiny-gpt")), 260)
    assert str(refused.value) == f"--init-from {folder.path}: no checkpoint there to start from"


def test_a_graph_without_a_name_starts_with_an_empty_one():
    from tfstudio.train.events import Started
    graph = tfstudio.load_graph("tiny-gpt")
    del graph.meta["name"]
    events = []
    Trainer(graph, TrainConfig(**TINY, steps=1), listeners=[events.append]).run()
    assert isinstance(events[0], Started) and events[0].graph_name == ""


def _padded_source(tmp_path, *, tie=True, max_len=256):
    """A run folder holding tiny-gpt with 264 vocabulary rows (the byte tokenizer's 260 + 4)."""
    from tfstudio.compiler import compile_graph
    from tfstudio.runs.checkpoint import save_checkpoint
    from tfstudio.runs.folder import RunFolder
    graph = tfstudio.load_graph("tiny-gpt")
    for _, node in graph.walk():
        if "vocab_size" in node.params:
            node.params["vocab_size"] = 264
        if node.type == "lm_head":
            node.params["tie"] = tie
        if node.type == "positional_encoding":
            node.params["max_len"] = max_len
    folder = RunFolder(tmp_path / "source")
    folder.write_setup(graph, TrainConfig(), ByteTokenizer())
    model = compile_graph(graph)
    save_checkpoint(folder.checkpoints, 1, model, None, {})
    return folder, graph, model.state_dict()


def test_every_vocabulary_table_is_widened_also_an_untied_head(tmp_path):
    from tfstudio.compiler import compile_graph
    from tfstudio.train.init_from import load_weights_from
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    folder, graph, source = _padded_source(tmp_path, tie=False)
    model = compile_graph(fit_graph_to_tokenizer(graph, SimpleNamespace(vocab_size=266)))
    notes = load_weights_from(folder, model, 266)
    tables = sorted(k for k, v in source.items() if v.shape[0] == 264)
    assert len(tables) == 2                                  # the embedding and the head
    assert sorted(n.split(": ")[1].split(" ")[0] for n in notes) == tables
    loaded = model.state_dict()
    for name in tables:
        assert torch.equal(loaded[name][:264], source[name])
        assert torch.allclose(loaded[name][264:], source[name].mean(0).expand(2, -1))


@pytest.mark.parametrize("source_len, target_len", [(256, 260), (264, 256)])
def test_a_table_that_is_not_the_vocabulary_is_never_resized(source_len, target_len, tmp_path):
    """A positional table whose length happens to be the new or the old vocabulary size."""
    from tfstudio.compiler import compile_graph
    from tfstudio.train.init_from import load_weights_from
    from tfstudio.train.pipeline import fit_graph_to_tokenizer
    folder, graph, _ = _padded_source(tmp_path, max_len=source_len)
    for _, node in graph.walk():
        if node.type == "positional_encoding":
            node.params["max_len"] = target_len
    model = compile_graph(fit_graph_to_tokenizer(graph, ByteTokenizer()))
    with pytest.raises(RunRefused) as refused:
        load_weights_from(folder, model, 260)
    assert str(refused.value) == (
        f"--init-from {folder.path}: its weights do not fit this graph (size mismatch for "
        f"pos.table.weight: copying a param with shape torch.Size([{source_len}, 64]) from "
        "checkpoint, the shape in current model is torch.Size([" + str(target_len) + ", 64]).); "
        f"train {folder.graph_path} itself, with the run's tokenizer")


class _Tables(torch.nn.Module):
    """Stand-in weights: ``a`` (and ``z``) of the given lengths around a vocabulary table."""

    def __init__(self, vocab, a, z=None):
        super().__init__()
        self.a = torch.nn.Parameter(torch.zeros(a))
        self.embed = torch.nn.Embedding(vocab, 4)
        if z is not None:
            self.z = torch.nn.Parameter(torch.zeros(z))


@pytest.mark.parametrize("z, misfit", [(None, "a"), ((5, 6), "z")])
def test_the_refusal_names_the_last_tensor_that_does_not_fit_and_never_a_fitted_table(
        z, misfit, tmp_path):
    import shutil

    from tfstudio.runs.checkpoint import save_checkpoint
    from tfstudio.train.init_from import load_weights_from
    folder, _, _ = _padded_source(tmp_path)      # a graph of 264 vocabulary rows
    shutil.rmtree(folder.checkpoints / "step-00000001")
    save_checkpoint(folder.checkpoints, 2, _Tables(264, 3, z), None, {})
    target = _Tables(260, 4, None if z is None else (5, 7))
    with pytest.raises(RunRefused) as refused:
        load_weights_from(folder, target, 260)
    source_shape, target_shape = ([3], [4]) if misfit == "a" else ([5, 6], [5, 7])
    assert f"(size mismatch for {misfit}: copying a param with shape torch.Size({source_shape}) " \
           f"from checkpoint, the shape in current model is torch.Size({target_shape}).); " \
           in str(refused.value)
