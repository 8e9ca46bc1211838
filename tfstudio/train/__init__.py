"""Training: the trainer and its events, objectives, batches, optimiser, devices, generation,
and distributed launch. The run-folder format it writes lives in :mod:`tfstudio.runs`; the
``train`` / ``generate`` commands in :mod:`tfstudio.cli`."""
