"""The site's page text lives in Jinja2 templates (``tools/eee/site/templates/``); this
module renders them.

The templates write Markdown (``*.md.j2``) or, for the large catalogue tables, HTML
(``*.html.j2``). Python gathers the facts; every sentence a reader sees is in a template.
The filters are the helpers of :mod:`eee.site.mdtext`. Data from the store reaches a page
only through ``text`` (Markdown text), ``html`` (HTML text and attribute values, inside
raw blocks), ``code`` (inline code), ``url`` (a link target: http(s) or nothing) and
``meta`` (a front-matter value such as the page title); ``cell``, ``rel`` (a link from the
page being rendered), ``number``, ... shape what the templates write themselves.
Undefined names are errors, so a typo in a template fails the build.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from eee.site import mdtext

TEMPLATES = Path(__file__).with_name("templates")


@functools.cache
def environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=False,  # Markdown: HTML is escaped where it is written, with |e
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        extensions=["jinja2.ext.do"],
        # compiled templates kept between runs (keyed by each template's source, in a folder
        # of the user's own under the temporary directory): compiling them was ~0.6 s a run
        bytecode_cache=jinja2.FileSystemBytecodeCache(),
    )
    env.filters.update(
        code=mdtext.code,
        value=mdtext.value,
        cell=mdtext.cell,
        text=mdtext.text,
        html=mdtext.html,
        url=mdtext.url,
        meta=mdtext.meta,
        rel=mdtext.relative,
        number=mdtext.number,
        breakable=mdtext.breakable,
        anchor=mdtext.anchor,
        fence=mdtext.fence,
    )
    env.globals.update(table=mdtext.table)
    return env


def render(name: str, **context: Any) -> str:
    """The template ``name`` rendered with ``context``."""
    return environment().get_template(name).render(**context)


def macros(name: str) -> Any:
    """The macros of the template ``name``, callable from Python (the catalogue's rows)."""
    return environment().get_template(name).module
