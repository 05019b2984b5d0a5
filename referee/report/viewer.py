"""The replay viewer: ``OUT/replays/index.html`` (a match list) and one self-contained
page per listed match (``OUT/replays/<match>.html``) that works offline from disk.

A replay page carries its match inline (no fetch: Chromium refuses fetch on file://):
every decision with who chose it, faults, response times and the bot's log, the view
the deciding seat was sent, and every seat's view after each decision (the match's
frames, ``match.frames``). Identical views are stored once. The page steps
forward/back/plays, shows the whole table (spectator: public state and every hand) or
exactly what one seat was sent, drawn per game as cards.

At a million matches not every page can be written: the list holds the most recent
``RECENT`` matches and up to ``FAULTED`` matches with faults (the most recent ones);
``referee replay OUT MATCH --html`` writes the page of any other match.
"""

from __future__ import annotations

import heapq
import html
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.games import get_game
from referee.record import FALLBACK
from referee.report.progress import OnProgress, nothing
from referee.store import transcripts
from referee.store.files import atomic_write
from referee.store.matches import Match, match_of
from referee.store.tournament_file import load_output_dir

FOLDER = "replays"
RECENT = 100  # most recent matches listed and given a page
FAULTED = 200  # and up to this many matches with faults


def write_replays(out: Path, on_progress: OnProgress = nothing) -> list[Path]:
    """Write the match list and the pages of its matches into ``out/replays``; nothing
    when the folder has no transcripts. Returns the pages written (``on_progress`` is told
    of each)."""
    if not transcripts.exists(out):
        return []
    tournament, lines = load_output_dir(out)
    counted = _Counted(lines)
    chosen = select(counted)  # streamed: at most RECENT + FAULTED lines are held
    by_id = {str(r["id"]): r for r in chosen}
    found = transcripts.find_many(out, set(by_id))
    folder = out / FOLDER
    folder.mkdir(exist_ok=True)
    settings = tournament["settings"]
    game = get_game(settings["game"])
    written = []
    for done, (mid, rec) in enumerate(by_id.items()):
        on_progress(done, len(by_id), "replay pages")
        tr = found.get(mid)
        if tr is None:
            continue
        written.append(write_replay_page(out, match_of(game, settings, rec, tr)))
    on_progress(len(by_id), len(by_id), "replay pages")
    atomic_write(folder / "index.html", render_list(settings, chosen, counted.count, set(found)))
    return written


class _Counted:
    """An iterable of journal lines that counts what it yields."""

    def __init__(self, lines: Iterable[Mapping[str, Any]]) -> None:
        self.lines = lines
        self.count = 0

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        for line in self.lines:
            self.count += 1
            yield line


