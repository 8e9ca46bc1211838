"""CPU seconds per training step of every model the course trains, by lesson and training key
(``cost.trainings``); written by ``python bench/bench_course.py --step-time --write``."""
MEASURED = ("2026-12-06 on x86_64 (2 cores, shared: 5-minute load average 3.4 to 3.5), one torch "
            "thread, median of 12 steps; interpolation's after-training cost 2026-12-07 (load "
            "3.0, own_after_training_cost)")
# CPU seconds every run pays besides its steps (start-up, data, evaluation)
RUN_OVERHEAD = 3.87
# the same for a training inside the lesson's own, already started process
IN_PROCESS_OVERHEAD = 0.1
# CPU seconds per run a lesson spends after training (collecting and measuring its
# runs, drawing its page), one run after another in its own process
AFTER_TRAINING: dict[str, float] = {'activations': 0.15,
 'attention': 2.26,
 'experts': 0.19,
 'history': 0.28,
 'interpolation': 1.2,
 'norm': 0.91,
 'orthogonality': 0.27,
 'positions': 0.3,
 'sampling': 19.83,
 'scale': 0.14,
 'vectors': 0.54}
COSTS: dict[str, dict[str, float]] = {'activations': {'ffn_activation=geglu': 0.02058,
                 'ffn_activation=gelu': 0.02088,
                 'ffn_activation=relu': 0.01888,
                 'ffn_activation=swiglu': 0.02029},
 'attention': {'attention=gqa': 0.0175, 'attention=mha': 0.01791, 'attention=mqa': 0.0177},
 'experts': {'ffn_experts=dense': 0.02582,
             'ffn_experts=moe-active': 0.03343,
             'ffn_experts=moe-no-aux': 0.02725,
             'ffn_experts=moe-total': 0.02207},
 'history': {'model=gpt2': 0.02025,
             'model=llama': 0.02252,
             'model=lstm': 0.00534,
             'model=moe': 0.03319,
             'model=rnn': 0.00534,
             'model=transformer-2017': 0.01796,
             'model=transformer-2017-learned': 0.01714,
             'model=transformer-2017-pre': 0.01674,
             'model=window': 0.00387},
 'interpolation': {'short': 0.01881, 'tune': 0.02474},
 'norm': {'norm=post': 0.03467, 'norm=post-in-residual': 0.03413, 'norm=pre': 0.03414},
 'orthogonality': {'positions=learned': 0.0203, 'positions=sinusoidal': 0.01812},
 'positions': {'positions=alibi': 0.02085,
               'positions=learned': 0.01889,
               'positions=rope': 0.01891,
               'positions=sinusoidal': 0.02349},
 'sampling': {'base': 0.01979},
 'scale': {'width=128': 0.04836,
           'width=32': 0.01399,
           'width=48': 0.01706,
           'width=64': 0.01929,
           'width=96': 0.03301},
 'vectors': {'base': 0.01914}}
