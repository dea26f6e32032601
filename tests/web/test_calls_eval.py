"""The call viewer (``/calls/RUN``, ``/calls/RUN/CALL_ID``) and the WellPlay evaluation view
(``/eval/RUN``) through FastAPI's test client: filters, search, paging, a call page's content
equal to the recorded messages and completion, escaping, a run without prompts, and an
evaluation's questions with the options as the model saw them, its letter, the key, right/wrong
and totals equal to ``result.json``."""

import html as htmlmod
import json
import re
from urllib.parse import quote

import pytest
from markupsafe import escape

from mas_agents.prompt_log import read_prompts
from tests.web.runs_fixture import INJECTION


def _calls(d):
    return [json.loads(l) for l in (d / "llm_calls.jsonl").read_text().splitlines() if l.strip()]


def _answers(d):
    return [json.loads(l) for l in (d / "answers.jsonl").read_text().splitlines() if l.strip()]


def _rows(html):
    return re.findall(r'<tr id="call-([0-9a-f]+)"', html)


@pytest.fixture
def client_data(runs, real_data_root):
    """A client whose server knows the datasets (``mas serve --data-dir``)."""
    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    return TestClient(create_app(runs["root"], runs["db"], data_root=real_data_root))


def test_call_list_fits_its_columns_and_shows_status_as_marks(client, runs):
    html = client.get("/calls/spy-kettle").text
    calls = _calls(runs["wis"])
    assert _rows(html) == [c["call_id"] for c in calls]
    head = re.search(r"<thead>(.*?)</thead>", html, re.S).group(1)
    # columns empty on every call are left out; ok is a mark, never Python's True
    for col, key in (("cached tokens", "cached_tokens"), ("finish reason", "finish_reason"), ("max tokens", "max_tokens")):
        assert (f"<th>{col}</th>" in head) == any(c.get(key) not in (None, "") for c in calls), col
    assert "<th>ok</th>" not in head and "<th>structured</th>" not in head
    assert ">True<" not in html and "✓" in html
    # each call links to its own page
    cid = calls[0]["call_id"]
    assert f'href="/calls/spy-kettle/{cid}"' in html


def test_call_filters_by_actor_purpose_and_failure(client, runs):
    calls = _calls(runs["eval"])
    actor = calls[0]["actor"]
    html = client.get("/calls/pp-sin", params={"actor": actor}).text
    assert set(_rows(html)) == {c["call_id"] for c in calls if c["actor"] == actor}
    assert 0 < len(_rows(html)) < len(calls)
    prompts = read_prompts(runs["eval"])
    unreadable = {k for k, v in prompts.items() if v.get("parse_error")}
    assert unreadable                                        # the fixture's fake writes some
    html = client.get("/calls/pp-sin", params={"failed": 1}).text
    assert set(_rows(html)) == unreadable and "unreadable: no line starting with" in html
    assert _rows(client.get("/calls/pp-sin", params={"purpose": "mcq"}).text) == [c["call_id"] for c in calls]
    assert _rows(client.get("/calls/pp-sin", params={"purpose": "vote"}).text) == []
    assert "No call matches these filters." in client.get("/calls/pp-sin", params={"purpose": "vote"}).text
    # a Who-is-Spy game's phases
    wis = _calls(runs["wis"])
    phase = next(c["phase"] for c in wis if c.get("phase"))
    assert set(_rows(client.get("/calls/spy-kettle", params={"phase": phase}).text)) == \
        {c["call_id"] for c in wis if c.get("phase") == phase}


