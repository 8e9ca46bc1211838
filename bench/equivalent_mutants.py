"""Survivors of bench/mutation.py reviewed by hand and found equivalent.

No input the function is documented to take can tell them from the original. Keyed by
mutmut's name, which is stable while the function's source is unchanged; a survivor not
listed here is reported as "not reviewed". One dict per package, so reviews of different
packages never touch the same lines."""

_CPU = "only the device changes; same result on a CPU-only machine (a GPU run would tell)"
_DIM = "the same axis for the documented input shape ([B, V] / [B, 1])"
_F32 = ("a float32 draw equals this threshold with probability 2^-24 per position (0.15 is not "
        "a float32 multiple of 2^-24, so never)")

_HALF = ("random() returns exactly 0.5 with probability 2^-53 per draw (and never in the "
         "shipped stories' seeded stream, which the regeneration test compares byte for byte)")
_LAST_SIZE = ("the text is generated up to the largest size, so min_bytes <= len(full) and the "
              "search from min_bytes - 2 finds the blank line that ends the text at the latest: "
              "the else branch's len(full) is what the find gives anyway")
_INT64 = ("an array of Python ints is int64 without a dtype: NumPy's default integer on 64-bit "
          "Linux and macOS, and on every platform since NumPy 2")
_RUSTBPE_PATTERN = ("rustbpe's default split pattern is this GPT-4 pattern (its get_pattern() equals "
                    'SPLIT_PATTERN; trained with and without it the merges are equal)')
_STATE_KEYS = ("bpe_from_state never reads the state's format_version or kind: the tokenizer's "
               "to_dict writes its own")
_CODEC = 'codec names are case-insensitive: "UTF-8" is the "utf-8" codec'
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
_CUDA = ("the CUDA generators: on a machine without CUDA this branch never runs (a GPU run of "
         "test_the_cuda_generators_are_saved_and_restored would tell)")
_ASCII = "json.dump writes ASCII only (ensure_ascii), the same bytes in any of these encodings"
_CODEC = '"UTF-8" and "utf-8" name the same codec'
_SAME_PATH = ("Path / '' is the same path, so both branches write the same line (the only "
              "first element that is falsy is '')")
_LATEST_ASCII = "LATEST holds an ASCII name (step-NNNNNNNN): the same bytes in any of these"
_UNLISTABLE = ('a folder that cannot be listed never verifies, so its key (None or "") is never '
               "stored or found")
_BOUND = ("the cache's size bound: only when it is emptied moves (after 64 or 65 entries); "
          "results are the same")
_DTYPE_CASE = "dtype_bytes lower-cases the dtype's name"
_ASCII_DUMPS = ("json.dumps writes ASCII only (ensure_ascii), the same bytes in any of these "
                "encodings")
_MADE_FOLDER = ("acquire sets _made_folder before anything reads it; release without acquire "
                "returns first")
