"""Survivors of bench/mutation.py reviewed by hand and found equivalent.

No input the function is documented to take can tell them from the original. Keyed by
mutmut's name, which is stable while the function's source is unchanged; a survivor not
listed here is reported as "not reviewed". One dict per package, so reviews of different
packages never touch the same lines."""

_CPU = "only the device changes; same result on a CPU-only machine (a GPU run would tell)"
_DIM = "the same axis for the documented input shape ([B, V] / [B, 1])"
_F32 = ("a float32 draw equals this threshold with probability 2^-24 per position (0.15 is not "
        "a float32 multiple of 2^-24, so never)")

_CHUNK = "the chunk size only changes how the file is read, not the texts yielded"
_FULL_INT = "torch.full with an int fill value (pad id, -100) already makes int64 = torch.long"
_TENSOR_INT = ("torch.tensor of a list of Python ints is int64 = torch.long (an empty list gives "
               "float32, but fills an empty slice of the long tensor just the same)")

_MASK_STREAM = ("another per-step seed formula: the training masks stay reproducible from (seed, step) "
                "and new at every step, which is all that is documented")
_NON_BLOCKING = ("non_blocking only lets a copy to a GPU overlap; on the CPU the same tensors (a GPU "
                 "run would tell the timing, not the values)")
_VAL_STREAM = ("another fixed seed for the validation masks: still fixed across calls and apart "
               "from training's (seed * 1,000,003 + step) stream, all that is documented")
_ROLL_ROWS = ("rolling the flattened mask instead of each row: only the last column wraps into the "
              "next row, and it never holds an answer (task_lm_batch's width leaves the newline "
              "target after every answer)")

