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

_SET_BY_BUILD = ("an initial value _build sets again before anything reads it (callers only "
                 "construct a Trainer, run it, pause, resume and stop it)")
_FP16 = ("the loss scaler is used only in fp16, which needs a GPU (refused on the CPU): disabled "
         "either way on a CPU-only machine (a GPU fp16 run would tell)")
_ONE_PROCESS = ("only under torchrun: in one process wrap_for_training returns the model itself "
                "whatever the mode and device (test_one_process_trains_the_model_itself_and_keeps_"
                "its_weights)")
_FSDP = ("only under torchrun --parallel fsdp, where the model holds shards: in one process and "
         "under DDP full_weights returns None (test_one_process_trains_the_model_itself_and_"
         "keeps_its_weights); tests/test_train_resume.py::test_resuming_a_sharded_run_is_refused_"
         "in_a_single_process stands in for it with the model's own whole weights, which equal "
         "what the model saves itself; test_train_cli.py's torchrun FSDP run happens in "
         "subprocesses, which mutmut does not map to this function")
_WAKE = ("resume() and stop() notify the condition under its lock, so the wait ends at once "
         "whatever its timeout (the timeout only bounds a wait that nothing ends)")
TRAIN_TRAINER: dict[str, str] = {
    **{f"tfstudio.train.trainer.xǁTrainerǁ__init____mutmut_{n}": _SET_BY_BUILD
       for n in (18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 31, 32, 39, 40, 41, 42)},
    "tfstudio.train.trainer.xǁTrainerǁ__init____mutmut_28": ("set by _open_run_folder before "
        "anything reads it; None and False are both false"),
    "tfstudio.train.trainer.xǁTrainerǁ__init____mutmut_29": ("set by _open_run_folder before "
        "anything reads it (a run refused earlier never checkpoints or probes)"),
    "tfstudio.train.trainer.xǁTrainerǁ__init____mutmut_30": ("metrics_log is only tested for "
        "truth where _open_run_folder may have left the initial value: '' is false like None"),
    "tfstudio.train.trainer.xǁTrainerǁ_build_model__mutmut_11": ("self.notes is still [] here "
        "(_build_model runs once and nothing adds a note before it), so = and += give the same "
        "list"),
    "tfstudio.train.trainer.xǁTrainerǁ_build_model__mutmut_21": _CPU,
    "tfstudio.train.trainer.xǁTrainerǁ_build_model__mutmut_25": _ONE_PROCESS,
    "tfstudio.train.trainer.xǁTrainerǁ_build_model__mutmut_26": _ONE_PROCESS,
    "tfstudio.train.trainer.xǁTrainerǁ_build_model__mutmut_36": ("make_optimizer only asks "
        "whether the device type is 'cuda' (fused AdamW): the same on a CPU-only machine (a GPU "
        "run would tell)"),
    **{f"tfstudio.train.trainer.xǁTrainerǁ_build_model__mutmut_{n}": _FP16
       for n in (43, 44, 45, 48, 49)},
    "tfstudio.train.trainer.xǁTrainerǁ_checkpoint__mutmut_25": _FP16,
    **{f"tfstudio.train.trainer.xǁTrainerǁ_checkpoint__mutmut_{n}": _FSDP
       for n in (9, 34, 41)},
    "tfstudio.train.trainer.xǁTrainerǁ_wait_while_paused__mutmut_3": _WAKE,
    "tfstudio.train.trainer.xǁTrainerǁ_wait_while_paused__mutmut_4": _WAKE,
    "tfstudio.train.trainer.x__layer_parameter_groups__mutmut_5": ("key[:2] is the whole key "
        "for keys of one or two parts, so both branches name them alike"),
    "tfstudio.train.trainer.x__layer_parameter_groups__mutmut_10": ("for a key of exactly two "
        "parts key[:2] is the whole key"),
    "tfstudio.train.trainer.xǁTrainerǁ_train_step__mutmut_73": _FP16,
    "tfstudio.train.trainer.xǁTrainerǁ_train_step__mutmut_88": _CPU,
    "tfstudio.train.trainer.xǁTrainerǁrun__mutmut_2": ("end's first value is never read: every "
        "path through the try assigns it, and a BaseException (Ctrl-C) leaves run() after the "
        "finally, before emit"),
}