_LISTED = "the folder's listing just showed the lock file, so it exists to unlink"
_NOT_MAX = 'a "max" limit then fails int(), whose ValueError also gives None (no limit)'
RUNS: dict[str, str] = {
    "tfstudio.runs.preflight.x__cgroup_room__mutmut_6": _NOT_MAX,
    "tfstudio.runs.preflight.x__cgroup_room__mutmut_7": _NOT_MAX,
    "tfstudio.runs.preflight.x_training_need__mutmut_11":
        "training_memory's default dtype is float32",
    "tfstudio.runs.preflight.x_training_need__mutmut_13": _DTYPE_CASE,
    "tfstudio.runs.preflight.x_training_need__mutmut_29": _DTYPE_CASE,
    "tfstudio.runs.preflight.x__training_fix__mutmut_19":
        "per_row is never 0: a batch of at least one sequence has activations",
    "tfstudio.runs.preflight.x__training_fix__mutmut_21":
        "both sides are positive here (else it returned above): int() floors the quotient like //",
    "tfstudio.runs.checkpoint.x__drop_aliases__mutmut_3":
        "named_parameters only tests remove_duplicate for truth: None is False",
    "tfstudio.runs.checkpoint.x__drop_aliases__mutmut_8":
        "only membership in first is read, never the stored name",
    "tfstudio.runs.checkpoint.x_is_tied_alias__mutmut_3":
        "named_parameters only tests remove_duplicate for truth: None is False",
    "tfstudio.runs.folder.xǁRunFolderǁwrite_config__mutmut_4":
        "only the temporary file's name changes; it is renamed to config.json at once",
    "tfstudio.runs.folder.xǁRunFolderǁwrite_config__mutmut_6": _ASCII_DUMPS,
    "tfstudio.runs.folder.xǁRunFolderǁwrite_config__mutmut_8": _ASCII_DUMPS,
    "tfstudio.runs.folder.xǁRunFolderǁwrite_config__mutmut_15": _ASCII_DUMPS,
    "tfstudio.runs.folder.xǁRunFolderǁwrite_config__mutmut_10":
        "only the JSON's whitespace changes; config.json is read with json.loads",
    "tfstudio.runs.folder.xǁRunFolderǁwrite_config__mutmut_12":
        "only the JSON's whitespace changes; config.json is read with json.loads",
    "tfstudio.runs.folder.xǁRunFolderǁwrite_config__mutmut_13":
        "only the JSON's whitespace changes; config.json is read with json.loads",
    "tfstudio.runs.lock.x__read_pid__mutmut_12":
        ("the lock file holds the writer's PID and a newline (at most 21 bytes): 32 or 33 "
         "bytes read it whole"),
    "tfstudio.runs.lock.x__read_pid__mutmut_15": _CODEC,
    "tfstudio.runs.lock.xǁRunLockǁ__init____mutmut_5": _MADE_FOLDER,
    "tfstudio.runs.lock.xǁRunLockǁ__init____mutmut_6": _MADE_FOLDER,
    "tfstudio.runs.lock.xǁRunLockǁacquire__mutmut_40":
        ("the PID is then written at offset 0 and is at least 2 bytes: it covers the one "
         "byte kept"),
    "tfstudio.runs.lock.xǁRunLockǁrelease__mutmut_12": _LISTED,
    "tfstudio.runs.lock.xǁRunLockǁrelease__mutmut_13": _LISTED,
    "tfstudio.runs.lock.xǁRunLockǁrelease__mutmut_14":
        "the folder was just seen holding only the lock file, now unlinked: rmdir succeeds",
    "tfstudio.runs.checkpoint.x_load_checkpoint__mutmut_35":
        ("load_model already drops tied aliases from missing, so every key left is a real "
         "missing one: is_tied_alias is False for it and for None alike"),
    "tfstudio.runs.folder.xǁRunFolderǁtrained_length__mutmut_23": _ASCII,
    "tfstudio.runs.checkpoint.x_rng_state__mutmut_4": _CUDA,
    "tfstudio.runs.checkpoint.x_rng_state__mutmut_5": _CUDA,
    "tfstudio.runs.checkpoint.x_rng_state__mutmut_6": _CUDA,
    "tfstudio.runs.checkpoint.x_rng_state__mutmut_7": _CUDA,
    "tfstudio.runs.checkpoint.x_set_rng_state__mutmut_8": _CUDA,
    "tfstudio.runs.checkpoint.x_set_rng_state__mutmut_9": _CUDA,
    "tfstudio.runs.checkpoint.x_set_rng_state__mutmut_10": _CUDA,
    "tfstudio.runs.checkpoint.x_set_rng_state__mutmut_11": _CUDA,
    "tfstudio.runs.checkpoint.x_set_rng_state__mutmut_12": _CUDA,
    "tfstudio.runs.checkpoint.x_set_rng_state__mutmut_13": _CUDA,
    "tfstudio.runs.checkpoint.x_set_rng_state__mutmut_14": _CUDA,
    "tfstudio.runs.checkpoint.x_set_rng_state__mutmut_15": _CUDA,
    "tfstudio.runs.checkpoint.x_set_rng_state__mutmut_16": _CUDA,
    "tfstudio.runs.checkpoint.x_set_rng_state__mutmut_17": _CUDA,
    "tfstudio.runs.checkpoint.x_set_rng_state__mutmut_18": _CUDA,
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_67": _ASCII,
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_70": _ASCII,
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_77": _ASCII,
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_87":
        "the file is opened only for its descriptor, to fsync it; nothing is read",
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_99": _LATEST_ASCII,
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_101": _LATEST_ASCII,
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_103": _LATEST_ASCII,
    "tfstudio.runs.checkpoint.x__sha256__mutmut_13":
        "a file's digest does not depend on the size of the blocks it is read in",
    "tfstudio.runs.checkpoint.x__sha256__mutmut_15":
        "a file's digest does not depend on the size of the blocks it is read in",
    "tfstudio.runs.checkpoint.x__sha256__mutmut_16":
        "a file's digest does not depend on the size of the blocks it is read in",
    "tfstudio.runs.checkpoint.x__write_manifest__mutmut_10": _ASCII,
    "tfstudio.runs.checkpoint.x__write_manifest__mutmut_13": _ASCII,
    "tfstudio.runs.checkpoint.x__write_manifest__mutmut_18": _ASCII,
    "tfstudio.runs.checkpoint.x__write_manifest__mutmut_21":
        "only the JSON's whitespace changes; the manifest is read with json.loads",
    "tfstudio.runs.checkpoint.x__write_manifest__mutmut_24":
        "only the JSON's whitespace changes; the manifest is read with json.loads",
    "tfstudio.runs.checkpoint.x__write_manifest__mutmut_27":
        "only the JSON's whitespace changes; the manifest is read with json.loads",
    "tfstudio.runs.checkpoint.x__prune__mutmut_13":
        "with keep_last 0, done[:-0] is done[:0], empty: nothing is pruned either way",
    "tfstudio.runs.checkpoint.x_find_checkpoint__mutmut_13":
        "skipped is still empty when LATEST's checkpoint verifies; the default is an empty list",
    "tfstudio.runs.checkpoint.x_find_checkpoint__mutmut_16": _SAME_PATH,
    "tfstudio.runs.checkpoint.x_find_checkpoint__mutmut_20": _SAME_PATH,
    "tfstudio.runs.checkpoint.x_find_checkpoint__mutmut_38": _SAME_PATH,
    "tfstudio.runs.checkpoint.x_find_checkpoint__mutmut_42": _SAME_PATH,
    "tfstudio.runs.checkpoint.x__read_latest__mutmut_9": _CODEC,
    "tfstudio.runs.checkpoint.x__manifest_problem__mutmut_5": _CODEC,
    "tfstudio.runs.checkpoint.x__state_problem__mutmut_8": _CODEC,
    "tfstudio.runs.checkpoint.x_read_state__mutmut_9": _CODEC,
    "tfstudio.runs.checkpoint.x__safetensors_problem__mutmut_28": _CODEC,
    "tfstudio.runs.checkpoint.x_checkpoint_problem__mutmut_8": _UNLISTABLE,
    "tfstudio.runs.checkpoint.x_checkpoint_problem__mutmut_17": _BOUND,
    "tfstudio.runs.checkpoint.x_checkpoint_problem__mutmut_18": _BOUND,
    "tfstudio.runs.checkpoint.x_checkpoint_problem__mutmut_19":
        "only membership in the cache is read, never the stored value",
    "tfstudio.runs.checkpoint.x_checkpoint_problem__mutmut_20":
        "only membership in the cache is read, never the stored value",
    "tfstudio.runs.checkpoint.x_load_checkpoint__mutmut_13":
        "safetensors' load_model only tests strict for truth: None is False",
    "tfstudio.runs.checkpoint.x_load_checkpoint__mutmut_14": _CPU,
    "tfstudio.runs.checkpoint.x_load_checkpoint__mutmut_18": _CPU,
    "tfstudio.runs.checkpoint.x_load_checkpoint__mutmut_52": _CPU,
    "tfstudio.runs.checkpoint.x_load_checkpoint__mutmut_54": _CPU,
}


