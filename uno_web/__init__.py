"""uno_web: the front ends for outside players, each a thin layer over ``uno_web.session.Session``.

| front end | command | module |
|---|---|---|
| the browser table and the replay viewer | ``uno-web`` | ``uno_web.server`` (``uno_web.games``, ``uno_web.views``) |
| the terminal game | ``uno-play`` | ``uno_web.terminal`` (``uno_web.human``: the person's seat) |
| the MCP server for tool-using clients | ``uno-mcp`` | ``uno_web.mcp`` |

It sits above ``agents`` (README, Architecture): agents are built through ``agents.registry``
(``remote_agent`` for a remote caller) and the engine is read only through ``uno_env``'s public names.
"""
