"""What the leaderboard page and the bot pages share: the CSS, the script and the small
HTML helpers (escaped attribute values, bot links, paged tables, a value with its interval).
Pure: no I/O.

The script is progressive: without it every row is shown in rank order. With it, tables
marked ``data-page="N"`` show N rows and a button for the rest; headers with ``data-sort``
sort their table (``num`` or ``text``, by each cell's ``data-v`` else its text; empty
cells last); ``#search`` keeps the ``[data-bot]`` rows and items whose bot name holds one
of the typed words, and marks the matching rating lines; hovering a standings row marks
its line. It reads nothing but the page and fetches nothing.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from referee.report.text import fmt

PAGE_ROWS = 50  # rows of a long table shown before its "Show all" button
LONG = 60  # a table with more rows than this is paged


def attr(value: Any) -> str:
    """An attribute value: JSON text of a number or bool, empty for None, escaped."""
    if value is None:
        return ""
    return html.escape(value if isinstance(value, str) else json.dumps(value))


def linker(files: Mapping[str, str], prefix: str) -> Callable[[str], str]:
    """A function giving a bot's name as an escaped link to its page (``prefix`` + its file)."""

    def link(name: str) -> str:
        stem = files.get(name)
        text = html.escape(name)
        return f'<a href="{prefix}{html.escape(stem)}.html">{text}</a>' if stem else text

    return link


def paged(n: int, size: int = PAGE_ROWS) -> str:
    """The attributes of a table of ``n`` rows: sortable, searched, ``size`` rows a page when long."""
    return " data-filter data-sortable" + (f' data-page="{size}"' if n > LONG else "")


def value_ci(value: float | None, ci: Sequence[float | None] | None) -> str:
    """A value and, below it, its interval (empty for None)."""
    if value is None:
        return ""
    if not ci:
        return fmt(value)
    return f"{fmt(value)}<small>[{fmt(ci[0])}, {fmt(ci[1])}]</small>"