# tfstudio/train
TRAIN: dict[str, str] = {
    "tfstudio.train.optim.x_lr_at__mutmut_2": "warmup >= 0: with warmup 0, step < 0 never holds",
    "tfstudio.train.trainer.xǁTrainerǁ_train_step__mutmut_17": _CPU,
    "tfstudio.train.objectives.x_loss_and_logits__mutmut_9":
        "cross_entropy's default ignore_index is -100, which is IGNORE_INDEX",
    "tfstudio.train.generation.x_fit_to_window__mutmut_6":
        "len(ids) == window: ids[-window:] is all of ids",
    "tfstudio.train.generation.xǁ_Windowǁ_read__mutmut_7":
        ("start is 0 or at least 2: the first slide comes at size + 1 tokens and keeps at most "
         "size - 1"),
    "tfstudio.train.generation.x__forward__mutmut_2": "cache=None is the models' default",
    "tfstudio.train.objectives.xǁBatchǁto__mutmut_6": _CPU,
    "tfstudio.train.objectives.xǁBatchǁto__mutmut_8": _CPU,
    "tfstudio.train.objectives.xǁBatchǁto__mutmut_11": _CPU,
    "tfstudio.train.objectives.xǁBatchǁto__mutmut_13": _CPU,
    "tfstudio.train.objectives.xǁBatchǁto__mutmut_9": _NON_BLOCKING,
    "tfstudio.train.objectives.xǁBatchǁto__mutmut_10": _NON_BLOCKING,
    "tfstudio.train.objectives.xǁBatchǁto__mutmut_14": _NON_BLOCKING,
    "tfstudio.train.objectives.xǁBatchǁto__mutmut_15": _NON_BLOCKING,
    "tfstudio.train.pipeline.xǁTextMLMǁ_mask__mutmut_3": _MASK_STREAM,
    "tfstudio.train.pipeline.xǁTextMLMǁ_mask__mutmut_5": _MASK_STREAM,
    "tfstudio.train.pipeline.xǁTextSeq2Seqǁ_pair__mutmut_17": _FULL_INT,
    "tfstudio.train.pipeline.xǁTextSeq2Seqǁ_pair__mutmut_20": _FULL_INT,
    "tfstudio.train.pipeline.x_build_pipeline__mutmut_54":
        ("the text pipelines only store the tokenizer, and build_pipeline sets pipe.tokenizer "
         "right after constructing them"),
    "tfstudio.train.generation.xǁStopTextǁfeed__mutmut_18":
        "n = 0 adds a hold of 0 characters: the maximum is unchanged",
    "tfstudio.train.generation.x_stream_text__mutmut_9":
        "stream_text itself stops at the end-of-text token, closing the generator either way",
    "tfstudio.train.pipeline.xǁTextMLMǁval_batches__mutmut_9": _VAL_STREAM,
    "tfstudio.train.pipeline.xǁTextMLMǁval_batches__mutmut_10": _VAL_STREAM,
    "tfstudio.train.pipeline.xǁTaskLMǁ_convert__mutmut_6": _ROLL_ROWS,
    "tfstudio.train.pipeline.xǁTaskLMǁ_convert__mutmut_9": _ROLL_ROWS,
    "tfstudio.train.pipeline.xǁTaskLMǁ_convert__mutmut_16": _ROLL_ROWS,
    "tfstudio.train.pipeline.xǁTaskLMǁ_convert__mutmut_19": _ROLL_ROWS,
    "tfstudio.train.pipeline.xǁTaskLMǁ_convert__mutmut_11":
        ("rolling by 2 also marks the answer's second-to-last token, already an answer "
         "position; the closing newline is marked the same"),
    "tfstudio.train.trainer.xǁTrainerǁ_loop__mutmut_49":
        ("a checkpoint at the last step inside the loop: the final one then sees saved_step == "
         "step and writes nothing, so the same files and events"),
    "tfstudio.train.trainer.xǁTrainerǁ_measure_and_clip__mutmut_20": ("a layer without gradients: get_total_norm([]) is tensor(0.) like "
               "torch.zeros(()) (both on the CPU; a GPU run would tell the device)"),
    "tfstudio.train.trainer.xǁTrainerǁ_measure_and_clip__mutmut_23": _CPU,
    "tfstudio.train.trainer.xǁTrainerǁ_measure_and_clip__mutmut_25": _CPU,
    "tfstudio.train.sampling.x_apply_filters__mutmut_42": 'float("-INF") is float("-inf")',
    "tfstudio.train.sampling.x_apply_filters__mutmut_70": 'float("-INF") is float("-inf")',
    "tfstudio.train.sampling.x_apply_filters__mutmut_114": 'float("-INF") is float("-inf")',
    "tfstudio.train.sampling.x_apply_filters__mutmut_47":
        "top_k == V: the k-th largest is the minimum, nothing is below it",
    "tfstudio.train.sampling.x_apply_filters__mutmut_57": "torch.topk's default dim is -1",
    "tfstudio.train.sampling.x_apply_filters__mutmut_78": "torch.sort's default dim is -1",
    "tfstudio.train.sampling.x_sample_next__mutmut_16": _DIM,
    "tfstudio.train.sampling.x_sample_next__mutmut_23": _DIM,
    "tfstudio.train.sampling.x_sample_next__mutmut_33": _DIM,
    "tfstudio.train.sampling.x_next_token_view__mutmut_37": "top_p's default is 1.0",
}


# tfstudio/runs
RUNS: dict[str, str] = {

}


