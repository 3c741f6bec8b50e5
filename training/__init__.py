"""Training plumbing for ``train.py``: the opponent mix, the snapshot pool, the trainers' pieces.

| module | what it holds |
|---|---|
| ``training.opponents`` | ``parse_mix``, ``split_games``, ``opponent_groups`` (the batch split into opponent groups, agents from ``agents.registry.make_agent``) |
| ``training.league`` | ``SnapshotPool``, ``League``, ``pfsp_probabilities`` (one pool of frozen snapshots of the learner: the ``self`` groups draw the newest or a recent one, the ``league`` groups draw baselines, ``search`` and snapshots by prioritized fictitious self-play) |
| ``training.expert`` | ``label_positions``, ``clone`` (expert iteration's warm start: a teacher such as ``search:256`` labels positions, the policy is cloned on them) |
| ``training.sb3`` | the MaskablePPO model, its learning-rate schedule, win counts per opponent kind |
| ``training.evaluation`` | the learner's table against each evaluation opponent (``arena.play``) |
| ``training.checkpoint`` | crash-safe checkpoints: atomic writes, the ``latest.json`` pointer, what ``--resume`` finds and restores |
| ``training.run`` | seeds, the run folder, periodic events, the summary file |
| ``training.rllib_trainer`` | ``train.py --backend rllib`` (needs ray) |
| ``training.beliefs`` | ``train.py --beliefs net`` and ``--init``: the env wrapper that adds the belief network's reading of the round to the observation (``BeliefInputs``), the checks, the card's fields, the widening of a trained policy |
| ``training.fit_belief_policy`` | ``python -m training.fit_belief_policy``: ``train.py --beliefs net --init pretrained`` with the shipped belief policy's settings (``agents.belief_policy``); ``--ship`` puts a run in the package |
| ``training.fit_belief_net`` | ``python -m training.fit_belief_net generate`` / ``train``: the belief network of the ``net`` belief (``agents.beliefs.net``), its training data, its fit and calibration; ``--save`` writes the shipped weights and card |

Layer: above ``arena``, ``agents`` and ``uno_env``; only the scripts import it. Import the
submodules: this package imports nothing itself, so torch, SB3 and ray load only where used.
"""
