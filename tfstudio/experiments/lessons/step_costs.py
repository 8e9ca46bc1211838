"""CPU seconds per training step of every model the course trains, by lesson and training key
(``cost.trainings``); written by ``python bench/bench_course.py --step-time --write``."""
MEASURED = '2026-12-02 on x86_64 (2 cores, shared: load average 2.6 to 6.6), one torch thread, median of 12 steps'
# CPU seconds every run pays besides its steps (start-up, data, evaluation)
RUN_OVERHEAD = 7.78
# the same for a training inside the lesson's own, already started process
IN_PROCESS_OVERHEAD = 0.18
# CPU seconds per run a comparison lesson spends after training (collecting and
# measuring its runs, drawing its page), one run after another in its own process
AFTER_TRAINING: dict[str, float] = {'activations': 0.16,
 'attention': 2.04,
 'experts': 0.23,
 'history': 0.3,
 'norm': 1.52,
 'orthogonality': 0.28,
 'positions': 0.33,
 'sampling': 19.83,
 'scale': 0.15,
 'vectors': 0.54}
COSTS: dict[str, dict[str, float]] = {'activations': {'ffn_activation=geglu': 0.03306,
                 'ffn_activation=gelu': 0.03143,
                 'ffn_activation=relu': 0.02786,
                 'ffn_activation=swiglu': 0.03258},
 'attention': {'attention=gqa': 0.02813, 'attention=mha': 0.02647, 'attention=mqa': 0.02791},
 'experts': {'ffn_experts=dense': 0.02886,
             'ffn_experts=moe-active': 0.043,
             'ffn_experts=moe-no-aux': 0.04303,
             'ffn_experts=moe-total': 0.03579},
 'history': {'model=gpt2': 0.04108,
             'model=llama': 0.03565,
             'model=lstm': 0.01454,
             'model=moe': 0.04551,
             'model=rnn': 0.01755,
             'model=transformer-2017': 0.03802,
             'model=transformer-2017-learned': 0.04171,
             'model=transformer-2017-pre': 0.03846,
             'model=window': 0.01006},
 'interpolation': {'short': 0.02959, 'tune': 0.0398},
 'norm': {'norm=post': 0.05258, 'norm=post-in-residual': 0.07453, 'norm=pre': 0.05326},
 'orthogonality': {'positions=learned': 0.03226, 'positions=sinusoidal': 0.0331},
 'positions': {'positions=alibi': 0.03138,
               'positions=learned': 0.02682,
               'positions=rope': 0.04224,
               'positions=sinusoidal': 0.03067},
 'sampling': {'base': 0.0343},
 'scale': {'width=128': 0.08326,
           'width=32': 0.0194,
           'width=48': 0.02331,
           'width=64': 0.03525,
           'width=96': 0.04502},
 'vectors': {'base': 0.03861}}
