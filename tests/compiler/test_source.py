"""The generated source reads like a hand-written model file: no parameter a layer never uses,
no comment that only repeats the line it sits on."""
from tfstudio.compiler import compile_graph
from tfstudio.presets import load_preset


def test_a_layer_the_decoding_stream_never_reaches_takes_no_cache():
    src = compile_graph(load_preset("tiny-t5")).source
    encoder = src.split("class EncoderLayer")[1].split("\nclass ")[0]
    decoder = src.split("class DecoderLayer")[1].split("\nclass ")[0]
    assert "    def forward(self, x):\n" in encoder      # the source is read whole, once
    assert "cache" not in encoder
    assert "    def forward(self, x, memory, cache=None):\n" in decoder
    assert "            for layer in self.encoder:\n                x = layer(x)\n" in src


def test_a_comment_says_what_the_call_does_not():
    llama = compile_graph(load_preset("tiny-llama")).source
    gpt = compile_graph(load_preset("tiny-gpt")).source
    # kind='rmsnorm' is in the call already; GPT's layernorm is the default, so only said in words
    assert "        self.norm_attn = Norm(d_model=64, kind='rmsnorm')\n" in llama
    assert "        self.norm_attn = Norm(d_model=64)  # Norm: layernorm\n" in gpt
    ffn = "        self.ffn = FeedForward(d_model=64, d_ff=256)  # Feed-forward: gelu, d_ff 256\n"
    assert ffn in gpt
