"""The lessons' shared training setting: char tokens of the stories sample, 16 x 64 tokens,
lr 3e-3, evaluated every 50 steps."""
LESSON_TRAINING = dict(corpus="sample", tokenizer="char", steps=400, batch_size=16, seq_len=64,
                       lr=3e-3, eval_every=50)