_JSON_ASCII = ("json.dumps writes ASCII only (ensure_ascii), the same bytes in any "
               "ASCII-compatible encoding")
_TMP_NAME = ("the temporary's name only: it is written next to metrics.jsonl and then replaces "
             "it, so the same file results")
_NO_EQUAL_VOCAB = ("reached only when the table's shape differs, and a vocabulary table of "
                   "equal row counts has the same shape (trailing dimensions are checked equal)")
_DDP_IDS = ("device_ids are only built for a CUDA device; CPU replicas get None either way (a GPU "
            "run would tell)")
_INT_FLAG = ("the flag is 0 or 1: an int64 tensor holds it like int32, and every rank runs the "
             "same code")
_MPS = "torch.backends always has mps (torch >= 1.12); the default only mattered for older torch"
TRAIN_REST: dict[str, str] = {
    **{f"tfstudio.train.trainer.xǁTrainerǁ_restore__mutmut_{n}": _FP16
       for n in (27, 28, 29, 30, 31, 32)},
    "tfstudio.train.trainer.xǁTrainerǁ_restore__mutmut_9": ("load_checkpoint's default device is "
        "the CPU: " + _CPU),
    "tfstudio.train.events.xǁMetricsLogǁ__call____mutmut_5": "json.dumps's allow_nan is True by default",
    **{f"tfstudio.train.events.xǁMetricsLogǁ__call____mutmut_{n}": _JSON_ASCII
       for n in (9, 12, 16)},
    "tfstudio.train.events.xǁMetricsLogǁtruncate_after__mutmut_25": _TMP_NAME,
    "tfstudio.train.events.xǁMetricsLogǁtruncate_after__mutmut_26": _TMP_NAME,
    **{f"tfstudio.train.events.xǁMetricsLogǁtruncate_after__mutmut_{n}": _JSON_ASCII
       for n in (28, 30, 37)},
    "tfstudio.train.events.x__records__mutmut_8": '"UTF-8" and "utf-8" name the same codec',
    "tfstudio.train.init_from.x_load_weights_from__mutmut_32": _NO_EQUAL_VOCAB,
    "tfstudio.train.init_from.x_load_weights_from__mutmut_49": _NO_EQUAL_VOCAB,
    "tfstudio.train.init_from.x_load_weights_from__mutmut_64": ("load_state_dict only tests "
        "strict for truth: None is False"),
    "tfstudio.train.init_from.x_resize_rows__mutmut_1": ("rows == len(table): concatenating zero "
        "new rows gives an equal new tensor, as table[:rows].clone() does"),
    "tfstudio.train.init_from.x_resize_rows__mutmut_8": ("without keepdim the mean row "
        "broadcasts to the same expanded rows"),
    "tfstudio.train.init_from.x_resize_rows__mutmut_10": ("without keepdim the mean row "
        "broadcasts to the same expanded rows"),
    "tfstudio.train.init_from.x_resize_rows__mutmut_14": "torch.cat's default dim is 0",
    "tfstudio.train.distributed.x_mean_across_ranks__mutmut_5": _CPU,
    "tfstudio.train.distributed.x_mean_across_ranks__mutmut_8": _CPU,
    "tfstudio.train.distributed.x_all_ranks_agree__mutmut_4": _INT_FLAG,
    "tfstudio.train.distributed.x_all_ranks_agree__mutmut_7": _INT_FLAG,
    "tfstudio.train.distributed.x_all_ranks_agree__mutmut_5": _CPU,
    "tfstudio.train.distributed.x_all_ranks_agree__mutmut_8": _CPU,
    "tfstudio.train.distributed.x_all_ranks_agree__mutmut_11": ("every rank marks agreement with "
        "2 instead of 1: the minimum is still 0 exactly when one rank disagrees"),
    **{f"tfstudio.train.distributed.x_wrap_for_training__mutmut_{n}": _DDP_IDS
       for n in (10, 11, 14, 15, 17, 19)},
    **{f"tfstudio.train.distributed.x_full_weights__mutmut_{n}": ("cpu_offload only moves the "
        "gathered weights to the CPU, where a CPU run's already are (a GPU run would tell)")
       for n in (11, 13, 15)},
    "tfstudio.train.device.x_pick_device__mutmut_14": _MPS,
    "tfstudio.train.device.x_pick_device__mutmut_46": _MPS,
    "tfstudio.train.start.x_plan_start__mutmut_12": ("_resumed takes dist but never reads it (a "
        "dead parameter)"),
}

