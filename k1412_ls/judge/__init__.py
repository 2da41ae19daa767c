"""``k1412 judge``: read another agent's run, map its steps to K1412 evidence, give the gate's verdict.

Parsers per format (``mini_swe_agent``, ``terminal_capture``, ``claude_code``) turn a file into a
:class:`~k1412_ls.judge.foreign.ForeignRun`; ``mapping`` turns that into the event stream K1412 would
have logged; ``verdicts`` judges the stream exactly as ``k1412 replay`` does. ``docs/judge.md``.
"""
