# One import name (ARCHITECTURE.md, "One import name"): this folder is the package
# mas_agents.eval, reached through the link mas_agents/eval -> ../eval. Imported by its folder's
# own name from a checkout it would be a second copy of every module (a second game registry), so
# that import stops at once with one line instead.
if __name__ != "mas_agents.eval":
    raise SystemExit(f"error: {__name__!r} is this checkout's folder eval/ of the package mas_agents.eval: "
                     f"import mas_agents.eval instead (ARCHITECTURE.md, 'One import name')")