# tfstudio/probes
_FALSY = "None and False are both falsy: a block without the attribute is not a branch either way"
_ONE_TENSOR = ("every tfstudio block's forward returns one tensor, never a tuple: the tuple "
               "branch is never taken")
_EMBED_FIRST = ("only a token embedding can read the ids, so in a model without layer groups "
                "it is the first block to run: slicing from it or from 0 is the same")
_PROBE_TENSOR = ("the probe tensor only carries a device and a float dtype to the mask "
                 "(float32 is torch.zeros' default; its length is never read)")
PROBES: dict[str, str] = {
    "tfstudio.probes.ablation.x__module_of__mutmut_8": _FALSY,
    "tfstudio.probes.ablation.x__module_of__mutmut_20": _FALSY,
    "tfstudio.probes.ablation.x__zero_head__mutmut_9":
        ("the output projection is called with one positional argument: args[1:] and "
         "args[2:] are both empty"),
    "tfstudio.probes.ablation.x_parse_target__mutmut_9":
        ("with one '=' both split alike; with more, both refuse with the same message (the "
         "kind or the value is wrong)"),
    "tfstudio.probes.ablation.x_text_loss__mutmut_19": 'float("NAN") is float("nan")',
    "tfstudio.probes.ablation.x_text_loss__mutmut_3": _CPU,
    "tfstudio.probes.ablation.x_text_loss__mutmut_5": _CPU,
    "tfstudio.probes.routing.x_expert_routing__mutmut_18":
        ("the same forward sets last_expert_load and last_assignments together (both None "
         "before any)"),
    "tfstudio.probes.lens.x_logit_lens__mutmut_28": "torch.topk's default dim is -1",
    "tfstudio.probes.attention.x_allowed_mask__mutmut_14": _PROBE_TENSOR,
    "tfstudio.probes.attention.x_allowed_mask__mutmut_16": _PROBE_TENSOR,
    "tfstudio.probes.attention.x_allowed_mask__mutmut_17": _PROBE_TENSOR,
    "tfstudio.probes.attention.x_read_attention__mutmut_14":
        "captured weights are [B, H, Q, K]: index 2 is index -2",
    "tfstudio.probes.lens.x__output__mutmut_1": _ONE_TENSOR,
    "tfstudio.probes.lens.x__output__mutmut_3": _ONE_TENSOR,
    "tfstudio.probes.lens.x_residual_stream__mutmut_64": _EMBED_FIRST,
    "tfstudio.probes.lens.x_residual_stream__mutmut_66": _EMBED_FIRST,
    "tfstudio.probes.lens.x_residual_stream__mutmut_67": _EMBED_FIRST,
    "tfstudio.probes.lens.x_residual_stream__mutmut_70": _EMBED_FIRST,
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
    "tfstudio.data.simple_tokenizers.xǁByteTokenizerǁencode__mutmut_7": _CODEC,
    "tfstudio.data.simple_tokenizers.xǁCharTokenizerǁencode_array__mutmut_12": _CODEC,
    "tfstudio.data.textio.x_read_text_chunks__mutmut_10": _CODEC,
    "tfstudio.data.textio.x_read_text_chunks__mutmut_45":
        "first is only read by `if first and text`: None is as false as False",
    "tfstudio.data.named_encodings.x__data_gym_ranks__mutmut_28": _CODEC,
    "tfstudio.data.storygen.x__a__mutmut_8":
        "every phrase starts with a lower-case adjective, never with the 'X' the mutant adds",
    "tfstudio.data.bpe.xǁTiktokenTokenizerǁdecode__mutmut_6":
        "tiktoken's Encoding.decode defaults to errors=\"replace\"",
    "tfstudio.data.bpe.xǁTiktokenTokenizerǁencode_array__mutmut_2": _INT64,
    "tfstudio.data.bpe.xǁTiktokenTokenizerǁencode_array__mutmut_4": _INT64,
    "tfstudio.data.bpe.x_train_bpe__mutmut_26": _RUSTBPE_PATTERN,
    "tfstudio.data.bpe.x_train_bpe__mutmut_30": _RUSTBPE_PATTERN,
    "tfstudio.data.bpe.x_train_bpe__mutmut_29":
        "buffer_size only sets how many pieces rustbpe holds at once; the merges are the same",
    "tfstudio.data.bpe.x_train_bpe__mutmut_45": _STATE_KEYS,
    "tfstudio.data.bpe.x_train_bpe__mutmut_46": _STATE_KEYS,
    "tfstudio.data.bpe.x_train_bpe__mutmut_47": _STATE_KEYS,
    "tfstudio.data.bpe.x_train_bpe__mutmut_48": _STATE_KEYS,
    "tfstudio.data.bpe.x_train_bpe__mutmut_49": _STATE_KEYS,
    "tfstudio.data.bpe.x_train_bpe__mutmut_50": _STATE_KEYS,
    "tfstudio.data.bpe.x_train_bpe__mutmut_51": _STATE_KEYS,
    "tfstudio.data.bpe.x_train_bpe__mutmut_61": _CODEC,
    "tfstudio.data.bpe.x_train_bpe__mutmut_9":
        "importlib.metadata normalises distribution names: \"RUSTBPE\" finds rustbpe",
    "tfstudio.data.bpe.x_train_bpe__mutmut_19":
        ("the cached table is written by json.dumps with ensure_ascii, so it is ASCII and reads "
         "the same under any locale encoding"),
    "tfstudio.data.bpe.x_train_bpe__mutmut_21": _CODEC,
    "tfstudio.data.simple_tokenizers.xǁCharTokenizerǁ__init____mutmut_22": _INT64,
    "tfstudio.data.simple_tokenizers.xǁCharTokenizerǁ__init____mutmut_24": _INT64,
    "tfstudio.data.storygen.x_main__mutmut_12": _CODEC,
    "tfstudio.data.tokenizer.x_load_tokenizer__mutmut_11": _CODEC,
    "tfstudio.data.tokenizer.xǁTokenizerǁdecode__mutmut_10": _CODEC,
    "tfstudio.data.tokenizer.xǁTokenizerǁsave__mutmut_23": "json.dumps' ensure_ascii defaults to True",
    "tfstudio.data.storygen.x_generate_sizes__mutmut_10": _LAST_SIZE,
    "tfstudio.data.storygen.x_generate_sizes__mutmut_21": _LAST_SIZE,
    "tfstudio.data.storygen.x_story__mutmut_28": _HALF,
    "tfstudio.data.storygen.x_story__mutmut_41": _HALF,
    "tfstudio.data.named_encodings.x_load_named_encoding__mutmut_30":
        ("every registered encoding's <|endoftext|> id is at least len(ranks) (it follows the "
         "last rank), so max() never picks len(ranks) - 1, nor len(ranks) - 2"),
    "tfstudio.data.token_cache.x_token_array__mutmut_28":
        ("text_tokens sums non-negative counts and is only compared with 0: subtracting them "
         "gives 0 exactly when adding does"),
}


EQUIVALENT: dict[str, str] = {**TRAIN, **RUNS, **PROBES, **DATA}
