"""Stand-in pytest entry point for benchmarks/suite.py, for checkouts older than the top-level
``subagent_conformance_plugin`` module (their entry point was ``conformance.plugin``).

The installed entry point names this module; a checkout that has its own copy comes first on
PYTHONPATH and is used instead. For an older one this module is found, and it is its
``conformance.plugin``: every hook and fixture, so pytest registers the same plugin.
"""

import conformance.plugin as _plugin

globals().update({k: v for k, v in vars(_plugin).items() if not k.startswith("__")})