# tfstudio/train
TRAIN: dict[str, str] = {
    **TRAIN_TRAINER,
    **TRAIN_REST,
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
_ANY_HOST_NAME = ("the default device: available_memory reads this machine's memory for any name "
                  "that does not start with 'cuda', so 'XXcpuXX' and 'CPU' read what 'cpu' does")
_ASCII_DUMPS = ("json.dumps writes ASCII only (ensure_ascii), the same bytes in any of these "
                "encodings")
_MADE_FOLDER = ("acquire sets _made_folder before anything reads it; release without acquire "
                "returns first")
_LISTED = "the folder's listing just showed the lock file, so it exists to unlink"
_NOT_MAX = 'a "max" limit then fails int(), whose ValueError also gives None (no limit)'
RUNS: dict[str, str] = {
    "tfstudio.runs.checkpoint.x__manifest_problem__mutmut_41":
        "only sizes that differ reach this line (actual != size), where < and <= agree",
    "tfstudio.runs.folder.xǁRunFolderǁconfig__mutmut_5": _CODEC,
    "tfstudio.runs.folder.xǁRunFolderǁtrained_length__mutmut_25": _CODEC,
    "tfstudio.runs.folder.xǁRunFolderǁload_model__mutmut_24":
        "load_checkpoint's device defaults to the CPU: " + _CPU,
    "tfstudio.runs.folder.xǁRunFolderǁload_model__mutmut_25":
        "model.to(None) leaves the model where it is, on the CPU: " + _CPU,
    "tfstudio.runs.preflight.x_check_model_memory__mutmut_1": _ANY_HOST_NAME,
    "tfstudio.runs.preflight.x_check_model_memory__mutmut_2": _ANY_HOST_NAME,
    "tfstudio.runs.preflight.x_check_model_memory__mutmut_4": _DTYPE_CASE,
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
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_70": _ASCII,
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_73": _ASCII,
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_80": _ASCII,
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_90":
        "the file is opened only for its descriptor, to fsync it; nothing is read",
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_102": _LATEST_ASCII,
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_104": _LATEST_ASCII,
    "tfstudio.runs.checkpoint.x_save_checkpoint__mutmut_106": _LATEST_ASCII,
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
    "tfstudio.runs.checkpoint.x__prune__mutmut_11":
        "differs only for a negative keep_last, which save_checkpoint refuses before pruning "
        "(and TrainConfig.check before a run); with 0, done[:-0] is empty like the else branch",
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
_FIRST_CALL = ("the first top-level call reads the token ids (an embedding or a group), never a "
               "norm or dropout: the walk back from the head always stops at start >= 1")
_PROBE_TENSOR = ("the probe tensor only carries a device and a float dtype to the mask "
                 "(float32 is torch.zeros' default; its length is never read)")
_ATTN_INPUTS = "attention_maps reads only inputs.args; the ids, tokens and stream role are never read"
_SQUARE = ("a self-attention map of one stream is square, [H, T, T] (no cache in a probe): "
           "axes 1, -2 and -1 all have length T")
_IDS_INT = ("torch.tensor of a non-empty list of Python ints is int64 = torch.long (every tokenizer "
            "here encodes a non-blank text to at least one id; a head-score sequence has >= 4)")
_F64 = "astype(None) is astype(float64) in NumPy"
_TRAINER = ("a Trainer sets this attribute in __init__ (and build_pipeline sets pipe.corpus, a "
            "Corpus, whose task attribute always exists): getattr's default is never used")
_NO_TOKENIZER = "default_probe_text never reads its tokenizer argument"
_INT64 = "np.asarray of Python ints is int64 (NumPy 2, on every platform)"
_PARENTS = ("_flatten writes every dict (even one holding only arrays) into the JSON tree, so "
            "each parent exists already and setdefault never inserts")
_AXIS_2D = "the arrays here are 2-D ([rows, d]): axis +1 is axis -1"
_CENTRED = ("PCA coordinates are centred (the rows are centred before they are projected): every "
            "mean here is 0 (to rounding), so adding, subtracting or averaging it changes nothing")
_PAD_0 = "with two columns the pad is by 2 - 2 = 0: the coordinates and ratios stay as they are"
_SVD_ROWS = "full_matrices only adds rows to vt past those of s: vt[:2] and s are the same"
_FLOAT_OUT = ("every block's forward returns one floating-point tensor (checked for every tiny "
              "preset's block types): the tuple and non-float branches never run")
_WALK_2D = ("the walk opens batch row 0: a 2-D [tokens, features] tensor, whose axis 1 is "
            "axis -1")
_WALK_EMPTY = "steps is the empty list just made: = and += give the same list"
PROBES: dict[str, str] = {
    "tfstudio.probes.snapshot.x__default_text__mutmut_6": _TRAINER,
    "tfstudio.probes.snapshot.x__default_text__mutmut_15": _TRAINER,
    "tfstudio.probes.snapshot.x__default_text__mutmut_20": _TRAINER,
    "tfstudio.probes.snapshot.x__default_text__mutmut_27": _NO_TOKENIZER,
    "tfstudio.probes.snapshot.x__default_text__mutmut_29": _NO_TOKENIZER,
    "tfstudio.probes.snapshot.x__separator__mutmut_6": _TRAINER,
    "tfstudio.probes.snapshot.x__separator__mutmut_11": _TRAINER,
    "tfstudio.probes.snapshot.x__separator__mutmut_16": _TRAINER,
    "tfstudio.probes.snapshot.x__separator__mutmut_26":
        "getattr(task, 'sep', None) or '>' is '>' exactly where the default '>' would be used",
    "tfstudio.probes.snapshot.x_snapshot_for_run__mutmut_32": _TRAINER,
    "tfstudio.probes.snapshot.x_snapshot_for_run__mutmut_35": _TRAINER,
    "tfstudio.probes.snapshot.x_snapshot_for_run__mutmut_38": _TRAINER,
    "tfstudio.probes.snapshot.x_take_snapshot__mutmut_40": _INT64,
    "tfstudio.probes.snapshot.x_take_snapshot__mutmut_42": _INT64,
    "tfstudio.probes.snapshot.xǁSnapshotStoreǁload__mutmut_4": "np.load only tests allow_pickle for truth: None is False",
    "tfstudio.probes.snapshot.xǁSnapshotStoreǁload__mutmut_6": "np.load's default is allow_pickle=False",
    "tfstudio.probes.snapshot.x__unflatten__mutmut_10": _PARENTS,
    "tfstudio.probes.snapshot.x__unflatten__mutmut_12": _PARENTS,
    "tfstudio.probes.embeddings.x_cosine_matrix__mutmut_8": _AXIS_2D,
    "tfstudio.probes.embeddings.x_cosine_matrix__mutmut_18": _AXIS_2D,
    "tfstudio.probes.embeddings.x_cosine_matrix__mutmut_30": "a zero row divided by 1 or by 2 is the same zero row",
    "tfstudio.probes.embeddings.x_cosine_matrix__mutmut_40": "a zero row divided by 1 or by 2 is the same zero row",
    "tfstudio.probes.embeddings.x_embedding_map__mutmut_20": ("NaN sorts last in argsort as +inf (-(-inf)) does: with k <= n - 1 the token itself "
         "is never among its neighbours"),
    "tfstudio.probes.embeddings.x_embedding_map__mutmut_36": "argsort's default axis is -1, axis 1 of the 2-D matrix",
    "tfstudio.probes.embeddings.x_embedding_map__mutmut_41": "NumPy reads a sort kind case-insensitively: 'STABLE' is 'stable'",
    "tfstudio.probes.embeddings.x_embedding_map__mutmut_51": _INT64,
    "tfstudio.probes.embeddings.x_embedding_map__mutmut_53": _INT64,
    "tfstudio.probes.embeddings.x_embedding_map__mutmut_63": _INT64,
    "tfstudio.probes.embeddings.x_embedding_map__mutmut_65": _INT64,
    "tfstudio.probes.embeddings.x_embedding_map__mutmut_73": "take_along_axis's default axis is -1, axis 1 of the 2-D matrix",
    "tfstudio.probes.embeddings.x_embedding_replay__mutmut_9": "Path.glob in a missing folder yields nothing: no checkpoints either way",
    "tfstudio.probes.embeddings.x_embedding_replay__mutmut_44": _CENTRED,
    "tfstudio.probes.embeddings.x_embedding_replay__mutmut_47": _CENTRED,
    "tfstudio.probes.embeddings.x_embedding_replay__mutmut_54": _CENTRED,
    "tfstudio.probes.embeddings.x_embedding_replay__mutmut_59": _CENTRED,
    "tfstudio.probes.embeddings.x_embedding_replay__mutmut_60": _CENTRED,
    "tfstudio.probes.embeddings.x_embedding_replay__mutmut_62": _CENTRED,
    "tfstudio.probes.embeddings.x_pca_2d__mutmut_11": _SVD_ROWS,
    "tfstudio.probes.embeddings.x_pca_2d__mutmut_13": _SVD_ROWS,
    "tfstudio.probes.embeddings.x_pca_2d__mutmut_14": _SVD_ROWS,
    "tfstudio.probes.embeddings.x_pca_2d__mutmut_22": "the total is 0 only when every row is the same: the ratios are 0 / 1 = 0 / 2 = 0",
    "tfstudio.probes.embeddings.x_pca_2d__mutmut_29": _PAD_0,
    "tfstudio.probes.embeddings.x_pca_2d__mutmut_30": _PAD_0,
    "tfstudio.probes.embeddings.x_pca_2d__mutmut_6": "a [d] mean broadcasts over the rows as the [1, d] keepdims mean does",
    "tfstudio.probes.embeddings.x_pca_2d__mutmut_8": "a [d] mean broadcasts over the rows as the [1, d] keepdims mean does",
    "tfstudio.probes.embeddings.x_position_angles__mutmut_25": _F64,
    "tfstudio.probes.embeddings.x_token_through_layers__mutmut_26": _AXIS_2D,
    "tfstudio.probes.embeddings.x_token_through_layers__mutmut_37": _AXIS_2D,
    "tfstudio.probes.embeddings.x_token_through_layers__mutmut_43": _AXIS_2D,
    "tfstudio.probes.embeddings.x_token_through_layers__mutmut_56": _AXIS_2D,
    "tfstudio.probes.embeddings.x_token_through_layers__mutmut_64": _AXIS_2D,
    "tfstudio.probes.walk.x_filtered_probabilities__mutmut_40": "top_k = 0 then keeps p >= sort(p)[0], the smallest: every token, as no top-k does",
    "tfstudio.probes.walk.x_filtered_probabilities__mutmut_41": "top_k = the vocabulary keeps p >= the smallest p: every token, as no top-k does",
    "tfstudio.probes.walk.x_filtered_probabilities__mutmut_42": "keep is all True before top-k: &= and = give the same mask",
    "tfstudio.probes.walk.x_filtered_probabilities__mutmut_61": ("tokens top-k dropped weigh 0 in q wherever argsort puts them, and keep &= drops "
         "them: the nucleus of the kept ones is the same"),
    "tfstudio.probes.walk.x_filtered_probabilities__mutmut_81": ("tokens top-k dropped have q = 0 and sort after the kept ones: their mass before is "
         "1 > top_p, so the nucleus never holds them"),
    "tfstudio.probes.walk.x_check__mutmut_6": "an empty output fails at (a - b).abs().max() either way (no block output is empty)",
    "tfstudio.probes.walk.x_check__mutmut_10": "an empty output fails at (a - b).abs().max() either way (no block output is empty)",
    "tfstudio.probes.walk.x_json_values__mutmut_3":
        "a finite float array gives the same lists through astype(object) as through tolist()",
    "tfstudio.probes.walk.x_filtered_probabilities__mutmut_63":
        "NumPy reads a sort kind case-insensitively: 'STABLE' is 'stable'",
    "tfstudio.probes.attention.x_allowed_mask__mutmut_27":
        ("start cancels: query i - key j = (start + i) - (start + q_len - k_len + j), the same "
         "mask for any start"),
    "tfstudio.probes.inputs.x__take__mutmut_6":
        ("at got == n the next chunk is cut to chunk[:0] = '' and then got > n: the same text "
         "(one more chunk is read)"),
    "tfstudio.probes.inputs.x_probe_inputs__mutmut_21": _CPU,
    "tfstudio.probes.inputs.x_probe_inputs__mutmut_25": _CPU,
    "tfstudio.probes.inputs.x_probe_inputs__mutmut_28": _CPU,
    "tfstudio.probes.inputs.x_probe_inputs__mutmut_24": _IDS_INT,
    "tfstudio.probes.inputs.x_probe_inputs__mutmut_27": _IDS_INT,
    "tfstudio.probes.roles.x_head_scores__mutmut_12": _CPU,
    "tfstudio.probes.roles.x_head_scores__mutmut_17": _CPU,
    "tfstudio.probes.roles.x_head_scores__mutmut_20": _CPU,
    "tfstudio.probes.roles.x_head_scores__mutmut_16": _IDS_INT,
    "tfstudio.probes.roles.x_head_scores__mutmut_19": _IDS_INT,
    "tfstudio.probes.roles.x_head_scores__mutmut_30": _ATTN_INPUTS,
    "tfstudio.probes.roles.x_head_scores__mutmut_31": _ATTN_INPUTS,
    "tfstudio.probes.roles.x_head_scores__mutmut_32": _ATTN_INPUTS,
    "tfstudio.probes.roles.x_head_scores__mutmut_45": _SQUARE,
    "tfstudio.probes.roles.x_head_scores__mutmut_46": _SQUARE,
    "tfstudio.probes.roles.x_scores_from_weights__mutmut_3": _SQUARE,
    "tfstudio.probes.roles.x_scores_from_weights__mutmut_4": _SQUARE,
    "tfstudio.probes.roles.x_scores_from_weights__mutmut_31": _F64,
    "tfstudio.probes.roles.x_scores_from_weights__mutmut_34": _F64,
    "tfstudio.probes.roles.x_split_key__mutmut_4":
        ("a block key has odd length (group, copy pairs, then the node): key[:-1:2] and "
         "key[:-2:2] take the same even positions"),
    "tfstudio.probes.lens.x_residual_stream__mutmut_20": _FIRST_CALL,
    "tfstudio.probes.lens.x_residual_stream__mutmut_21": _FIRST_CALL,
    "tfstudio.probes.lens.x_residual_stream__mutmut_27":
        ("no top-level call follows the last head: its logits are no block's input (no port "
         "takes logits) and the forward runs only what is upstream of the output"),
    "tfstudio.probes.lens.x__top_level__mutmut_4":
        ("a key of length 2 is always (group, copy) of a top-level group, whose module is its "
         "generated GraphLayer"),
    "tfstudio.probes.telemetry.xǁActivationRecorderǁ_hook__mutmut_2": _FLOAT_OUT,
    "tfstudio.probes.telemetry.xǁActivationRecorderǁ_hook__mutmut_4": _FLOAT_OUT,
    "tfstudio.probes.telemetry.xǁActivationRecorderǁ_hook__mutmut_5": _FLOAT_OUT,
    "tfstudio.probes.telemetry.x_node_values__mutmut_16":
        ("a key 2 * depth - 1 parts long passes _inside only if a block shares its id with the "
         "path's last group at the same level (ids are unique per level); 2 * depth parts is "
         "no block key (odd lengths)"),
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
    "tfstudio.probes.positions.x__table__mutmut_9": _CPU,
    "tfstudio.probes.positions.x__table__mutmut_16": _CPU,
    "tfstudio.probes.positions.x__table__mutmut_20": _CPU,
    "tfstudio.probes.positions.x__device_of__mutmut_1": _CPU,
    "tfstudio.probes.positions.x__device_of__mutmut_3": _CPU,
    "tfstudio.probes.positions.x__table__mutmut_21": "a batch of 2 zero rows; row 0 is kept",
    "tfstudio.probes.positions.x__rope__mutmut_24": "extra batch/head rows; [0, 0] is kept",
    "tfstudio.probes.positions.x__rope__mutmut_25": "extra batch/head rows; [0, 0] is kept",
    "tfstudio.probes.positions.x_rope_score__mutmut_25":
        "apply_rope broadcasts a [1, 1, hd] vector like [1, 1, 1, hd]; flattened the same",
    "tfstudio.probes.positions.x_rope_score__mutmut_26":
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
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_self_attention__mutmut_20": _WALK_2D,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_cross_attention__mutmut_46": _WALK_2D,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_feed_forward__mutmut_33": _WALK_2D,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_norm__mutmut_12": _WALK_2D,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_norm__mutmut_21": _WALK_2D,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_norm__mutmut_48": _WALK_2D,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_moe__mutmut_10": _WALK_2D,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_moe__mutmut_17": _WALK_2D,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_moe__mutmut_25": _WALK_2D,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_moe__mutmut_16": "topk without dim= works on the last axis, as dim=-1 says",
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_self_attention__mutmut_49": _WALK_EMPTY,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_cross_attention__mutmut_95": _WALK_EMPTY,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_feed_forward__mutmut_39": _WALK_EMPTY,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_self_attention__mutmut_106": _CPU,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_self_attention__mutmut_108": _CPU,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_self_attention__mutmut_182": _CPU,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_self_attention__mutmut_184": _CPU,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_self_attention__mutmut_213": _CPU,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_self_attention__mutmut_215": _CPU,
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_self_attention__mutmut_204": ("start cancels: with as many queries as keys both start at start, so i - j and the "
         "ALiBi bias are the same for any start"),
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_self_attention__mutmut_228": "Python reads float('-INF') case-insensitively: it is float('-inf')",
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_moe__mutmut_119": "_feed_forward never reads the call's key (the name comes as an argument)",
    "tfstudio.probes.walk.xǁ_BlockOpenerǁ_lm_head__mutmut_72": _F64,
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
    "tfstudio.data.task_batches.x_task_lm_batch__mutmut_13": _FULL_INT,
    "tfstudio.data.task_batches.x_task_lm_batch__mutmut_16": _FULL_INT,
    "tfstudio.data.task_batches.x_task_lm_batch__mutmut_20": _FULL_INT,
    "tfstudio.data.task_batches.x_task_lm_batch__mutmut_23": _FULL_INT,
    "tfstudio.data.task_batches.x_task_lm_batch__mutmut_32": _TENSOR_INT,
    "tfstudio.data.task_batches.x_task_lm_batch__mutmut_34": _TENSOR_INT,
    "tfstudio.data.chunking.x_rechunk__mutmut_1":
        ("the first chunk replaces a falsy buffer either way, and a None buffer left by no "
         "chunks is as falsy as '' at the final `if buffer`"),
    "tfstudio.data.chunking.x_rechunk__mutmut_5": "'' + chunk is chunk",
    "tfstudio.data.paths.x_cache_dir__mutmut_14": "Path / '' is the same path",
    "tfstudio.data.windows.xǁWindowSamplerǁstarts__mutmut_6":
        ("Generator.integers(high, size=n) draws from [0, high) with the same stream as "
         "integers(0, high, size=n)"),
    "tfstudio.data.simple_tokenizers.xǁByteTokenizerǁencode_array__mutmut_11": _CODEC,
    "tfstudio.data.simple_tokenizers.xǁCharTokenizerǁencode_array__mutmut_2":
        ("code points (< 2^21) are exact as float64, so searchsorted and == give the same "
         "positions, and the result comes from the int64 positions, not from codes"),
    "tfstudio.data.token_cache.x_iter_token_blocks__mutmut_3": _INT64,
    "tfstudio.data.token_cache.x_iter_token_blocks__mutmut_5": _INT64,
}


EQUIVALENT: dict[str, str] = {**TRAIN, **RUNS, **PROBES, **DATA}
