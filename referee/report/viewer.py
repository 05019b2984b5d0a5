"""The replay viewer: ONE page, ``OUT/replays/index.html``, that works offline from disk.

Opened plain, it lists matches (sortable, filtered by bot, matches with faults marked).
Opened as ``index.html#m000042`` it shows that match, ``#m000042/17`` at decision 17
(decisions are numbered from 1; 0 is the deal) and ``#m000042/s2d5`` at seat 2's decision
5 (the ``decision`` number that seat was sent). It loads the match from its replay pack
(``store.packs``: ``replays/packs/NNNNNN.js``, found from the index in the match id, every
match of the run, written as matches finished) or, in a folder made before packs, from its
replay data (``store.replay_data``: ``replays/data/<match>.js``), as a script added at run
time (no fetch: Chromium refuses fetch on file://). A pack entry is inflated in the page
(``DecompressionStream``); a moves-only entry gets its views from the game's engine
(``Game.replay_js``, inlined: ``G.rebuild(doc, options)``). It steps through the match: the
whole table or exactly what one seat may see, drawn as cards by the game's renderer
(``Game.renderer_js``, inlined); every decision with who chose it, faults, response times
(replay data only) and the bot's log; the seed as an exact string; links to the bots' pages.

The list is bounded: the ``RECENT`` most recent and up to ``FAULTED`` most recent with
faults; every match is one click from its bots' pages. With packs, publishing makes no
replay data. Without them (a folder made before), publishing makes the data of the listed
matches only, never again for a match that has it; ``referee replay OUT MATCH --html``
makes any other's, and the same page shows it.
"""

from __future__ import annotations

import heapq
import html
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.errors import LeaderboardError, ReplayError
from referee.games import get_game
from referee.games.base import Game
from referee.report.names import bot_files
from referee.report.progress import OnProgress, nothing
from referee.store import packs, replay_data, transcripts
from referee.store.files import atomic_write
from referee.store.matches import Match, match_of, options_of
from referee.store.tournament_file import load_output_dir

FOLDER = "replays"
RECENT = 100  # most recent matches listed, with their replay data made at publish
FAULTED = 200  # and up to this many matches with faults
Progress = Callable[[int, int], None]


def write_replays(out: Path, on_progress: OnProgress = nothing, watch: Watch | None = None) -> list[Path]:
    """Write the viewer page and the replay data of its listed matches that lack it into
    ``out/replays``; nothing when the folder has no transcripts. ``watch``: the listed
    matches, chosen as the leaderboard read the journal (else the journal is read again).
    ``on_progress`` is told of each match done. Returns the files written."""
    if not transcripts.exists(out):
        return []
    tournament, lines = load_output_dir(out)
    if watch is None:
        watch = Watch()
        for line in lines:
            watch.add(line)
    chosen = watch.chosen()
    settings = tournament["settings"]
    if packs.exists(out):  # every match is in the packs, written as it finished
        write_page(out, settings, chosen, watch.count, {str(r["id"]) for r in chosen}, with_packs=True)
        return []
    game = get_game(settings["game"])
    missing = {str(r["id"]): r for r in chosen if not replay_data.present(out, r)}
    found = transcripts.find_many(out, set(missing)) if missing else {}
    written = []
    for done, r in enumerate(chosen, 1):
        tr = found.get(str(r["id"]))
        if tr is not None:
            try:
                written.append(replay_data.write(out, match_of(game, settings, r, tr)))
            except ReplayError:  # a transcript the rules refuse costs its replay only (verify names it)
                del found[str(r["id"])]
        on_progress(done, len(chosen), "replay data")
    with_data = {str(r["id"]) for r in chosen if str(r["id"]) not in missing or str(r["id"]) in found}
    write_page(out, settings, chosen, watch.count, with_data)
    return written


def write_replay(out: Path, m: Match) -> Path:
    """Make the replay data of ``m`` (``referee replay --html``), and the viewer page when
    the folder has none; return the page's path (open it with ``#<match>``)."""
    replay_data.write(out, m)
    page = out / FOLDER / "index.html"
    if not page.is_file():
        tournament, lines = load_output_dir(out)
        watch = Watch()
        for line in lines:
            watch.add(line)
        chosen = watch.chosen()
        with_packs = packs.exists(out)
        ids = {str(r["id"]) for r in chosen if with_packs or replay_data.present(out, r)}
        write_page(out, tournament["settings"], chosen, watch.count, ids, with_packs)
    return page