def test_call_search_looks_in_prompts_and_completions(client, runs):
    prompts = read_prompts(runs["eval"])
    # a phrase of one question's prompt (the options it lists)
    def hits(text):
        return {k for k, v in prompts.items() if any(text.lower() in m["content"].lower() for m in v["messages"])
                or text.lower() in (v.get("completion") or "").lower()}
    lines = [(k, l) for k, v in prompts.items() for l in re.findall(r"^[a-e]\) (.+)$", v["messages"][1]["content"], re.M)]
    cid, line = min(lines, key=lambda kl: len(hits(kl[1])))
    target = prompts[cid]
    want = hits(line)
    got = set(_rows(client.get("/calls/pp-sin", params={"q": line.upper()}).text))
    assert got == want and target["call_id"] in got and len(got) < len(prompts)
    # the completion's text: the unreadable replies hold the injection
    got = set(_rows(client.get("/calls/pp-sin", params={"q": "window.__pwned"}).text))
    assert got and got == {k for k, v in prompts.items() if "window.__pwned" in (v.get("completion") or "")
                           or any("window.__pwned" in m["content"] for m in v["messages"])}


def test_call_list_pages(client, runs):
    calls = _calls(runs["eval"])
    from mas_agents.web import calls as cl
    cl_per = cl.CALLS_PER_PAGE
    try:
        cl.CALLS_PER_PAGE = 20
        first = client.get("/calls/pp-sin").text
        second = client.get("/calls/pp-sin", params={"page": 2}).text
        last = client.get("/calls/pp-sin", params={"page": 999}).text      # clamped to the last page
        filtered = client.get("/calls/pp-sin", params={"q": "Answer", "page": 2}).text
    finally:
        cl.CALLS_PER_PAGE = cl_per
    assert _rows(first) == [c["call_id"] for c in calls[:20]]
    assert _rows(second) == [c["call_id"] for c in calls[20:40]]
    pages = -(-len(calls) // 20)
    assert _rows(last) == [c["call_id"] for c in calls[(pages - 1) * 20:]]
    assert f"page 1 of {pages}" in first and 'href="/calls/pp-sin?page=2"' in first
    assert "q=Answer&amp;page=3" in filtered or "q=Answer&amp;page=1" in filtered   # paging keeps the search
    r = client.get("/calls/pp-sin?page=two")
    assert r.status_code == 400 and "page='two' is not a whole number" in htmlmod.unescape(r.text)


def test_call_page_shows_the_recorded_messages_and_completion(client, runs):
    prompts = read_prompts(runs["wis"])
    for cid in list(prompts)[:3]:
        rec = prompts[cid]
        r = client.get(f"/calls/spy-kettle/{cid}")
        assert r.status_code == 200
        shown = [htmlmod.unescape(t) for t in re.findall(r'<pre class="text">(.*?)</pre>', r.text, re.S)]
        msgs = [m["content"] for m in rec["messages"]]
        assert shown[:len(msgs)] == msgs
        comp = re.search(r'<pre class="text completion" id="completion">(.*?)</pre>', r.text, re.S).group(1)
        assert htmlmod.unescape(comp) == rec["completion"]
        if rec.get("structured"):
            assert '<details class="structured" id="structured">' in r.text       # collapsed
        if rec.get("parsed") is not None:
            assert htmlmod.unescape(re.search(r'id="parsed">(.*?)</pre>', r.text, re.S).group(1)) == \
                json.dumps(rec["parsed"], ensure_ascii=False, indent=1)
    # the events that cite a call link back to the replay
    events = [json.loads(l) for l in (runs["wis"] / "events.jsonl").read_text().splitlines()]
    e = next(e for e in events if e.get("llm_call_ids") and "*" in e["visible_to"])
    html = client.get(f"/calls/spy-kettle/{e['llm_call_ids'][0]}").text
    assert f'href="/replay/spy-kettle#ev-{e["step"]}"' in html
    assert f'id="ev-{e["step"]}"' in client.get("/replay/spy-kettle").text


def test_replay_links_each_event_to_its_calls_page(client, runs):
    events = [json.loads(l) for l in (runs["wis"] / "events.jsonl").read_text().splitlines()]
    html = client.get("/replay/spy-kettle?private=1").text
    cited = [c for e in events for c in e.get("llm_call_ids") or []]
    assert cited
    for cid in cited:
        assert f'href="/calls/spy-kettle/{cid}"' in html
    assert "/calls/spy-kettle#call-" not in html


def test_reprompt_chain_both_ways_and_escaping(client, runs):
    prompts = read_prompts(runs["eval"])
    re_id, rec = next((k, v) for k, v in prompts.items() if v.get("reprompt_of"))
    first = rec["reprompt_of"]
    page = client.get(f"/calls/pp-sin/{re_id}").text
    assert f'href="/calls/pp-sin/{first}" class="reprompt-of"' in page
    back = client.get(f"/calls/pp-sin/{first}")
    assert f'href="/calls/pp-sin/{re_id}" class="reprompted-by"' in back.text
    # the unreadable reply holds a <script>: its completion, and the re-prompt's messages that
    # quote it, are shown as text
    for html in (back.text, page):
        assert "<script>window.__pwned" not in html and "<img src=x" not in html
        assert str(escape(INJECTION)) in html
    assert 'id="parse-error">Unreadable: no line starting with' in back.text
    assert back.headers["content-security-policy"].startswith("default-src 'self'")
    # the call list escapes it in the search box too
    html = client.get("/calls/pp-sin", params={"q": INJECTION}).text
    assert "<script>window.__pwned" not in html


def test_a_run_without_prompts_says_so(client, runs):
    calls = _calls(runs["noprompts"])
    html = client.get("/calls/spy-noprompts").text
    assert 'id="no-prompts"' in html and "Prompts were not recorded for this run" in html
    assert _rows(html) == [c["call_id"] for c in calls]
    one = client.get(f"/calls/spy-noprompts/{calls[0]['call_id']}")
    assert one.status_code == 200 and "Prompts were not recorded for this run" in one.text
    assert 'id="completion"' not in one.text and calls[0]["actor"] in one.text
    # a run with prompts does not say it
    assert 'id="no-prompts"' not in client.get("/calls/spy-kettle").text


def test_unknown_call_is_a_styled_404(client):
    r = client.get("/calls/spy-kettle/0123456789abcdef")
    assert r.status_code == 404 and '<h1 class="error-title">No such call</h1>' in r.text
    assert "has no model call '0123456789abcdef'" in htmlmod.unescape(r.text)
    assert client.get("/calls/no-such-run/0123").status_code == 404
    assert client.get("/calls/escape/0123").status_code == 403


# -- the WellPlay evaluation view -------------------------------------------------------------

def _questions(html):
    return [(int(n), body) for n, body in re.findall(r'<li class="q [a-z]+" id="q-(\d+)".*?>(.*?)</li>', html, re.S)]


def _options(body):
    return [(l, htmlmod.unescape(t), cls) for cls, l, t in
            re.findall(r'<tr class="([a-z ]*)"><td class="letter">([a-h])\)</td><td class="otext">(.*?)</td>', body, re.S)]


@pytest.mark.parametrize("with_data", [False, True])
def test_eval_view_shows_options_as_shown_with_the_models_letter_and_the_key(client, client_data, runs,
                                                                              real_data_root, with_data):
    from mas_agents.graphs.mmg.dataset import load_script
    c = client_data if with_data else client          # options from the dataset, or from the prompt
    sc = load_script(real_data_root, "Sin")
    by_qid = {q.qid: q for qs in sc.questions.values() for q in qs}
    recs = _answers(runs["eval"])
    html = c.get("/eval/pp-sin").text
    qs = _questions(html)
    assert [n for n, _ in qs] == list(range(1, 51))[:len(recs)]
    shuffled = 0
    for n, body in qs:
        r = recs[n - 1]
        q = by_qid[r["qid"]]
        opts = _options(body)
        # the options in the order the model saw them: shown[i] = upstream[perm[i]]
        assert [t for _, t, _ in opts] == [q.options[j] for j in r["perm"]]
        shuffled += r["perm"] != sorted(r["perm"])
        # the model's letter as it wrote it, the key in the same (shown) order
        chosen = {l for l, _, cls in opts if "chosen" in cls}
        key = {l for l, _, cls in opts if "key" in cls}
        assert chosen == set(r["chosen_shown"] or [])
        assert {q.options[r["perm"]["abcde".index(l)]] for l in key} == {q.options["abcde".index(k)] for k in q.key}
        assert {q.options[r["perm"]["abcde".index(l)]] for l in chosen} == \
            {q.options["abcde".index(k)] for k in (r["chosen"] or [])}
        verdict = "right" if r["correct"] else ("abstained" if r["abstained"] else "wrong")
        assert f'data-outcome="{verdict}"' in html.split(f'id="q-{n}"')[1][:400]
        assert r["category"] in body and r["character"] in body
        assert f'href="/calls/pp-sin/{r["call_ids"][-1]}"' in body
    assert shuffled > 10


def test_eval_totals_equal_result_json(client, runs):
    res = json.loads((runs["eval"] / "result.json").read_text())
    html = client.get("/eval/pp-sin").text
    for cat, cnt in res["counts"].items():
        row = re.search(rf'<tr data-category="{cat}">(.*?)</tr>', html, re.S).group(1)
        nums = re.findall(r'<td class="num[^"]*">([^<]*)</td>', row)
        assert int(nums[0]) == cnt["n"] and int(nums[1]) == cnt["correct"]
        assert int(nums[2]) + int(nums[3]) == cnt["n"] - cnt["correct"]
        acc = res["accuracy"][cat]
        assert nums[4] == ("-" if acc is None else f"{100 * acc:.1f} %")
        a = res["chance"]["always_a"]["accuracy"][cat]
        assert nums[5] == ("-" if a is None else f"{100 * a:.1f} %")
    # the weighted score with the report's interval, and the chance rows, as report.md prints them
    report = (runs["eval"] / "report.md").read_text()
    for row in re.findall(r'<tr class="(?:this|chance)"><td>(.*?)</td><td>(.*?)</td></tr>', html):
        assert f"| {htmlmod.unescape(row[0])} | {htmlmod.unescape(row[1])} |" in report
    assert len(re.findall(r'<tr class="(?:this|chance)">', html)) == 3
    assert "95 % percentile bootstrap over questions" in html


def test_eval_filters_search_and_paging(client, runs):
    recs = _answers(runs["eval"])
    def numbers(params):
        return [n for n, _ in _questions(client.get("/eval/pp-sin", params=params).text)]
    assert numbers({"category": "relation"}) == [i + 1 for i, r in enumerate(recs) if r["category"] == "relation"]
    ch = recs[-1]["character"]
    assert numbers({"character": ch}) == [i + 1 for i, r in enumerate(recs) if r["character"] == ch]
    assert numbers({"result": "right"}) == [i + 1 for i, r in enumerate(recs) if r["correct"]][:50]
    assert numbers({"result": "wrong", "category": "reasoning"}) == \
        [i + 1 for i, r in enumerate(recs) if not r["correct"] and r["category"] == "reasoning"]
    assert numbers({"q": "WHO KILLED"}) == [i + 1 for i, r in enumerate(recs) if "who killed" in r["question"].lower()]
    from mas_agents.web import calls as cl
    per = cl.QUESTIONS_PER_PAGE
    try:
        cl.QUESTIONS_PER_PAGE = 10
        assert numbers({}) == list(range(1, 11))
        assert numbers({"page": 2}) == list(range(11, 21))
        html = client.get("/eval/pp-sin", params={"category": "relation", "page": 2}).text
        assert "category=relation&amp;page=3" in html or "category=relation&amp;page=1" in html
    finally:
        cl.QUESTIONS_PER_PAGE = per
    r = client.get("/eval/pp-sin?page=x")
    assert r.status_code == 400
    # a call's page links to its question, and the view finds it
    cid = recs[5]["call_ids"][-1]
    assert f'href="/eval/pp-sin?call={cid}"' in client.get(f"/calls/pp-sin/{cid}").text
    assert numbers({"call": cid}) == [6]


def test_eval_view_is_linked_and_refuses_other_runs(client):
    assert 'href="/eval/pp-sin"' in client.get("/run/pp-sin").text
    assert 'href="/eval/pp-sin"' in client.get("/replay/pp-sin").text
    r = client.get("/eval/spy-kettle")
    assert r.status_code == 404 and "Not an evaluation" in r.text
    assert client.get("/eval/escape").status_code == 403