def select(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The matches listed: the ``RECENT`` most recent by fixture index and the ``FAULTED``
    most recent with faults, in fixture order (of lines with the same index, the last).
    One pass, holding at most ``RECENT + FAULTED`` lines."""
    recent: list[tuple[int, int, Mapping[str, Any]]] = []
    faulted: list[tuple[int, int, Mapping[str, Any]]] = []
    for seq, r in enumerate(records):
        item = (int(r["index"]), seq, r)
        for heap, cap, wanted in ((recent, RECENT, True), (faulted, FAULTED, bool(r.get("faults")))):
            if not wanted:
                continue
            if len(heap) < cap:
                heapq.heappush(heap, item)
            elif item[:2] > heap[0][:2]:
                heapq.heapreplace(heap, item)
    keep = {i: r for i, _, r in sorted(recent, key=lambda x: x[:2])}
    keep.update({i: r for i, _, r in sorted(faulted, key=lambda x: x[:2])})
    return [keep[i] for i in sorted(keep)]


def write_replay_page(out: Path, m: Match) -> Path:
    """Write the replay page of ``m`` into ``out/replays``; return its path."""
    folder = out / FOLDER
    folder.mkdir(exist_ok=True)
    path = folder / f"{m.record['id']}.html"
    atomic_write(path, render_replay(m))
    return path


def match_data(m: Match) -> dict[str, Any]:
    """What the replay page draws, JSON-ready. Views are stored once each and referred to
    by index; a view is stored as its difference from the seat's previous one (keys set,
    lists appended to, keys gone), so a page stays small however long the history grows."""
    rec, game = m.record, m.game
    n = len(rec["bots"])
    views: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    last: dict[int, tuple[int, Any]] = {}  # seat -> (index, view) of its latest stored view

    def ref(view: Any, seat: int) -> int:
        key = json.dumps(view, sort_keys=True, separators=(",", ":"))
        if key not in index:
            index[key] = len(views)
            prev = last.get(seat)
            views.append(_delta(prev, view) if prev is not None else {"f": view})
        last[seat] = (index[key], view)
        return index[key]

    state = game.setup(n, rec["seed"], m.options)
    start = [ref(game.view(state, s), s) for s in range(n)]
    steps = []
    for f in m.frames(after=True):
        mv = f.move
        steps.append(
            {
                "seat": mv.seat,
                "decision": mv.decision,
                "action": mv.action,
                "by": "fallback" if mv.by == FALLBACK else "bot",
                "fault": mv.fault,
                "ms": mv.ms,
                "extras": mv.extras,
                "log": mv.log,
                "legal": f.n_legal,
                "sent": ref(f.sent, mv.seat),
                "after": [ref(v, s) for s, v in enumerate(f.after or ())],
            }
        )
    return {
        "tournament": m.tournament,
        "game": game.info.id,
        "title": game.info.title,
        "id": rec["id"],
        "seed": rec["seed"],
        "bots": rec["bots"],
        "scores": rec["scores"],
        "ranks": rec["ranks"],
        "faults": rec.get("faults", []),
        "start": start,
        "steps": steps,
        "views": views,
    }


def render_replay(m: Match) -> str:
    """The self-contained replay page of ``m``."""
    data = _script_json(match_data(m))
    title = html.escape(f"{m.tournament} {m.record['id']}: replay")
    return (
        "<!doctype html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{_CSS}</style></head><body>\n"
        '<header><a href="index.html">\u2190 matches</a> <h1 id="title"></h1><p id="result"></p></header>\n'
        '<nav><button id="first">|&lt;</button><button id="back">&lt; back</button>'
        '<button id="play">play</button><button id="next">next &gt;</button><button id="last">&gt;|</button>'
        ' <input id="slider" type="range" min="0" value="0"> <span id="pos"></span>'
        ' <label>view <select id="who"><option value="-1">spectator (whole table)</option></select></label></nav>\n'
        '<main><section id="board"></section><aside><h2>Decision</h2><div id="decision"></div>'
        '<h2>Bot log</h2><pre id="log"></pre><h2>Decisions</h2><ol id="moves" start="0"></ol></aside></main>\n'
        f'<script id="match" type="application/json">{data}</script>\n'
        f"<script>{_JS}</script></body></html>\n"
    )


def render_list(
    settings: Mapping[str, Any], chosen: Sequence[Mapping[str, Any]], total: int, with_page: set[str]
) -> str:
    """The match list: sortable, filterable by bot, faulted matches highlighted."""
    e = html.escape
    bots = sorted(settings.get("bots", []))
    rows = []
    for r in chosen:
        mid = str(r["id"])
        faults = len(r.get("faults", ()))
        seats = "".join(
            f'<span class="seat" data-bot="{e(b)}">{e(b)} <b>{s:g}</b> <i>#{k}</i></span>'
            for b, s, k in zip(r["bots"], r["scores"], r["ranks"])
        )
        link = f'<a href="{e(mid)}.html">{e(mid)}</a>' if mid in with_page else e(mid)
        rows.append(
            f'<tr data-id="{e(mid)}" data-index="{r["index"]}" data-faults="{faults}" '
            f'data-bots="{e(json.dumps(sorted(set(r["bots"]))))}"{" class=faulted" if faults else ""}>'
            f'<td data-col="id" data-sort="{r["index"]}">{link}</td><td data-col="seats">{seats}</td>'
            f'<td data-col="faults" data-sort="{faults}">{faults or ""}</td></tr>'
        )
    options = "".join(f'<option value="{e(b)}">{e(b)}</option>' for b in bots)
    name = e(str(settings.get("name", "")))
    return (
        "<!doctype html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{name}: matches</title><style>{_CSS}</style></head>'
        f'<body><header><a href="../index.html">\u2190 leaderboard</a><h1>{name}: matches</h1>'
        f'<p class="note">{len(chosen)} of {total} matches listed: the {RECENT} most recent and up to {FAULTED} '
        "with faults (highlighted). Any other match: <code>referee replay OUT MATCH --html</code> writes its "
        "page here, <code>referee replay OUT MATCH</code> prints it.</p></header>"
        f'<p><label>bot <select id="bot"><option value="">all bots</option>{options}</select></label> '
        '<label><input type="checkbox" id="only-faults"> only matches with faults</label></p>'
        '<table id="matches"><thead><tr><th data-col="id">match</th><th>seats: bot, score, rank</th>'
        '<th data-col="faults">faults</th></tr></thead><tbody>'
        + "".join(rows)
        + f"</tbody></table><script>{_LIST_JS}</script></body></html>\n"
    )


def _delta(prev: tuple[int, Any], view: Any) -> dict[str, Any]:
    """``view`` as a difference from ``prev`` (index, view): keys set, lists appended to,
    keys deleted; the whole view when either is not a JSON object."""
    base_i, base = prev
    if not isinstance(view, dict) or not isinstance(base, dict):
        return {"f": view}
    put: dict[str, Any] = {}
    app: dict[str, Any] = {}
    for k, v in view.items():
        old = base.get(k, _MISSING)
        if old == v and type(old) is type(v):
            continue
        if isinstance(v, list) and isinstance(old, list) and 0 < len(old) < len(v) and v[: len(old)] == old:
            app[k] = v[len(old) :]
        else:
            put[k] = v
    out: dict[str, Any] = {"b": base_i}
    if put:
        out["set"] = put
    if app:
        out["app"] = app
    gone = [k for k in base if k not in view]
    if gone:
        out["del"] = gone
    return out


_MISSING = object()


def _script_json(doc: Any) -> str:
    """JSON safe inside a <script> element (no "</" can close it, no HTML comment opens)."""
    text = json.dumps(doc, separators=(",", ":"), ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0 1.5em;color:#222}
header h1{display:inline;font-size:1.3em;margin-left:1em} nav{margin:.6em 0} nav button{margin-right:.2em}
main{display:flex;gap:1.5em;align-items:flex-start} #board{flex:3} aside{flex:2;max-width:34em}
#moves{max-height:22em;overflow:auto;font:12px monospace;padding-left:3em} #moves li.cur{background:#ffe9a8}
#moves li.fb,.faulted{background:#fde2e1} pre#log{white-space:pre-wrap;background:#f5f5f5;padding:.4em;
min-height:1.5em;max-height:14em;overflow:auto}
.card{display:inline-block;min-width:1.9em;padding:.35em .25em;margin:.12em;border:1px solid #888;
border-radius:5px;background:#fff;text-align:center;font-weight:600;box-shadow:1px 1px 0 #ccc}
.card.h2{background:#e8f1fb}.card.h3{background:#fdf1d6}.card.h5{background:#fbdcdc}.card.h7{background:#e8c7f0}
.card.back{background:#5b6f8f;color:#fff}.card.new{outline:3px solid #e0a800}.card.fire{background:#ffb38a}
.row,.pile,.seatbox{margin:.35em 0;padding:.3em .5em;border:1px solid #ddd;border-radius:6px}
.seatbox.acting{border-color:#e0a800;background:#fffaf0} .label{color:#666;font-size:12px;margin-right:.5em}
.stick{display:inline-block;width:.5em;height:1.4em;margin:0 1px;border-radius:2px}
.red{background:#d9534f}.blue{background:#3b78c2} .token{display:inline-block;width:.9em;height:.9em;
border-radius:50%;background:#d4a017;margin:0 1px} table{border-collapse:collapse} td,th{padding:.25em .6em;
border-bottom:1px solid #eee;text-align:left} th{cursor:pointer} .seat{margin-right:1em} .note{color:#555}
"""

