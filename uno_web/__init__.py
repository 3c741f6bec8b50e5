"""uno_web: the browser front end (``uno-web``): play UNO against any agents, and a replay viewer.

It sits above ``agents`` (README, Architecture): the server builds agents with
``agents.registry.make_agent`` and reads the engine only through ``uno_env``'s public names.
"""
