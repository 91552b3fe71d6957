/// The rules and the script a page with differential flame graphs carries
/// once, whatever number of graphs it holds: the script draws each
/// `div.flame` from the data inside it as an SVG icicle, zooms into a frame
/// on click (the root or Escape zooms out) and shows both amounts on hover.
/// Nothing is fetched.
enum FlameGraphScript {
    /// The graphs' rules.
    static let style = """
        div.flame{margin:.6em 0 1.4em;position:relative}div.flame svg{display:block;width:100%;cursor:pointer}
        div.flame rect{stroke:#fff;stroke-width:.5}div.flame g.gone rect{stroke:#757575;stroke-dasharray:3 2}
        div.flame g.new rect{stroke:#4a0024}div.flame text{font:11px Menlo,Consolas,monospace;fill:#1d1d1f;
        pointer-events:none}div.flame g.new text,div.flame g.deep text{fill:#fff}
        .flame-legend span{margin-right:1em;white-space:nowrap}.flame-legend i{display:inline-block;width:10px;
        height:10px;margin-right:4px;vertical-align:-1px}
        .flame-tip{position:fixed;z-index:9;background:#fff;border:1px solid #bbb;padding:4px 8px;max-width:560px;
        font:12px -apple-system,Segoe UI,Helvetica,Arial,sans-serif;box-shadow:0 2px 6px rgba(0,0,0,.15);
        pointer-events:none;display:none;overflow-wrap:anywhere}

        """

    /// The script, run once the graphs are in the page.
    static let script = #"""
        (function(){
        var H=17,NS="http://www.w3.org/2000/svg",tip=document.createElement("div");
        tip.className="flame-tip";document.body.appendChild(tip);
        function p3(v){return Math.abs(v)>=100?v.toFixed(0):v.toPrecision(3)}
        function fmt(v,u){var a=Math.abs(v),s=[[1e9,"G"],[1e6,"M"],[1e3,"K"]];
        if(u=="ns"){if(a>=1e9)return p3(v/1e9)+" s";if(a>=1e6)return p3(v/1e6)+" ms";
        if(a>=1e3)return p3(v/1e3)+" \u00b5s";return v.toFixed(0)+" ns"}
        if(u=="instructions"){for(var i=0;i<3;i++)if(a>=s[i][0])return p3(v/s[i][0])+" "+s[i][1]+" instructions";
        return v.toFixed(0)+" instructions"}return p3(v)+" samples"}
        function esc(t){return t.replace(/[&<>]/g,function(c){return{"&":"&amp;","<":"&lt;",">":"&gt;"}[c]})}
        function graph(el){
        var d=JSON.parse(el.querySelector("script").textContent),svg=document.createElementNS(NS,"svg"),
        f=d.f,depth=0,focus=0;for(var i=0;i<f.length;i++)depth=Math.max(depth,f[i][1]);
        svg.setAttribute("height",(depth+1)*H);el.insertBefore(svg,el.querySelector("p"));
        function draw(){
        var W=svg.getBoundingClientRect().width||960,z=f[focus],x0=z[2],w0=z[3],e=1e-9;
        while(svg.firstChild)svg.removeChild(svg.firstChild);
        for(var i=0;i<f.length;i++){var r=f[i],x,w;
        if(r[1]>=z[1]&&r[2]>=x0-e&&r[2]+r[3]<=x0+w0+e){x=(r[2]-x0)/w0*W;w=r[3]/w0*W}
        else if(r[1]<z[1]&&r[2]<=x0+e&&r[2]+r[3]>=x0+w0-e){x=0;w=W}else continue;
        if(w<.4)continue;var g=document.createElementNS(NS,"g"),b=document.createElementNS(NS,"rect");
        g.setAttribute("class","f "+d.k[r[6]]+(d.dark[r[7]]?" deep":""));g.setAttribute("data-i",i);
        b.setAttribute("x",x.toFixed(1));b.setAttribute("y",r[1]*H);b.setAttribute("width",Math.max(w-.5,.4).toFixed(1));
        b.setAttribute("height",H-1);b.setAttribute("fill",d.p[r[7]]);g.appendChild(b);
        var n=Math.floor((w-6)/6.7),name=d.n[r[0]];if(n>=3){var t=document.createElementNS(NS,"text");
        t.setAttribute("x",(x+3).toFixed(1));t.setAttribute("y",r[1]*H+12);
        t.textContent=name.length>n?name.slice(0,n-1)+"\u2026":name;g.appendChild(t)}svg.appendChild(g)}}
        svg.addEventListener("click",function(ev){var g=ev.target.closest("g");if(!g)return;
        var i=+g.getAttribute("data-i");focus=i==focus?0:i;draw()});
        svg.addEventListener("mousemove",function(ev){var g=ev.target.closest("g");if(!g){tip.style.display="none";return}
        var r=f[+g.getAttribute("data-i")],c=r[5]-r[4],u=d.u,note=d.t[r[0]]||"";
        tip.innerHTML="<b>"+esc(d.n[r[0]])+"</b><br>baseline "+fmt(r[4],u)+", candidate "+fmt(r[5],u)+
        " ("+(c>=0?"+":"")+fmt(c,u)+(r[4]>0?", "+(c>=0?"+":"")+(c/r[4]*100).toFixed(1)+"%":"")+"): "+d.k[r[6]]+
        (note?"<br>"+esc(note):"");tip.style.display="block";
        tip.style.left=Math.min(ev.clientX+12,window.innerWidth-tip.offsetWidth-8)+"px";
        tip.style.top=(ev.clientY+14)+"px"});
        svg.addEventListener("mouseleave",function(){tip.style.display="none"});
        document.addEventListener("keydown",function(ev){if(ev.key=="Escape"&&focus){focus=0;draw()}});
        window.addEventListener("resize",draw);draw()}
        document.querySelectorAll("div.flame").forEach(graph)})();
        """#
}
