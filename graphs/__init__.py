# One import name (ARCHITECTURE.md, "One import name"): this folder is the package
# mas_agents.graphs, reached through the link mas_agents/graphs -> ../graphs. Imported by its folder's
# own name from a checkout it would be a second copy of every module (a second game registry), so
# that import stops at once with one line instead.
if __name__ != "mas_agents.graphs":
    raise SystemExit(f"error: {__name__!r} is this checkout's folder graphs/ of the package mas_agents.graphs: "
                     f"import mas_agents.graphs instead (ARCHITECTURE.md, 'One import name')")
