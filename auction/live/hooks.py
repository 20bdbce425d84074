"""What a page shows, reduced to its *data hooks* (dashboard.md L1).

Every element inside ``<main>`` with an id or a ``data-*`` attribute, as the JSON text of
``[tag, id, {data-*}]``, sorted: an open live page tells the truth when its hooks equal
those of a fresh load of its URL. One definition, read by the convergence and topology
tests (``tests/support/convergence.py``) and by ``bench.live``'s flows.
"""

from __future__ import annotations

# ``skip``: a CSS selector whose elements are left out ("" leaves nothing out).
HOOKS_JS = """(skip) => {
  const out = [];
  for (const el of document.querySelectorAll('main *')) {
    if (skip && el.closest(skip)) continue;
    const data = {};
    for (const a of el.attributes) if (a.name.startsWith('data-')) data[a.name] = a.value;
    if (!el.id && Object.keys(data).length === 0) continue;
    out.push(JSON.stringify([el.tagName.toLowerCase(), el.id || '', data]));
  }
  return out.sort();
}"""
