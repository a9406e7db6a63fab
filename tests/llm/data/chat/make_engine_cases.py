#!/usr/bin/env python3
"""Writes engine_cases.json: one case per Jinja construct the C engine supports, with the
output Jinja2 gives in transformers' chat-template environment (hf_jinja.py), or the error
it raises. tests/llm/test_chat_engine.c renders each with wgfuse's engine and compares bytes
(for an error: that it fails too, and for raise_exception that the message is carried).

    python3 tests/llm/data/chat/make_engine_cases.py tests/llm/data/chat/engine_cases.json

Deterministic (no clock: strftime_now is checked in C against the host's strftime)."""
import json
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_jinja  # noqa: E402

MSGS = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi  there\n"},
        {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Ünïcödé ß ﬁ İ"}]

CASES = [
    # text and whitespace control
    ("text", "plain text", {}),
    ("trailing_newline_dropped", "a\n", {}),
    ("two_trailing_newlines", "a\n\n", {}),
    ("crlf_normalized", "a\r\nb\rc", {}),
    ("trim_blocks", "{% if true %}\nyes\n{% endif %}\nend", {}),
    ("lstrip_blocks", "line\n    {% if true %}x{% endif %}\n  {{ 'v' }}\n", {}),
    ("lstrip_not_midline", "a   {% if true %}x{% endif %}", {}),
    ("minus_strip", "a  \n  {%- if true -%}  \n  b  \n  {%- endif -%}  \n c", {}),
    ("var_minus", "a  {{- 'x' -}}  b", {}),
    ("plus_disables", "  {%+ if true +%}\nx{% endif %}", {}),
    ("comment", "a {# hidden #} b\n  {# c #}\nd", {}),
    ("comment_minus", "a {#- hidden -#} b", {}),
    ("raw", "{% raw %}{{ not evaluated }}{% endraw %}", {}),
    ("unicode_ws_strip", "a\u3000{{- 'x' }}", {}),
    # literals and operators
    ("literals", "{{ 1 }} {{ -2 }} {{ 1.5 }} {{ 'a' }} {{ \"b\" }} {{ true }} {{ True }} {{ none }} {{ None }}", {}),
    ("floats", "{{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1e15 }} {{ 0.0001 }} {{ 0.00001 }} {{ 2.0 }} {{ 1/3 }} {{ -0.0 }}", {}),
    ("string_escapes", "{{ 'a\\nb\\tc\\\\d\\'e\\x41\\u00e9\\U0001F600' }}", {}),
    ("adjacent_strings", "{{ 'a' 'b' \"c\" }}", {}),
    ("arith", "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 2 * 3 + 1 }} {{ (1 + 2) * 3 }}", {}),
    ("arith_float_mod", "{{ 7.5 % 2 }} {{ -7.5 // 2 }}", {}),
    ("concat_tilde", "{{ 'a' ~ 1 ~ none ~ true ~ undefined_thing }}", {}),
    ("str_plus", "{{ 'a' + 'b' }}", {}),
    ("list_plus", "{{ [1] + [2, 3] }}", {}),
    ("str_times", "{{ 'ab' * 3 }}|{{ 2 * '-' }}", {}),
    ("compare", "{{ 1 < 2 }} {{ 2 <= 1 }} {{ 'a' < 'b' }} {{ 1 == 1.0 }} {{ true == 1 }} {{ [1,2] == [1,2] }} {{ 1 != 2 }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }}", {}),
    ("in_ops", "{{ 'b' in 'abc' }} {{ 2 in [1,2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }}", {}),
    ("and_or_values", "{{ 0 or 'x' }} {{ 'a' and 'b' }} {{ none or [] }} {{ not 0 }} {{ not not 1 }}", {}),
    ("condexpr", "{{ 'y' if 1 else 'n' }} {{ 'y' if 0 else 'n' }} [{{ 'y' if 0 }}]", {}),
    ("unary_filter_precedence", "{{ -1|abs }} {{ -(1)|abs }}", {}),
    # lists, dicts, tuples, repr
    ("list_repr", "{{ [1, 'a', none, true, 1.5, [2]] }}", {}),
    ("tuple_repr", "{{ (1,) }} {{ (1, 2) }} {{ () }}", {}),
    ("dict_repr", "{{ {'a': 1, 'b': 'x\\'y'} }}", {}),
    ("str_repr_quotes", "{{ [\"it's\", 'say \"hi\"', 'both \\' \"', 'tab\\t\\n'] }}", {}),
    ("subscript", "{{ messages[0]['role'] }} {{ messages[-1].role }} {{ messages[1].content }}", {"messages": MSGS}),
    ("slice", "{{ [1,2,3,4][1:] }} {{ [1,2,3,4][:-1] }} {{ [1,2,3,4][::-1] }} {{ [1,2,3,4][::2] }} {{ 'héllo'[1:3] }} {{ 'abc'[::-1] }}", {}),
    ("slice_messages", "{% for m in messages[1:] %}{{ m.role }},{% endfor %}", {"messages": MSGS}),
    ("missing_index_undefined", "[{{ [1][5] }}][{{ {'a':1}.b }}][{{ {'a':1}['b'] }}]", {}),
    ("dict_attr_vs_key", "{{ d.x }} {{ d['x'] }}", {"d": {"x": 5}}),
    ("none_item_is_undefined", "[{{ n.x }}][{{ n[0] }}]", {"n": None}),
    # if / for / loop
    ("if_elif_else", "{% for x in [1,2,3] %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %};{% endfor %}", {}),
    ("loop_vars", "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}", {}),
    ("loop_prev_next", "{% for x in [1,2,3] %}[{{ loop.previtem }}|{{ loop.nextitem }}]{% endfor %}", {}),
    ("loop_cycle", "{% for x in range(4) %}{{ loop.cycle('a', 'b') }}{% endfor %}", {}),
    ("for_else", "{% for x in [] %}x{% else %}empty{% endfor %}", {}),
    ("for_if_filter", "{% for x in range(10) if x is odd %}{{ x }}/{{ loop.length }} {% endfor %}", {}),
    ("for_unpack", "{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}", {}),
    ("for_dict_keys", "{% for k in {'a': 1, 'b': 2} %}{{ k }}{% endfor %}", {}),
    ("for_undefined_is_empty", "{% for x in nothing %}x{% endfor %}ok", {}),
    ("nested_loops", "{% for a in [1,2] %}{% for b in [3,4] %}{{ loop.depth }}{{ a }}{{ b }} {% endfor %}{% endfor %}", {}),
    ("break_continue", "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}", {}),
    ("loop_scope", "{% for x in [1,2,3] %}{% if loop.first %}{% set y = 5 %}{% endif %}[{{ y }}]{% endfor %}[{{ y }}]", {}),
    ("loop_scope_outer", "{% set y = 1 %}{% for x in [1,2,3] %}{% set y = y + 1 %}[{{ y }}]{% endfor %}[{{ y }}]", {}),
    ("messages_reversed", "{% for m in messages[::-1] %}{{ (messages|length - 1) - loop.index0 }}:{{ m.role }} {% endfor %}", {"messages": MSGS}),
    # set and namespace
    ("set", "{% set x = 3 %}{% set a, b = 1, 2 %}{{ x }}{{ a }}{{ b }}", {}),
    ("set_block", "{% set x %}  in {{ 1 + 1 }}  {% endset %}[{{ x }}]", {}),
    ("namespace", "{% set ns = namespace(found=false, n=0) %}{% for x in [1,2,3] %}{% set ns.n = ns.n + x %}{% if x == 2 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }} {{ ns.n }} {{ ns.missing is defined }}", {}),
    ("namespace_empty", "{% set ns = namespace() %}{% set ns.i = 0 %}{{ ns.i }}", {}),
    # macros
    ("macro", "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('a') }} {{ greet('b', '?') }} {{ greet(name='c', punct='.') }}", {}),
    ("macro_globals", "{% macro m(a) %}[{{ a }}{{ q }}]{% endmacro %}{% set q = 3 %}{% for x in [1] %}{{ m(x) }}{% endfor %}", {}),
    ("macro_recursion", "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(5) }}", {}),
    ("macro_missing_arg", "{% macro m(a, b) %}[{{ a }}|{{ b }}]{% endmacro %}{{ m(1) }}", {}),
    # filters
    ("trim", "[{{ '  a b \\n\\t' | trim }}][{{ 'xxaxx' | trim('x') }}][{{ '\u00a0\u2003a\u3000' | trim }}]", {}),
    ("length", "{{ 'héllo' | length }} {{ [1,2] | length }} {{ {'a': 1} | length }} {{ 'abc' | count }} {{ undefined_x | length }}", {}),
    ("upper_lower", "{{ 'straße ǆ ﬁ' | upper }} {{ 'İSTANBUL ΣΑΣ' | lower }} {{ 'MiXeD' | lower }}", {}),
    ("capitalize_title", "{{ 'hello WORLD' | capitalize }} {{ 'hello wORLD foo-bar' | title }}", {}),
    ("replace", "{{ 'a-b-c' | replace('-', '+') }} {{ 'aaa' | replace('a', 'b', 2) }} {{ 'ab' | replace('', '.') }}", {}),
    ("default", "{{ x | default('d') }} {{ none | default('d') }} {{ '' | default('d', true) }} {{ 0 | d(5) }}", {}),
    ("join", "{{ [1, 'a', none] | join(', ') }} {{ ['x', 'y'] | join }} {{ messages | join('|', attribute='role') }}", {"messages": MSGS}),
    ("first_last", "{{ [1,2,3] | first }} {{ [1,2,3] | last }} {{ 'abc' | first }} [{{ [] | first }}]", {}),
    ("selectattr_map", "{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | list | length }} {{ messages | rejectattr('role', 'eq', 'user') | map(attribute='role') | join(',') }}", {"messages": MSGS}),
    ("selectattr_truthy", "{{ [{'a': 1}, {'a': 0}, {}] | selectattr('a') | list | length }}", {}),
    ("select_reject", "{{ [1,2,3,4] | select('odd') | list }} {{ [1,2,3,4] | reject('even') | list }} {{ [0, 1, '', 'a'] | select | list }}", {}),
    ("map_filter", "{{ ['a', 'b'] | map('upper') | join }}", {}),
    ("list_string_int_float", "{{ 'ab' | list }} {{ 12 | string }} {{ '42' | int + 1 }} {{ '1.5' | float }} {{ 'x' | int }} {{ 3.9 | int }}", {}),
    ("items_filter", "{% for k, v in {'a': 1, 'b': [2]} | items %}{{ k }}{{ v }}{% endfor %}", {}),
    ("dictsort", "{% for k, v in {'b': 1, 'a': 2} | dictsort %}{{ k }}{{ v }}{% endfor %}", {}),
    ("sort_unique_reverse", "{{ [3, 1, 2] | sort }} {{ [3, 1, 2] | sort(reverse=true) }} {{ [1, 2, 1] | unique | list }} {{ [1, 2] | reverse | list }} {{ 'abc' | reverse }}", {}),
    ("abs_round_sum", "{{ -3 | abs }} {{ 2.567 | round(2) }} {{ 2.5 | round }} {{ [1, 2, 3] | sum }}", {}),
    ("indent", "{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}", {}),
    ("tojson", "{{ messages | tojson }}", {"messages": MSGS}),
    ("tojson_types", "{{ {'a': [1, 2.5, none, true, false], 'b': {'c': 'é\"\\\\\\n\\u0001'}, 'e': [], 'f': {}} | tojson }}", {}),
    ("tojson_indent", "{{ {'a': [1, {'b': 2}], 'c': {}} | tojson(indent=2) }}", {}),
    ("tojson_sort_keys", "{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}", {}),
    ("tojson_separators", "{{ {'a': [1, 2]} | tojson(separators=(',', ':')) }}", {}),
    ("tojson_tools", "{% for t in tools %}{{ t | tojson }}\n{% endfor %}", {"tools": [{"type": "function", "function": {"name": "get_weather", "description": "Wetter für eine Stadt", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]}),
    ("safe_wordcount_batch", "{{ 'a' | safe }} {{ 'one two  three' | wordcount }} {{ [1,2,3] | batch(2) | list }}", {}),
    # tests
    ("tests", "{{ x is defined }} {{ y is defined }} {{ y is undefined }} {{ none is none }} {{ 'a' is string }} {{ {} is mapping }} {{ [] is iterable }} {{ 'a' is iterable }} {{ 1 is number }} {{ 1 is integer }} {{ 1.0 is float }} {{ true is boolean }} {{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }}", {"x": 1}),
    ("tests_cmp", "{{ 1 is eq 1 }} {{ 'a' is equalto 'a' }} {{ 1 is ne 2 }} {{ 1 is lt 2 }} {{ 2 is gt 1 }} {{ 2 is in [2] }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ none is sameas none }} {{ x is not none }} {{ x is not defined }}", {"x": 1}),
    ("true_false_tests", "{{ true is true }} {{ false is false }} {{ 1 is true }}", {}),
    # string methods
    ("str_methods", "{{ '  a  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '\\n\\na\\n'.lstrip('\\n') }}|{{ 'a\\n\\n'.rstrip('\\n') }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}", {}),
    ("str_methods2", "{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} {{ 'abc'.upper() }} {{ 'ABC'.lower() }} {{ 'a-b'.replace('-', '') }} {{ 'hello'.find('l') }} {{ 'hello'.count('l') }} {{ ', '.join(['a', 'b']) }} {{ 'a\\nb\\n'.splitlines() }} {{ '12'.isdigit() }} {{ 'ab'.isalpha() }} {{ ' '.isspace() }} {{ 'ab cd'.title() }} {{ 'ab'.capitalize() }}", {}),
    ("think_split", "{% set c = '<think>\\nreason\\n</think>\\n\\nanswer' %}{{ c.split('</think>')[-1].lstrip('\\n') }}|{{ c.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') }}", {}),
    ("dict_methods", "{{ d.keys() | list }} {{ d.values() | list }} {{ d.items() | list }} {{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 5) }}", {"d": {"a": 1, "b": 2}}),
    ("for_items_if", "{% for k, v in d.items() if k != 'return' %}{{ k }};{% endfor %}", {"d": {"a": 1, "return": 2, "b": 3}}),
    # globals
    ("range", "{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(5, 0, -2) | list }}", {}),
    ("dict_global", "{{ dict(a=1, b=2) }}", {}),
    ("generation_tag", "{% generation %}gen {{ 1 }}{% endgeneration %}", {}),
    ("messages_variables", "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}", {"messages": MSGS, "bos_token": "<s>", "add_generation_prompt": True}),
    ("undefined_print_empty", "[{{ nope }}][{{ nope is defined }}]", {}),
    ("none_prints", "{{ none }}{{ n }}", {"n": None}),
    ("int_float_json", "{{ i }} {{ f }} {{ big }}", {"i": 3, "f": 2.0, "big": 12345678901234}),
    # errors
    ("err_raise", "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}", {}),
    ("err_undefined_attr", "{{ nope.attr }}", {}),
    ("err_undefined_plus", "{{ nope + 1 }}", {}),
    ("err_str_plus_int", "{{ 'a' + 1 }}", {}),
    ("err_str_plus_none", "{{ 'a' + n }}", {"n": None}),
    ("err_list_append", "{% set l = [] %}{{ l.append(1) }}", {}),
    ("err_div_zero", "{{ 1 / 0 }}", {}),
    ("err_unpack", "{% set a, b = [1] %}", {}),
    ("err_ns_assign", "{% set d = {} %}{% set d.x = 1 %}", {}),
    ("err_call_undefined", "{{ nope() }}", {}),
    ("err_tojson_undefined", "{{ nope | tojson }}", {}),
    ("err_iterate_none", "{% for x in n %}{% endfor %}", {"n": None}),
    ("err_compare", "{{ 1 < 'a' }}", {}),
]


def main():
    env = hf_jinja.environment()
    out = []
    for name, tmpl, variables in CASES:
        case = {"name": name, "template": tmpl, "vars": variables}
        try:
            case["expected"] = env.from_string(tmpl).render(**variables)
        except Exception as e:  # noqa: BLE001 - the error's kind and text are the expectation
            case["error"] = f"{type(e).__name__}: {e}"
        out.append(case)
    doc = {"generator": "make_engine_cases.py", "engine": f"jinja2 {hf_jinja.jinja2.__version__} (hf_jinja.py environment)",
           "cases": out}
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
