// Drahtseilakt's renderer in the replay viewer (the contract: Game.renderer_js, referee/games/base.py).
G.board=(pub,vs,acting)=>{const sc=pub.score||{};let h=`<p class="label">round ${pub.round+1}/${pub.rounds}, trick ${pub.trick+1}/${pub.tricks_per_round}, leader seat ${pub.leader}</p>`;
 h+=`<div class="pile" id="score-cards"><span class="label">score cards</span>${cards(sc.cards)} <span class="label">at stake</span>${
  '<span class="stick red"></span>'.repeat(sc.red||0)}${'<span class="stick blue"></span>'.repeat(sc.blue||0)} (${sc.red||0} red, ${sc.blue||0} blue)</div>`;
 h+=`<div class="row" id="trick"><span class="label">trick</span>${(pub.current_trick||[]).map(p=>`<span class="label">s${p.seat}</span>${card(p.card)}`).join('')}</div>`;
 const t=(pub.tricks||[]).slice(-1)[0];
 if(t)h+=`<p class="label">last trick: ${t.plays.map(p=>`s${p.seat} ${p.card}`).join(', ')}; red to ${t.red_to}, blue to ${t.blue_to}</p>`;
 h+=vs.map((v,s)=>{const st=(pub.sticks||[])[s]||{red:0,blue:0};return `<div class="seatbox${acting.includes(s)?' acting':''}" data-seat="${s}">${seatName(s)}
  ${'<span class="stick red"></span>'.repeat(st.red)}${'<span class="stick blue"></span>'.repeat(st.blue)}
  <span class="label">total ${(pub.totals||[])[s]}</span><div class="hand">${v?cards(v.hand):backs(pub.hand_sizes[s])}</div></div>`;}).join('');
 return h;};
