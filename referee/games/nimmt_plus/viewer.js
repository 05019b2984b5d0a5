// 6 nimmt!'s renderer in the replay viewer (the contract: Game.renderer_js, referee/games/base.py).
// Cards are coloured by their bull heads, the rule of rules.py's heads.
function heads(c){return c==55?7:c%11==0?5:c%10==0?3:c%5==0?2:1;}
G.cardClass=c=>typeof c==='number'&&c>0?' h'+heads(c):'';
G.board=(pub,vs,acting)=>{let h=`<p class="label">hand ${pub.hand_number}/${pub.hands_total}, turn ${pub.turn_number}</p>`;
 h+=pub.rows.map((r,i)=>`<div class="row" data-row="${i}"><span class="label">row ${i}</span>${cards(r)}</div>`).join('');
 const last=(pub.history||[]).slice(-1)[0];
 if(last)h+=`<p class="label">last turn: ${last.plays.map(p=>`seat ${p.seat}: ${p.cards.join('+')}`).join(', ')}</p>`;
 h+=vs.map((v,s)=>`<div class="seatbox${acting.includes(s)?' acting':''}" data-seat="${s}">${seatName(s)}
  <span class="label">total ${pub.totals[s]}, this hand ${pub.points[s].heads}</span><div class="hand">${v?cards(v.hand):backs(pub.hand_sizes[s])}</div></div>`).join('');
 return h;};
