"""Measurements the course's lessons compute from trained runs: what sampling does to text
(``sampling``), static against contextual vectors (``vectors``) and loss against parameters
(``scale``). Pure functions over models and numbers; the lessons turn them into verdicts."""