CSS = """
:root{--ink:#1f2933;--muted:#616e7c;--line:#e4e7eb;--bg:#f5f7fa;--card:#fff;--accent:#4e79a7}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;overflow-wrap:anywhere}
main{max-width:1240px;margin:0 auto;padding:20px 24px 40px}
header{margin-bottom:12px}
.kicker{margin:0;color:var(--accent);font-weight:600;text-transform:uppercase;letter-spacing:.08em;font-size:12px}
.kicker a{color:inherit}
h1{margin:2px 0 8px;font-size:26px;letter-spacing:-.01em}
h2{margin:0;font-size:17px;display:inline}
.settings{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 14px;margin:0;color:var(--muted)}
.settings dt{font-weight:600;color:var(--ink)}
.settings dd{margin:0;min-width:0}
.settings details>summary{cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.settings details.fold>summary{color:var(--accent)}
.settings details.line>summary{display:block;list-style:none}
.settings details.line>summary::-webkit-details-marker{display:none}
.settings details.line>summary:hover{color:var(--ink)}
.settings details[open]>summary{white-space:normal}
.settings details[open]>summary .gist{display:none}
.reasons,.lineups{margin:4px 0 0;padding:0 0 0 18px}
.places{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:0 14px;margin:4px 0 10px;padding:8px 12px;border-left:3px solid var(--accent);background:#eaf1f8;border-radius:0 8px 8px 0}
.places h2{display:block;font-size:14px;line-height:1.45}
.places ul{margin:0;padding:0;list-style:none}
.places .note{color:var(--muted);font-size:12.5px}
.places .note summary{cursor:pointer;color:var(--accent)}
.botlist{margin:6px 0 0;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:2px 10px}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 18px;margin:0 0 16px;box-shadow:0 1px 2px rgba(31,41,51,.04);min-width:0}
section>summary{cursor:pointer;margin-bottom:10px}
details.sec>summary{cursor:pointer;margin:0 0 10px}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(440px,100%),1fr));gap:16px}
.pair section{margin:0 0 16px}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums;font-size:13.5px}
th,td{padding:5px 8px;text-align:right;white-space:nowrap;border-bottom:1px solid var(--line)}
th{font-size:12px;color:var(--muted);font-weight:600;background:#fafbfc;white-space:normal;vertical-align:bottom;overflow-wrap:normal}
th.sortable{cursor:pointer;user-select:none}
th.sortable:after{content:" \\2195";color:#b0b8c1}
th[aria-sort=ascending]:after{content:" \\2191";color:var(--ink)}
th[aria-sort=descending]:after{content:" \\2193";color:var(--ink)}
td small{display:block;color:var(--muted);font-size:11px}
td small .cage{color:#a4402a;font-weight:600}
#standings td.name small{white-space:normal;min-width:14em}
td.name,th.name{text-align:left;font-weight:600}
td.wrap{white-space:normal;text-align:left;min-width:220px}
a{color:#2a5d8f;text-decoration:none}
a:hover{text-decoration:underline}
#standings td[data-col=rank]{font-weight:700}
tbody tr:hover{background:#f5f8fb}
tr.dq-row td{color:var(--muted);background:#fdf2f2}
tr.me td{background:#fff8e1}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:7px;vertical-align:0}
.cibar .track{stroke:var(--line);stroke-width:2}
.heat th.me{text-align:left;vertical-align:middle}
.heat td{text-align:center;min-width:64px;border:2px solid #fff;font-weight:600}
.heat td small{font-weight:400;color:inherit;opacity:.7}
.heat td.self{background:repeating-linear-gradient(45deg,#f1f3f5,#f1f3f5 4px,#fff 4px,#fff 8px)}
.heat th.opp{writing-mode:vertical-rl;transform:rotate(180deg);text-align:left;max-height:120px}
svg text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;fill:var(--ink)}
svg .tick,svg .axis{fill:var(--muted);font-size:11px}
svg .label{font-weight:600}
svg .grid{stroke:var(--line);stroke-width:1}
svg .axisline{stroke:#9aa5b1}
svg .whisker{stroke:#9aa5b1;stroke-width:1.5}
svg .meanci{stroke:var(--ink);stroke-width:3;stroke-linecap:round}
svg .mean{fill:#fff;stroke:var(--ink);stroke-width:2}
svg .series{fill:none;stroke-width:2;stroke-linejoin:round}
svg .series.faint{stroke:#c9d1d9;stroke-width:1;opacity:.6}
svg .series.hi{stroke:#d1345b!important;stroke-width:3;opacity:1}
svg .label.faint{display:none}
svg .label.hi{display:inline;fill:#d1345b}
.dist td.plot{width:60%;min-width:220px;padding:2px 8px}
.dist svg{display:block;width:100%;height:26px}
.dist thead th{position:sticky;top:0;z-index:1}
.note{color:var(--muted);font-size:12.5px;margin:8px 0 0}
.lead{color:var(--muted);font-size:12.5px;margin:0 0 8px}
.explain{font-size:12.5px;color:var(--muted);margin:0 0 8px}
.explain summary{cursor:pointer;color:var(--accent)}
.explain dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:3px 12px;margin:6px 0 0}
.explain dt{font-weight:600;color:var(--ink)}
.explain dd{margin:0}
.warn{margin:8px 0;padding:8px 12px;border-left:3px solid #edc948;background:#fdf8e6}
.dq{margin:8px 0 0;padding:8px 12px;border-left:3px solid #d64545;background:#fdf2f2;color:#8a1c1c}
.tools{display:flex;flex-wrap:wrap;gap:8px 14px;align-items:center;margin:0 0 10px}
.tools input{font:inherit;padding:6px 10px;border:1px solid #c5ccd3;border-radius:6px;width:min(320px,100%)}
.tools .count{color:var(--muted);font-size:12.5px}
button.more,.pager button{font:inherit;font-size:12.5px;margin:8px 6px 0 0;padding:4px 10px;border:1px solid #c5ccd3;border-radius:6px;background:#fff;cursor:pointer}
.pager{display:flex;flex-wrap:wrap;align-items:center;gap:4px 8px;color:var(--muted);font-size:12.5px}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(165px,100%),1fr));gap:10px 18px;margin:0}
.facts div{min-width:0}
.facts dt{font-size:12px;color:var(--muted);font-weight:600}
.facts dd{margin:0;font-size:17px;font-variant-numeric:tabular-nums}
.facts dd small{display:block;font-size:12px;color:var(--muted)}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:8px}
code{font-size:12px;background:#eef1f4;padding:1px 4px;border-radius:3px}
@media (max-width:600px){main{padding:10px 8px 30px}section{padding:10px 10px;border-radius:8px}h1{font-size:21px}
.settings{font-size:13px;gap:1px 10px}.places{display:block;padding:6px 10px}#standings th{white-space:nowrap}th,td{padding:4px 6px}.facts dd{font-size:15px}}
""".strip().replace("\n", "")

