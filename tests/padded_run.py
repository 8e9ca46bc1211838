"""A run folder whose tiny-gpt vocabulary is padded past its byte tokenizer (264 rows for 260
ids), as checkpoints from elsewhere often are: what --init-from narrows."""
import tfstudio
from tfstudio.compiler import compile_graph
from tfstudio.data import build_tokenizer, load_corpus
from tfstudio.runs.checkpoint import save_checkpoint
from tfstudio.runs.config import TrainConfig
from tfstudio.runs.folder import RunFolder


def padded_byte_run(path):
    """(tokenizer, the padded graph, its run folder, the model saved there at step 3)."""
    tokenizer = build_tokenizer("byte", load_corpus("sample:small"))
    padded = tfstudio.load_graph("tiny-gpt")
    for _, node in padded.walk():
        if "vocab_size" in node.resolved_params():
            node.params["vocab_size"] = tokenizer.vocab_size + 4
    folder = RunFolder(path)
    folder.write_setup(padded, TrainConfig(), tokenizer)
    model = compile_graph(padded)
    save_checkpoint(folder.checkpoints, 3, model, None, {})
    return tokenizer, padded, folder, model
