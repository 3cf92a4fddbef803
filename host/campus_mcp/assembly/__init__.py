"""One deployment assembled from the installed plugins: the registry, the deployment handle, the
migrations, REST/tool parity, icons, who may call what (:mod:`.access`) and the change bus.
Stands on :mod:`campus_mcp.plugin` and :mod:`campus_mcp.base`.
"""
