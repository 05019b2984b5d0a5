window.REFEREE_NAMES=["heuristic","greedy","random"];window.REFEREE_FILES=["heuristic","greedy","random"];
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
(function(){"use strict";
var B=window.REFEREE_BOT;if(!B)return;var D=document,N=window.REFEREE_NAMES,F=window.REFEREE_FILES;
var chunks={0:B.first},asked={},at=0,pages=Math.max(1,Math.ceil(B.total/B.per));
var nchunks=Math.max(1,Math.ceil(B.total/B.chunk)),order=null,key="order",dir=1,waiting=false;
var m=/^#page=(\d+)$/.exec(location.hash);if(m)at=Math.min(pages-1,Math.max(0,+m[1]-1));
window.refereeChunk=function(stem,c,d){if(stem!==B.stem)return;chunks[c]=d;if(waiting)sortAll();else draw();};
function el(tag,text,cls){var x=D.createElement(tag);if(text!=null)x.textContent=text;if(cls)x.className=cls;return x;}
function replay(id,tail){if(!B.replays)return el("span",id);var a=el("a",id);a.href="../replays/index.html#"+id+(tail||"");return a;}
function bot(j){if(F[j]==null)return el("span",N[j]);var a=el("a",N[j]);a.href=F[j]+".html";return a;}
function need(c){if(asked[c])return;asked[c]=1;var s=D.createElement("script");s.src="data/"+B.stem+"."+c+".js";
s.onerror=function(){var p=D.getElementById("pager");p.appendChild(el("span","could not load "+s.src,"warn"));};D.head.appendChild(s);}
function row(d,j,i){var tr=el("tr"),k=d.k,me=d.seat[j];tr.setAttribute("data-match",d.id[j]);
tr.appendChild(el("td",String(i+1)));var td=el("td",null,"name");td.appendChild(replay(d.id[j],"/s"+me+"d0"));tr.appendChild(td);
tr.appendChild(el("td",String(me)));td=el("td",null,"name");
for(var s=0;s<k;s++){var b=d.bots[j*k+s];if(b<0)continue;if(td.childNodes.length)td.appendChild(D.createTextNode(", "));
if(s===me||N[b]===B.name)td.appendChild(el("b",N[b]));else td.appendChild(bot(b));}tr.appendChild(td);
tr.appendChild(el("td",B.coop?"":String(d.rank[j])+(d.forfeit[j]?" (forfeit)":"")));
tr.appendChild(el("td",String(d.score[j])));tr.appendChild(el("td",d.faults[j]?String(d.faults[j]):""));return tr;}
function opponents(d,j){var k=d.k,me=d.seat[j],o=[];for(var s=0;s<k;s++){var b=d.bots[j*k+s];if(b>=0&&s!==me)o.push(N[b]);}
return o.sort().join(", ");}
function value(i){var c=Math.floor(i/B.chunk),d=chunks[c],j=i-c*B.chunk;
return key==="rank"?d.rank[j]:key==="score"?d.score[j]:key==="faults"?d.faults[j]:opponents(d,j);}
function sortAll(){for(var c=0;c<nchunks;c++)if(!chunks[c]){waiting=true;need(c);}
for(c=0;c<nchunks;c++)if(!chunks[c])return;waiting=false;
if(key==="order"&&dir>0){order=null;at=0;draw();return;}
var idx=[],v=[];for(var i=0;i<B.total;i++){idx.push(i);v.push(key==="order"?i:value(i));}
idx.sort(function(a,b){var x=v[a],y=v[b];return (x<y?-1:x>y?1:0)*dir||a-b;});order=idx;at=0;draw();}
D.querySelectorAll("#matches th[data-key]").forEach(function(th){th.tabIndex=0;
function go(){var k=th.getAttribute("data-key");dir=key===k?-dir:1;key=k;
D.querySelectorAll("#matches th[data-key]").forEach(function(o){o.removeAttribute("aria-sort");});
th.setAttribute("aria-sort",dir>0?"ascending":"descending");sortAll();}
th.addEventListener("click",go);th.addEventListener("keydown",function(e){if(e.key==="Enter"||e.key===" "){e.preventDefault();go();}});});
function button(text,to){var b=el("button",text);b.type="button";b.disabled=to<0||to>=pages||to===at;
b.addEventListener("click",function(){at=to;history.replaceState(null,"","#page="+(at+1));draw();});return b;}
function draw(){var body=D.querySelector("#matches tbody"),start=at*B.per,end=Math.min(B.total,start+B.per),out=[];
for(var i=start;i<end;i++){var n=order?order[i]:i,c=Math.floor(n/B.chunk),d=chunks[c];if(!d){need(c);return;}
out.push(row(d,n-c*B.chunk,n));}
body.textContent="";out.forEach(function(r){body.appendChild(r);});
var p=D.getElementById("pager");p.textContent="";
p.appendChild(el("span",B.total?"matches "+(start+1)+"\u2013"+end+" of "+B.total:"no matches yet"));
if(pages>1){p.appendChild(button("\u00ab first",0));p.appendChild(button("\u2039 previous",at-1));
p.appendChild(el("span","page "+(at+1)+" of "+pages));p.appendChild(button("next \u203a",at+1));p.appendChild(button("last \u00bb",pages-1));}}
draw();})();
