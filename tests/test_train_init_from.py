"""--init-from fits an imported checkpoint's embedding and head to the run's tokenizer: widened
with new rows at the mean of the old, narrowed only where no token lives."""
import copy

import pytest
import torch
from padded_run import padded_byte_run

from tfstudio.cli import main
from tfstudio.compiler import compile_graph
from tfstudio.runs.folder import RunFolder
from tfstudio.train.init_from import load_weights_from
from tfstudio.train.pipeline import fit_graph_to_tokenizer
from tfstudio.train.start import RunRefused

import transformers
import tokenizers


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
