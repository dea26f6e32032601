"""Issue 48, item 3 on ``mas serve``: a run's call page (``/calls/RUN``) says what its prompts cost
and what a prefix cache reused or could have reused, from ``result.json``'s ``llm.prompt_cost``."""

import json


def _pct(x):
    return "n/a" if x is None else f"{100 * x:.1f} %"


def test_call_page_shows_the_prompt_cost_per_phase_and_agent(client, runs):
    for name in ("pp-sin", "mmg-toy/run", "spy-kettle"):
        cost = json.loads((runs["root"] / name / "result.json").read_text())["llm"]["prompt_cost"]
        assert cost["calls"] > 0
        page = client.get(f"/calls/{name}").text
        assert 'id="prompt-cost"' in page
        assert f"prompt tokens {cost['prompt_tokens']:,}" in page
        assert f"reusable by an ideal prefix cache {_pct(cost['reusable_share'])}" in page
        for actor, c in cost["by_actor"].items():
            assert f"{actor}: {_pct(c['reusable_share'])}" in page

