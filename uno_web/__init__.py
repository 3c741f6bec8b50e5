"""uno_web: the front ends for outside players (``uno-web``, ``uno-play``, ``uno-mcp``), each a thin layer over ``uno_web.session.Session``."""
