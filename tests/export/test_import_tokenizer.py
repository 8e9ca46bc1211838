"""`import-hf --tokenizer byte` gives an imported checkpoint tfstudio's byte tokenizer, with each
byte's embedding and head row taken from the checkpoint's token for that byte (GPT-2 keeps its
byte tokens in bytes_to_unicode order); the hints import-hf prints each work as printed."""
import os
import shlex

import pytest
import torch

from tfstudio.cli import main
from tfstudio.data import build_tokenizer, load_corpus
from tfstudio.export import InteropError, import_hf
from tfstudio.runs.folder import RunFolder

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers loads: never download
import tokenizers

transformers = bytes_to_unicode = None  # loaded by the fixture below


@pytest.fixture(autouse=True, scope="module")
def _transformers():
    """transformers takes a second to import: the first test here loads it, not collection."""
    global transformers, bytes_to_unicode
    import transformers
    # GPT-2's byte -> printable-character table, from transformers' own GPT-2 tokenizer conversion
    from transformers.convert_slow_tokenizer import bytes_to_unicode

TEXT = "Once upon a time, Ünïcödé 日本語\tand\n\x00\x7f bytes."


def byte_level_bpe(vocab_size=300):
    docs = ["".join(d) for d in load_corpus("sample:small").documents()]
    tok = tokenizers.ByteLevelBPETokenizer()
    tok.train_from_iterator(docs, vocab_size=vocab_size, min_frequency=2, show_progress=False)
    tok.add_special_tokens(["<|endoftext|>"])
    return tok


def gpt2_folder(folder, with_tokenizer=True):
    """A tiny GPT-2 saved by transformers (random weights), with its byte-level BPE."""
    tok = byte_level_bpe()
    folder.mkdir(parents=True)
    if with_tokenizer:
        tok.save(str(folder / "tokenizer.json"))
    torch.manual_seed(0)
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=tok.get_vocab_size(), n_embd=32, n_layer=2, n_head=4, n_positions=64,
        bos_token_id=None, eos_token_id=None))
    hf.save_pretrained(folder)
    return hf.eval(), tok


def gpt2_id_of_each_byte(tok):
    """Row b: the HF tokenizer's id for the single-byte token of byte b."""
    symbol, vocab = bytes_to_unicode(), tok.get_vocab()
    return [vocab[symbol[b]] for b in range(256)]


@pytest.mark.parametrize("with_tokenizer", [True, False])
def test_byte_rows_are_the_checkpoints_byte_tokens_in_byte_order(tmp_path, with_tokenizer):
    hf, tok = gpt2_folder(tmp_path / "hf", with_tokenizer)
    report = import_hf(tmp_path / "hf", tmp_path / "run", tokenizer="byte")
    run = RunFolder(tmp_path / "run")
    assert run.tokenizer().kind == "byte" and run.config().tokenizer == "byte"
    model = run.load_model()
    table, wte = model.state_dict()["embed.weight"], hf.transformer.wte.weight.detach()
    order = gpt2_id_of_each_byte(tok)
    assert order != list(range(256))  # GPT-2's order is not byte order: the test can fail
    assert table.shape == (260, 32)
    assert torch.equal(table[:256], wte[order])
    eot = tok.token_to_id("<|endoftext|>")
    if with_tokenizer:  # <|endoftext|> keeps its own row; the other specials start at the mean
        assert torch.equal(table[256], wte[eot])
        assert torch.allclose(table[257:], wte.mean(dim=0).expand(3, -1))
    else:  # no tokenizer files: nothing says which row is <|endoftext|>
        assert torch.allclose(table[256:], wte.mean(dim=0).expand(4, -1))
    data = list(TEXT.encode())
    with torch.no_grad():  # the model reads bytes as the checkpoint read its byte tokens
        ours = model(torch.tensor([data]))
        theirs = hf(torch.tensor([[order[b] for b in data]])).logits
    assert torch.allclose(ours[..., :256], theirs[..., order], atol=1e-4)
    assert any("--tokenizer byte" in line for line in report.done)