# The page's script: sorting, paging, search and the rating plot's highlight (see the module docstring).
SCRIPT = r"""
(function(){"use strict";
var D=document;function all(s,r){return [].slice.call((r||D).querySelectorAll(s));}
function val(row,i,kind){var c=row.cells[i];if(!c)return null;var v=c.hasAttribute("data-v")?c.getAttribute("data-v"):c.textContent.trim();
if(v===""||v==null)return null;if(kind==="num"){var x=parseFloat(v);return isNaN(x)?null:x;}return v.toLowerCase();}
function page(t){var n=+t.getAttribute("data-page");if(!n)return;var q=t.hasAttribute("data-searched"),open=t.hasAttribute("data-open");
var rows=all(":scope>tbody>tr",t),shown=0,hits=0;rows.forEach(function(r){var ok=!r.hasAttribute("data-miss");if(ok)hits++;
r.hidden=!ok||(!q&&!open&&shown>=n);if(!r.hidden)shown++;});var b=t.__more;if(!b)return;
b.hidden=q||hits<=n;b.textContent=open?"Show the first "+n:"Show all "+hits+" rows";}
function pager(t){var n=+t.getAttribute("data-page");if(!n)return;var b=D.createElement("button");b.type="button";b.className="more";
t.__more=b;var box=t.closest(".scroll")||t;box.parentNode.insertBefore(b,box.nextSibling);
b.addEventListener("click",function(){if(t.hasAttribute("data-open"))t.removeAttribute("data-open");else t.setAttribute("data-open","");page(t);});page(t);}
function sorter(t){var head=t.tHead;if(!head)return;var ths=[].slice.call(head.rows[head.rows.length-1].cells);
ths.forEach(function(th,i){var kind=th.getAttribute("data-sort");if(!kind)return;th.classList.add("sortable");th.tabIndex=0;
function go(){var asc=th.getAttribute("aria-sort")!=="ascending";ths.forEach(function(o){o.removeAttribute("aria-sort");});
th.setAttribute("aria-sort",asc?"ascending":"descending");var body=t.tBodies[0];
var rows=[].slice.call(body.rows).map(function(r,j){return [val(r,i,kind),j,r];});
rows.sort(function(a,b){if(a[0]===b[0])return a[1]-b[1];if(a[0]===null)return 1;if(b[0]===null)return -1;
return (a[0]<b[0]?-1:1)*(asc?1:-1);});rows.forEach(function(x){body.appendChild(x[2]);});page(t);}
th.addEventListener("click",go);th.addEventListener("keydown",function(e){if(e.key==="Enter"||e.key===" "){e.preventDefault();go();}});});}
function mark(name,on){all('[data-line="'+name.replace(/["\\]/g,"")+'"]').forEach(function(el){light(el,on);});}
function light(el,on){el.classList.toggle("hi",on);if(on)el.parentNode.appendChild(el);}
var refresh=function(){};
function search(box){var count=D.getElementById("search-count");function apply(){
var words=box.value.toLowerCase().split(/[\s,]+/).filter(Boolean),total=0,hits=0;
function hitName(b){b=(b||"").toLowerCase();return !words.length||words.some(function(w){return b.indexOf(w)>=0;});}
function hit(el){return hitName(el.getAttribute("data-bot"));}
all("[data-filter]").forEach(function(t){if(words.length)t.setAttribute("data-searched","");else t.removeAttribute("data-searched");
all(":scope>tbody>tr[data-bot]",t).forEach(function(r){var ok=hit(r);if(ok)r.removeAttribute("data-miss");else r.setAttribute("data-miss","");
if(!t.getAttribute("data-page"))r.hidden=!ok;});page(t);});
all("p.dq[data-bot]").forEach(function(p){p.hidden=!hit(p);});
all("#standings>tbody>tr[data-bot]").forEach(function(r){total++;if(hit(r))hits++;});
all("[data-line]").forEach(function(el){var on=words.length>0&&hitName(el.getAttribute("data-line"));if(on!==el.classList.contains("hi"))light(el,on);});
if(count)count.textContent=words.length?hits+" of "+total+" bots":"";}
box.addEventListener("input",apply);refresh=apply;apply();}
all("table[data-sortable]").forEach(sorter);all("table[data-page]").forEach(pager);
var box=D.getElementById("search");if(box)search(box);
all("#standings>tbody>tr[data-bot]").forEach(function(r){var n=r.getAttribute("data-bot");
r.addEventListener("mouseenter",function(){mark(n,true);});
r.addEventListener("mouseleave",function(){mark(n,false);refresh();});});
})();
""".strip()