_LIST_JS = r"""
(function(){
const tb=document.querySelector('#matches tbody');
const bot=document.getElementById('bot'), only=document.getElementById('only-faults');
function filter(){for(const tr of tb.rows){const bots=JSON.parse(tr.dataset.bots);
 tr.hidden=(bot.value&&!bots.includes(bot.value))||(only.checked&&tr.dataset.faults==='0');}}
bot.onchange=filter; only.onchange=filter;
let dir={};
for(const th of document.querySelectorAll('#matches th[data-col]')){th.onclick=()=>{const c=th.dataset.col;
 dir[c]=-(dir[c]||-1); const rows=[...tb.rows];
 rows.sort((a,b)=>dir[c]*(Number(a.querySelector(`td[data-col=${c}]`).dataset.sort)-
   Number(b.querySelector(`td[data-col=${c}]`).dataset.sort)));
 rows.forEach(r=>tb.appendChild(r));};}
})();
"""

_JS = r"""
(function(){
const M=JSON.parse(document.getElementById('match').textContent);
const N=M.bots.length, S=M.steps.length, cache=[];
function V(i){if(cache[i])return cache[i];const e=M.views[i];let v;
 if('f' in e)v=e.f;else{const b=V(e.b);v=Object.assign({},b);for(const k in e.set||{})v[k]=e.set[k];
  for(const k in e.app||{})v[k]=b[k].concat(e.app[k]);for(const k of e.del||[])delete v[k];}
 return cache[i]=v;}
let k=0, timer=null;
const $=id=>document.getElementById(id);
const esc=s=>String(s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
const ctl=s=>String(s).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
  c=>'\\u'+c.charCodeAt(0).toString(16).padStart(4,'0'));
function heads(c){return c==55?7:c%11==0?5:c%10==0?3:c%5==0?2:1;}
function card(c,cls){cls=cls||'';if(typeof c==='number'&&M.game==='nimmt_plus'&&c>0)cls+=' h'+heads(c);
 return `<span class="card ${cls}" data-card="${esc(c)}">${esc(c)}</span>`;}
function cards(list,cls){return (list||[]).map(c=>card(c,cls)).join('');}
function backs(n){return Array.from({length:n||0},()=>'<span class="card back">?</span>').join('');}
function seatName(s){return `seat ${s} <b>${esc(M.bots[s])}</b>`;}
// views at step k: after k decisions (k=0: the deal)
function viewsAt(k){return k===0?M.start.map(V):M.steps[k-1].after.map(V);}
function hands(vs,own){return vs.map((v,s)=>(own===undefined||own===s)?v:null);}
const R={};
R.nimmt_plus=(pub,vs,acting)=>{let h=`<p class="label">hand ${pub.hand_number}/${pub.hands_total}, turn ${pub.turn_number}</p>`;
 h+=pub.rows.map((r,i)=>`<div class="row" data-row="${i}"><span class="label">row ${i}</span>${cards(r)}</div>`).join('');
 const last=(pub.history||[]).slice(-1)[0];
 if(last)h+=`<p class="label">last turn: ${last.plays.map(p=>`seat ${p.seat}: ${p.cards.join('+')}`).join(', ')}</p>`;
 h+=vs.map((v,s)=>`<div class="seatbox${acting.includes(s)?' acting':''}" data-seat="${s}">${seatName(s)}
  <span class="label">total ${pub.totals[s]}, this hand ${pub.points[s].heads}</span><div class="hand">${v?cards(v.hand):backs(pub.hand_sizes[s])}</div></div>`).join('');
 return h;};
R.the_game=(pub,vs,acting)=>{let h=`<p class="label">turn ${pub.turn}, draw pile ${pub.draw_pile}, cards left ${pub.cards_left}, minimum ${pub.minimum}, placed ${pub.placed_this_turn}</p>`;
 const fire=new Set((pub.fire||[]).map(f=>f.card));
 h+=pub.piles.map((p,i)=>`<div class="pile" data-pile="${i}"><span class="label">pile ${i} ${p.direction}</span>${
  p.cards.slice(-6).map(c=>card(c,fire.has(c)?'fire':'')).join('')}<b> top ${p.top}</b></div>`).join('');
 if((pub.fire||[]).length)h+=`<p class="label">fire: ${pub.fire.map(f=>`${f.card} on pile ${f.pile}, cover by turn ${f.deadline_turn}`).join('; ')}</p>`;
 h+=vs.map((v,s)=>`<div class="seatbox${acting.includes(s)?' acting':''}" data-seat="${s}">${seatName(s)}
  <span class="label">claims ${esc(JSON.stringify((pub.claims||[])[s]||[]))}</span><div class="hand">${v?cards(v.hand):backs(pub.hand_sizes[s])}</div></div>`).join('');
 return h;};
R.drahtseilakt=(pub,vs,acting)=>{const sc=pub.score||{};let h=`<p class="label">round ${pub.round+1}/${pub.rounds}, trick ${pub.trick+1}/${pub.tricks_per_round}, leader seat ${pub.leader}</p>`;
 h+=`<div class="pile" id="score-cards"><span class="label">score cards</span>${cards(sc.cards)} <span class="label">at stake</span>${
  '<span class="stick red"></span>'.repeat(sc.red||0)}${'<span class="stick blue"></span>'.repeat(sc.blue||0)} (${sc.red||0} red, ${sc.blue||0} blue)</div>`;
 h+=`<div class="row" id="trick"><span class="label">trick</span>${(pub.current_trick||[]).map(p=>`<span class="label">s${p.seat}</span>${card(p.card)}`).join('')}</div>`;
 const t=(pub.tricks||[]).slice(-1)[0];
 if(t)h+=`<p class="label">last trick: ${t.plays.map(p=>`s${p.seat} ${p.card}`).join(', ')}; red to ${t.red_to}, blue to ${t.blue_to}</p>`;
 h+=vs.map((v,s)=>{const st=(pub.sticks||[])[s]||{red:0,blue:0};return `<div class="seatbox${acting.includes(s)?' acting':''}" data-seat="${s}">${seatName(s)}
  ${'<span class="stick red"></span>'.repeat(st.red)}${'<span class="stick blue"></span>'.repeat(st.blue)}
  <span class="label">total ${(pub.totals||[])[s]}</span><div class="hand">${v?cards(v.hand):backs(pub.hand_sizes[s])}</div></div>`;}).join('');
 return h;};
R.dieci=(pub,vs,acting)=>{let h=`<p class="label">manche ${pub.manche}, dealer seat ${pub.dealer}, deck ${pub.deck_size}, discards ${esc((pub.discard_pile||[]).join(' '))}</p>`;
 h+=`<div class="row" id="chain"><span class="label">play order</span>${pub.order.map(s=>`<span class="label">${s===pub.dealer?'D':''}s${s}</span>`).join('\u2192')}</div>`;
 const ev=(pub.events||[]).slice(-4).map(e=>esc(e.type+(e.seat!==undefined?' s'+e.seat:'')+(e.target!==undefined?'\u2192s'+e.target:'')+(e.asker!==undefined?' (asked by s'+e.asker+')':'')));
 if(ev.length)h+=`<p class="label">events: ${ev.join('; ')}</p>`;
 h+=vs.map((v,s)=>{const out=(pub.out||[]).includes(s);const rev=(pub.revealed||[])[s];return `<div class="seatbox${acting.includes(s)?' acting':''}" data-seat="${s}">${seatName(s)}
  ${'<span class="token"></span>'.repeat(pub.tokens[s]||0)} <span class="label">${pub.tokens[s]} tokens${out?', out':''}${rev!=null?', blocks with '+esc(rev):''}</span>
  <div class="hand">${v?(v.card!=null?card(v.card):''):(out?'':backs(1))}</div></div>`;}).join('');
 return h;};
function board(k,who){const vs=viewsAt(k);const next=k<S?M.steps[k]:null;const acting=next?[next.seat]:[];
 if(who<0)return (R[M.game]||raw)(vs[0],vs,acting);
 // one seat: exactly the last view it was sent (at its latest decision up to this point)
 let sent=null;for(let i=k-1;i>=0;i--)if(M.steps[i].seat===who){sent=V(M.steps[i].sent);break;}
 if(next&&next.seat===who)sent=V(next.sent);
 if(!sent)sent=V(M.start[who]);
 const only=hands(Array(N).fill(null),who);only[who]=sent;
 return `<p class="label">what seat ${who} was sent</p>`+(R[M.game]||raw)(sent,only,acting)+
  `<details><summary>raw view</summary><pre>${esc(JSON.stringify(sent,null,1))}</pre></details>`;}
function raw(pub){return `<pre>${esc(JSON.stringify(pub,null,1))}</pre>`;}
function line(s,i){return `${seatName(s.seat)} d${s.decision}: ${esc(JSON.stringify(s.action))}${s.by==='fallback'?' <b>fallback</b>':''}${s.fault?' <b>['+esc(s.fault)+']</b>':''}${s.ms!=null?' '+s.ms.toFixed(1)+' ms':''}`;}
function show(){const who=Number($('who').value);$('board').innerHTML=board(k,who);
 $('pos').textContent=`decision ${k} of ${S}`;$('slider').value=k;$('board').dataset.step=k;
 const s=k>0?M.steps[k-1]:null;
 $('decision').innerHTML=s?`${line(s)}<br><span class="label">${s.legal} legal actions${s.extras?'; '+esc(JSON.stringify(s.extras)):''}</span>`:'the deal';
 $('log').textContent=s&&s.log?ctl(s.log):'';
 for(const li of $('moves').children)li.classList.toggle('cur',Number(li.value)===k-1);}
$('title').textContent=`${M.tournament} ${M.id} (${M.title}), seed ${M.seed}`;
$('result').innerHTML=M.bots.map((b,s)=>`${seatName(s)}: ${M.scores[s]} (rank ${M.ranks[s]})`).join(' &middot; ')+
 (M.faults.length?` &middot; <b>${M.faults.length} fault(s)</b>`:'');
M.bots.forEach((b,s)=>{const o=document.createElement('option');o.value=s;o.textContent=`seat ${s}: ${b}`;$('who').appendChild(o);});
$('moves').innerHTML=M.steps.map((s,i)=>`<li value="${i}" class="${s.by==='fallback'?'fb':''}">${line(s)}${s.log?' \u270e':''}</li>`).join('');
for(const li of $('moves').children)li.onclick=()=>{k=Number(li.value)+1;show();};
$('slider').max=S;
const go=n=>{k=Math.max(0,Math.min(S,n));show();};
$('first').onclick=()=>go(0);$('last').onclick=()=>go(S);$('back').onclick=()=>go(k-1);$('next').onclick=()=>go(k+1);
$('slider').oninput=()=>go(Number($('slider').value));$('who').onchange=show;
$('play').onclick=()=>{if(timer){clearInterval(timer);timer=null;$('play').textContent='play';return;}
 $('play').textContent='pause';timer=setInterval(()=>{if(k>=S){clearInterval(timer);timer=null;$('play').textContent='play';}else go(k+1);},400);};
document.addEventListener('keydown',e=>{if(e.key==='ArrowRight')go(k+1);if(e.key==='ArrowLeft')go(k-1);});
show();
})();
"""
