"""Training: the trainer and its events, objectives, batches, optimiser, devices, generation,
distributed launch, and the ``train`` / ``generate`` commands. The run-folder format it writes
lives in :mod:`tfstudio.runs`."""
