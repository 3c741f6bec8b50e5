"""Training plumbing for ``train.py`` (``training.main``); only the scripts import it.

Import the submodules: this package imports nothing itself, so torch, SB3 and ray load only where
they are used.
"""