class Watch:
    """Chooses the listed matches from journal lines as they go by (``watch(lines)`` yields
    them on to another reader, so publishing reads the journal once): the ``RECENT`` most
    recent by fixture index and the ``FAULTED`` most recent with faults (of lines with the
    same index, the last). Holds at most ``RECENT + FAULTED`` lines."""

    def __init__(self) -> None:
        self.count = 0
        self._recent: list[tuple[int, int, Mapping[str, Any]]] = []
        self._faulted: list[tuple[int, int, Mapping[str, Any]]] = []

    def __call__(self, lines: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
        """``lines`` unchanged, each one watched."""
        for line in lines:
            self.add(line)
            yield line

    def add(self, r: Mapping[str, Any]) -> None:
        """Watch one journal line (a later line wins a tie on the index: ``count`` grows)."""
        index, seq = int(r["index"]), self.count
        self.count = seq + 1
        recent = self._recent
        if len(recent) < RECENT:
            heapq.heappush(recent, (index, seq, r))
        elif index >= recent[0][0]:
            heapq.heapreplace(recent, (index, seq, r))
        if r.get("faults"):
            faulted = self._faulted
            if len(faulted) < FAULTED:
                heapq.heappush(faulted, (index, seq, r))
            elif index >= faulted[0][0]:
                heapq.heapreplace(faulted, (index, seq, r))

    def chosen(self) -> list[Mapping[str, Any]]:
        """The listed lines, in fixture order."""
        keep = {i: r for i, _, r in sorted(self._recent, key=lambda x: x[:2])}
        keep.update({i: r for i, _, r in sorted(self._faulted, key=lambda x: x[:2])})
        return [keep[i] for i in sorted(keep)]


def select(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The matches listed (``Watch``) of ``records``, in fixture order."""
    watch = Watch()
    for r in records:
        watch.add(r)
    return watch.chosen()


def write_page(
    out: Path,
    settings: Mapping[str, Any],
    chosen: Sequence[Mapping[str, Any]],
    total: int,
    with_data: set[str],
    with_packs: bool = False,
) -> Path:
    """Write ``out/replays/index.html`` (``render_page``); pages of older referees, one file
    per match beside it, are removed: this page replaces them."""
    folder = out / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.html"):
        if old.name != "index.html":
            old.unlink()
    path = folder / "index.html"
    atomic_write(path, render_page(settings, chosen, total, with_data, with_packs))
    return path


def render_page(
    settings: Mapping[str, Any],
    chosen: Sequence[Mapping[str, Any]],
    total: int,
    with_data: set[str],
    with_packs: bool = False,
) -> str:
    """The viewer page: the match list, and the viewer of the match named after ``#``
    (``with_packs``: from the replay packs, else from replay data files)."""
    e = html.escape
    names = [str(b) for b in settings.get("bots", [])]
    pages = bot_files(names)
    game = get_game(str(settings["game"]))
    rows = "".join(_row(r, pages, str(r["id"]) in with_data) for r in chosen)
    options = "".join(f'<option value="{e(b)}">{e(b)}</option>' for b in sorted(names))
    name = e(str(settings.get("name", "")))
    about = {
        "tournament": str(settings.get("name", "")),
        "game": game.info.id,
        "title": game.info.title,
        "pages": pages,
        "recent": RECENT,
        "faulted": FAULTED,
        "packs": packs.PER_PACK if with_packs else 0,
        "options": _options(game, settings),
    }
    note = (  # for every visitor: the organiser's commands are in docs/outputs.md
        f"{len(chosen)} of {total} matches listed: the {RECENT} most recent and up to {FAULTED} with faults "
        "(marked). Every match of a bot is on its page" + (", one click from its replay." if with_packs else ".")
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{name}: matches and replays</title><style>{_CSS}</style></head><body>\n"
        f'<header><a href="../index.html">\u2190 leaderboard</a> <a href="#" id="to-list" hidden>\u2190 matches</a>'
        f' <h1 id="title">{name}: matches</h1><p id="result"></p></header>\n'
        f'<section id="list"><p class="note">{note}</p>'
        f'<p><label>bot <select id="bot"><option value="">all bots</option>{options}</select></label> '
        '<label><input type="checkbox" id="only-faults"> only matches with faults</label></p>'
        '<div class="scroll"><table id="matches"><thead><tr><th data-col="id">match</th>'
        '<th>seats: bot, score, rank</th><th data-col="faults">faults</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div></section>\n"
        f"{_VIEWER_HTML}"
        f'<script id="about" type="application/json">{_script_json(about)}</script>\n'
        f"<script>{_JS_HEAD}{game.renderer_js()}\n{game.replay_js() or ''}\n{_JS_TAIL}</script></body></html>\n"
    )


def _options(game: Game, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The game's checked options for the tournament's seats (what ``G.rebuild`` is given)."""
    try:
        seats = int(settings.get("players") or game.info.min_seats)
        return options_of(game, settings, seats)
    except (LeaderboardError, TypeError, ValueError):
        return dict(settings.get("options") or {})


def _row(r: Mapping[str, Any], pages: Mapping[str, str], has_data: bool) -> str:
    """One row of the match list."""
    e = html.escape
    mid = str(r["id"])
    faults = len(r.get("faults", ()))
    seats = "".join(
        f'<span class="seat" data-bot="{e(b)}">{_bot_link(b, pages)} <b>{s:g}</b> <i>#{k}</i></span> '
        for b, s, k in zip(r["bots"], r["scores"], r["ranks"])
    )
    link = f'<a href="#{e(mid)}">{e(mid)}</a>' if has_data else f'{e(mid)} <span class="note">(no data)</span>'
    return (
        f'<tr data-id="{e(mid)}" data-index="{r["index"]}" data-faults="{faults}" '
        f'data-bots="{e(json.dumps(sorted(set(r["bots"]))))}"{" class=faulted" if faults else ""}>'
        f'<td data-col="id" data-sort="{r["index"]}">{link}</td><td data-col="seats">{seats}</td>'
        f'<td data-col="faults" data-sort="{faults}">{faults or ""}</td></tr>'
    )


def _bot_link(name: str, pages: Mapping[str, str]) -> str:
    e = html.escape
    stem = pages.get(name)
    return f'<a class="bot" href="../bots/{e(stem)}.html">{e(name)}</a>' if stem else e(name)


def _script_json(doc: Any) -> str:
    """JSON safe inside a <script> element (no "</" can close it, no HTML comment opens)."""
    text = json.dumps(doc, separators=(",", ":"), ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_VIEWER_HTML = (
    '<section id="viewer" hidden><p id="status" class="note"></p><div id="match" hidden>'
    '<nav><button id="first" title="the deal">|&lt;</button><button id="back">&lt; back</button>'
    '<button id="play">play</button><button id="next">next &gt;</button><button id="last">&gt;|</button>'
    '<input id="slider" type="range" min="0" value="0" aria-label="decision"> <span id="pos"></span>'
    ' <label>view <select id="who"><option value="-1">spectator (whole table)</option></select></label></nav>\n'
    '<main><section id="board"></section><aside><h2>Decision</h2><div id="decision"></div>'
    '<h2>Bot log</h2><pre id="log"></pre><h2>Decisions</h2><ol id="moves"></ol></aside></main></div></section>\n'
)

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0 1.5em;color:#222;overflow-wrap:break-word}
header h1{display:inline;font-size:1.3em;margin-left:.6em} a.bot{color:inherit}
nav{margin:.6em 0;display:flex;flex-wrap:wrap;gap:.3em;align-items:center} #slider{flex:1 1 8em;min-width:6em}
main{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start} #board{flex:3 1 22em;min-width:0}
aside{flex:2 1 18em;min-width:0;max-width:40em} aside h2{font-size:1.05em;margin:.6em 0 .2em}
#moves{position:relative;max-height:22em;overflow:auto;font:12px monospace;padding-left:3.5em;margin:0}
#moves li{cursor:pointer} #moves li.cur{background:#ffe9a8;outline:1px solid #e0a800}
#moves li.fb,.faulted{background:#fde2e1} pre{white-space:pre-wrap;overflow-wrap:anywhere}
pre#log{background:#f5f5f5;padding:.4em;min-height:1.5em;max-height:14em;overflow:auto}
details pre{max-height:20em;overflow:auto;background:#f8f8f8;font-size:12px}
.card{display:inline-block;min-width:1.9em;padding:.35em .25em;margin:.12em;border:1px solid #888;
border-radius:5px;background:#fff;text-align:center;font-weight:600;box-shadow:1px 1px 0 #ccc}
.card.h2{background:#e8f1fb}.card.h3{background:#fdf1d6}.card.h5{background:#fbdcdc}.card.h7{background:#e8c7f0}
.card.back{background:#5b6f8f;color:#fff}.card.new{outline:3px solid #e0a800}.card.fire{background:#ffb38a}
.row,.pile,.seatbox{margin:.35em 0;padding:.3em .5em;border:1px solid #ddd;border-radius:6px}
.seatbox.acting{border-color:#e0a800;background:#fffaf0} .label{color:#666;font-size:12px;margin-right:.5em}
.stick{display:inline-block;width:.5em;height:1.4em;margin:0 1px;border-radius:2px}
.red{background:#d9534f}.blue{background:#3b78c2} .token{display:inline-block;width:.9em;height:.9em;
border-radius:50%;background:#d4a017;margin:0 1px} .scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse} td,th{padding:.25em .6em;border-bottom:1px solid #eee;text-align:left;
vertical-align:top} th,td[data-col=id]{white-space:nowrap} th{cursor:pointer} .seat{display:inline-block;margin-right:1em} .note{color:#555}
#seed{font-family:monospace;user-select:all} #status{font-size:1.05em}
@media (max-width:700px){body{margin:0 .6em} main{display:block} aside{max-width:none}
 header h1{display:block;margin:.3em 0} #moves{max-height:16em}}
"""

# The viewer's script, around the renderer of the tournament's game (``Game.renderer_js``).
_JS = r"""
(function(){
const A=JSON.parse(document.getElementById('about').textContent);
const $=id=>document.getElementById(id);
const esc=s=>String(s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
const ctl=s=>String(s).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
  c=>'\\u'+c.charCodeAt(0).toString(16).padStart(4,'0'));
// the match list: filter by bot and faults, sort by a column
const tb=document.querySelector('#matches tbody');
const bot=$('bot'), only=$('only-faults');
function filter(){for(const tr of tb.rows){const bots=JSON.parse(tr.dataset.bots);
 tr.hidden=(bot.value&&!bots.includes(bot.value))||(only.checked&&tr.dataset.faults==='0');}}
bot.onchange=filter; only.onchange=filter;
const dir={};
for(const th of document.querySelectorAll('#matches th[data-col]')){th.onclick=()=>{const c=th.dataset.col;
 dir[c]=-(dir[c]||-1); const rows=[...tb.rows];
 rows.sort((a,b)=>dir[c]*(Number(a.querySelector(`td[data-col=${c}]`).dataset.sort)-
   Number(b.querySelector(`td[data-col=${c}]`).dataset.sort)));
 rows.forEach(r=>tb.appendChild(r));};}
// the viewer: a match's pack is a script that calls replayPack(id, index, base64) per match
// (its deflated doc, inflated when asked for); data of older folders calls replayData(doc)
const loaded={},packed={},asked={};
window.replayData=doc=>{if(doc&&typeof doc.id==='string')loaded[doc.id]=doc;};
window.replayPack=(id,index,b64)=>{if(typeof id==='string'&&typeof b64==='string')packed[id]=b64;};
function script(src){return new Promise(done=>{const s=document.createElement('script');s.src=src;
 s.onload=s.onerror=()=>{s.remove();done();};document.head.appendChild(s);});}
async function inflate(b64){const bin=atob(b64),bytes=new Uint8Array(bin.length);
 for(let i=0;i<bin.length;i++)bytes[i]=bin.charCodeAt(i);
 const stream=new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
 return JSON.parse(await new Response(stream).text());}
async function fetchDoc(id){const m=/^m(\d+)$/.exec(id);
 if(A.packs&&m&&packed[id]===undefined){const p=String(Math.floor(Number(m[1])/A.packs)).padStart(6,'0');
  if(!asked[p]){asked[p]=1;await script(`packs/${p}.js`);}}
 if(packed[id]!==undefined){const doc=await inflate(packed[id]);
  if(!doc.views){if(!G.rebuild)throw new Error('the page has no engine to rebuild this game\'s views');
   Object.assign(doc,G.rebuild(doc,A.options));}
  return doc;}
 if(!loaded[id])await script(`data/${id}.js`);
 return loaded[id]||null;}
let M=null,N=0,S=0,k=0,timer=null,cache=[],cur=null;
const listTitle=$('title').textContent;
function V(i){if(cache[i])return cache[i];const chain=[];let j=i;
 while(!cache[j]){chain.push(j);const e=M.views[j];if('f' in e)break;j=e.b;}
 for(let t=chain.length-1;t>=0;t--){const x=chain[t],e=M.views[x];let v;
  if('f' in e)v=e.f;else{const b=cache[e.b];v=Object.assign({},b);for(const key in e.set||{})v[key]=e.set[key];
   for(const key in e.app||{})v[key]=b[key].concat(e.app[key]);for(const key of e.del||[])delete v[key];}
  cache[x]=v;}
 return cache[i];}
function seatName(s){return `seat ${s} <b>${esc(M.bots[s])}</b>`;}
function botLink(b){const p=A.pages[b];return p===undefined?esc(b):`<a class="bot" href="../bots/${esc(p)}.html">${esc(b)}</a>`;}
const G={};
function card(c,cls){cls=(cls||'')+(G.cardClass?G.cardClass(c):'');
 return `<span class="card ${cls}" data-card="${esc(c)}">${esc(c)}</span>`;}
function cards(list,cls){return (list||[]).map(c=>card(c,cls)).join('');}
function backs(n){return Array.from({length:n||0},()=>'<span class="card back">?</span>').join('');}
/*RENDERER*/
function raw(pub){return `<pre>${esc(JSON.stringify(pub,null,1))}</pre>`;}
// step k: after k decisions (0: the deal); decision k is entry k-1 of the columns
function viewsAt(k){return (k===0?M.start:M.after[k-1]).map(V);}
function board(k,who){const vs=viewsAt(k);const acting=k>0?[M.seat[k-1]]:[];const draw=G.board||raw;
 if(who<0)return draw(vs[0],vs,acting);
 const only=Array(N).fill(null);only[who]=vs[who];
 return `<p class="label">what seat ${who} may see ${k?'after decision '+k:'at the deal'}</p>`+draw(vs[who],only,acting)+
  `<details><summary>raw view</summary><pre>${esc(JSON.stringify(vs[who],null,1))}</pre></details>`;}
function line(i){const by=M.by[i]==='f',f=(M.fault||{})[i],ms=(M.ms||[])[i];
 return `${seatName(M.seat[i])}: ${esc(JSON.stringify(M.action[i]))}${by?' <b>fallback</b>':''}${f?' <b>['+esc(f)+']</b>':''}${ms!=null?' '+ms.toFixed(1)+' ms':''}`;}
function detail(i){const s=M.seat[i],d=M.decision[i];
 const f=(M.faults||[]).find(x=>x.phase==='act'&&x.seat===s&&x.decision===d);const ex=(M.extras||{})[i];
 return `<b>decision ${i+1}</b> ${line(i)}<br><span class="label">its decision ${d} (the number it was sent); ${M.legal[i]} legal actions${ex?'; '+esc(JSON.stringify(ex)):''}</span>`+
  (f?`<br><span class="label">fault: ${esc(f.kind)}: ${esc(ctl(f.detail||''))}</span>`:'')+
  `<details><summary>what seat ${s} was sent</summary><pre>${esc(JSON.stringify(V(M.sent[i]),null,1))}</pre></details>`;}
function show(){const who=Number($('who').value);$('board').innerHTML=board(k,who);
 $('pos').textContent=k?`decision ${k} of ${S}`:`the deal, before decision 1 of ${S}`;$('slider').value=k;$('board').dataset.step=k;
 $('decision').innerHTML=k?detail(k-1):'the deal';
 const lg=k?(M.log||{})[k-1]:null;$('log').textContent=lg?ctl(lg):'';
 if(cur)cur.classList.remove('cur');cur=k?$('moves').children[k-1]:null;
 if(cur){cur.classList.add('cur');const box=$('moves'),top=cur.offsetTop,bot=top+cur.offsetHeight;
  if(top<box.scrollTop||bot>box.scrollTop+box.clientHeight)box.scrollTop=Math.max(0,top-box.clientHeight/2);}
 history.replaceState(null,'',`#${M.id}/${k}`);}
function go(n){k=Math.max(0,Math.min(S,n));show();}
function stop(){if(timer){clearInterval(timer);timer=null;}$('play').textContent='play';}
function open(doc){M=doc;N=M.bots.length;S=M.seat.length;cache=[];cur=null;
 $('title').innerHTML=`${esc(A.tournament)} ${esc(M.id)} <span class="label">(${esc(A.title)})</span>`;
 $('result').innerHTML=`seed <span id="seed">${esc(M.seed)}</span> &middot; `+M.bots.map((b,s)=>`seat ${s} ${botLink(b)}: ${esc(M.scores[s])} (rank ${esc(M.ranks[s])})`).join(' &middot; ')+
  ((M.faults||[]).length?` &middot; <b>${M.faults.length} fault(s)</b>`:'');
 const who=$('who');while(who.options.length>1)who.remove(1);who.value='-1';
 M.bots.forEach((b,s)=>{const o=document.createElement('option');o.value=s;o.textContent=`seat ${s}: ${b}`;who.appendChild(o);});
 $('moves').innerHTML=M.seat.map((s,i)=>`<li value="${i+1}" class="${M.by[i]==='f'?'fb':''}">${line(i)}${(M.log||{})[i]?' \u270e':''}</li>`).join('');
 for(const li of $('moves').children)li.onclick=()=>go(Number(li.value));
 $('slider').max=S;$('status').textContent='';$('match').hidden=false;}
function stepOf(seat,d){for(let i=0;i<S;i++)if(M.seat[i]===seat&&M.decision[i]===d)return i+1;return 0;}
function missing(id,why){$('match').hidden=true;$('title').textContent=`${A.tournament} ${id}`;$('result').textContent='';
 $('status').innerHTML=why?`Cannot show ${esc(id)}: ${esc(why)}`:A.packs?`No replay of ${esc(id)} in this site's replay packs.`:
  `No replay of ${esc(id)} on this site: it holds the replays of the ${A.recent} most recent matches and up to ${A.faulted} with faults.`;}
const hashNow=()=>{try{return decodeURIComponent(location.hash);}catch(e){return '';}};
const HASH=/^#([A-Za-z0-9][A-Za-z0-9_.-]{0,63})(?:\/(?:(\d+)|s(\d+)d(\d+)))?$/;
function route(){stop();const m=HASH.exec(hashNow());
 $('list').hidden=!!m;$('viewer').hidden=!m;$('to-list').hidden=!m;
 if(!m){$('title').textContent=listTitle;$('result').textContent='';M=null;return;}
 const id=m[1];
 const at=()=>{if(M!==loaded[id])open(loaded[id]);go(m[2]!==undefined?Number(m[2]):m[3]!==undefined?stepOf(Number(m[3]),Number(m[4])):0);};
 if(loaded[id])return at();
 $('match').hidden=true;$('status').textContent=`loading ${id}\u2026`;
 const still=()=>{const now=HASH.exec(hashNow());return now&&now[1]===id;};
 fetchDoc(id).then(doc=>{if(doc)loaded[id]=doc;if(!still())return;if(loaded[id])at();else missing(id);},
  err=>{if(still())missing(id,String(err&&err.message||err));});}
$('to-list').onclick=e=>{e.preventDefault();history.pushState(null,'',location.pathname);route();};
$('first').onclick=()=>go(0);$('last').onclick=()=>go(S);$('back').onclick=()=>go(k-1);$('next').onclick=()=>go(k+1);
$('slider').oninput=()=>go(Number($('slider').value));$('who').onchange=show;
$('play').onclick=()=>{if(timer)return stop();$('play').textContent='pause';
 timer=setInterval(()=>{if(k>=S)stop();else go(k+1);},400);};
document.addEventListener('keydown',e=>{if(!M||$('viewer').hidden||/^(INPUT|SELECT)$/.test(e.target.tagName))return;
 if(e.key==='ArrowRight')go(k+1);if(e.key==='ArrowLeft')go(k-1);});
window.addEventListener('hashchange',route);
route();
})();
"""
_JS_HEAD, _JS_TAIL = _JS.split("/*RENDERER*/\n")
