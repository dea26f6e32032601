# One import name (ARCHITECTURE.md, "One import name"): this folder is the package
# mas_agents.planners, reached through the link mas_agents/planners -> ../planners. Imported by its folder's
# own name from a checkout it would be a second copy of every module (a second game registry), so
# that import stops at once with one line instead.
if __name__ != "mas_agents.planners":
    raise SystemExit(f"error: {__name__!r} is this checkout's folder planners/ of the package mas_agents.planners: "
                     f"import mas_agents.planners instead (ARCHITECTURE.md, 'One import name')")