# tfstudio/probes
PROBES: dict[str, str] = {
    "tfstudio.probes.positions.x__table__mutmut_9": _CPU,
    "tfstudio.probes.positions.x__table__mutmut_16": _CPU,
    "tfstudio.probes.positions.x__table__mutmut_20": _CPU,
    "tfstudio.probes.positions.x__device_of__mutmut_1": _CPU,
    "tfstudio.probes.positions.x__device_of__mutmut_3": _CPU,
    "tfstudio.probes.positions.x__table__mutmut_21": "a batch of 2 zero rows; row 0 is kept",
    "tfstudio.probes.positions.x__rope__mutmut_22": "extra batch/head rows; [0, 0] is kept",
    "tfstudio.probes.positions.x__rope__mutmut_23": "extra batch/head rows; [0, 0] is kept",
    "tfstudio.probes.positions.x_rope_score__mutmut_22":
        "apply_rope broadcasts a [1, 1, hd] vector like [1, 1, 1, hd]; flattened the same",
    "tfstudio.probes.positions.x_rope_score__mutmut_23":
        "apply_rope broadcasts a [1, 1, hd] vector like [1, 1, 1, hd]; flattened the same",
    "tfstudio.probes.positions.x_rope_score__mutmut_24":
        "apply_rope broadcasts a [1, 1, hd] vector like [1, 1, 1, hd]; flattened the same",
    "tfstudio.probes.positions.x__alibi__mutmut_3": "torch.zeros' default dtype is float32",
    "tfstudio.probes.positions.x__alibi__mutmut_5": "torch.zeros' default dtype is float32",
    "tfstudio.probes.positions.x__alibi__mutmut_6":
        "the probe tensor only carries dtype and device to the module",
    "tfstudio.probes.positions.x__alibi__mutmut_16":
        "with as many queries as keys, start shifts both positions alike: i - j is unchanged",
    "tfstudio.probes.positions.x__alibi__mutmut_21": "alibi_slopes gives Python floats: float64",
    "tfstudio.probes.positions.x__alibi__mutmut_23": "alibi_slopes gives Python floats: float64",
}


# tfstudio/data
DATA: dict[str, str] = {
    "tfstudio.data.masking.x_mask_tokens__mutmut_22": _F32,
    "tfstudio.data.masking.x_mask_tokens__mutmut_54": _F32,
    "tfstudio.data.masking.x_mask_tokens__mutmut_59": _F32,
    "tfstudio.data.masking.x_mask_tokens__mutmut_61": _F32,
    "tfstudio.data.masking.x_mask_tokens__mutmut_44":
        "randint's default dtype is int64, the dtype of the documented LongTensor ids",
    "tfstudio.data.masking.x_mask_tokens__mutmut_49":
        "randint's default dtype is int64, the dtype of the documented LongTensor ids",
    "tfstudio.data.masking.x_mask_tokens__mutmut_45": "randint(high, size) draws from [0, high)",
    "tfstudio.data.task_batches.x_seq2seq_batch__mutmut_24": _FULL_INT,
    "tfstudio.data.task_batches.x_seq2seq_batch__mutmut_27": _FULL_INT,
    "tfstudio.data.task_batches.x_seq2seq_batch__mutmut_36": _FULL_INT,
    "tfstudio.data.task_batches.x_seq2seq_batch__mutmut_39": _FULL_INT,
    "tfstudio.data.task_batches.x_seq2seq_batch__mutmut_43": _FULL_INT,
    "tfstudio.data.task_batches.x_seq2seq_batch__mutmut_46": _FULL_INT,
    "tfstudio.data.task_batches.x_seq2seq_batch__mutmut_54": _TENSOR_INT,
    "tfstudio.data.task_batches.x_seq2seq_batch__mutmut_56": _TENSOR_INT,
    "tfstudio.data.task_batches.x_seq2seq_batch__mutmut_66": _TENSOR_INT,
    "tfstudio.data.task_batches.x_seq2seq_batch__mutmut_68": _TENSOR_INT,
    "tfstudio.data.tokenizer.xǁTokenizerǁtoken_strings__mutmut_8":
        'codec names are case-insensitive: "UTF-8" is the "utf-8" codec',
    "tfstudio.data.simple_tokenizers.xǁCharTokenizerǁtoken_bytes__mutmut_7":
        'codec names are case-insensitive: "UTF-8" is the "utf-8" codec',
    "tfstudio.data.textio.x_read_jsonl_texts__mutmut_9": _CHUNK,
    "tfstudio.data.textio.x_read_jsonl_texts__mutmut_12": _CHUNK,
    "tfstudio.data.corpus.x__task_corpus__mutmut_5": "Task.examples' default seed is 0",
    "tfstudio.data.tasks.xǁBracketsTaskǁpair__mutmut_2":
        "random() returns exactly 0.5 with probability 2^-53 per example",
}


EQUIVALENT: dict[str, str] = {**TRAIN, **RUNS, **PROBES, **DATA}
