"""The Jinja2 environment transformers renders chat templates with, rebuilt for machines
without transformers (tests/llm/data/chat/*.py --engine jinja2).

Mirrors transformers' chat-template compiler (utils/chat_template_utils.py,
_compile_jinja_template): ImmutableSandboxedEnvironment with trim_blocks=True,
lstrip_blocks=True and the loopcontrols extension; a `{% generation %}` tag that renders
its body (transformers' AssistantTracker only records the span); tojson replaced by
json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys);
globals raise_exception (raises TemplateError with the message) and strftime_now
(datetime.now().strftime(fmt)). Standard library + jinja2 only."""
import json
from datetime import datetime

import jinja2
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment


class _Generation(Extension):
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(fmt):
    return datetime.now().strftime(fmt)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[_Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env
