"""``mas ablate``: the grid of block subsets, its three benches and its report."""
