// Dieci's renderer in the replay viewer (the contract: Game.renderer_js, referee/games/base.py).
G.board=(pub,vs,acting)=>{let h=`<p class="label">manche ${pub.manche}, dealer seat ${pub.dealer}, deck ${pub.deck_size}, discards ${esc((pub.discard_pile||[]).join(' '))}</p>`;
 h+=`<div class="row" id="chain"><span class="label">play order</span>${pub.order.map(s=>`<span class="label">${s===pub.dealer?'D':''}s${s}</span>`).join('\u2192')}</div>`;
 const ev=(pub.events||[]).slice(-4).map(e=>esc(e.type+(e.seat!==undefined?' s'+e.seat:'')+(e.target!==undefined?'\u2192s'+e.target:'')+(e.asker!==undefined?' (asked by s'+e.asker+')':'')));
 if(ev.length)h+=`<p class="label">events: ${ev.join('; ')}</p>`;
 h+=vs.map((v,s)=>{const out=(pub.out||[]).includes(s);const rev=(pub.revealed||[])[s];return `<div class="seatbox${acting.includes(s)?' acting':''}" data-seat="${s}">${seatName(s)}
  ${'<span class="token"></span>'.repeat(pub.tokens[s]||0)} <span class="label">${pub.tokens[s]} tokens${out?', out':''}${rev!=null?', blocks with '+esc(rev):''}</span>
  <div class="hand">${v?(v.card!=null?card(v.card):''):(out?'':backs(1))}</div></div>`;}).join('');
 return h;};
