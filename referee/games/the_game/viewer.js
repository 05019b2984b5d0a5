// The Game's renderer in the replay viewer (the contract: Game.renderer_js, referee/games/base.py).
G.board=(pub,vs,acting)=>{let h=`<p class="label">turn ${pub.turn}, draw pile ${pub.draw_pile}, cards left ${pub.cards_left}, minimum ${pub.minimum}, placed ${pub.placed_this_turn}</p>`;
 const fire=new Set((pub.fire||[]).map(f=>f.card));
 h+=pub.piles.map((p,i)=>`<div class="pile" data-pile="${i}"><span class="label">pile ${i} ${p.direction}</span>${
  p.cards.slice(-6).map(c=>card(c,fire.has(c)?'fire':'')).join('')}<b> top ${p.top}</b></div>`).join('');
 if((pub.fire||[]).length)h+=`<p class="label">fire: ${pub.fire.map(f=>`${f.card} on pile ${f.pile}, cover by turn ${f.deadline_turn}`).join('; ')}</p>`;
 h+=vs.map((v,s)=>`<div class="seatbox${acting.includes(s)?' acting':''}" data-seat="${s}">${seatName(s)}
  <span class="label">claims ${esc(JSON.stringify((pub.claims||[])[s]||[]))}</span><div class="hand">${v?cards(v.hand):backs(pub.hand_sizes[s])}</div></div>`).join('');
 return h;};