def hints(capsys, *argv):
    capsys.readouterr()
    assert main(["import-hf", *argv]) == 0
    report_head = "import-hf: "  # the report: its first line, then indented lines
    return [line for line in capsys.readouterr().out.splitlines()
            if not line.startswith((" ", report_head))]


def run_hint(line, *extra):
    """Run a printed command (what follows its label) with ``extra`` options appended."""
    argv = shlex.split(line.split(": ", 1)[1])
    assert argv[0] == "tfstudio"
    return main(argv[1:] + list(extra))


QUICK = ["--steps", "3", "--batch-size", "4", "--seq-len", "32", "--eval-every", "0"]


def test_without_a_tokenizer_the_hints_attach_one_and_then_fine_tune(tmp_path, capsys,
                                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    gpt2_folder(tmp_path / "hf", with_tokenizer=False)
    first = hints(capsys, "hf", "--out", "run")
    assert first == [
        "no tokenizer came with it; to give it tfstudio's byte tokenizer (keeping the "
        "checkpoint's row for each byte): tfstudio import-hf hf --out run-byte --tokenizer byte",
        "then fine-tune it: tfstudio train run-byte/graph.json --init-from run-byte --corpus "
        "sample --out run-byte-tuned",
        "export it: tfstudio export run --format hf --out run-hf"]
    assert not any("generate" in line for line in first)  # it has no tokenizer to generate with
    assert run_hint(first[0]) == 0
    assert run_hint(first[1], *QUICK) == 0
    assert run_hint(first[2]) == 0
    capsys.readouterr()
    assert main(["generate", "run-byte-tuned", "--prompt", "Once", "--max-new-tokens", "8"]) == 0
    assert capsys.readouterr().out.startswith("Once")


def test_with_a_tokenizer_every_hint_works_as_printed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    gpt2_folder(tmp_path / "hf")
    lines = hints(capsys, "hf", "--out", "run")
    assert lines == ["generate from it: tfstudio generate run --prompt 'Once'",
                     "fine-tune it: tfstudio train run/graph.json --init-from run --corpus "
                     "sample --out run-tuned",
                     "export it: tfstudio export run --format hf --out run-hf"]
    assert run_hint(lines[0], "--max-new-tokens", "4") == 0
    assert run_hint(lines[1], *QUICK) == 0
    assert run_hint(lines[2]) == 0


def test_the_documented_fine_tune_path(tmp_path, capsys):
    """import-hf --tokenizer byte, train --init-from it on sample:small, generate."""
    gpt2_folder(tmp_path / "hf")
    run, tuned = str(tmp_path / "run"), str(tmp_path / "tuned")
    assert main(["import-hf", str(tmp_path / "hf"), "--out", run, "--tokenizer", "byte"]) == 0
    assert main(["train", f"{run}/graph.json", "--init-from", run, "--corpus", "sample:small",
                 "--steps", "5", "--out", tuned, *QUICK[2:]]) == 0
    assert RunFolder(tuned).graph().node("embed").params["vocab_size"] == 260
    capsys.readouterr()
    assert main(["generate", tuned, "--prompt", "Once", "--max-new-tokens", "8"]) == 0
    assert capsys.readouterr().out.startswith("Once")


def bert_with_wordpiece(folder):
    folder.mkdir()
    docs = ["".join(d) for d in load_corpus("sample:small").documents()]
    tok = tokenizers.BertWordPieceTokenizer()
    tok.train_from_iterator(docs, vocab_size=200, show_progress=False)
    tok.save(str(folder / "tokenizer.json"))
    transformers.BertForMaskedLM(transformers.BertConfig(
        vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=48, max_position_embeddings=40)
    ).save_pretrained(folder)


def test_bad_tokenizer_choices_are_one_line(tmp_path, capsys):
    gpt2_folder(tmp_path / "hf")
    bert_with_wordpiece(tmp_path / "bert")
    cases = {("hf", "char"): "char tokenizer is learned from a corpus",
             ("hf", "bpe:300"): "bpe tokenizer is learned from a corpus",
             ("hf", "word:500"): "word tokenizer is learned from a corpus",
             ("hf", "unigram"): "'unigram' is not a tokenizer import-hf can attach",
             ("bert", "byte"): "has no token for byte 0x00"}
    for (folder, spec), expected in cases.items():
        capsys.readouterr()
        out = str(tmp_path / f"run-{folder}-{spec}")
        assert main(["import-hf", str(tmp_path / folder), "--out", out,
                     "--tokenizer", spec]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and expected in err, err
        assert err.startswith("tfstudio import-hf: ") and "; " in err
        assert not os.path.exists(out)  # refused before anything was written
    with pytest.raises(InteropError, match="no tokenizer.json or vocab.json"):
        folder = tmp_path / "llama"
        transformers.LlamaForCausalLM(transformers.LlamaConfig(
            vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
            intermediate_size=48)).save_pretrained(folder)
        import_hf(folder, tmp_path / "run-llama", tokenizer="byte")


def test_a_checkpoint_without_byte_tokens_gets_no_hint_that_would_fail(tmp_path, capsys):
    bert_with_wordpiece(tmp_path / "bert")
    out = str(tmp_path / "run")
    lines = hints(capsys, str(tmp_path / "bert"), "--out", out)
    assert lines[0].startswith("no tokenizer came with it, so text commands cannot run on it, "
                               "and --tokenizer byte cannot help: --tokenizer byte: the "
                               "checkpoint's vocabulary (tokenizer.json, which is not "
                               "byte-level) has no token for byte 0x00")
    assert not any("generate" in line or "train" in line for line in lines)
    assert run_hint(lines[-1]) == 0
    assert build_tokenizer("byte").vocab_size == 260  # what the rows above are counted against


def test_sentencepiece_byte_fallback_pieces_give_the_byte_rows(tmp_path):
    """A LLaMA-style vocabulary: <unk>, <s>, </s>, the 256 pieces <0x00>..<0xFF>, then words.
    </s> and <s> (the config's eos and bos) keep their rows as <|endoftext|> and <|bos|>."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    pieces = ["<unk>", "<s>", "</s>", *(f"<0x{b:02X}>" for b in range(256)),
              *(f"\u2581w{i}" for i in range(41))]
    sp = Tokenizer(models.BPE(vocab={p: i for i, p in enumerate(pieces)}, merges=[],
                              unk_token="<unk>", byte_fallback=True))
    sp.pre_tokenizer = pre_tokenizers.Metaspace()
    sp.decoder = decoders.Metaspace()
    folder = tmp_path / "llama"
    folder.mkdir()
    sp.save(str(folder / "tokenizer.json"))
    torch.manual_seed(0)
    hf = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=len(pieces), hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=48, bos_token_id=1, eos_token_id=2)).eval()
    hf.save_pretrained(folder)
    import_hf(folder, tmp_path / "run", tokenizer="byte")
    model = RunFolder(tmp_path / "run").load_model()
    order = [sp.token_to_id(f"<0x{b:02X}>") for b in range(256)]
    embed = hf.model.embed_tokens.weight.detach()
    table = model.state_dict()["embed.weight"]
    assert torch.equal(table[:256], embed[order])
    assert torch.equal(table[256], embed[2]) and torch.equal(table[259], embed[1])
    data = list(TEXT.encode())
    with torch.no_grad():  # untied head: its rows moved the same way
        ours = model(torch.tensor([data]))
        theirs = hf(torch.tensor([[order[b] for b in data]])).logits
    assert torch.allclose(ours[..., :256], theirs[..., order], atol=1e-4)
